package server

import (
	"errors"
	"net/http"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// kindStatus is the status of each billing error kind (contract §7):
// validation 400, credential 401, not found 404, conflicts and a
// key still in progress 409, a key reused with another body 422, an
// operation asked for too often 429, a dependency down 503, anything else
// 500.
var kindStatus = map[fault.Kind]int{
	fault.KindValidation:            http.StatusBadRequest,
	fault.KindUnauthorized:          http.StatusUnauthorized,
	fault.KindNotFound:              http.StatusNotFound,
	fault.KindConflict:              http.StatusConflict,
	fault.KindIdempotencyInProgress: http.StatusConflict,
	fault.KindIdempotencyMismatch:   http.StatusUnprocessableEntity,
	fault.KindRateLimited:           http.StatusTooManyRequests,
	fault.KindUnavailable:           http.StatusServiceUnavailable,
	fault.KindInternal:              http.StatusInternalServerError,
}

// classifyService maps a billing error (a *fault.Error, or a
// *dte.ValidationError) to its answer, or returns nil when
// err is not one. Internal errors keep billing's generic message; their
// cause (Err) goes to the log only.
func classifyService(err error) *httpError {
	var be *fault.Error
	var ve *dte.ValidationError
	switch {
	case errors.As(err, &be):
	case errors.As(err, &ve):
		be = fault.FromValidation(ve)
	default:
		// An error billing did not wrap may still be one of the store's
		// that fault classifies (storage full).
		if be = fault.As(err); be.Kind == fault.KindInternal {
			return nil
		}
	}
	status, ok := kindStatus[be.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	code, msg := be.Code, be.Message
	if status == http.StatusInternalServerError {
		code, msg = fault.Internal, "internal error; quote the request id when reporting it"
	}
	if code == "" {
		code = fault.Internal
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if status == http.StatusTooManyRequests {
		// The one 429 answer, Retry-After included.
		return rateLimited(msg, be.RetryAfter)
	}
	he := &httpError{status: status, code: code, message: msg, details: be.Details}
	if status == http.StatusServiceUnavailable {
		he.header = http.Header{"Retry-After": {unavailableRetryAfter}}
	}
	return he
}

// unavailableRetryAfter is the Retry-After (seconds) of a 503 answered for
// an unavailable dependency (the credential store, storage full).
const unavailableRetryAfter = "5"
