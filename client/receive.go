package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/dtekit/dtekit/webhook"
)

// Received is one verified webhook delivery, decoded: its webhook-id (the
// same on every retry, the key to deduplicate by) and its event, whose
// Data the event's methods decode (Event.DTE, Event.Recibido, ...).
type Received struct {
	ID    string
	Event webhook.Event
}

// WebhookHandler returns the handler of an integrator's webhook endpoint:
// it verifies each delivery with the endpoint's secrets (webhook's
// Standard Webhooks scheme; 401 when it cannot, 413 past opts'
// MaxBodyBytes), decodes its event and calls fn. fn's nil answers 204; an
// error answers 500, so that the server delivers the event again later.
// An event of a kind this module does not know reaches fn too: acknowledge
// it.
//
//	secret, _ := webhook.ParseSecret(os.Getenv("DTEKIT_WEBHOOK_SECRET"))
//	h, _ := client.WebhookHandler([]webhook.Secret{secret}, func(ctx context.Context, d client.Received) error {
//		if d.Event.Type == "dte.accepted" { ... }
//		return nil
//	}, webhook.MiddlewareOptions{})
//	http.Handle("/dtekit", h)
func WebhookHandler(secrets []webhook.Secret, fn func(ctx context.Context, d Received) error, opts webhook.MiddlewareOptions) (http.Handler, error) {
	if fn == nil {
		return nil, errors.New("client: WebhookHandler: nil handler function")
	}
	v, err := webhook.NewVerifier(secrets)
	if err != nil {
		return nil, err
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := webhook.DeliveryFromContext(r.Context())
		if !ok {
			http.Error(w, "unverified", http.StatusUnauthorized)
			return
		}
		ev, err := webhook.ParseEvent(d.Body)
		if err != nil {
			// Verified but not an event: answering 2xx would lose it
			// silently, 4xx tells the sender's operators.
			http.Error(w, "not a dtekit event", http.StatusBadRequest)
			return
		}
		if err := fn(r.Context(), Received{ID: d.ID, Event: ev}); err != nil {
			http.Error(w, "the receiver failed; retry later", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return v.Middleware(inner, opts), nil
}
