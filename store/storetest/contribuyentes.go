package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// testContribuyentes: the SII's list is read from its last complete
// import only; a RUT repeated in a batch or across batches is reported
// and its first row kept; a complete list takes no more rows; a new
// import replaces the list whole when it completes (a RUT it lacks is no
// longer found) and the older one is purged a batch at a time.
func (h *harness) testContribuyentes(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)

	if _, err := s.GetContribuyente(ctx, "76543210-3"); !isNotFound(err) {
		t.Fatalf("a contribuyente before any import: %v, want ErrNotFound", err)
	}
	if _, err := s.GetContribuyentesLista(ctx); !isNotFound(err) {
		t.Fatalf("the list before any import: %v, want ErrNotFound", err)
	}
	purge := func() int64 {
		var n int64
		write(t, s, func(ctx context.Context, tx store.Tx) (err error) {
			n, err = tx.PurgeContribuyentes(ctx, 2)
			return err
		})
		return n
	}
	if n := purge(); n != 0 {
		t.Fatalf("purge with no list: %d rows", n)
	}

	// The first import, in two batches; 11111111-1 twice in the first
	// batch and again in the second.
	var a *store.ContribuyentesLista
	write(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		a, err = tx.BeginContribuyentes(ctx, "ce_empresas_dwnld_20260101.csv")
		return err
	})
	if a.ID == 0 || a.Completa || a.Origen != "ce_empresas_dwnld_20260101.csv" || a.CreatedAt.IsZero() {
		t.Fatalf("a new list: %+v", a)
	}
	uno := store.Contribuyente{Rut: "11111111-1", RazonSocial: "ÑANDÚ LIMITADA", NumeroResolucion: 80, FechaResolucion: "2014-08-22",
		Correo: "dte@nandu.cl", URL: "https://nandu.cl"}
	batch1 := []store.Contribuyente{uno, {Rut: "76543210-3", RazonSocial: "EJEMPLO S.A."}, {Rut: "11111111-1", RazonSocial: "OTRA"}}
	add := func(id int64, rows []store.Contribuyente) ([]int, error) {
		var rep []int
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) (err error) {
			rep, err = tx.AddContribuyentes(ctx, id, rows)
			return err
		})
		return rep, err
	}
	if rep, err := add(a.ID, batch1); err != nil || !slices.Equal(rep, []int{2}) {
		t.Fatalf("first batch: repeated %v, %v; want [2]", rep, err)
	}
	if rep, err := add(a.ID, []store.Contribuyente{{Rut: "22222222-2"}, {Rut: "11111111-1", Correo: "x@y.cl"}}); err != nil || !slices.Equal(rep, []int{1}) {
		t.Fatalf("second batch: repeated %v, %v; want [1]", rep, err)
	}
	if _, err := s.GetContribuyente(ctx, "11111111-1"); !isNotFound(err) {
		t.Errorf("a contribuyente of an incomplete list: %v, want ErrNotFound", err)
	}
	var done *store.ContribuyentesLista
	write(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		done, err = tx.CompleteContribuyentes(ctx, a.ID)
		return err
	})
	if !done.Completa || done.Filas != 3 || done.CompletedAt.IsZero() {
		t.Fatalf("the completed list: %+v, want 3 rows", done)
	}
	if got, err := s.GetContribuyente(ctx, "11111111-1"); err != nil || *got != uno {
		t.Errorf("a contribuyente: %+v, %v; want %+v", got, err, uno)
	}
	if l, err := s.GetContribuyentesLista(ctx); err != nil || l.ID != a.ID || l.Filas != 3 {
		t.Errorf("the current list: %+v, %v", l, err)
	}
	if _, err := add(a.ID, []store.Contribuyente{{Rut: "33333333-3"}}); !isNotFound(err) {
		t.Errorf("adding to a complete list: %v, want ErrNotFound", err)
	}
	if _, err := add(a.ID+1000, []store.Contribuyente{{Rut: "33333333-3"}}); !isNotFound(err) {
		t.Errorf("adding to an unknown list: %v, want ErrNotFound", err)
	}
	if _, err := add(a.ID, make([]store.Contribuyente, store.MaxContribuyentesBatch+1)); err == nil {
		t.Errorf("a batch over MaxContribuyentesBatch was taken")
	}

	// A second import without 22222222-2 and with another address: the
	// first list is read until it completes.
	var b *store.ContribuyentesLista
	write(t, s, func(ctx context.Context, tx store.Tx) (err error) {
		b, err = tx.BeginContribuyentes(ctx, "second")
		return err
	})
	uno2 := uno
	uno2.Correo = "intercambio@nandu.cl"
	if rep, err := add(b.ID, []store.Contribuyente{uno2, {Rut: "76543210-3"}}); err != nil || len(rep) != 0 {
		t.Fatalf("second import: %v, %v", rep, err)
	}
	if got, err := s.GetContribuyente(ctx, "22222222-2"); err != nil || got.Rut != "22222222-2" {
		t.Errorf("the old list while the new one is incomplete: %+v, %v", got, err)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.CompleteContribuyentes(ctx, b.ID)
		return err
	})
	if _, err := s.GetContribuyente(ctx, "22222222-2"); !isNotFound(err) {
		t.Errorf("a RUT the new list lacks: %v, want ErrNotFound", err)
	}
	if got, err := s.GetContribuyente(ctx, "11111111-1"); err != nil || got.Correo != "intercambio@nandu.cl" {
		t.Errorf("a RUT of the new list: %+v, %v", got, err)
	}
	// The first list's 3 rows go 2 at a time; the second list stays.
	if n1, n2, n3 := purge(), purge(), purge(); n1 != 2 || n2 != 1 || n3 != 0 {
		t.Errorf("purges deleted %d, %d, %d rows; want 2, 1, 0", n1, n2, n3)
	}
	if l, err := s.GetContribuyentesLista(ctx); err != nil || l.ID != b.ID || l.Filas != 2 {
		t.Errorf("the current list after the purge: %+v, %v", l, err)
	}
	if got, err := s.GetContribuyente(ctx, "76543210-3"); err != nil || got.Rut != "76543210-3" {
		t.Errorf("the current list after the purge: %+v, %v", got, err)
	}
}
