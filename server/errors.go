package server

import (
	"encoding/json"
	"errors"
	"github.com/dtekit/dtekit/api"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// httpError is an error with the status and envelope it answers.
type httpError struct {
	status  int
	code    fault.Code
	message string
	details []dte.FieldError
	// header holds extra response headers (Allow, Retry-After).
	header http.Header
}

func (e *httpError) Error() string { return string(e.code) + ": " + e.message }

func newError(status int, code fault.Code, message string) *httpError {
	return &httpError{status: status, code: code, message: message}
}

// validation returns a 400 VALIDATION_ERROR with the given details.
func validation(message string, details ...dte.FieldError) *httpError {
	return &httpError{status: http.StatusBadRequest, code: fault.Validation, message: message, details: details}
}

// invalidParam reports one malformed query or form parameter.
func invalidParam(name string, code dte.DetailCode, message string) *httpError {
	return validation("invalid parameter "+name, dte.FieldError{Field: name, Code: code, Message: message})
}

var (
	errNotFound = newError(http.StatusNotFound, fault.NotFound, "resource not found")
)

// severity returns the envelope severity of an HTTP status.
func severity(status int) string {
	if status >= 500 {
		return "critical"
	}
	return "error"
}

// writeError answers err as the contract's envelope (§7). Errors the server
// does not recognize answer 500 INTERNAL_ERROR with the request id and are
// logged; their text never reaches the client.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	he := s.classify(r, err)
	for k, vs := range he.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	env := api.ErrorResponse{
		Code:     he.code,
		Message:  he.message,
		Details:  he.details,
		Severity: severity(he.status),
		Context:  map[string]any{"request_id": requestID(r.Context())},
	}
	writeJSON(w, he.status, env)
}

// classify maps err to its status and envelope.
func (s *Server) classify(r *http.Request, err error) *httpError {
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	if he := classifyService(err); he != nil {
		if he.status >= 500 {
			s.logger.LogAttrs(r.Context(), slog.LevelError, "request failed",
				slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		}
		return he
	}
	s.logger.LogAttrs(r.Context(), slog.LevelError, "internal error",
		slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
	return newError(http.StatusInternalServerError, fault.Internal, "internal error; quote the request id when reporting it")
}

func tooLarge(limit int64) *httpError {
	return newError(http.StatusRequestEntityTooLarge, fault.PayloadTooLarge,
		"the request body exceeds "+strconv.FormatInt(limit, 10)+" bytes")
}

// writeJSON writes v as the JSON body of a response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value the server writes is marshalable; reaching this is a
		// bug, and the client still gets an envelope.
		status = http.StatusInternalServerError
		b = []byte(`{"code":"` + string(fault.Internal) + `","message":"response encoding failed","severity":"critical"}`)
	}
	writeJSONBytes(w, status, b)
}

// writeJSONBytes writes b, already JSON, with the given status.
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
