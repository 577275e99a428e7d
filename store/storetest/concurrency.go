package storetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// testTakeFolioConcurrent: 8 writers take 120 folios from two ranges
// holding 100: each folio once, contiguous, the second range used when
// the first runs out, and 20 ErrNoFolios.
func (h *harness) testTakeFolioConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78000000-0")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(
			tx.InsertCAF(ctx, &store.CAF{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: 51, FolioHasta: 100, Ambiente: "certificacion", IsActive: true}),
			tx.InsertCAF(ctx, &store.CAF{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 50, Ambiente: "certificacion", IsActive: true}))
	})
	const workers, each = 8, 15
	var mu sync.Mutex
	var folios []int64
	var none int
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				var got int64
				err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					c, f, err := tx.TakeFolio(ctx, a.ID, 33)
					if err != nil {
						return err
					}
					got = f
					return tx.InsertDTE(ctx, &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: f, CAFID: c.ID, Estado: store.EstadoPendiente})
				})
				mu.Lock()
				switch {
				case err == nil:
					folios = append(folios, got)
				case errors.Is(err, store.ErrNoFolios):
					none++
				default:
					errs <- err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent take: %v", err)
	}
	sort.Slice(folios, func(i, j int) bool { return folios[i] < folios[j] })
	if len(folios) != 100 || none != 20 {
		t.Fatalf("took %d folios with %d ErrNoFolios; want 100 and 20", len(folios), none)
	}
	for i, f := range folios {
		if f != int64(i+1) {
			t.Fatalf("folios not 1..100 each once: position %d holds %d", i, f)
		}
	}
	cafs, _ := s.ListCAFs(ctx, a.ID, 33)
	for _, c := range cafs {
		if c.FoliosDisponibles() != 0 {
			t.Errorf("CAF %d-%d has %d folios left, want 0", c.FolioDesde, c.FolioHasta, c.FoliosDisponibles())
		}
	}
}

// testCAFOverlapConcurrent: 8 writers register overlapping ranges at
// once; exactly one wins.
func (h *harness) testCAFOverlapConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78111111-1")
	var wg sync.WaitGroup
	results := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertCAF(ctx, &store.CAF{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: int64(1 + i*10), FolioHasta: int64(100 + i*10), Ambiente: "certificacion", IsActive: true})
			})
		}()
	}
	wg.Wait()
	close(results)
	ok := 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case store.ConflictOn(err) == store.ConstraintCAFRange:
		default:
			t.Errorf("concurrent InsertCAF: %v", err)
		}
	}
	cafs, _ := s.ListCAFs(ctx, a.ID, 33)
	if ok != 1 || len(cafs) != 1 {
		t.Errorf("%d overlapping CAFs registered (%d listed), want 1", ok, len(cafs))
	}
}

// testCursorConcurrentInserts pages through documents while another
// writer keeps inserting: every document that existed before the first
// page appears exactly once and nothing repeats.
func (h *harness) testCursorConcurrentInserts(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78222222-2")
	insert := func(folio int) error {
		return s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertDTE(ctx, &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: int64(folio), Estado: string(dte.EstadoFirmado)})
		})
	}
	for f := 1; f <= 30; f++ {
		if err := insert(f); err != nil {
			t.Fatal(err)
		}
	}
	inserts := make(chan int)
	done := make(chan error)
	go func() {
		for f := range inserts {
			if err := insert(f); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	seen := map[int64]int{}
	cursor := ""
	next := 31
	for page := 0; ; page++ {
		p, err := s.ListDTEs(ctx, a.ID, store.DTEFilter{Cursor: cursor, Limit: 7})
		if err != nil {
			t.Fatal(err)
		}
		if page == 0 && p.TotalCount < 30 {
			t.Errorf("first page TotalCount %d, want ≥ 30", p.TotalCount)
		}
		for _, d := range p.Items {
			seen[d.Folio]++
		}
		// Three inserts between pages.
		for range 3 {
			inserts <- next
			next++
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	close(inserts)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for f := int64(1); f <= 30; f++ {
		if seen[f] != 1 {
			t.Errorf("folio %d listed %d times, want once", f, seen[f])
		}
	}
	for f, n := range seen {
		if n != 1 {
			t.Errorf("folio %d listed %d times", f, n)
		}
		if f > 30 {
			t.Errorf("folio %d, inserted after paging began, appeared on a later page of a newest-first listing", f)
		}
	}
}

// testIdempotencyConcurrent: 16 writers record one key at once; one
// wins, the others see a conflict and can read the winner's record in
// their own transaction.
func (h *harness) testIdempotencyConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78333333-3")
	var wg sync.WaitGroup
	results := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				err := tx.InsertIdempotency(ctx, &store.Idempotency{EmpresaID: a.ID, Key: "same", BodyHash: []byte{byte(i)}})
				if store.ConflictOn(err) == store.ConstraintIdempotency {
					if _, gerr := tx.GetIdempotency(ctx, a.ID, "", "same"); gerr != nil {
						return fmt.Errorf("reading the winner after a conflict: %w", gerr)
					}
				}
				return err
			})
		}()
	}
	wg.Wait()
	close(results)
	ok := 0
	for err := range results {
		switch {
		case err == nil:
			ok++
		case store.ConflictOn(err) == store.ConstraintIdempotency:
		default:
			t.Errorf("concurrent InsertIdempotency: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d writers recorded the key, want 1", ok)
	}
}

// testMixedOutcomes runs concurrent Writes of which some fail and some
// panic after writing: exactly the successful ones persist, each failure
// and panic reaches its own caller (a backend that batches Writes into one
// commit must keep them apart).
func (h *harness) testMixedOutcomes(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78444444-4")
	errWanted := errors.New("wanted failure")
	const n = 48
	outcome := func(i int) string {
		switch {
		case i%5 == 0:
			return "panic"
		case i%3 == 0:
			return "error"
		}
		return "ok"
	}
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					if p != fmt.Sprint("panic ", i) {
						got[i] = fmt.Sprintf("panic value %v", p)
						return
					}
					got[i] = "panic"
				}
			}()
			err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				if err := tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: fmt.Sprint(i), RazonSocial: "m"}); err != nil {
					return err
				}
				switch outcome(i) {
				case "panic":
					panic(fmt.Sprint("panic ", i))
				case "error":
					return errWanted
				}
				return nil
			})
			switch {
			case err == nil:
				got[i] = "ok"
			case errors.Is(err, errWanted):
				got[i] = "error"
			default:
				got[i] = err.Error()
			}
		}()
	}
	wg.Wait()
	for i := range n {
		if got[i] != outcome(i) {
			t.Errorf("write %d: outcome %q, want %q", i, got[i], outcome(i))
		}
		_, err := s.GetClienteByRut(ctx, a.ID, fmt.Sprint(i))
		if persisted := err == nil; persisted != (outcome(i) == "ok") {
			t.Errorf("write %d (%s): persisted %v", i, outcome(i), persisted)
		}
	}
}

// testSerialWrites: a store that reports its Writes serial
// (store.SerialWriter) never runs two Write functions at once.
func (h *harness) testSerialWrites(t *testing.T) {
	s, _ := h.open(t)
	sw, ok := s.(store.SerialWriter)
	if !ok || !sw.SerialWrites() {
		t.Skip("the store's Writes may run concurrently")
	}
	ctx := ctxT(t)
	var running, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 8 {
				err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					n := running.Add(1)
					defer running.Add(-1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					_, err := tx.ListEmpresas(ctx, store.ListFilter{})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m := most.Load(); m != 1 {
		t.Errorf("up to %d Write functions ran at once; SerialWrites promised one", m)
	}
}
