package webhook

import "errors"

// Errors returned by verification. Every error the package returns for a
// rejected delivery wraps exactly one of them, so callers can branch with
// errors.Is while the message still says which header or value failed.
var (
	// ErrMissingHeader: webhook-id, webhook-timestamp or webhook-signature
	// is absent or empty.
	ErrMissingHeader = errors.New("webhook: missing header")
	// ErrInvalidHeader: a header is present but malformed or over a limit
	// (timestamp not plain digits, id with a '.', too many signature
	// entries, oversized header, header repeated).
	ErrInvalidHeader = errors.New("webhook: invalid header")
	// ErrTooOld: the timestamp is further in the past than the tolerance.
	ErrTooOld = errors.New("webhook: timestamp too old")
	// ErrTooNew: the timestamp is further in the future than the tolerance.
	ErrTooNew = errors.New("webhook: timestamp too new")
	// ErrNoMatchingSignature: no v1 entry matches any of the secrets.
	ErrNoMatchingSignature = errors.New("webhook: no matching signature")
)

// Reasons reported by [Verifier.Middleware] for requests it answers itself
// without a verification failure.
var (
	// ErrBodyTooLarge: the request body exceeded the middleware's cap (413).
	ErrBodyTooLarge = errors.New("webhook: request body too large")
	// ErrDuplicate: the webhook-id was already processed (answered 200
	// without calling the handler).
	ErrDuplicate = errors.New("webhook: duplicate delivery")
)
