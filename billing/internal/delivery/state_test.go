package delivery

import (
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/store"
)

// TestStoredStates: the store keeps a delivery's state as a string,
// written by the outbox (store's names) and read and moved by this room
// (api's typed states); both must spell each state the same.
func TestStoredStates(t *testing.T) {
	t.Parallel()
	for stored, typed := range map[string]api.DeliveryState{
		store.DeliveryPending: api.DeliveryPending, store.DeliverySucceeded: api.DeliverySucceeded, store.DeliveryFailed: api.DeliveryFailed,
	} {
		if got := stateOf(&store.Delivery{State: stored}); got != typed {
			t.Errorf("stored state %q reads as %q, want %q", stored, got, typed)
		}
	}
}
