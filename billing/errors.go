package billing

import (
	"errors"
	"fmt"

	"github.com/dtekit/dtekit/dte"
)

// Kind classifies an Error by what the caller should do about it; the HTTP
// server maps each Kind to a status code.
type Kind int

// The kinds of Error.
const (
	// KindInternal is a failure of the service itself (a database or
	// signing fault); the zero Kind, so an unclassified error is internal.
	KindInternal Kind = iota
	// KindValidation means the input is invalid; Details names the fields.
	KindValidation
	// KindNotFound means the resource does not exist for this company.
	KindNotFound
	// KindConflict means the write clashes with existing data (a CAF range,
	// a cliente rut, a producto codigo, a folio).
	KindConflict
	// KindForbidden means the credential may not perform the operation.
	KindForbidden
	// KindUnauthorized means the credential is missing, unknown or revoked.
	KindUnauthorized
	// KindIdempotencyMismatch means an Idempotency-Key was reused with a
	// different body.
	KindIdempotencyMismatch
	// KindIdempotencyInProgress means the first request with this
	// Idempotency-Key is still running.
	KindIdempotencyInProgress
	// KindUnavailable means a dependency is temporarily unavailable; retry.
	KindUnavailable
)

var kindNames = [...]string{
	KindInternal:              "internal",
	KindValidation:            "validation",
	KindNotFound:              "not_found",
	KindConflict:              "conflict",
	KindForbidden:             "forbidden",
	KindUnauthorized:          "unauthorized",
	KindIdempotencyMismatch:   "idempotency_mismatch",
	KindIdempotencyInProgress: "idempotency_in_progress",
	KindUnavailable:           "unavailable",
}

// String names the kind, e.g. "not_found".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Stable top-level error codes (contract §7) that billing returns.
const (
	CodeValidation             = dte.CodeValidationError
	CodeIdempotencyMismatch    = dte.CodeIdempotencyBodyMismatch
	CodeIdempotencyInProgress  = dte.CodeIdempotencyInProgress
	CodeNotFound               = "NOT_FOUND"
	CodeUnauthorized           = "UNAUTHORIZED"
	CodeForbidden              = "FORBIDDEN"
	CodeDuplicateFolio         = "DUPLICATE_FOLIO"
	CodeCAFRangeConflict       = "CAF_RANGE_CONFLICT"
	CodeClienteRUTConflict     = "CLIENTE_RUT_CONFLICT"
	CodeProductoCodigoConflict = "PRODUCTO_CODIGO_CONFLICT"
	CodeNoFolios               = "NO_FOLIOS_AVAILABLE"
	CodeNoCertificate          = "CERTIFICATE_REQUIRED"
	CodeUnavailable            = "SERVICE_UNAVAILABLE"
	CodeInternal               = "INTERNAL_ERROR"
	CodeNotImplemented         = "NOT_IMPLEMENTED"
)

// Error is the one error type billing returns from its methods. Kind says
// what class of failure it is (the server maps it to an HTTP status), Code
// is the contract's stable machine-readable code, Message explains it to a
// person, and Details lists per-field problems in dot notation.
//
// Err, when set, is the underlying cause; it is for logs and errors.Is and
// is never shown to API clients (Message is).
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Details []dte.FieldError
	Err     error
}

// Error returns the code and message, and the cause when there is one.
func (e *Error) Error() string {
	s := "billing: " + e.Code + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Envelope returns the contract's error envelope (§7) for e.
func (e *Error) Envelope() dte.ErrorResponse {
	sev := "error"
	if e.Kind == KindInternal {
		sev = "critical"
	}
	return dte.ErrorResponse{Code: e.Code, Message: e.Message, Error: e.Message, Details: e.Details, Severity: sev}
}

// AsError returns err as an *Error: itself when it is one (or wraps one),
// otherwise an internal error wrapping it. Nil stays nil.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: "internal error", Err: err}
}

// KindOf returns the Kind of err (KindInternal for a non-billing error).
func KindOf(err error) Kind { return AsError(err).Kind }

func errValidation(field string, code dte.DetailCode, msg string) *Error {
	return &Error{Kind: KindValidation, Code: CodeValidation, Message: msg,
		Details: []dte.FieldError{{Field: field, Code: code, Message: msg}}}
}

func errNotFound(what, id string) *Error {
	return &Error{Kind: KindNotFound, Code: CodeNotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

func errConflict(code, msg string) *Error {
	return &Error{Kind: KindConflict, Code: code, Message: msg}
}

func errInternal(op string, err error) *Error {
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: "internal error while " + op, Err: err}
}

// fromValidation turns dte's *ValidationError into a validation Error.
func fromValidation(ve *dte.ValidationError) *Error {
	env := ve.Envelope()
	return &Error{Kind: KindValidation, Code: env.Code, Message: env.Message, Details: ve.Details, Err: ve}
}
