package api

import (
	"time"
)

// Webhook is a registered webhook endpoint (contract §2.5). Secret is
// complete only in the answer to its creation or to a rotation of its
// secret, masked afterwards.
type Webhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Secret    string    `json:"secret,omitempty"`
	IsActive  bool      `json:"is_active"`
	CreatedAt time.Time `json:"created_at"`
}

// WebhookInput registers a webhook (contract §4.4).
type WebhookInput struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret,omitempty"`
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
	// IsActive true turns a disabled webhook back on, as enabling it
	// does; false turns it off: events recorded from then on are not
	// delivered to it, and its pending deliveries end (failed, "webhook
	// disabled") when their next attempt comes due.
	IsActive *bool `json:"is_active,omitempty"`
}

// WebhookSecretParams rotates a webhook's signing secret.
type WebhookSecretParams struct {
	// Secret is the new secret (whsec_ form); "" has one generated.
	Secret string `json:"secret"`
}

// DeliveryState is where a delivery stands. A delivery starts pending;
// a 2xx answer makes it succeeded; it fails when its retry schedule runs
// out, the receiver answers 410 Gone, or its webhook is deleted or
// disabled. A resend works on any state, and its success makes a failed
// delivery succeeded (a failed resend changes no state).
type DeliveryState string

// The states of a delivery.
const (
	// DeliveryPending: attempts remain.
	DeliveryPending DeliveryState = "pending"
	// DeliverySucceeded: a 2xx was received.
	DeliverySucceeded DeliveryState = "succeeded"
	// DeliveryFailed: the schedule ran out, the receiver answered 410
	// Gone, or the webhook was deleted or disabled.
	DeliveryFailed DeliveryState = "failed"
)

// deliveryNext is the transition table of a delivery: the states each
// one may move to (staying in the same state is not a transition).
var deliveryNext = table[DeliveryState]{
	DeliveryPending:   {DeliverySucceeded, DeliveryFailed},
	DeliveryFailed:    {DeliverySucceeded},
	DeliverySucceeded: nil,
}

// Valid reports whether e is one of the delivery states.
func (e DeliveryState) Valid() bool { return deliveryNext.valid(e) }

// Next lists the states a delivery in state e may move to; none for a
// succeeded delivery or an unknown state.
func (e DeliveryState) Next() []DeliveryState { return deliveryNext.next(e) }

// CanBecome reports whether a delivery in state e may move to next.
func (e DeliveryState) CanBecome(next DeliveryState) bool { return deliveryNext.can(e, next) }

// Delivery is one event sent (or to be sent) to one webhook, with its
// attempt log.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhook_id"`
	// EventID is the event's id, sent as webhook-id on every attempt.
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	// State is DeliveryPending, DeliverySucceeded or DeliveryFailed.
	State          DeliveryState `json:"state"`
	Attempts       int           `json:"attempts"`
	LastStatusCode *int          `json:"last_status_code"`
	LastError      string        `json:"last_error,omitempty"`
	NextAttemptAt  *time.Time    `json:"next_attempt_at"`
	CreatedAt      time.Time     `json:"created_at"`
	UpdatedAt      time.Time     `json:"updated_at"`
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
	// when one delivery is read and left out of the pages of the list.
	Response string `json:"response,omitempty"`
}

// DeliveryListParams pages a webhook's deliveries, newest first.
type DeliveryListParams struct {
	ListParams
	// WebhookID is the webhook whose deliveries are listed (required).
	WebhookID string
}

// DeliveryParams names the webhook a delivery belongs to, for reading
// or resending it.
type DeliveryParams struct {
	// WebhookID is the delivery's webhook (required).
	WebhookID string
}
