package server

import (
	"context"
	"slices"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
)

// TestDTEListCedido, on both backends: GET /dte shows "cedido": true on
// each document whose cesión the registry recorded and leaves it out on
// the others (one with a cesión still pendiente, one with none), never
// with its cesion; ?cedido=true keeps those, counted, false does not
// filter, anything else is a 400 naming the parameter; another company's
// recorded cesión neither marks nor lists anything of ours. Every answer
// is checked against the OpenAPI document.
func TestDTEListCedido(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		st := open(t)
		f := newFixture(t, st, RateLimit{PerSecond: -1})
		a, b := f.A, f.B
		ceded, inFlight, none := f.emitAccepted(t, a), f.emitAccepted(t, a), f.emitAccepted(t, a)
		other := f.emitAccepted(t, b)
		// Each cesión is made through the API (pendiente); the registry's
		// answer (EOK) is then recorded as the cesiones room records it:
		// this service does not submit (the console's tests and
		// cmd/dtekit's end-to-end test take the real path).
		cede := func(c company, id string) string {
			t.Helper()
			r := f.do("POST", apiBase+"/dte/"+id+"/cesiones", cesionBody(), append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...)
			want(t, r, 202)
			var ces api.Cesion
			r.JSON(t, &ces)
			return ces.ID
		}
		for _, c := range []struct {
			c  company
			id string
		}{{a, ceded}, {b, other}} {
			cid := cede(c.c, c.id)
			err := st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
				got, err := tx.GetCesionForUpdate(ctx, c.c.id, cid)
				if err != nil {
					return err
				}
				got.Estado, got.TrackID, got.Codigo, got.Glosa = store.CesionAceptada, "0000038936", "EOK", "Envio Aceptado"
				return tx.UpdateCesion(ctx, got)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		cede(a, inFlight)

		type page struct {
			Items      []map[string]any `json:"items"`
			TotalCount int              `json:"total_count"`
		}
		list := func(c company, query string) page {
			t.Helper()
			r := f.do("GET", apiBase+"/dte"+query, nil, c.readHdr...)
			want(t, r, 200)
			var p page
			r.JSON(t, &p)
			return p
		}
		ids := func(p page) []string {
			out := []string{}
			for _, it := range p.Items {
				out = append(out, it["id"].(string))
			}
			return out
		}

		p := list(a, "")
		if got := ids(p); p.TotalCount != 3 || !slices.Contains(got, ceded) || !slices.Contains(got, inFlight) || !slices.Contains(got, none) {
			t.Fatalf("A's list: %v, total %d", got, p.TotalCount)
		}
		for _, it := range p.Items {
			v, has := it["cedido"]
			if wantCedido := it["id"] == ceded; (wantCedido && v != true) || (!wantCedido && has) {
				t.Errorf("list item %s: cedido %v (present %v)", it["id"], v, has)
			}
			if _, has := it["cesion"]; has {
				t.Errorf("list item %s has its cesion", it["id"])
			}
		}
		if p = list(a, "?cedido=true"); !slices.Equal(ids(p), []string{ceded}) || p.TotalCount != 1 {
			t.Errorf("?cedido=true: %v, total %d; want [%s], 1", ids(p), p.TotalCount, ceded)
		}
		if p = list(a, "?cedido=false"); p.TotalCount != 3 {
			t.Errorf("?cedido=false: total %d, want 3", p.TotalCount)
		}
		if p = list(a, "?cedido=true&estado=firmado"); p.TotalCount != 0 {
			t.Errorf("?cedido=true&estado=firmado: total %d, want 0", p.TotalCount)
		}
		r := f.do("GET", apiBase+"/dte?cedido=si", nil, a.readHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"cedido INVALID_VALUE"}) {
			t.Errorf("?cedido=si: details %v", got)
		}
		// The document's own answer agrees.
		r = f.do("GET", apiBase+"/dte/"+ceded, nil, a.readHdr...)
		want(t, r, 200)
		var doc api.DTE
		r.JSON(t, &doc)
		if !doc.Cedido || doc.Cesion == nil || doc.Cesion.Estado != api.CesionAceptada {
			t.Errorf("GET /dte/{id} of the ceded factura: cedido %v, cesion %+v", doc.Cedido, doc.Cesion)
		}

		// Tenancy: B's list has B's own, never A's.
		if p = list(b, "?cedido=true"); !slices.Equal(ids(p), []string{other}) || p.TotalCount != 1 {
			t.Errorf("B's ?cedido=true: %v, total %d; want [%s], 1", ids(p), p.TotalCount, other)
		}
		if got := ids(list(b, "")); slices.Contains(got, ceded) || !slices.Equal(got, []string{other}) {
			t.Errorf("B's list: %v", got)
		}
	})
}

// emitAccepted emits a factura of company c held, and marks it aceptado
// as the SII's review would; it returns its id.
func (f *fixture) emitAccepted(t *testing.T, c company) string {
	t.Helper()
	id, _ := f.emit(c, factura(2))
	accept(t, f.st, c.id, id)
	return id
}
