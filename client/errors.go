package client

import (
	"fmt"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// Error is an answer of status 400 or more: the contract's error envelope
// with the HTTP status and the request id. errors.Is(err, c) holds for the
// fault.Code c it carries.
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Code is the stable, machine-readable code (fault's catalogue); an
	// answer without the envelope gets fault.Internal for a 5xx and
	// fault.Validation otherwise, so a program always has one.
	Code fault.Code
	// Message is the server's human message.
	Message string
	// Details are the per-field problems, in dot notation
	// ("items.0.cantidad").
	Details []dte.FieldError
	// RequestID is the X-Request-Id of the answer, to quote when asking
	// the server's operators.
	RequestID string
	// RetryAfter is the server's Retry-After, when it gave one.
	RetryAfter string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("dtekit: %d %s: %s", e.StatusCode, e.Code, e.Message)
	for i, d := range e.Details {
		if i == 3 {
			s += fmt.Sprintf(" (and %d more)", len(e.Details)-i)
			break
		}
		s += fmt.Sprintf("; %s: %s", d.Field, d.Message)
	}
	if e.RequestID != "" {
		s += " [request " + e.RequestID + "]"
	}
	return s
}

// Is reports whether target is the fault.Code this error carries.
func (e *Error) Is(target error) bool {
	c, ok := target.(fault.Code)
	return ok && c == e.Code
}

// Field returns the details about one field (dot notation).
func (e *Error) Field(name string) []dte.FieldError {
	var out []dte.FieldError
	for _, d := range e.Details {
		if d.Field == name {
			out = append(out, d)
		}
	}
	return out
}

// errorFrom builds the Error of an answer from its envelope (nil when the
// body held none).
func errorFrom(status int, env *api.ErrorResponse, requestID, retryAfter string) *Error {
	e := &Error{StatusCode: status, RequestID: requestID, RetryAfter: retryAfter}
	if env != nil {
		e.Code, e.Message, e.Details = env.Code, env.Message, env.Details
		if e.Message == "" {
			e.Message = env.Error
		}
	}
	if e.Code == "" {
		e.Code = fault.Validation
		if status >= 500 {
			e.Code = fault.Internal
		}
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("the server answered %d without an error body", status)
	}
	return e
}
