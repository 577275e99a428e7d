package billing

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Delivery is one event sent (or to be sent) to one webhook, with its
// attempt log.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	// EventID is the event's id, sent as webhook-id on every attempt.
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// State is "pending" (attempts remain), "succeeded" (a 2xx was
	// received) or "failed" (the schedule ran out, 410 Gone, or the
	// webhook was deleted or disabled).
	State          string     `json:"state"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      string     `json:"last_error,omitempty"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	// AttemptLog lists the attempts, oldest first.
	AttemptLog []DeliveryAttempt `json:"attempt_log"`
}

// DeliveryAttempt is one attempt of a delivery.
type DeliveryAttempt struct {
	Attempt int `json:"attempt"`
	// Trigger is "scheduled" (the retry schedule) or "manual" (resend,
	// ping).
	Trigger     string    `json:"trigger"`
	AttemptedAt time.Time `json:"attempted_at"`
	// StatusCode is the receiver's HTTP status; null when there was no
	// response.
	StatusCode *int `json:"status_code"`
	// ErrorClass is empty on success; otherwise http, timeout, dns,
	// connect, tls, blocked or request.
	ErrorClass string `json:"error_class,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Response is the start of the response body (at most 16 KiB).
	Response string `json:"response,omitempty"`
}

// DeliveryPage is a page of a webhook's deliveries, newest first.
type DeliveryPage struct {
	Data       []Delivery `json:"data"`
	NextCursor *string    `json:"next_cursor"`
}

// deliveryFromStore renders a delivery with its event type and attempts.
func (s *Service) deliveryFromStore(ctx context.Context, r store.Reader, d *store.Delivery) (Delivery, error) {
	out := Delivery{ID: d.ID, WebhookID: d.WebhookID, EventID: d.EventID, State: d.State, Attempts: d.Attempts,
		LastError: d.LastError, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), AttemptLog: []DeliveryAttempt{}}
	if d.LastStatusCode != 0 {
		c := d.LastStatusCode
		out.LastStatusCode = &c
	}
	if !d.NextAttemptAt.IsZero() {
		t := d.NextAttemptAt.UTC()
		out.NextAttemptAt = &t
	}
	if ev, err := r.GetEvent(ctx, d.EmpresaID, d.EventID); err == nil {
		out.EventType = ev.Type
	} else if !errors.Is(err, store.ErrNotFound) {
		return out, err
	}
	atts, err := r.ListDeliveryAttempts(ctx, d.EmpresaID, d.ID)
	if err != nil {
		return out, err
	}
	for _, a := range atts {
		da := DeliveryAttempt{Attempt: a.Attempt, Trigger: a.Trigger, AttemptedAt: a.AttemptedAt.UTC(),
			ErrorClass: a.ErrorClass, Error: a.Error, DurationMS: a.Duration.Milliseconds(),
			Response: strings.ToValidUTF8(string(a.Response), "\uFFFD")}
		if a.StatusCode != 0 {
			c := a.StatusCode
			da.StatusCode = &c
		}
		out.AttemptLog = append(out.AttemptLog, da)
	}
	return out, nil
}

// ListDeliveries pages through a webhook's deliveries, newest first, each
// with its attempt log. A deleted webhook's deliveries stay readable.
func (s *Service) ListDeliveries(ctx context.Context, empresaID, webhookID, cursor string, limit int) (*DeliveryPage, error) {
	n, verr := pageLimit(limit)
	if verr != nil {
		return nil, verr
	}
	page, err := s.st.ListDeliveries(ctx, empresaID, webhookID, store.ListFilter{Cursor: cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing deliveries", "webhook", webhookID)
	}
	// An empty page of a webhook the company does not have (another
	// tenant's id, or an unknown one) is not found, like every other id of
	// another tenant. A deleted webhook's deliveries stay readable: they are
	// scoped by company in the store.
	if len(page.Items) == 0 && cursor == "" {
		if _, err := s.st.GetWebhook(ctx, empresaID, webhookID); err != nil {
			return nil, storeErr(err, "listing deliveries", "webhook", webhookID)
		}
	}
	out := &DeliveryPage{Data: make([]Delivery, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor)}
	for i := range page.Items {
		d, err := s.deliveryFromStore(ctx, s.st, &page.Items[i])
		if err != nil {
			return nil, fault.Failed("reading a delivery", err)
		}
		out.Data = append(out.Data, d)
	}
	return out, nil
}

// GetDelivery returns one delivery of a webhook with its attempt log.
func (s *Service) GetDelivery(ctx context.Context, empresaID, webhookID, id string) (*Delivery, error) {
	d, err := s.st.GetDelivery(ctx, empresaID, id)
	if err == nil && d.WebhookID != webhookID {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, storeErr(err, "reading a delivery", "delivery", id)
	}
	out, err := s.deliveryFromStore(ctx, s.st, d)
	if err != nil {
		return nil, fault.Failed("reading a delivery", err)
	}
	return &out, nil
}

// ResendDelivery sends a delivery again, once, now: same webhook-id and
// bytes, fresh timestamp and signature, no retries of its own. It works
// on any state; a success marks the delivery succeeded (and stops its
// pending retries). The attempt runs in the background; the answer is the
// delivery as it stands.
func (s *Service) ResendDelivery(ctx context.Context, empresaID, webhookID, id string) (*Delivery, error) {
	var out Delivery
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDelivery(ctx, empresaID, id)
		if err != nil {
			return err
		}
		if d.WebhookID != webhookID {
			return store.ErrNotFound
		}
		if _, err := tx.GetWebhook(ctx, empresaID, webhookID); err != nil {
			return err
		}
		if _, err := tx.Enqueue(ctx, outbox.DeliverArgs{EmpresaID: empresaID, DeliveryID: id, Manual: true, Nonce: newID()}, nil); err != nil {
			return err
		}
		out, err = s.deliveryFromStore(ctx, tx, d)
		return err
	})
	if err != nil {
		return nil, storeErr(err, "resending a delivery", "delivery", id)
	}
	return &out, nil
}

// PingWebhook sends a webhook.ping test event to one webhook (active or
// not), once, in the background; the answer is the new delivery, whose
// attempt log shows the outcome.
func (s *Service) PingWebhook(ctx context.Context, empresaID, webhookID string) (*Delivery, error) {
	var out Delivery
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetWebhook(ctx, empresaID, webhookID); err != nil {
			return err
		}
		body, err := webhook.MarshalEvent(webhook.EventPing, s.now().UTC().Truncate(time.Second), webhook.PingData{WebhookID: webhookID})
		if err != nil {
			return err
		}
		ev := &store.Event{ID: newID(), EmpresaID: empresaID, Type: string(webhook.EventPing), Payload: body}
		if err := tx.InsertEvent(ctx, ev); err != nil {
			return err
		}
		d := &store.Delivery{ID: newID(), EmpresaID: empresaID, WebhookID: webhookID, EventID: ev.ID, State: store.DeliveryPending}
		if err := tx.InsertDelivery(ctx, d); err != nil {
			return err
		}
		if _, err := tx.Enqueue(ctx, outbox.DeliverArgs{EmpresaID: empresaID, DeliveryID: d.ID, Manual: true, Nonce: newID()}, nil); err != nil {
			return err
		}
		out, err = s.deliveryFromStore(ctx, tx, d)
		return err
	})
	if err != nil {
		return nil, storeErr(err, "pinging a webhook", "webhook", webhookID)
	}
	return &out, nil
}
