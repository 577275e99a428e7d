package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
)

// statusOf is the HTTP status the server answers each code of the
// catalogue with (contract §7; server/status.go maps kinds to these).
var statusOf = map[fault.Code]int{
	fault.Validation: 400, fault.IdempotencyMismatch: 422, fault.IdempotencyInProgress: 409, fault.NotFound: 404,
	fault.Unauthorized: 401, fault.Forbidden: 403, fault.WriteNotAllowed: 403, fault.DuplicateFolio: 409,
	fault.CAFRangeConflict: 409, fault.ClienteRUTConflict: 409, fault.ProductoCodigoConflict: 409,
	fault.EmpresaRUTConflict: 409, fault.Conflict: 409, fault.AlreadyCeded: 409, fault.InvalidState: 409, fault.LimitExceeded: 409,
	fault.NoFolios: 409, fault.CertificateRequired: 409, fault.MethodNotAllowed: 405, fault.PayloadTooLarge: 413,
	fault.UnsupportedMediaType: 415, fault.RateLimited: 429, fault.Unavailable: 503, fault.Internal: 500,
}

// TestEveryCodeDecodes: an answer carrying each code of fault.Codes()
// becomes an *Error that errors.Is matches by that code and by no other,
// with the status, the message, the field details in dot notation and
// the request id.
func TestEveryCodeDecodes(t *testing.T) {
	t.Parallel()
	codes := fault.Codes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := fault.Code(r.URL.Query().Get("code"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-"+string(code))
		w.WriteHeader(statusOf[code])
		fmt.Fprintf(w, `{"code":%q,"message":"message of %s","severity":"error",`+
			`"details":[{"field":"detalle[0].precio","code":"OUT_OF_RANGE","message":"must be positive"}],"context":{"request_id":"req-%s"}}`,
			code, code, code)
	}))
	defer srv.Close()
	c, err := New(srv.URL, WithAPIKey("dtk_codes"), WithRetryPolicy(RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range codes {
		status, ok := statusOf[code]
		if !ok {
			t.Errorf("%s is new in the catalogue: give it its status here", code)
			continue
		}
		err := c.call(context.Background(), request{method: http.MethodGet, path: "/dte", query: values("code", string(code))})
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %T %v, want *Error", code, err, err)
			continue
		}
		if !errors.Is(err, code) {
			t.Errorf("%s: errors.Is does not match its own code", code)
		}
		for _, other := range codes {
			if other != code && errors.Is(err, other) {
				t.Errorf("%s: errors.Is matches %s too", code, other)
			}
		}
		if e.StatusCode != status || e.Code != code || e.Message != "message of "+string(code) || e.RequestID != "req-"+string(code) ||
			len(e.Details) != 1 || e.Details[0].Field != "detalle[0].precio" || len(e.Field("detalle[0].precio")) != 1 {
			t.Errorf("%s: %+v", code, e)
		}
		// Wrapped by a caller, it still matches.
		if !errors.Is(fmt.Errorf("emitting: %w", err), code) {
			t.Errorf("%s: a wrapped error does not match", code)
		}
	}
	if len(codes) != len(statusOf) {
		t.Errorf("the catalogue has %d codes, this table %d", len(codes), len(statusOf))
	}
}
