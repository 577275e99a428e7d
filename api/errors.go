package api

import (
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// ErrorResponse is the contract's error envelope (§7): every answer of
// the server with a status of 400 or more carries one.
type ErrorResponse struct {
	Code    fault.Code `json:"code"`
	Message string     `json:"message"`
	// Error is the contract's optional alias of Message. This server
	// leaves it out, so that a body states its message once; the field
	// stays to read answers of servers that send it.
	Error    string           `json:"error,omitempty"`
	Details  []dte.FieldError `json:"details,omitempty"`
	Severity string           `json:"severity,omitempty"`
	Context  map[string]any   `json:"context,omitempty"`
}
