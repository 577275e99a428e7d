package server

import (
	"github.com/dtekit/dtekit/api"
	"net/http"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// TestUnknownQueryParameter: a query parameter the route does not declare
// in the OpenAPI document is a 400 naming it (?folio=1 on the DTE list
// used to answer every document); declared ones pass.
func TestUnknownQueryParameter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1})
	const apiBase = "/api/v1/billing"
	id, _ := f.emit(f.A, factura(1))
	for _, tc := range []struct {
		target  string
		unknown string // "" when the request is fine
	}{
		{apiBase + "/dte?folio=1", "folio"},
		{apiBase + "/dte?limit=5&tipo_dte=33", ""},
		{apiBase + "/dte?limit=5&Limit=6", "Limit"},
		{apiBase + "/dte/" + id + "?include_xml=true", ""},
		{apiBase + "/dte/" + id + "?includeXml=true", "includeXml"},
		{apiBase + "/dte/" + id + "/pdf?formato=80mm", ""},
		{apiBase + "/clientes?limit=2&sort=rut", "sort"},
		{apiBase + "/empresa?x=1", "x"},
		{apiBase + "/webhooks?", ""},
	} {
		r := f.do("GET", tc.target, nil, f.A.readHdr...)
		if tc.unknown == "" {
			if r.Status != http.StatusOK {
				t.Errorf("GET %s: %d %s", tc.target, r.Status, truncate(r.Body))
			}
			continue
		}
		if r.Status != http.StatusBadRequest || r.Code() != fault.Validation {
			t.Errorf("GET %s: %d %s, want 400 VALIDATION_ERROR", tc.target, r.Status, truncate(r.Body))
			continue
		}
		var env api.ErrorResponse
		r.JSON(t, &env)
		if len(env.Details) != 1 || env.Details[0].Field != tc.unknown || env.Details[0].Code != dte.CodeUnknownField ||
			!strings.Contains(env.Message, tc.unknown) {
			t.Errorf("GET %s: %+v, want one UNKNOWN_FIELD detail on %q", tc.target, env, tc.unknown)
		}
	}
}

// TestRoutesAreDocumented: a route registered without an operation in the
// OpenAPI document makes New fail instead of serving an undocumented
// route.
func TestRoutesAreDocumented(t *testing.T) {
	if _, err := queryChecker("GET /api/v1/billing/undocumented"); err == nil {
		t.Fatal("queryChecker accepted a route the document lacks")
	}
	all, err := declaredQuery()
	if err != nil {
		t.Fatal(err)
	}
	if q := all["GET /api/v1/billing/dte"]; !q["limit"] || !q["cursor"] || !q["tipo_dte"] || q["folio"] {
		t.Errorf("the DTE list's declared parameters: %v", q)
	}
}
