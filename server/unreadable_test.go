package server

import (
	"context"
	"github.com/dtekit/dtekit/api"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
)

// TestUnreadableStoredValue, on both backends: a document whose stored
// metadata, tracking or SII status no longer decodes answers GET /dte/{id}
// and GET /dte with 409 INVALID_STATE naming the document, never a 500;
// the company's other documents still read. An envelope whose stored
// results no longer decode does the same on GET /envios.
func TestUnreadableStoredValue(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		st := open(t)
		f := newFixture(t, st, RateLimit{PerSecond: -1})
		ctx := context.Background()
		for _, damage := range []struct {
			name string
			set  func(d *store.DTE)
		}{
			{"metadata", func(d *store.DTE) { d.Metadata = []byte("{") }},
			{"tracking", func(d *store.DTE) { d.Tracking = []byte("no es JSON") }},
			{"sii_status", func(d *store.DTE) { d.SIIStatus = []byte("[") }},
		} {
			good, _ := f.emit(f.A, factura(1))
			id, _ := f.emit(f.A, factura(1))
			if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				d, err := tx.GetDTEForUpdate(ctx, f.A.id, id)
				if err != nil {
					return err
				}
				damage.set(d)
				return tx.UpdateDTE(ctx, d)
			}); err != nil {
				t.Fatal(err)
			}
			for _, target := range []string{apiBase + "/dte/" + id, apiBase + "/dte?limit=1"} {
				r := f.do("GET", target, nil, f.A.readHdr...)
				want(t, r, 409, fault.InvalidState)
				var env api.ErrorResponse
				r.JSON(t, &env)
				if !strings.Contains(env.Message, id) || !strings.Contains(env.Message, "cannot read") {
					t.Errorf("%s with damaged %s: %q, want the document named", target, damage.name, env.Message)
				}
			}
			want(t, f.do("GET", apiBase+"/dte/"+good, nil, f.A.readHdr...), 200)
		}
		// An envelope whose stored results no longer decode.
		e := &store.Envio{EmpresaID: f.A.id, Ambiente: "certificacion", Estado: "procesado", Results: []byte("no es JSON")}
		if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEnvio(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		for _, target := range []string{apiBase + "/envios/" + e.ID, apiBase + "/envios?limit=1"} {
			r := f.do("GET", target, nil, f.A.readHdr...)
			want(t, r, 409, fault.InvalidState)
			if !strings.Contains(string(r.Body), e.ID) {
				t.Errorf("%s with damaged results: %s, want the envelope named", target, truncate(r.Body))
			}
		}
	})
}
