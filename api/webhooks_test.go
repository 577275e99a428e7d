package api_test

import (
	"slices"
	"testing"

	"github.com/dtekit/dtekit/api"
)

// TestDeliveryTransitions checks the delivery's state machine against
// the table written out from the webhook delivery rules: a pending
// delivery succeeds (a 2xx) or fails (the schedule runs out, 410 Gone,
// its webhook deleted or disabled); a failed one succeeds only by a
// resend answered 2xx; a succeeded one stays so (a failed resend changes
// no state).
func TestDeliveryTransitions(t *testing.T) {
	t.Parallel()
	all := []api.DeliveryState{api.DeliveryPending, api.DeliverySucceeded, api.DeliveryFailed}
	want := map[api.DeliveryState][]api.DeliveryState{
		"pending":   {"succeeded", "failed"},
		"failed":    {"succeeded"},
		"succeeded": {},
	}
	for _, from := range all {
		if got := from.Next(); !slices.Equal(got, want[from]) && len(got)+len(want[from]) > 0 {
			t.Errorf("%s.Next() = %v, want %v", from, got, want[from])
		}
		for _, to := range all {
			if got, w := from.CanBecome(to), slices.Contains(want[from], to); got != w {
				t.Errorf("%s.CanBecome(%s) = %v, want %v", from, to, got, w)
			}
		}
	}
	if api.DeliveryState("sent").CanBecome(api.DeliveryFailed) || len(api.DeliveryState("").Next()) != 0 {
		t.Error("an unknown state moves nowhere")
	}
	// The wire values are the contract's.
	for s, w := range map[api.DeliveryState]string{api.DeliveryPending: "pending", api.DeliverySucceeded: "succeeded", api.DeliveryFailed: "failed"} {
		if string(s) != w {
			t.Errorf("state %q, want %q", s, w)
		}
	}
}
