package outbox

import (
	"encoding/json"

	"github.com/dtekit/dtekit/store"
)

// Tracking is the stored tracking payload of a document: the JSON of
// store.DTE.Tracking, which follows its submission to the SII. Submission
// writes it; the document's events and billing's read model
// (billing.Tracking, with the same fields) read it.
type Tracking struct {
	EnvioID     *string `json:"envio_id,omitempty"`
	TrackID     *string `json:"track_id,omitempty"`
	EstadoEnvio *string `json:"estado_envio,omitempty"`
	CodigoSII   *string `json:"codigo_sii,omitempty"`
	GlosaSII    *string `json:"glosa_sii,omitempty"`
	Informados  *int    `json:"informados,omitempty"`
	Aceptados   *int    `json:"aceptados,omitempty"`
	Rechazados  *int    `json:"rechazados,omitempty"`
	Reparos     *int    `json:"reparos,omitempty"`
	Intentos    *int    `json:"intentos,omitempty"`
}

// ParseTracking decodes a stored tracking payload; an empty one is the
// zero Tracking.
func ParseTracking(raw []byte) (Tracking, error) {
	var t Tracking
	if len(raw) == 0 {
		return t, nil
	}
	err := json.Unmarshal(raw, &t)
	return t, err
}

// TrackingOf decodes a document's tracking fields (written only by
// SetTracking, so a decoding error cannot happen; it yields what was
// decoded).
func TrackingOf(d *store.DTE) Tracking {
	t, _ := ParseTracking(d.Tracking)
	return t
}

// SetTracking encodes t into d.
func SetTracking(d *store.DTE, t Tracking) error {
	b, err := json.Marshal(t)
	d.Tracking = b
	return err
}
