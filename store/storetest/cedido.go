package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// testDTECedido: ListDTEs tells, with each document of a page, whether
// the registry recorded a cesión of it (DTE.Cedido), and keeps only those
// under DTEFilter.Cedido. Only an aceptada cesión counts: a document with
// none, with one pendiente or enviada, or with only rechazadas is not
// ceded; one whose cesión was rechazada and a later one aceptada is. The
// filter pages with its cursor, combines with the other filters and
// counts within the company; another company's ceded document never
// marks or lists one of ours.
func (h *harness) testDTECedido(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77555555-5")
	b := empresa(t, s, "77666666-6")
	// A's documents, oldest first, and the states of their cesiones in
	// the order they were made.
	specs := []struct {
		estado   dte.Estado
		cesiones []string
		cedido   bool
	}{
		{dte.EstadoAceptado, nil, false},
		{dte.EstadoAceptado, []string{store.CesionPendiente}, false},
		{dte.EstadoAceptado, []string{store.CesionEnviada}, false},
		{dte.EstadoAceptado, []string{store.CesionRechazada, store.CesionRechazada}, false},
		{dte.EstadoAceptado, []string{store.CesionAceptada}, true},
		{dte.EstadoConReparos, []string{store.CesionRechazada, store.CesionAceptada}, true},
		{dte.EstadoAceptado, nil, false},
	}
	ids := make([]string, len(specs))
	var bDoc string
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for i, sp := range specs {
			d := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: int64(i + 1), Estado: string(sp.estado), FechaEmision: "2026-11-02",
				RutReceptor: "96790240-3", XML: []byte("<DTE/>")}
			if err := tx.InsertDTE(ctx, d); err != nil {
				return err
			}
			ids[i] = d.ID
			for _, e := range sp.cesiones {
				if err := tx.InsertCesion(ctx, &store.Cesion{EmpresaID: a.ID, DTEID: d.ID, Estado: e, RutCesionario: "96790240-3"}); err != nil {
					return err
				}
			}
		}
		// B's own ceded document, folio 1 like A's first.
		d := &store.DTE{EmpresaID: b.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoAceptado), FechaEmision: "2026-11-02", XML: []byte("<DTE/>")}
		if err := tx.InsertDTE(ctx, d); err != nil {
			return err
		}
		bDoc = d.ID
		return tx.InsertCesion(ctx, &store.Cesion{EmpresaID: b.ID, DTEID: d.ID, Estado: store.CesionAceptada})
	})
	list := func(empresaID string, f store.DTEFilter) *store.Page[store.DTE] {
		t.Helper()
		p, err := s.ListDTEs(ctx, empresaID, f)
		if err != nil {
			t.Fatalf("ListDTEs(%+v): %v", f, err)
		}
		return p
	}
	idsOf := func(p *store.Page[store.DTE]) []string {
		out := []string{}
		for _, d := range p.Items {
			out = append(out, d.ID)
		}
		return out
	}

	// Every document of the page says whether it is ceded.
	all := list(a.ID, store.DTEFilter{})
	if len(all.Items) != len(specs) {
		t.Fatalf("ListDTEs: %d documents, want %d", len(all.Items), len(specs))
	}
	for _, d := range all.Items {
		for i, id := range ids {
			if d.ID == id && d.Cedido != specs[i].cedido {
				t.Errorf("document %d (cesiones %v): Cedido %v, want %v", i, specs[i].cesiones, d.Cedido, specs[i].cedido)
			}
		}
	}

	// The filter keeps the ceded ones, newest first, and counts them.
	p := list(a.ID, store.DTEFilter{Cedido: true})
	same(t, "ListDTEs(Cedido) ids", idsOf(p), []string{ids[5], ids[4]})
	if p.TotalCount != 2 || p.NextCursor != "" {
		t.Errorf("ListDTEs(Cedido): total %d, next %q; want 2 and none", p.TotalCount, p.NextCursor)
	}
	for _, d := range p.Items {
		if !d.Cedido {
			t.Errorf("ListDTEs(Cedido) has %s with Cedido false", d.ID)
		}
	}
	// Its cursor: one a page.
	p = list(a.ID, store.DTEFilter{Cedido: true, Limit: 1})
	same(t, "ListDTEs(Cedido, 1) ids", idsOf(p), []string{ids[5]})
	if p.TotalCount != 2 || p.NextCursor == "" {
		t.Fatalf("ListDTEs(Cedido, 1): total %d, next %q", p.TotalCount, p.NextCursor)
	}
	p = list(a.ID, store.DTEFilter{Cedido: true, Limit: 1, Cursor: p.NextCursor})
	same(t, "ListDTEs(Cedido, 1), second page ids", idsOf(p), []string{ids[4]})
	if p.NextCursor != "" {
		t.Errorf("ListDTEs(Cedido, 1), second page: next %q", p.NextCursor)
	}
	// With another filter: the ceded ones in that state.
	for estado, want := range map[dte.Estado][]string{dte.EstadoAceptado: {ids[4]}, dte.EstadoConReparos: {ids[5]}, dte.EstadoRechazado: {}} {
		f := store.DTEFilter{Cedido: true, Estado: string(estado)}
		p := list(a.ID, f)
		same(t, fmt.Sprintf("ListDTEs(%+v) ids", f), idsOf(p), want)
		if p.TotalCount != int64(len(want)) {
			t.Errorf("ListDTEs(%+v): total %d, want %d", f, p.TotalCount, len(want))
		}
	}

	// B sees its own ceded document only; A's lists never B's.
	p = list(b.ID, store.DTEFilter{Cedido: true})
	same(t, "B's ListDTEs(Cedido) ids", idsOf(p), []string{bDoc})
	if p.TotalCount != 1 || !p.Items[0].Cedido {
		t.Errorf("B's ListDTEs(Cedido): %+v", p)
	}
	for _, d := range list(a.ID, store.DTEFilter{}).Items {
		if d.ID == bDoc {
			t.Errorf("A's list has B's document")
		}
	}

	// The state is read with the page: a recorded cesión turned rechazada
	// (the registry's holder said otherwise) leaves the list at once.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		c, err := tx.ActiveCesion(ctx, a.ID, ids[4])
		if err != nil {
			return err
		}
		c.Estado = store.CesionRechazada
		return tx.UpdateCesion(ctx, c)
	})
	p = list(a.ID, store.DTEFilter{Cedido: true})
	same(t, "ListDTEs(Cedido) after a rejection ids", idsOf(p), []string{ids[5]})

	// The read of one document leaves it false (documented): the service
	// reads the cesión itself.
	if d, err := s.GetDTE(ctx, a.ID, ids[5]); err != nil || d.Cedido {
		t.Errorf("GetDTE of a ceded document: Cedido %v, %v", d != nil && d.Cedido, err)
	}
}
