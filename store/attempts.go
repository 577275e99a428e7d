package store

import (
	"context"
	"time"
)

// Attempt triggers.
const (
	TriggerScheduled = "scheduled" // an attempt of the retry schedule
	TriggerManual    = "manual"    // a resend or ping asked for by the integrator
)

// MaxAttemptResponse bounds DeliveryAttempt.Response; longer responses are
// cut by the store.
const MaxAttemptResponse = 16 << 10

// DeliveryAttempt is one attempt of a delivery: a row of its attempt log.
type DeliveryAttempt struct {
	ID          string
	EmpresaID   string
	DeliveryID  string
	WebhookID   string
	Attempt     int    // 1 for the delivery's first attempt, manual ones counted
	Trigger     string // TriggerScheduled or TriggerManual
	AttemptedAt time.Time
	StatusCode  int    // HTTP status, 0 when there was no response
	ErrorClass  string // "" on success; http, timeout, dns, connect, tls, blocked, request
	Error       string // short description of a failure without response
	Duration    time.Duration
	Response    []byte // start of the response body, at most MaxAttemptResponse bytes
	OK          bool   // the receiver answered 2xx
}

// AttemptLog is the attempt log of webhook deliveries. The Tx of every
// backend implements it (assert tx.(store.AttemptLog)); the Store does too,
// for its read methods.
type AttemptLog interface {
	// InsertDeliveryAttempt appends an attempt (inside a write
	// transaction only).
	InsertDeliveryAttempt(ctx context.Context, a *DeliveryAttempt) error
	// ListDeliveryAttempts returns a delivery's attempts, oldest first,
	// at most MaxLimit of the latest.
	ListDeliveryAttempts(ctx context.Context, empresaID, deliveryID string) ([]DeliveryAttempt, error)
	// WebhookFailingSince returns when the webhook's current run of
	// failures began: the time of its first failed attempt after its last
	// successful one, or the zero time when its latest attempt succeeded
	// or it has none.
	WebhookFailingSince(ctx context.Context, empresaID, webhookID string) (time.Time, error)
}
