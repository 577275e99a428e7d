package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Methods that write answer store errors as the store gave them
// (store.ErrNotFound, conflicts) and their own as *fault.Error; the
// caller turns the former into a fault.Error naming what it was doing.

// maxSecrets bounds the secrets kept per webhook (the newest and those
// still in their rotation grace).
const maxSecrets = 10

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

// SecretAAD binds a sealed secret set to its webhook: the associated data
// names the owner and purpose, in the form billing uses for every sealed
// secret ("dtekit/<purpose>/<empresa>/<id>"). billing re-seals a
// webhook's secrets with it when the key-encryption key changes.
func SecretAAD(empresaID, id string) []byte {
	return []byte("dtekit/webhook-secret/" + empresaID + "/" + id)
}

// sealSecrets encrypts a secret set for storage in w.Secret.
func (d *Deliverer) sealSecrets(w *store.Webhook, set secretSet) error {
	plain, err := json.Marshal(set)
	if err != nil {
		return fault.Failed("encoding webhook secrets", err)
	}
	sealed, err := d.cfg.Sealer.Seal(plain, SecretAAD(w.EmpresaID, w.ID))
	if err != nil {
		return fault.Failed("sealing webhook secrets", err)
	}
	w.Secret = sealed
	return nil
}

// openSecrets decrypts the secret set of a stored webhook.
func (d *Deliverer) openSecrets(w *store.Webhook) (secretSet, error) {
	var set secretSet
	plain, err := d.cfg.Sealer.Open(w.Secret, SecretAAD(w.EmpresaID, w.ID))
	if err != nil {
		return set, fault.Failed("opening the secrets of webhook "+w.ID, err)
	}
	if err := json.Unmarshal(plain, &set); err != nil || len(set.Keys) == 0 {
		return set, fault.Failed("reading the secrets of webhook "+w.ID, fmt.Errorf("malformed secret set: %v", err))
	}
	return set, nil
}

// CurrentSecret returns the secret a stored webhook signs with now (the
// newest of its set), false when its set cannot be opened.
func (d *Deliverer) CurrentSecret(w *store.Webhook) (webhook.Secret, bool) {
	set, err := d.openSecrets(w)
	if err != nil {
		return webhook.Secret{}, false
	}
	sec, err := webhook.ParseSecret(set.Keys[0].Secret)
	return sec, err == nil
}

// newSecret parses a given secret (whsec_ or bare base64 of 24 to 64
// bytes) or generates one when given is empty.
func newSecret(given string) (webhook.Secret, error) {
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

// checkInput validates a registration (contract §4.4) and returns the
// cleaned URL and events.
func (d *Deliverer) checkInput(rawURL string, events []string) (string, []string, error) {
	u, err := d.checkURL(rawURL)
	if err != nil {
		return "", nil, err
	}
	out, err := checkEvents(events)
	if err != nil {
		return "", nil, err
	}
	return u, out, nil
}

// checkURL validates a webhook's URL with the SSRF guard (https, no IP
// literal or local name of a blocked range; loopback only with
// AllowLoopback) and returns it cleaned.
func (d *Deliverer) checkURL(rawURL string) (string, error) {
	u, err := ssrf.CheckURL(rawURL, d.cfg.AllowLoopback)
	if err != nil {
		return "", fault.Invalid("url", fault.DetailInvalidURL, err.Error())
	}
	return u.String(), nil
}

// checkEvents validates a webhook's event list (one or more of the six
// event types) and returns it without repeats, in the order given.
func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, fault.Invalid("events", dte.CodeRequired, "events must list at least one event type")
	}
	seen := map[string]bool{}
	var out []string
	for i, e := range events {
		if !webhook.EventType(e).Known() {
			return nil, fault.Invalid(fmt.Sprintf("events[%d]", i), fault.DetailUnsupportedEvent,
				fmt.Sprintf("event %q is not one of %s", clipText(e, 64), eventList()))
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// MaxWebhooks is how many webhooks (not deleted) one company may have:
// every event is delivered to each subscribed one, so the cap also bounds
// the deliveries one event makes.
const MaxWebhooks = 16

// CreateWebhook registers a webhook of the company: an https URL that
// passes the SSRF check (loopback only with AllowLoopback), one or more
// of the six event types, and secret given (whsec_, 24 to 64 bytes) or,
// when empty, generated; a company holding MaxWebhooks already gets a
// LIMIT_EXCEEDED conflict. It returns the stored webhook and its secret.
func (d *Deliverer) CreateWebhook(ctx context.Context, empresaID, rawURL string, events []string, secret string) (*store.Webhook, webhook.Secret, error) {
	u, events, err := d.checkInput(rawURL, events)
	if err != nil {
		return nil, webhook.Secret{}, err
	}
	sec, err := newSecret(secret)
	if err != nil {
		return nil, webhook.Secret{}, err
	}
	rec := &store.Webhook{ID: newID(), EmpresaID: empresaID, URL: u, Events: events, IsActive: true}
	if err := d.sealSecrets(rec, secretSet{Keys: []secretEntry{{Secret: sec.Encode()}}}); err != nil {
		return nil, webhook.Secret{}, err
	}
	err = d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		hooks, err := tx.ListWebhooks(ctx, empresaID)
		if err != nil {
			return err
		}
		if len(hooks) >= MaxWebhooks {
			return fault.Clash(fault.LimitExceeded, fmt.Sprintf("a company may register at most %d webhooks; delete one first", MaxWebhooks))
		}
		return tx.InsertWebhook(ctx, rec)
	})
	if err != nil {
		return nil, webhook.Secret{}, err
	}
	return rec, sec, nil
}

// DeleteWebhook removes a webhook: it receives nothing more, and its
// pending deliveries end (as failed, "webhook deleted") when their next
// attempt comes due.
func (d *Deliverer) DeleteWebhook(ctx context.Context, empresaID, id string) error {
	return d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteWebhook(ctx, empresaID, id)
	})
}

// RotateSecret replaces a webhook's signing secret with newSecret (whsec_
// form) or, when empty, a generated one. The previous secrets keep
// signing beside the new one for RotationGrace. It returns the stored
// webhook and its new secret.
func (d *Deliverer) RotateSecret(ctx context.Context, empresaID, id, given string) (*store.Webhook, webhook.Secret, error) {
	sec, err := newSecret(given)
	if err != nil {
		return nil, webhook.Secret{}, err
	}
	var rec *store.Webhook
	err = d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		w, err := tx.GetWebhook(ctx, empresaID, id)
		if err != nil {
			return err
		}
		set, err := d.openSecrets(w)
		if err != nil {
			return err
		}
		now := d.now()
		until := now.Add(d.cfg.RotationGrace).UTC()
		next := secretSet{Keys: []secretEntry{{Secret: sec.Encode()}}}
		for _, k := range set.Keys {
			if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
				continue // already retired
			}
			if k.ExpiresAt == nil || k.ExpiresAt.After(until) {
				k.ExpiresAt = &until
			}
			if len(next.Keys) < maxSecrets {
				next.Keys = append(next.Keys, k)
			}
		}
		if err := d.sealSecrets(w, next); err != nil {
			return err
		}
		w.UpdatedAt = time.Time{}
		rec = w
		return tx.UpdateWebhook(ctx, w)
	})
	if err != nil {
		return nil, webhook.Secret{}, err
	}
	return rec, sec, nil
}

// EnableWebhook turns a webhook that was disabled (by a 410 answer, by
// failing for too long, or by hand) back on; events recorded from then on
// reach it again. It returns the stored webhook.
func (d *Deliverer) EnableWebhook(ctx context.Context, empresaID, id string) (*store.Webhook, error) {
	on := true
	return d.UpdateWebhook(ctx, empresaID, id, WebhookChange{Active: &on})
}

// WebhookChange is what UpdateWebhook changes; nil fields stay as they
// are.
type WebhookChange struct {
	// URL replaces the address, checked as at registration. Deliveries
	// still pending go to the new address at their next attempt.
	URL *string
	// Events replaces the subscribed event types, checked as at
	// registration; it applies to events recorded from then on.
	Events *[]string
	// Active turns the webhook on (as EnableWebhook) or off. A webhook
	// turned off gets no delivery of events recorded from then on, and
	// its pending deliveries end (failed, "webhook disabled") when their
	// next attempt comes due; manual resends and pings still go out.
	Active *bool
}

// UpdateWebhook changes a webhook's URL, events and state in one
// transaction, with the checks of registration (the cap on webhooks only
// counts registrations). It returns the stored webhook; a change that
// changes nothing writes nothing.
func (d *Deliverer) UpdateWebhook(ctx context.Context, empresaID, id string, ch WebhookChange) (*store.Webhook, error) {
	var u string
	var events []string
	var err error
	if ch.URL != nil {
		if u, err = d.checkURL(*ch.URL); err != nil {
			return nil, err
		}
	}
	if ch.Events != nil {
		if events, err = checkEvents(*ch.Events); err != nil {
			return nil, err
		}
	}
	var rec *store.Webhook
	err = d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		w, err := tx.GetWebhook(ctx, empresaID, id)
		if err != nil {
			return err
		}
		rec = w
		changed, disable := false, false
		if ch.URL != nil && u != w.URL {
			w.URL, changed = u, true
		}
		if ch.Events != nil && !slices.Equal(events, w.Events) {
			w.Events, changed = events, true
		}
		if ch.Active != nil && *ch.Active != w.IsActive {
			if *ch.Active {
				w.IsActive, changed = true, true
			} else {
				disable = true
			}
		}
		if changed {
			w.UpdatedAt = time.Time{}
			if err := tx.UpdateWebhook(ctx, w); err != nil {
				return err
			}
		}
		if disable {
			// The one way a webhook goes off, with its log line.
			if err := d.disableWebhook(ctx, tx, empresaID, id, "turned off on request"); err != nil {
				return err
			}
			w.IsActive = false
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Read builds the read model of a stored delivery: the delivery with the
// type of its event and its attempt log, oldest first, read through r (the
// store, or a transaction). Each attempt carries the start of the
// receiver's response; a list leaves those out.
func Read(ctx context.Context, r store.Reader, dl *store.Delivery) (*api.Delivery, error) {
	eventType := ""
	if ev, err := r.GetEvent(ctx, dl.EmpresaID, dl.EventID); err == nil {
		eventType = ev.Type
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	atts, err := r.ListDeliveryAttempts(ctx, dl.EmpresaID, dl.ID)
	if err != nil {
		return nil, err
	}
	return deliveryModel(dl, eventType, atts), nil
}

// deliveryModel is the read model of a delivery, its event's type and its
// attempts.
func deliveryModel(dl *store.Delivery, eventType string, atts []store.DeliveryAttempt) *api.Delivery {
	out := &api.Delivery{ID: dl.ID, WebhookID: dl.WebhookID, EventID: dl.EventID, EventType: eventType,
		State: api.DeliveryState(dl.State), Attempts: dl.Attempts, LastError: dl.LastError,
		CreatedAt: dl.CreatedAt.UTC(), UpdatedAt: dl.UpdatedAt.UTC(), AttemptLog: make([]api.DeliveryAttempt, 0, len(atts))}
	if n := len(atts); n > 0 && !atts[n-1].OK {
		// A last error written from an attempt ("class: …") is shown as
		// its category's sentence: rows of earlier versions kept the
		// network error there.
		if last := atts[n-1]; last.ErrorClass != "" && strings.HasPrefix(out.LastError, last.ErrorClass+":") {
			out.LastError = PublicError(last.ErrorClass, last.StatusCode)
		}
	}
	if dl.LastStatusCode != 0 {
		c := dl.LastStatusCode
		out.LastStatusCode = &c
	}
	if !dl.NextAttemptAt.IsZero() {
		t := dl.NextAttemptAt.UTC()
		out.NextAttemptAt = &t
	}
	for _, a := range atts {
		da := api.DeliveryAttempt{Attempt: a.Attempt, Trigger: a.Trigger, AttemptedAt: a.AttemptedAt.UTC(),
			ErrorClass: PublicClass(a.ErrorClass), Error: PublicError(a.ErrorClass, a.StatusCode),
			DurationMS: a.Duration.Milliseconds(),
			Response:   strings.ToValidUTF8(string(a.Response), "\uFFFD")}
		if a.StatusCode != 0 {
			c := a.StatusCode
			da.StatusCode = &c
		}
		out.AttemptLog = append(out.AttemptLog, da)
	}
	return out
}

// Resend sends a delivery of the webhook again, once, now: same
// webhook-id and bytes, fresh timestamp and signature, no retries of its
// own. It works on any state; a success marks the delivery succeeded (and
// stops its pending retries). The attempt runs in the background; the
// answer is the delivery as it stands.
func (d *Deliverer) Resend(ctx context.Context, empresaID, webhookID, id string) (*api.Delivery, error) {
	var out *api.Delivery
	err := d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		dl, err := tx.GetDelivery(ctx, empresaID, id)
		if err != nil {
			return err
		}
		if dl.WebhookID != webhookID {
			return store.ErrNotFound
		}
		if _, err := tx.GetWebhook(ctx, empresaID, webhookID); err != nil {
			return err
		}
		if _, err := tx.Enqueue(ctx, outbox.DeliverArgs{EmpresaID: empresaID, DeliveryID: id, Manual: true, Nonce: newID()}, nil); err != nil {
			return err
		}
		out, err = Read(ctx, tx, dl)
		return err
	})
	return out, err
}

// Ping sends a webhook.ping test event to one webhook (active or not),
// once, in the background; the answer is the new delivery, whose attempt
// log shows the outcome. A webhook accepts PingsPerMinute pings a minute;
// one more is a RATE_LIMITED fault.Error saying when to try again.
func (d *Deliverer) Ping(ctx context.Context, empresaID, webhookID string) (*api.Delivery, error) {
	if _, err := d.st.GetWebhook(ctx, empresaID, webhookID); err != nil {
		return nil, err
	}
	if err := d.allowPing(webhookID); err != nil {
		return nil, err
	}
	var out *api.Delivery
	err := d.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetWebhook(ctx, empresaID, webhookID); err != nil {
			return err
		}
		body, err := webhook.MarshalEvent(webhook.EventPing, d.now().UTC().Truncate(time.Second), webhook.PingData{WebhookID: webhookID})
		if err != nil {
			return err
		}
		ev := &store.Event{ID: newID(), EmpresaID: empresaID, Type: string(webhook.EventPing), Payload: body}
		if err := tx.InsertEvent(ctx, ev); err != nil {
			return err
		}
		dl := &store.Delivery{ID: newID(), EmpresaID: empresaID, WebhookID: webhookID, EventID: ev.ID, State: string(api.DeliveryPending)}
		if err := tx.InsertDelivery(ctx, dl); err != nil {
			return err
		}
		if _, err := tx.Enqueue(ctx, outbox.DeliverArgs{EmpresaID: empresaID, DeliveryID: dl.ID, Manual: true, Nonce: newID()}, nil); err != nil {
			return err
		}
		out, err = Read(ctx, tx, dl)
		return err
	})
	return out, err
}

// eventList names the event types a webhook may subscribe to, in
// webhook.EventTypes' order.
func eventList() string {
	names := make([]string, 0, len(webhook.EventTypes()))
	for _, t := range webhook.EventTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
