// Package fault holds the errors of the billing service: the Error type
// every billing method returns, the Kind that says what class of failure
// it is, and the catalogue of stable top-level codes (Code, Codes) that
// the service and the HTTP server answer with (contract §7).
//
// It is a small shared-types package, like River's rivertype: billing, its
// internal subsystems and server all import it, and it imports nothing of
// them, so no cycle forms. An SDK user tests an error with As:
//
//	if fe := fault.As(err); fe.Kind == fault.KindNotFound { … }
package fault

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dtekit/dtekit/dte"
)

// Kind classifies an Error by what the caller should do about it; an HTTP
// layer maps each Kind to a status code.
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
	// a cliente rut, a producto codigo, a folio) or with the resource's
	// state.
	KindConflict
	// KindUnauthorized means the credential is missing, unknown or revoked.
	KindUnauthorized
	// KindIdempotencyMismatch means an Idempotency-Key was reused with a
	// different request.
	KindIdempotencyMismatch
	// KindIdempotencyInProgress means the first request with this
	// Idempotency-Key is still running.
	KindIdempotencyInProgress
	// KindUnavailable means a dependency is temporarily unavailable; retry.
	KindUnavailable
	// KindRateLimited means the operation was asked for too often; retry
	// after Error.RetryAfter.
	KindRateLimited
)

var kindNames = [...]string{
	KindInternal:              "internal",
	KindValidation:            "validation",
	KindNotFound:              "not_found",
	KindConflict:              "conflict",
	KindUnauthorized:          "unauthorized",
	KindIdempotencyMismatch:   "idempotency_mismatch",
	KindIdempotencyInProgress: "idempotency_in_progress",
	KindUnavailable:           "unavailable",
	KindRateLimited:           "rate_limited",
}

// String names the kind, e.g. "not_found".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Code is a stable, machine-readable top-level error code: the `code` of
// the contract's error envelope (§7). Per-field problems carry a
// dte.DetailCode instead.
type Code string

// Error returns the code itself: a Code is an error so that
// errors.Is(err, fault.NotFound) matches an error that carries this code
// (an *Error of package client, say), whatever its message.
func (c Code) Error() string { return string(c) }

// The catalogue of top-level codes. Every error the service or its HTTP
// server answers carries one of these; Codes lists them all.
const (
	// Validation is the contract's VALIDATION_ERROR: the input is invalid
	// and Details names each field.
	Validation Code = "VALIDATION_ERROR"
	// IdempotencyMismatch: an Idempotency-Key reused with another request.
	IdempotencyMismatch Code = "IDEMPOTENCY_BODY_MISMATCH"
	// IdempotencyInProgress: the first request with the key still runs.
	IdempotencyInProgress Code = "IDEMPOTENCY_IN_PROGRESS"
	// NotFound: no such resource for this company (or no such route).
	NotFound Code = "NOT_FOUND"
	// Unauthorized: the credential is missing, unknown or revoked.
	Unauthorized Code = "UNAUTHORIZED"
	// Forbidden: the credential lacks the role the operation needs.
	Forbidden Code = "FORBIDDEN"
	// WriteNotAllowed: a read-only credential tried to change data.
	WriteNotAllowed Code = "WRITE_NOT_ALLOWED"
	// DuplicateFolio: a document with this type and folio exists.
	DuplicateFolio Code = "DUPLICATE_FOLIO"
	// CAFRangeConflict: the CAF's folio range overlaps a registered one.
	CAFRangeConflict Code = "CAF_RANGE_CONFLICT"
	// ClienteRUTConflict: a cliente with this rut exists.
	ClienteRUTConflict Code = "CLIENTE_RUT_CONFLICT"
	// ProductoCodigoConflict: a producto with this codigo exists.
	ProductoCodigoConflict Code = "PRODUCTO_CODIGO_CONFLICT"
	// EmpresaRUTConflict: a company with this rut exists.
	EmpresaRUTConflict Code = "EMPRESA_RUT_CONFLICT"
	// Conflict: the write clashes with other stored data.
	Conflict Code = "CONFLICT"
	// AlreadyCeded: the document is ceded, or being ceded, through the
	// service already (a cesión of it that is not rechazada exists).
	AlreadyCeded Code = "ALREADY_CEDED"
	// InvalidState: the resource's state does not allow the operation
	// (e.g. submitting a document that is not firmado).
	InvalidState Code = "INVALID_STATE"
	// LimitExceeded: the company already has as many of a resource as one
	// company may (webhooks, API keys); delete one first.
	LimitExceeded Code = "LIMIT_EXCEEDED"
	// NoFolios: no registered CAF of the type has folios left.
	NoFolios Code = "NO_FOLIOS_AVAILABLE"
	// CertificateRequired: the company has no usable signing certificate.
	CertificateRequired Code = "CERTIFICATE_REQUIRED"
	// MethodNotAllowed: the route exists but not with this method.
	MethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// PayloadTooLarge: the request body exceeds its limit.
	PayloadTooLarge Code = "PAYLOAD_TOO_LARGE"
	// UnsupportedMediaType: the request body's Content-Type is not the
	// one the route reads.
	UnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	// RateLimited: too many requests; the Retry-After header says when to
	// try again.
	RateLimited Code = "RATE_LIMITED"
	// Unavailable: a dependency is temporarily unavailable; retry.
	Unavailable Code = "SERVICE_UNAVAILABLE"
	// Internal: a failure of the service itself.
	Internal Code = "INTERNAL_ERROR"
)

var codes = []Code{
	Validation, IdempotencyMismatch, IdempotencyInProgress, NotFound, Unauthorized, Forbidden,
	WriteNotAllowed, DuplicateFolio, CAFRangeConflict, ClienteRUTConflict, ProductoCodigoConflict,
	EmpresaRUTConflict, Conflict, AlreadyCeded, InvalidState, LimitExceeded, NoFolios, CertificateRequired, MethodNotAllowed,
	PayloadTooLarge, UnsupportedMediaType, RateLimited, Unavailable, Internal,
}

// Codes returns every top-level code of the catalogue, in declaration
// order (a new slice on each call).
func Codes() []Code { return slices.Clone(codes) }

// Error is the one error type billing returns from its methods. Kind says
// what class of failure it is, Code is the stable machine-readable code,
// Message explains it to a person, and Details lists per-field problems in
// dot notation.
//
// Err, when set, is the underlying cause; it is for logs and errors.Is and
// is never shown to API clients (Message is).
type Error struct {
	Kind    Kind
	Code    Code
	Message string
	Details []dte.FieldError
	Err     error
	// RetryAfter, on a KindRateLimited Error, is how long until the
	// operation is allowed again.
	RetryAfter time.Duration
}

// Error returns the code and message, and the cause when there is one.
func (e *Error) Error() string {
	s := "billing: " + string(e.Code) + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// As returns err as an *Error: itself when it is one (or wraps one), a
// validation Error when it is a *dte.ValidationError, otherwise an
// internal Error wrapping it. Nil stays nil.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ve *dte.ValidationError
	if errors.As(err, &ve) {
		return FromValidation(ve)
	}
	if isStorageFull(err) {
		return storageFull("writing", err)
	}
	return &Error{Kind: KindInternal, Code: Internal, Message: "internal error", Err: err}
}

// KindOf returns the Kind of err (KindInternal for an error that is not
// an *Error).
func KindOf(err error) Kind { return As(err).Kind }

// Invalid returns a validation Error about one field.
func Invalid(field string, code dte.DetailCode, msg string) *Error {
	return &Error{Kind: KindValidation, Code: Validation, Message: msg,
		Details: []dte.FieldError{{Field: field, Code: code, Message: msg}}}
}

// FromValidation turns dte's *ValidationError into a validation Error
// with the same details.
func FromValidation(ve *dte.ValidationError) *Error {
	return &Error{Kind: KindValidation, Code: Validation,
		Message: fmt.Sprintf("the request has %d invalid field(s)", len(ve.Details)), Details: ve.Details, Err: ve}
}

// Missing returns a not-found Error for the resource what with this id.
func Missing(what, id string) *Error {
	return &Error{Kind: KindNotFound, Code: NotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

// Clash returns a conflict Error with the given code.
func Clash(code Code, msg string) *Error {
	return &Error{Kind: KindConflict, Code: code, Message: msg}
}

// Throttled returns a rate-limited Error (RATE_LIMITED): msg says which
// limit was reached, retryAfter when the operation is allowed again.
func Throttled(msg string, retryAfter time.Duration) *Error {
	return &Error{Kind: KindRateLimited, Code: RateLimited, Message: msg, RetryAfter: retryAfter}
}

// Failed returns an internal Error: op says what the service was doing,
// err is the cause (kept for logs, never shown to clients).
//
// A store error matching store.ErrStorageFull gives a KindUnavailable
// Error instead: the database refused the write for want of space, kept
// nothing of it, and the same request may succeed once space is freed.
func Failed(op string, err error) *Error {
	if isStorageFull(err) {
		return storageFull(op, err)
	}
	return &Error{Kind: KindInternal, Code: Internal, Message: "internal error while " + op, Err: err}
}

// isStorageFull reports whether err is, or wraps, an error whose
// StorageFull method reports true (store.ErrStorageFull): fault does not
// import store, so that a program holding only the API's models and codes
// does not link the store.
func isStorageFull(err error) bool {
	var sf interface{ StorageFull() bool }
	return errors.As(err, &sf) && sf.StorageFull()
}

// storageFull is the Error of a write the database refused for want of
// space.
func storageFull(op string, err error) *Error {
	return &Error{Kind: KindUnavailable, Code: Unavailable,
		Message: "the server's storage is full: nothing was saved while " + op + "; retry later", Err: err}
}

// Detail codes the service adds to dte's (dte.DetailCodes) in the details
// of its validation errors: certificate and CAF intake, listings,
// webhooks, emission against the company's CAFs.
const (
	DetailCertTooLarge     dte.DetailCode = "FILE_TOO_LARGE"
	DetailCertInvalid      dte.DetailCode = "INVALID_CERTIFICATE"
	DetailCertPassword     dte.DetailCode = "WRONG_PASSWORD"
	DetailCertExpired      dte.DetailCode = "CERTIFICATE_EXPIRED"
	DetailCertWeakKey      dte.DetailCode = "WEAK_KEY"
	DetailCertRequired     dte.DetailCode = "CERTIFICATE_REQUIRED"
	DetailRutMismatch      dte.DetailCode = "RUT_MISMATCH"
	DetailInvalidCAF       dte.DetailCode = "INVALID_CAF"
	DetailCAFSignature     dte.DetailCode = "CAF_SIGNATURE_INVALID"
	DetailAmbienteMismatch dte.DetailCode = "AMBIENTE_MISMATCH"
	DetailTipoMismatch     dte.DetailCode = "TIPO_MISMATCH"
	DetailCAFExpired       dte.DetailCode = "CAF_EXPIRED"
	DetailCAFNotUsable     dte.DetailCode = "CAF_NOT_USABLE"
	DetailNoFolios         dte.DetailCode = "NO_FOLIOS_AVAILABLE"
	// DetailCAFNotRegistered: no CAF of the type is registered in the
	// company's environment at all (a company just moved to producción
	// whose CAFs are all of certificación), as against NO_FOLIOS_AVAILABLE.
	DetailCAFNotRegistered dte.DetailCode = "CAF_NOT_REGISTERED"
	DetailInvalidCursor    dte.DetailCode = "INVALID_CURSOR"
	DetailInvalidSecret    dte.DetailCode = "INVALID_SECRET"
	DetailInvalidURL       dte.DetailCode = "INVALID_URL"
	DetailUnsupportedEvent dte.DetailCode = "UNSUPPORTED_EVENT"
	// DetailNotFound: an id in the request (cliente_id, producto_id,
	// dte_id) names nothing of the company.
	DetailNotFound dte.DetailCode = "NOT_FOUND"
	// DetailInvalidState: a document named in the request is not in the
	// state the operation needs (sending one already sent or on its way).
	DetailInvalidState dte.DetailCode = "INVALID_STATE"
	// DetailNotCedible: a cesión of a document of a type the SII's
	// registry does not take (only 33, 34, 43 and 46 are cedible).
	DetailNotCedible dte.DetailCode = "NOT_CEDIBLE"
	// DetailNotAccepted: a cesión of a document the SII has not accepted
	// (aceptado or con_reparos).
	DetailNotAccepted dte.DetailCode = "DTE_NOT_ACCEPTED"
	// DetailSameParty: a cesionario that is the document's emisor.
	DetailSameParty dte.DetailCode = "SAME_AS_EMISOR"
)
