package store

import "time"

// Attempt triggers.
const (
	TriggerScheduled = "scheduled" // an attempt of the retry schedule
	TriggerManual    = "manual"    // a resend or ping asked for by the integrator
)

// MaxAttemptResponse bounds DeliveryAttempt.Response; longer responses are
// cut by the store.
const MaxAttemptResponse = 16 << 10

// DeliveryAttempt is one attempt of a delivery: a row of its attempt log,
// written by Tx.InsertDeliveryAttempt and read by
// Reader.ListDeliveryAttempts.
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
