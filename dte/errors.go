package dte

import (
	"fmt"
	"strings"
)

// FieldError is one problem with one field of a request. It maps 1:1 onto an
// element of the contract's error envelope `details` (§7).
type FieldError struct {
	// Field is the dot path of the offending field, with indexes:
	// "receptor.rut", "detalle[2].cantidad".
	Field string `json:"field"`
	// Code is a stable, documented detail code such as INVALID_RUT.
	Code DetailCode `json:"code"`
	// Message explains the problem to a person.
	Message string `json:"message"`
	// Action recommends what the client should do, when that helps.
	Action string `json:"action,omitempty"`
}

func (e FieldError) Error() string { return fmt.Sprintf("%s: %s (%s)", e.Field, e.Message, e.Code) }

// ValidationError holds every problem found in a request at once.
type ValidationError struct {
	Details []FieldError
}

func (e *ValidationError) Error() string {
	if len(e.Details) == 1 {
		return "dte: invalid request: " + e.Details[0].Error()
	}
	parts := make([]string, len(e.Details))
	for i, d := range e.Details {
		parts[i] = d.Error()
	}
	return fmt.Sprintf("dte: invalid request (%d problems): %s", len(e.Details), strings.Join(parts, "; "))
}
