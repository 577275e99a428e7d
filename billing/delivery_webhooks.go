package billing

import (
	"context"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// webhookFromStore renders a stored webhook with its current secret masked.
func (s *Service) webhookFromStore(w *store.Webhook) *api.Webhook {
	out := &api.Webhook{ID: w.ID, URL: w.URL, Events: append([]string{}, w.Events...), IsActive: w.IsActive, CreatedAt: w.CreatedAt.UTC()}
	if sec, ok := s.dlv.CurrentSecret(w); ok {
		out.Secret = sec.String()
	}
	return out
}

// webhookWithSecret renders a stored webhook with sec, its new secret, in
// full: the only time a secret is shown.
func (s *Service) webhookWithSecret(w *store.Webhook, sec webhook.Secret) *api.Webhook {
	out := s.webhookFromStore(w)
	out.Secret = sec.Encode()
	return out
}

// List lists the company's webhooks, secrets masked: all of them (at most
// MaxWebhooks), in a slice and not a page, as the contract answers GET
// /webhooks with an array.
func (r *WebhookService) List(ctx context.Context, empresaID string) ([]api.Webhook, error) {
	s := r.s
	hooks, err := s.st.ListWebhooks(ctx, empresaID)
	if err != nil {
		return nil, fault.Failed("listing webhooks", err)
	}
	out := make([]api.Webhook, 0, len(hooks))
	for i := range hooks {
		out = append(out, *s.webhookFromStore(&hooks[i]))
	}
	return out, nil
}

// Create registers a webhook: an https URL that passes the SSRF
// check (no IP literal or local name of a blocked range; loopback only
// when the server allows it), one or more of the six event types, and a
// secret given (whsec_, 24 to 64 bytes) or generated (32 bytes). The answer
// carries the secret in full, the only time it is shown.
func (r *WebhookService) Create(ctx context.Context, empresaID string, in api.WebhookInput) (*api.Webhook, error) {
	s := r.s
	rec, sec, err := s.dlv.CreateWebhook(ctx, empresaID, in.URL, in.Events, in.Secret)
	if err != nil {
		return nil, storeErr(err, "registering a webhook", "empresa", empresaID)
	}
	return s.webhookWithSecret(rec, sec), nil
}

// Delete removes a webhook: it receives nothing more, and its
// pending deliveries end (as failed, "webhook deleted") when their next
// attempt comes due.
func (r *WebhookService) Delete(ctx context.Context, empresaID, id string) error {
	s := r.s
	return storeErr(s.dlv.DeleteWebhook(ctx, empresaID, id), "deleting a webhook", "webhook", id)
}

// RotateSecret replaces a webhook's signing secret with p.Secret
// (whsec_ form) or, when empty, a generated one. The previous secrets keep
// signing beside the new one for the rotation grace (24 h by default), so
// a receiver can switch keys without losing a delivery. The answer carries
// the new secret in full, the only time it is shown.
func (r *WebhookService) RotateSecret(ctx context.Context, empresaID, id string, p api.WebhookSecretParams) (*api.Webhook, error) {
	s := r.s
	rec, sec, err := s.dlv.RotateSecret(ctx, empresaID, id, p.Secret)
	if err != nil {
		return nil, storeErr(err, "rotating a webhook secret", "webhook", id)
	}
	return s.webhookWithSecret(rec, sec), nil
}

// Get returns one of the company's webhooks, its secret masked as
// in the list.
func (r *WebhookService) Get(ctx context.Context, empresaID, id string) (*api.Webhook, error) {
	s := r.s
	w, err := s.st.GetWebhook(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading a webhook", "webhook", id)
	}
	return s.webhookFromStore(w), nil
}

// Update changes a webhook's URL, events and state at once, with
// the checks of registration (the cap of MaxWebhooks counts only
// registrations). The answer carries the secret masked; rotate it with
// RotateSecret.
func (r *WebhookService) Update(ctx context.Context, empresaID, id string, in api.WebhookUpdate) (*api.Webhook, error) {
	s := r.s
	rec, err := s.dlv.UpdateWebhook(ctx, empresaID, id, delivery.WebhookChange{URL: in.URL, Events: in.Events, Active: in.IsActive})
	if err != nil {
		return nil, storeErr(err, "updating a webhook", "webhook", id)
	}
	return s.webhookFromStore(rec), nil
}

// Enable turns a webhook that was disabled (by a 410 answer, by
// failing for 5 days, or by hand) back on; events recorded from then on
// reach it again.
func (r *WebhookService) Enable(ctx context.Context, empresaID, id string) (*api.Webhook, error) {
	s := r.s
	rec, err := s.dlv.EnableWebhook(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "enabling a webhook", "webhook", id)
	}
	return s.webhookFromStore(rec), nil
}
