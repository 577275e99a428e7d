package billing

import (
	"bytes"
	"context"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// TestListDTE: pages are newest first, the cursor is stable while
// documents are inserted between pages (no repeats, no skips, none of the
// new ones), total_count counts the filter's matches, and the filters
// work.
func TestListDTE(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true)
			ctx := context.Background()
			s, id := f.s, f.emp.ID
			var first []string
			for i := 0; i < 5; i++ {
				first = append(first, emitOK(t, s, id, facturaBody(i+1)).ID)
			}
			other := bytes.Replace(facturaBody(9), []byte("77.777.777-7"), []byte("11.111.111-1"), 1)
			p1, err := s.Documents.List(ctx, id, api.DTEListParams{ListParams: api.ListParams{Limit: 2}})
			if err != nil || len(p1.Data) != 2 || p1.TotalCount != 5 || p1.NextCursor == nil {
				t.Fatalf("page 1: %+v, %v", p1, err)
			}
			seen := []string{p1.Data[0].ID, p1.Data[1].ID}
			cursor := *p1.NextCursor
			for i := 0; i < 3; i++ { // inserted between pages
				emitOK(t, s, id, other)
			}
			for {
				p, err := s.Documents.List(ctx, id, api.DTEListParams{ListParams: api.ListParams{Limit: 2, Cursor: cursor}})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range p.Data {
					seen = append(seen, d.ID)
				}
				if p.NextCursor == nil {
					break
				}
				cursor = *p.NextCursor
			}
			if len(seen) != 5 {
				t.Fatalf("pages gave %d documents, want the 5 that existed: %v", len(seen), seen)
			}
			for i, id := range seen { // newest first
				if id != first[4-i] {
					t.Errorf("position %d holds %s, want %s", i, id, first[4-i])
				}
			}
			for _, tc := range []struct {
				f    api.DTEListParams
				want int64
			}{
				{api.DTEListParams{}, 8},
				{api.DTEListParams{RutReceptor: "11.111.111-1"}, 3},
				{api.DTEListParams{RutReceptor: "77777777-7"}, 5},
				{api.DTEListParams{TipoDTE: 33, Estado: dte.EstadoFirmado}, 8},
				{api.DTEListParams{Estado: dte.EstadoAceptado}, 0},
				{api.DTEListParams{FechaDesde: dte.Today(s.now()), FechaHasta: dte.Today(s.now())}, 8},
				{api.DTEListParams{FechaHasta: "2000-01-01"}, 0},
			} {
				p, err := s.Documents.List(ctx, id, tc.f)
				if err != nil || p.TotalCount != tc.want {
					t.Errorf("ListDTE(%+v): total_count %v (%v), want %d", tc.f, p, err, tc.want)
				}
			}
			for _, bad := range []api.DTEListParams{{ListParams: api.ListParams{Limit: 101}}, {ListParams: api.ListParams{Limit: -1}}, {TipoDTE: 35}, {Estado: "pendiente"}, {FechaDesde: "2024-13-01"},
				{RutReceptor: "11111111-2"}, {ListParams: api.ListParams{Cursor: "not-a-cursor"}}} {
				if _, err := s.Documents.List(ctx, id, bad); fault.KindOf(err) != fault.KindValidation {
					t.Errorf("ListDTE(%+v): %v, want validation", bad, err)
				}
			}
		})
	}
}
