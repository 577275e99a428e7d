package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// testCesion: a cesión round-trips (AEC and answer kept, left out of
// lists), a document has at most one cesión that is not rechazada (a
// second is refused on ConstraintCesionActiva without aborting the
// transaction, and a rechazada one leaves room for the next), a cesión
// names one of its company's documents, and every method is scoped by
// company.
func (h *harness) testCesion(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77555555-5")
	b := empresa(t, s, "77666666-6")
	doc := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoAceptado), Ambiente: "certificacion", XML: []byte("<DTE/>")}
	other := &store.DTE{EmpresaID: b.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoAceptado), Ambiente: "certificacion", XML: []byte("<DTE/>")}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertDTE(ctx, doc), tx.InsertDTE(ctx, other))
	})
	c1 := &store.Cesion{EmpresaID: a.ID, DTEID: doc.ID, Ambiente: "certificacion", Estado: store.CesionPendiente,
		RutCesionario: "96790240-3", Monto: 119000, Request: []byte(`{"monto":119000}`), AEC: []byte("<AEC/>")}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertCesion(ctx, c1) })
	if c1.ID == "" || c1.CreatedAt.IsZero() {
		t.Fatalf("InsertCesion left id %q, created %v", c1.ID, c1.CreatedAt)
	}
	got, err := s.GetCesion(ctx, a.ID, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCesion", got, c1)
	act, err := s.ActiveCesion(ctx, a.ID, doc.ID)
	if err != nil || act.ID != c1.ID || string(act.AEC) != "<AEC/>" {
		t.Errorf("ActiveCesion = %+v, %v", act, err)
	}

	// A second active cesión of the document is refused, and the
	// transaction goes on.
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		err := tx.InsertCesion(ctx, &store.Cesion{EmpresaID: a.ID, DTEID: doc.ID, Estado: store.CesionPendiente})
		wantConflict(t, err, store.ConstraintCesionActiva, "second active cesión")
		return tx.InsertEvent(ctx, &store.Event{EmpresaID: a.ID, Type: "dte.created", Payload: []byte("{}")})
	})
	if err != nil {
		t.Errorf("the transaction after the refused cesión: %v", err)
	}
	// Another company's document, or none, is not found.
	for _, id := range []string{other.ID, "no-such-dte"} {
		err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertCesion(ctx, &store.Cesion{EmpresaID: a.ID, DTEID: id, Estado: store.CesionPendiente})
		})
		wantErr(t, err, store.ErrNotFound, "a cesión of "+id)
	}

	// The registry's answers are kept; the state moves on.
	c1.Estado, c1.TrackID, c1.Attempts, c1.Codigo, c1.Glosa, c1.Response = store.CesionEnviada, "0000038936", 1, "0", "recibido", []byte("<RECEPCIONAEC/>")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		locked, err := tx.GetCesionForUpdate(ctx, a.ID, c1.ID)
		if err != nil {
			return err
		}
		if locked.Estado != store.CesionPendiente {
			t.Errorf("GetCesionForUpdate estado %q", locked.Estado)
		}
		return tx.UpdateCesion(ctx, c1)
	})
	got, err = s.GetCesion(ctx, a.ID, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCesion after UpdateCesion", got, c1)

	// Once rechazada, the document may be ceded again; the first cannot
	// come back while the second is active.
	c1.Estado, c1.Codigo, c1.Glosa = store.CesionRechazada, "RCS", "cesión inválida"
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCesion(ctx, c1) })
	if _, err := s.ActiveCesion(ctx, a.ID, doc.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ActiveCesion after a rejection: %v", err)
	}
	c2 := &store.Cesion{EmpresaID: a.ID, DTEID: doc.ID, Estado: store.CesionPendiente, RutCesionario: "96790240-3", Monto: 1000, AEC: []byte("<AEC2/>")}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertCesion(ctx, c2) })
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		back := *c1
		back.Estado = store.CesionEnviada
		return tx.UpdateCesion(ctx, &back)
	})
	wantConflict(t, err, store.ConstraintCesionActiva, "a rejected cesión made active beside another")

	page, err := s.ListCesiones(ctx, a.ID, doc.ID, store.ListFilter{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.TotalCount != 2 || page.Items[0].ID != c2.ID || page.NextCursor == "" {
		t.Fatalf("ListCesiones = %+v, %v", page, err)
	}
	if page.Items[0].AEC != nil || page.Items[0].Response != nil {
		t.Errorf("a listed cesión carries its AEC or answer")
	}
	page, err = s.ListCesiones(ctx, a.ID, doc.ID, store.ListFilter{Cursor: page.NextCursor})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != c1.ID || page.NextCursor != "" {
		t.Errorf("ListCesiones, second page = %+v, %v", page, err)
	}

	// Company B sees and changes nothing of A's.
	if _, err := s.GetCesion(ctx, b.ID, c1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetCesion as another company: %v", err)
	}
	if _, err := s.ActiveCesion(ctx, b.ID, doc.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ActiveCesion as another company: %v", err)
	}
	if p, err := s.ListCesiones(ctx, b.ID, doc.ID, store.ListFilter{}); err != nil || len(p.Items) != 0 || p.TotalCount != 0 {
		t.Errorf("ListCesiones as another company = %+v, %v", p, err)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetCesionForUpdate(ctx, b.ID, c2.ID)
		return err
	})
	wantErr(t, err, store.ErrNotFound, "GetCesionForUpdate as another company")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		stolen := *c2
		stolen.EmpresaID, stolen.Estado = b.ID, store.CesionAceptada
		return tx.UpdateCesion(ctx, &stolen)
	})
	wantErr(t, err, store.ErrNotFound, "UpdateCesion as another company")
	if got, err := s.GetCesion(ctx, a.ID, c2.ID); err != nil || got.Estado != store.CesionPendiente {
		t.Errorf("A's cesión after B's update: %+v, %v", got, err)
	}
}

// testCesionConcurrent: eight writers insert a cesión of one document at
// once (a double POST, a crash's retry beside the first): exactly one is
// recorded, and each other is refused on ConstraintCesionActiva.
func (h *harness) testCesionConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77888888-8")
	doc := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 7, Estado: string(dte.EstadoAceptado), XML: []byte("<DTE/>")}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, doc) })
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertCesion(ctx, &store.Cesion{EmpresaID: a.ID, DTEID: doc.ID, Estado: store.CesionPendiente})
			})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
			continue
		}
		wantConflict(t, err, store.ConstraintCesionActiva, "a concurrent cesión")
	}
	if ok != 1 {
		t.Errorf("%d concurrent cesiones of one document recorded, want 1", ok)
	}
	if p, err := s.ListCesiones(ctx, a.ID, doc.ID, store.ListFilter{}); err != nil || p.TotalCount != 1 {
		t.Errorf("ListCesiones = %+v, %v", p, err)
	}
}
