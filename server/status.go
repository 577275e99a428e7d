package server

import (
	"errors"
	"net/http"

	"github.com/dtekit/dtekit/billing"
)

// kindStatus is the status of each billing error kind (contract §7):
// validation 400, credential 401, role 403, not found 404, conflicts and a
// key still in progress 409, a key reused with another body 422, a
// dependency down 503, anything else 500.
var kindStatus = map[billing.Kind]int{
	billing.KindValidation:            http.StatusBadRequest,
	billing.KindUnauthorized:          http.StatusUnauthorized,
	billing.KindForbidden:             http.StatusForbidden,
	billing.KindNotFound:              http.StatusNotFound,
	billing.KindConflict:              http.StatusConflict,
	billing.KindIdempotencyInProgress: http.StatusConflict,
	billing.KindIdempotencyMismatch:   http.StatusUnprocessableEntity,
	billing.KindUnavailable:           http.StatusServiceUnavailable,
	billing.KindInternal:              http.StatusInternalServerError,
}

// classifyService maps a billing error to its answer, or returns nil when
// err is not one. Internal errors keep billing's generic message; their
// cause (Err) goes to the log only.
func classifyService(err error) *httpError {
	var be *billing.Error
	if !errors.As(err, &be) {
		return nil
	}
	status, ok := kindStatus[be.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	code, msg := be.Code, be.Message
	if status == http.StatusInternalServerError {
		code, msg = CodeInternal, "internal error; quote the request id when reporting it"
	}
	if code == "" {
		code = CodeInternal
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &httpError{status: status, code: code, message: msg, details: be.Details}
}
