package server

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// TestCompanyLimits: a company holds at most Limits.Clientes clientes,
// Limits.Productos productos and Limits.CAFs CAFs (issue 29, point 9):
// one more answers 409 LIMIT_EXCEEDED and stores nothing, deleting one
// makes room, and one company at its cap leaves the other's room
// untouched. The caps are set small here; their defaults are documented.
func TestCompanyLimits(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		// The fixture gives each company 3 CAFs: room for one more.
		f := newFixtureWith(t, open(t), RateLimit{PerSecond: -1}, billing.Config{Limits: billing.Limits{Clientes: 2, Productos: 2, CAFs: 4}})
		total := func(c company, path string) string {
			t.Helper()
			r := f.do("GET", apiBase+path, nil, c.readHdr...)
			want(t, r, 200)
			var p struct {
				TotalCount int `json:"total_count"`
			}
			r.JSON(t, &p)
			return strings.Repeat("x", p.TotalCount)
		}

		var first struct{ ID string }
		r := f.do("POST", apiBase+"/clientes", map[string]any{"rut": "11111111-1", "razon_social": "Uno"}, f.A.writeHdr...)
		want(t, r, 201)
		r.JSON(t, &first)
		want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": "22222222-2", "razon_social": "Dos"}, f.A.writeHdr...), 201)
		r = f.do("POST", apiBase+"/clientes", map[string]any{"rut": "33333333-3", "razon_social": "Tres"}, f.A.writeHdr...)
		want(t, r, 409, fault.LimitExceeded)
		if !strings.Contains(string(r.Body), "at most 2 clientes") {
			t.Errorf("the refusal does not state the cap: %s", r.Body)
		}
		if n := len(total(f.A, "/clientes")); n != 2 {
			t.Errorf("%d clientes after the refusal, want 2", n)
		}
		// The other company's room is its own.
		want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": "33333333-3", "razon_social": "Tres"}, f.B.writeHdr...), 201)
		// Deleting one makes room again.
		want(t, f.do("DELETE", apiBase+"/clientes/"+first.ID, nil, f.A.writeHdr...), 200)
		want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": "33333333-3", "razon_social": "Tres"}, f.A.writeHdr...), 201)

		want(t, f.do("POST", apiBase+"/productos", map[string]any{"nombre": "Uno"}, f.A.writeHdr...), 201)
		want(t, f.do("POST", apiBase+"/productos", map[string]any{"nombre": "Dos"}, f.A.writeHdr...), 201)
		r = f.do("POST", apiBase+"/productos", map[string]any{"nombre": "Tres"}, f.A.writeHdr...)
		want(t, r, 409, fault.LimitExceeded)
		if !strings.Contains(string(r.Body), "at most 2 productos") {
			t.Errorf("the refusal does not state the cap: %s", r.Body)
		}
		if n := len(total(f.A, "/productos")); n != 2 {
			t.Errorf("%d productos after the refusal, want 2", n)
		}

		issue := func(desde int64) map[string]any {
			file, err := f.creds.Authority.Issue(caftest.IssueRequest{RutEmisor: f.A.rut, RazonSocial: f.creds.Emisor.RazonSocial, Tipo: 34,
				Desde: desde, Hasta: desde + 49, FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -7)})
			if err != nil {
				t.Fatal(err)
			}
			return map[string]any{"tipo_dte": 34, "caf_xml": base64.StdEncoding.EncodeToString(file)}
		}
		if n := len(total(f.A, "/caf")); n != 3 {
			t.Fatalf("the fixture's company has %d CAFs, want 3", n)
		}
		want(t, f.do("POST", apiBase+"/caf", issue(1), f.A.writeHdr...), 201)
		r = f.do("POST", apiBase+"/caf", issue(51), f.A.writeHdr...)
		want(t, r, 409, fault.LimitExceeded)
		if !strings.Contains(string(r.Body), "at most 4 CAFs") {
			t.Errorf("the refusal does not state the cap: %s", r.Body)
		}
		if n := len(total(f.A, "/caf")); n != 4 {
			t.Errorf("%d CAFs after the refusal, want 4", n)
		}
	})
}
