package billing

import (
	"context"
	"strings"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/store"
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
	// ErrorClass is empty on success; otherwise the category of the
	// failure: http_status, timeout, dns, refused, tls, private_address or
	// request. Error says it in a sentence; the details (addresses, the
	// network error) are in the server's log only.
	ErrorClass string `json:"error_class,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// Response is the start of the response body (at most 16 KiB), shown
	// by GetDelivery and left out of ListDeliveries' pages.
	Response string `json:"response,omitempty"`
}

// DeliveryPage is a page of a webhook's deliveries, newest first.
type DeliveryPage struct {
	Data       []Delivery `json:"data"`
	NextCursor *string    `json:"next_cursor"`
	TotalCount int64      `json:"total_count"`
}

// deliveryOut renders a delivery with its event type and attempts.
func deliveryOut(r *delivery.Record) *Delivery {
	out := &Delivery{ID: r.ID, WebhookID: r.WebhookID, EventID: r.EventID, EventType: r.EventType, State: r.State,
		Attempts: r.Delivery.Attempts, LastError: r.LastError, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		AttemptLog: make([]DeliveryAttempt, 0, len(r.Attempts))}
	if n := len(r.Attempts); n > 0 && !r.Attempts[n-1].OK {
		// A last error written from an attempt ("class: …") is shown as
		// its category's sentence: rows of earlier versions kept the
		// network error there.
		if last := r.Attempts[n-1]; last.ErrorClass != "" && strings.HasPrefix(out.LastError, last.ErrorClass+":") {
			out.LastError = delivery.PublicError(last.ErrorClass, last.StatusCode)
		}
	}
	if r.LastStatusCode != 0 {
		c := r.LastStatusCode
		out.LastStatusCode = &c
	}
	if !r.NextAttemptAt.IsZero() {
		t := r.NextAttemptAt.UTC()
		out.NextAttemptAt = &t
	}
	for _, a := range r.Attempts {
		da := DeliveryAttempt{Attempt: a.Attempt, Trigger: a.Trigger, AttemptedAt: a.AttemptedAt.UTC(),
			ErrorClass: delivery.PublicClass(a.ErrorClass), Error: delivery.PublicError(a.ErrorClass, a.StatusCode),
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

// ListDeliveries pages through a webhook's deliveries, newest first, each
// with its attempt log, whose attempts carry no response body (GetDelivery
// has them), so a page stays small whatever the receiver answered. A
// deleted webhook's deliveries stay readable.
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
	out := &DeliveryPage{Data: make([]Delivery, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		r, err := delivery.Read(ctx, s.st, &page.Items[i])
		if err != nil {
			return nil, fault.Failed("reading a delivery", err)
		}
		d := deliveryOut(r)
		// A list shows each attempt without the receiver's response, as
		// GitHub's list of deliveries does: up to 100 attempts of 16 KiB
		// on each of 100 deliveries would make a page of 160 MB. GET the
		// delivery for its responses.
		for j := range d.AttemptLog {
			d.AttemptLog[j].Response = ""
		}
		out.Data = append(out.Data, *d)
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
	r, err := delivery.Read(ctx, s.st, d)
	if err != nil {
		return nil, fault.Failed("reading a delivery", err)
	}
	return deliveryOut(r), nil
}

// ResendDelivery sends a delivery again, once, now: same webhook-id and
// bytes, fresh timestamp and signature, no retries of its own. It works
// on any state; a success marks the delivery succeeded (and stops its
// pending retries). The attempt runs in the background; the answer is the
// delivery as it stands.
func (s *Service) ResendDelivery(ctx context.Context, empresaID, webhookID, id string) (*Delivery, error) {
	r, err := s.dlv.Resend(ctx, empresaID, webhookID, id)
	if err != nil {
		return nil, storeErr(err, "resending a delivery", "delivery", id)
	}
	return deliveryOut(r), nil
}

// PingWebhook sends a webhook.ping test event to one webhook (active or
// not), once, in the background; the answer is the new delivery, whose
// attempt log shows the outcome.
func (s *Service) PingWebhook(ctx context.Context, empresaID, webhookID string) (*Delivery, error) {
	r, err := s.dlv.Ping(ctx, empresaID, webhookID)
	if err != nil {
		return nil, storeErr(err, "pinging a webhook", "webhook", webhookID)
	}
	return deliveryOut(r), nil
}
