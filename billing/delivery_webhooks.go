package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"

	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// maxWebhookSecrets bounds the secrets kept per webhook (the newest and
// those still in their rotation grace).
const maxWebhookSecrets = 10

// secretSet is the plaintext of a webhook's sealed Secret field: its
// secrets, newest first, each with the time it stops signing (none for the
// current one).
type secretSet struct {
	Keys []secretEntry `json:"keys"`
}

// secretEntry is one secret of a set.
type secretEntry struct {
	Secret    string     `json:"secret"` // whsec_ form
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// active returns the secrets that sign at now, newest first.
func (set secretSet) active(now time.Time) []webhook.Secret {
	var out []webhook.Secret
	for _, k := range set.Keys {
		if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
			continue
		}
		if sec, err := webhook.ParseSecret(k.Secret); err == nil {
			out = append(out, sec)
		}
	}
	return out
}

// webhookSecretAAD binds a sealed secret set to its webhook.
func webhookSecretAAD(empresaID, id string) []byte { return secretAAD("webhook-secret", empresaID, id) }

// sealWebhookSecrets encrypts a secret set for storage in w.Secret.
func (s *Service) sealWebhookSecrets(w *store.Webhook, set secretSet) error {
	plain, err := json.Marshal(set)
	if err != nil {
		return fault.Failed("encoding webhook secrets", err)
	}
	sealed, err := s.keys.Seal(plain, webhookSecretAAD(w.EmpresaID, w.ID))
	if err != nil {
		return fault.Failed("sealing webhook secrets", err)
	}
	w.Secret = sealed
	return nil
}

// openWebhookSecrets decrypts the secret set of a stored webhook.
func (s *Service) openWebhookSecrets(w *store.Webhook) (secretSet, error) {
	var set secretSet
	plain, err := s.keys.Open(w.Secret, webhookSecretAAD(w.EmpresaID, w.ID))
	if err != nil {
		return set, fault.Failed("opening the secrets of webhook "+w.ID, err)
	}
	if err := json.Unmarshal(plain, &set); err != nil || len(set.Keys) == 0 {
		return set, fault.Failed("reading the secrets of webhook "+w.ID, fmt.Errorf("malformed secret set: %v", err))
	}
	return set, nil
}

// newWebhookSecret parses a given secret (whsec_ or bare base64 of 24 to
// 64 bytes) or generates one when given is empty.
func newWebhookSecret(given string) (webhook.Secret, error) {
	if given == "" {
		return webhook.GenerateSecret(), nil
	}
	sec, err := webhook.ParseSecret(given)
	if err != nil {
		return webhook.Secret{}, fault.Invalid("secret", fault.DetailInvalidSecret,
			"secret must be whsec_ followed by standard base64 of 24 to 64 bytes")
	}
	return sec, nil
}

// webhookFromStore renders a webhook with its current secret masked.
func (s *Service) webhookFromStore(w *store.Webhook) Webhook {
	out := Webhook{ID: w.ID, URL: w.URL, Events: append([]string{}, w.Events...), IsActive: w.IsActive, CreatedAt: w.CreatedAt.UTC()}
	if set, err := s.openWebhookSecrets(w); err == nil {
		if sec, err := webhook.ParseSecret(set.Keys[0].Secret); err == nil {
			out.Secret = sec.String()
		}
	}
	return out
}

// checkWebhookInput validates a registration (contract §4.4) and returns
// the cleaned URL and events.
func (s *Service) checkWebhookInput(in WebhookInput) (string, []string, error) {
	u, err := ssrf.CheckURL(in.URL, s.dlv.cfg.AllowLoopback)
	if err != nil {
		return "", nil, fault.Invalid("url", fault.DetailInvalidURL, err.Error())
	}
	if len(in.Events) == 0 {
		return "", nil, fault.Invalid("events", dte.CodeRequired, "events must list at least one event type")
	}
	seen := map[string]bool{}
	var events []string
	for i, e := range in.Events {
		if !webhook.EventType(e).Known() {
			return "", nil, fault.Invalid(fmt.Sprintf("events[%d]", i), fault.DetailUnsupportedEvent,
				fmt.Sprintf("event %q is not one of dte.created, dte.accepted, dte.rejected, dte.repaired, caf.low_stock, certificado.expiring", clipText(e, 64)))
		}
		if !seen[e] {
			seen[e] = true
			events = append(events, e)
		}
	}
	return u.String(), events, nil
}

// ListWebhooks lists the company's webhooks, secrets masked.
func (s *Service) ListWebhooks(ctx context.Context, empresaID string) ([]Webhook, error) {
	hooks, err := s.st.ListWebhooks(ctx, empresaID)
	if err != nil {
		return nil, fault.Failed("listing webhooks", err)
	}
	out := make([]Webhook, 0, len(hooks))
	for i := range hooks {
		out = append(out, s.webhookFromStore(&hooks[i]))
	}
	return out, nil
}

// CreateWebhook registers a webhook: an https URL that passes the SSRF
// check (no IP literal or local name of a blocked range; loopback only
// when the server allows it), one or more of the six event types, and a
// secret given (whsec_, 24 to 64 bytes) or generated (32 bytes). The answer
// carries the secret in full, the only time it is shown.
func (s *Service) CreateWebhook(ctx context.Context, empresaID string, in WebhookInput) (*Webhook, error) {
	u, events, err := s.checkWebhookInput(in)
	if err != nil {
		return nil, err
	}
	sec, err := newWebhookSecret(in.Secret)
	if err != nil {
		return nil, err
	}
	rec := &store.Webhook{ID: newID(), EmpresaID: empresaID, URL: u, Events: events, IsActive: true}
	if err := s.sealWebhookSecrets(rec, secretSet{Keys: []secretEntry{{Secret: sec.Encode()}}}); err != nil {
		return nil, err
	}
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		return tx.InsertWebhook(ctx, rec)
	})
	if err != nil {
		return nil, storeErr(err, "registering a webhook", "empresa", empresaID)
	}
	out := s.webhookFromStore(rec)
	out.Secret = sec.Encode()
	return &out, nil
}

// DeleteWebhook removes a webhook: it receives nothing more, and its
// pending deliveries end (as failed, "webhook deleted") when their next
// attempt comes due.
func (s *Service) DeleteWebhook(ctx context.Context, empresaID, id string) error {
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteWebhook(ctx, empresaID, id)
	})
	return storeErr(err, "deleting a webhook", "webhook", id)
}

// RotateWebhookSecret replaces a webhook's signing secret with newSecret
// (whsec_ form) or, when empty, a generated one. The previous secrets keep
// signing beside the new one for the rotation grace (24 h by default), so
// a receiver can switch keys without losing a delivery. The answer carries
// the new secret in full, the only time it is shown.
func (s *Service) RotateWebhookSecret(ctx context.Context, empresaID, id, newSecret string) (*Webhook, error) {
	sec, err := newWebhookSecret(newSecret)
	if err != nil {
		return nil, err
	}
	var rec *store.Webhook
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		w, err := tx.GetWebhook(ctx, empresaID, id)
		if err != nil {
			return err
		}
		set, err := s.openWebhookSecrets(w)
		if err != nil {
			return err
		}
		now := s.now()
		until := now.Add(s.dlv.grace).UTC()
		next := secretSet{Keys: []secretEntry{{Secret: sec.Encode()}}}
		for _, k := range set.Keys {
			if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
				continue // already retired
			}
			if k.ExpiresAt == nil || k.ExpiresAt.After(until) {
				k.ExpiresAt = &until
			}
			if len(next.Keys) < maxWebhookSecrets {
				next.Keys = append(next.Keys, k)
			}
		}
		if err := s.sealWebhookSecrets(w, next); err != nil {
			return err
		}
		w.UpdatedAt = time.Time{}
		rec = w
		return tx.UpdateWebhook(ctx, w)
	})
	if err != nil {
		return nil, storeErr(err, "rotating a webhook secret", "webhook", id)
	}
	out := s.webhookFromStore(rec)
	out.Secret = sec.Encode()
	return &out, nil
}

// EnableWebhook turns a webhook that was disabled (by a 410 answer, by
// failing for 5 days, or by hand) back on; events recorded from then on
// reach it again.
func (s *Service) EnableWebhook(ctx context.Context, empresaID, id string) (*Webhook, error) {
	var rec *store.Webhook
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		w, err := tx.GetWebhook(ctx, empresaID, id)
		if err != nil {
			return err
		}
		rec = w
		if w.IsActive {
			return nil
		}
		w.IsActive, w.UpdatedAt = true, time.Time{}
		return tx.UpdateWebhook(ctx, w)
	})
	if err != nil {
		return nil, storeErr(err, "enabling a webhook", "webhook", id)
	}
	out := s.webhookFromStore(rec)
	return &out, nil
}
