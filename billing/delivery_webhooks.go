package billing

import (
	"context"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// webhookOut renders a stored webhook with its current secret masked.
func (s *Service) webhookOut(w *store.Webhook) *Webhook {
	out := &Webhook{ID: w.ID, URL: w.URL, Events: append([]string{}, w.Events...), IsActive: w.IsActive, CreatedAt: w.CreatedAt.UTC()}
	if sec, ok := s.dlv.CurrentSecret(w); ok {
		out.Secret = sec.String()
	}
	return out
}

// webhookWithSecret renders a stored webhook with sec, its new secret, in
// full: the only time a secret is shown.
func (s *Service) webhookWithSecret(w *store.Webhook, sec webhook.Secret) *Webhook {
	out := s.webhookOut(w)
	out.Secret = sec.Encode()
	return out
}

// ListWebhooks lists the company's webhooks, secrets masked.
func (s *Service) ListWebhooks(ctx context.Context, empresaID string) ([]Webhook, error) {
	hooks, err := s.st.ListWebhooks(ctx, empresaID)
	if err != nil {
		return nil, fault.Failed("listing webhooks", err)
	}
	out := make([]Webhook, 0, len(hooks))
	for i := range hooks {
		out = append(out, *s.webhookOut(&hooks[i]))
	}
	return out, nil
}

// CreateWebhook registers a webhook: an https URL that passes the SSRF
// check (no IP literal or local name of a blocked range; loopback only
// when the server allows it), one or more of the six event types, and a
// secret given (whsec_, 24 to 64 bytes) or generated (32 bytes). The answer
// carries the secret in full, the only time it is shown.
func (s *Service) CreateWebhook(ctx context.Context, empresaID string, in WebhookInput) (*Webhook, error) {
	rec, sec, err := s.dlv.CreateWebhook(ctx, empresaID, in.URL, in.Events, in.Secret)
	if err != nil {
		return nil, storeErr(err, "registering a webhook", "empresa", empresaID)
	}
	return s.webhookWithSecret(rec, sec), nil
}

// DeleteWebhook removes a webhook: it receives nothing more, and its
// pending deliveries end (as failed, "webhook deleted") when their next
// attempt comes due.
func (s *Service) DeleteWebhook(ctx context.Context, empresaID, id string) error {
	return storeErr(s.dlv.DeleteWebhook(ctx, empresaID, id), "deleting a webhook", "webhook", id)
}

// RotateWebhookSecret replaces a webhook's signing secret with newSecret
// (whsec_ form) or, when empty, a generated one. The previous secrets keep
// signing beside the new one for the rotation grace (24 h by default), so
// a receiver can switch keys without losing a delivery. The answer carries
// the new secret in full, the only time it is shown.
func (s *Service) RotateWebhookSecret(ctx context.Context, empresaID, id, newSecret string) (*Webhook, error) {
	rec, sec, err := s.dlv.RotateSecret(ctx, empresaID, id, newSecret)
	if err != nil {
		return nil, storeErr(err, "rotating a webhook secret", "webhook", id)
	}
	return s.webhookWithSecret(rec, sec), nil
}

// GetWebhook returns one of the company's webhooks, its secret masked as
// in the list.
func (s *Service) GetWebhook(ctx context.Context, empresaID, id string) (*Webhook, error) {
	w, err := s.st.GetWebhook(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading a webhook", "webhook", id)
	}
	return s.webhookOut(w), nil
}

// WebhookUpdate changes a webhook; absent (nil) fields stay as they are.
type WebhookUpdate struct {
	// URL replaces the address, with the checks of registration (https,
	// the SSRF guard). Deliveries still pending go to the new address at
	// their next attempt.
	URL *string `json:"url,omitempty"`
	// Events replaces the subscribed event types (one or more of the
	// six); it applies to events recorded from then on.
	Events *[]string `json:"events,omitempty"`
	// IsActive true turns a disabled webhook back on, as EnableWebhook;
	// false turns it off: events recorded from then on are not delivered
	// to it, and its pending deliveries end (failed, "webhook disabled")
	// when their next attempt comes due.
	IsActive *bool `json:"is_active,omitempty"`
}

// UpdateWebhook changes a webhook's URL, events and state at once, with
// the checks of registration (the cap of MaxWebhooks counts only
// registrations). The answer carries the secret masked; rotate it with
// RotateWebhookSecret.
func (s *Service) UpdateWebhook(ctx context.Context, empresaID, id string, in WebhookUpdate) (*Webhook, error) {
	rec, err := s.dlv.UpdateWebhook(ctx, empresaID, id, delivery.WebhookChange{URL: in.URL, Events: in.Events, Active: in.IsActive})
	if err != nil {
		return nil, storeErr(err, "updating a webhook", "webhook", id)
	}
	return s.webhookOut(rec), nil
}

// EnableWebhook turns a webhook that was disabled (by a 410 answer, by
// failing for 5 days, or by hand) back on; events recorded from then on
// reach it again.
func (s *Service) EnableWebhook(ctx context.Context, empresaID, id string) (*Webhook, error) {
	rec, err := s.dlv.EnableWebhook(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "enabling a webhook", "webhook", id)
	}
	return s.webhookOut(rec), nil
}
