package outbox

import (
	"encoding/json"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/store"
)

// ParseTracking decodes a stored tracking payload, the JSON of
// store.DTE.Tracking (api.Tracking: submission writes it, the document's
// events and read model read it); an empty one is the zero Tracking.
func ParseTracking(raw []byte) (api.Tracking, error) {
	var t api.Tracking
	if len(raw) == 0 {
		return t, nil
	}
	err := json.Unmarshal(raw, &t)
	return t, err
}

// TrackingOf decodes a document's tracking fields (written only by
// SetTracking, so a decoding error cannot happen; it yields what was
// decoded).
func TrackingOf(d *store.DTE) api.Tracking {
	t, _ := ParseTracking(d.Tracking)
	return t
}

// SetTracking encodes t into d.
func SetTracking(d *store.DTE, t api.Tracking) error {
	b, err := json.Marshal(t)
	d.Tracking = b
	return err
}
