package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// The company's inbox and mail (issue 24): received files and their
// documents, mails sent and read, the mailbox settings, and what a
// receptor answered about one of the company's documents.

// recepcion records a received file of e with the given digest.
func recepcion(t *testing.T, s store.Store, e *store.Empresa, digest string) *store.Recepcion {
	t.Helper()
	r := &store.Recepcion{EmpresaID: e.ID, Digest: digest, Origen: "upload", Estado: "recibido",
		XML: []byte("<EnvioDTE>" + digest + "</EnvioDTE>"), Report: []byte(`{"ok":true}`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecepcion(ctx, r) })
	return r
}

// pageIDs walks a listing page by page (limit items each) and returns
// the ids listed, in order, failing on a page whose TotalCount is not
// total.
func pageIDs[T any](t *testing.T, total int64, list func(cursor string) (*store.Page[T], error), id func(T) string) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 100 {
		p, err := list(cursor)
		if err != nil {
			t.Fatalf("listing after cursor %q: %v", cursor, err)
		}
		if p.TotalCount != total {
			t.Errorf("page after cursor %q: TotalCount %d, want %d", cursor, p.TotalCount, total)
		}
		for _, it := range p.Items {
			out = append(out, id(it))
		}
		if p.NextCursor == "" {
			return out
		}
		cursor = p.NextCursor
	}
	t.Fatal("the listing never ends")
	return nil
}

// testRecepcion: a received file round-trips with its XML; the company's
// files are numbered 1, 2, 3 in the order received, another company's
// from 1 again; a second file with the same digest is a conflict that
// leaves the transaction usable (the first is read in it), and takes no
// number; the list runs newest first without XML.
func (h *harness) testRecepcion(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76100000-1")
	b := empresa(t, s, "76200000-2")
	at := time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)
	r1 := &store.Recepcion{EmpresaID: a.ID, Digest: "d1", Origen: "correo", MensajeID: "m-1", Remitente: "dte@proveedor.cl",
		Estado: "recibido", XML: []byte("<EnvioDTE>1</EnvioDTE>"), Report: []byte(`{"ok":true}`), CreatedAt: at}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecepcion(ctx, r1) })
	if r1.ID == "" || r1.Numero != 1 {
		t.Fatalf("first recepcion: id %q numero %d, want an id and 1", r1.ID, r1.Numero)
	}
	got, err := s.GetRecepcion(ctx, a.ID, r1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetRecepcion", got, r1)
	got, err = s.GetRecepcionByDigest(ctx, a.ID, "d1")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetRecepcionByDigest", got, r1)
	if r1.Tipo != "envio" {
		t.Errorf("a file recorded without a Tipo: %q, want the column's default envio", r1.Tipo)
	}
	ans := &store.Recepcion{EmpresaID: b.ID, Digest: "ans", Tipo: "respuesta", Origen: "upload", Estado: "rechazada",
		XML: []byte("<RespuestaDTE/>"), Report: []byte(`{"motivo":"x"}`), CreatedAt: at}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecepcion(ctx, ans) })
	if got, err = s.GetRecepcion(ctx, b.ID, ans.ID); err != nil {
		t.Fatal(err)
	}
	same(t, "GetRecepcion of an answer", got, ans)

	r2, r3 := recepcion(t, s, a, "d2"), recepcion(t, s, a, "d3")
	if r2.Numero != 2 || r3.Numero != 3 {
		t.Errorf("numbers of the second and third files: %d, %d; want 2, 3", r2.Numero, r3.Numero)
	}
	// The same digest: a conflict, the first read in the same transaction,
	// and no number used.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		dup := &store.Recepcion{EmpresaID: a.ID, Digest: "d2", Origen: "upload", XML: []byte("<EnvioDTE>2</EnvioDTE>")}
		wantConflict(t, tx.InsertRecepcion(ctx, dup), store.ConstraintRecepcion, "a second file with the digest d2")
		again := *r1
		wantConflict(t, tx.InsertRecepcion(ctx, &again), store.ConstraintRecepcion, "the first file inserted again (id and digest taken)")
		first, err := tx.GetRecepcionByDigest(ctx, a.ID, "d2")
		if err != nil {
			return fmt.Errorf("reading the first file after the conflict: %w", err)
		}
		if first.ID != r2.ID || first.Numero != 2 {
			t.Errorf("the file read after the conflict: %+v, want %s numero 2", first, r2.ID)
		}
		return nil
	})
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertRecepcion(ctx, &store.Recepcion{ID: r1.ID, EmpresaID: a.ID, Digest: "other"})
	})
	wantConflict(t, err, store.ConstraintPrimaryKey, "a file with a taken id")
	if r4 := recepcion(t, s, a, "d4"); r4.Numero != 4 {
		t.Errorf("number after refused inserts: %d, want 4", r4.Numero)
	}
	// Another company: its own numbers, and the digest is free there.
	if rb := recepcion(t, s, b, "d1"); rb.Numero != 2 {
		t.Errorf("company b's second file: numero %d, want 2", rb.Numero)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertRecepcion(ctx, &store.Recepcion{EmpresaID: "no-such-company", Digest: "x"})
	})
	wantErr(t, err, store.ErrNotFound, "InsertRecepcion of a missing company")
	_, err = s.GetRecepcionByDigest(ctx, a.ID, "d9")
	wantErr(t, err, store.ErrNotFound, "GetRecepcionByDigest of an unknown digest")

	// Newest first, without XML, by pages of 3.
	ids := pageIDs(t, 4, func(c string) (*store.Page[store.Recepcion], error) {
		p, err := s.ListRecepciones(ctx, a.ID, store.RecepcionFilter{Cursor: c, Limit: 3})
		if err == nil {
			for _, r := range p.Items {
				if r.XML != nil {
					t.Errorf("ListRecepciones returned the XML of %s", r.ID)
				}
				if r.ID == r1.ID {
					want := *r1
					want.XML = nil
					same(t, "ListRecepciones item", r, want)
				}
			}
		}
		return p, err
	}, func(r store.Recepcion) string { return r.ID })
	if len(ids) != 4 || ids[1] != r3.ID || ids[2] != r2.ID || ids[3] != r1.ID {
		t.Errorf("ListRecepciones ids %v, want d4, d3 %s, d2 %s, d1 %s", ids, r3.ID, r2.ID, r1.ID)
	}
}

// testRecepcionNumeroConcurrent: 8 writers record 5 files each of one
// company at once (PostgreSQL runs them concurrently, SQLite one after
// the other) while another company records its own: every number from 1
// to 40 is given once, and the other company's run 1 to 5.
func (h *harness) testRecepcionNumeroConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76300000-3")
	b := empresa(t, s, "76400000-4")
	const workers, each = 8, 5
	var mu sync.Mutex
	numeros := map[string][]int64{}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each+each)
	run := func(e *store.Empresa, w int) {
		defer wg.Done()
		for i := range each {
			r := &store.Recepcion{EmpresaID: e.ID, Digest: fmt.Sprintf("w%d-%d", w, i), Origen: "correo"}
			err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				if err := tx.InsertRecepcion(ctx, r); err != nil {
					return err
				}
				// Something else in the transaction, so transactions overlap.
				_, err := tx.GetRecepcion(ctx, e.ID, r.ID)
				return err
			})
			if err != nil {
				errs <- err
				continue
			}
			mu.Lock()
			numeros[e.ID] = append(numeros[e.ID], r.Numero)
			mu.Unlock()
		}
	}
	for w := range workers {
		wg.Add(1)
		go run(a, w)
	}
	wg.Add(1)
	go run(b, 0)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent InsertRecepcion: %v", err)
	}
	for _, c := range []struct {
		e    *store.Empresa
		want int
	}{{a, workers * each}, {b, each}} {
		got := numeros[c.e.ID]
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if len(got) != c.want {
			t.Fatalf("company %s: %d files numbered, want %d", c.e.Rut, len(got), c.want)
		}
		for i, n := range got {
			if n != int64(i+1) {
				t.Fatalf("company %s: numbers not 1..%d each once: position %d holds %d (%v)", c.e.Rut, c.want, i, n, got)
			}
		}
		// What was stored agrees with what InsertRecepcion reported.
		p, err := s.ListRecepciones(ctx, c.e.ID, store.RecepcionFilter{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int64]bool{}
		for _, r := range p.Items {
			seen[r.Numero] = true
		}
		if len(seen) != c.want {
			t.Errorf("company %s: %d distinct numbers stored, want %d", c.e.Rut, len(seen), c.want)
		}
	}
}

// recibidoSpec builds a received document of file rec.
func recibidoSpec(rec *store.Recepcion, key string) *store.Recibido {
	return &store.Recibido{EmpresaID: rec.EmpresaID, RecepcionID: rec.ID, DedupeKey: key, RutEmisor: "76086428-5",
		RazonSocialEmisor: "Proveedor", TipoDTE: 33, Folio: 10, FechaEmision: "2026-04-01", MontoTotal: 1190,
		Estado: "recibido", XML: []byte("<DTE/>"), Report: []byte(`{"ok":true}`)}
}

// testRecibido: a received document round-trips with every field; the
// same DedupeKey is a conflict that leaves the transaction usable;
// another company's file is no file of the document; UpdateRecibido
// changes its field list alone; GetRecibidoForUpdate reads it.
func (h *harness) testRecibido(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76500000-5")
	b := empresa(t, s, "76600000-6")
	rec := recepcion(t, s, a, "f1")
	recB := recepcion(t, s, b, "f1")
	// A time with nanoseconds in another zone is stored in UTC at
	// microsecond precision, and the record given is updated to it.
	clt := time.FixedZone("CLT", -3*3600)
	r := recibidoSpec(rec, "76086428-5/33/10")
	r.CorreoEmisor, r.Respuesta, r.RCV = "dte@proveedor.cl", []byte(`[{"tipo":"acuse"}]`), []byte(`{"estado":"PAG"}`)
	r.FechaRecepcionSII = time.Date(2026, 4, 1, 9, 30, 0, 123456789, clt)
	r.PlazoVence = time.Date(2026, 4, 9, 9, 30, 0, 0, clt)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecibido(ctx, r) })
	if want := time.Date(2026, 4, 1, 12, 30, 0, 123456000, time.UTC); !r.FechaRecepcionSII.Equal(want) || r.FechaRecepcionSII.Location() != time.UTC {
		t.Errorf("FechaRecepcionSII written back = %v, want %v", r.FechaRecepcionSII, want)
	}
	got, err := s.GetRecibido(ctx, a.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetRecibido", got, r)
	got, err = s.GetRecibidoByKey(ctx, a.ID, r.DedupeKey)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetRecibidoByKey", got, r)
	bare := recibidoSpec(rec, "bare")
	bare.XML, bare.Report = nil, nil
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecibido(ctx, bare) })
	if got, err := s.GetRecibido(ctx, a.ID, bare.ID); err != nil || got.XML != nil || got.Respuesta != nil || got.RCV != nil ||
		!got.PlazoVence.IsZero() || !got.FechaRecepcionSII.IsZero() || !got.PlazoAvisadoAt.IsZero() {
		t.Errorf("a document without answers, registry state nor window: %+v, %v; want nil bytes and zero times", got, err)
	}

	// The same key: a conflict, then the first read in the transaction.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		wantConflict(t, tx.InsertRecibido(ctx, recibidoSpec(rec, r.DedupeKey)), store.ConstraintRecibido, "a second document with the key")
		again := *r
		wantConflict(t, tx.InsertRecibido(ctx, &again), store.ConstraintRecibido, "the document inserted again (id and key taken)")
		first, err := tx.GetRecibidoByKey(ctx, a.ID, r.DedupeKey)
		if err != nil {
			return fmt.Errorf("reading the first document after the conflict: %w", err)
		}
		if first.ID != r.ID {
			t.Errorf("document read after the conflict: %s, want %s", first.ID, r.ID)
		}
		return nil
	})
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		x := recibidoSpec(rec, "fresh")
		x.ID = r.ID
		return tx.InsertRecibido(ctx, x)
	})
	wantConflict(t, err, store.ConstraintPrimaryKey, "a document with a taken id and a fresh key")
	// Company b may hold the same key; a's file is not b's, nor is a
	// missing one; the transaction goes on after the refusal.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		wrong := recibidoSpec(rec, "other")
		wrong.EmpresaID = b.ID
		wantErr(t, tx.InsertRecibido(ctx, wrong), store.ErrNotFound, "a document of company b in company a's file")
		missing := recibidoSpec(rec, "other")
		missing.RecepcionID = "no-such-file"
		wantErr(t, tx.InsertRecibido(ctx, missing), store.ErrNotFound, "a document of a missing file")
		return tx.InsertRecibido(ctx, recibidoSpec(recB, r.DedupeKey))
	})

	// UpdateRecibido: its fields change, the others keep their values.
	upd := *r
	upd.Estado, upd.CorreoEmisor = "aceptado", "otro@proveedor.cl"
	upd.Respuesta, upd.RCV = []byte(`[{"tipo":"acd"}]`), []byte(`{"estado":"ACD"}`)
	upd.FechaRecepcionSII = time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)
	upd.PlazoVence = time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC)
	upd.PlazoAvisadoAt = time.Date(2026, 4, 9, 0, 0, 0, 0, time.UTC)
	upd.UpdatedAt = time.Time{} // now
	// Not in the field list: none of these may change.
	upd.RecepcionID, upd.DedupeKey, upd.RutEmisor, upd.RazonSocialEmisor = recB.ID, "changed", "1-9", "changed"
	upd.TipoDTE, upd.Folio, upd.FechaEmision, upd.MontoTotal = 34, 99, "2020-01-01", 1
	upd.XML, upd.Report, upd.CreatedAt = []byte("<changed/>"), []byte(`{"changed":true}`), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	before := time.Now().Add(-time.Second)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateRecibido(ctx, &upd) })
	if upd.UpdatedAt.Before(before) {
		t.Errorf("UpdatedAt left zero is set to now: %v", upd.UpdatedAt)
	}
	want := *r
	want.Estado, want.CorreoEmisor, want.Respuesta, want.RCV = upd.Estado, upd.CorreoEmisor, upd.Respuesta, upd.RCV
	want.FechaRecepcionSII, want.PlazoVence, want.PlazoAvisadoAt, want.UpdatedAt = upd.FechaRecepcionSII, upd.PlazoVence, upd.PlazoAvisadoAt, upd.UpdatedAt
	got, _ = s.GetRecibido(ctx, a.ID, r.ID)
	same(t, "GetRecibido after UpdateRecibido", got, &want)
	// A given UpdatedAt is kept; zero times and nil bytes clear.
	upd2 := want
	upd2.UpdatedAt = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	upd2.PlazoAvisadoAt, upd2.RCV = time.Time{}, nil
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		locked, err := tx.GetRecibidoForUpdate(ctx, a.ID, r.ID)
		if err != nil {
			return err
		}
		same(t, "GetRecibidoForUpdate", locked, &want)
		return tx.UpdateRecibido(ctx, &upd2)
	})
	got, _ = s.GetRecibido(ctx, a.ID, r.ID)
	same(t, "GetRecibido after clearing the warning and the registry state", got, &upd2)
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetRecibidoForUpdate(ctx, a.ID, "no-such-recibido")
		return err
	})
	wantErr(t, err, store.ErrNotFound, "GetRecibidoForUpdate of an unknown document")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		missing := upd2
		missing.ID = "no-such-recibido"
		return tx.UpdateRecibido(ctx, &missing)
	})
	wantErr(t, err, store.ErrNotFound, "UpdateRecibido of an unknown document")
}

// testRecibidoList: every filter of ListRecibidos alone and together,
// newest first, without XML, with the total count; pages of 2; cursors
// stable under inserts; and the page byte budget, which the documents'
// XML (never read by a listing) does not spend.
func (h *harness) testRecibidoList(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76700000-7")
	b := empresa(t, s, "76800000-8")
	rec := recepcion(t, s, a, "f")
	day := func(d int) time.Time { return time.Date(2026, 4, d, 12, 0, 0, 0, time.UTC) }
	type spec struct {
		rut     string
		tipo    int
		estado  string
		fecha   string
		plazo   time.Time // zero: unknown
		avisado bool
	}
	specs := []spec{
		{"1-9", 33, "recibido", "2026-03-01", day(9), false},       // 0
		{"2-7", 33, "aceptado", "2026-03-15", day(10), true},       // 1
		{"1-9", 34, "recibido", "2026-04-01", day(11), false},      // 2
		{"3-5", 61, "reclamado", "2026-04-10", time.Time{}, false}, // 3
		{"2-7", 33, "recibido", "2026-05-01", day(12), false},      // 4
	}
	ids := make([]string, len(specs))
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for i, sp := range specs {
			r := &store.Recibido{EmpresaID: a.ID, RecepcionID: rec.ID, DedupeKey: fmt.Sprint(i), RutEmisor: sp.rut, TipoDTE: sp.tipo,
				Folio: int64(i + 1), Estado: sp.estado, FechaEmision: sp.fecha, PlazoVence: sp.plazo, XML: []byte("<big/>")}
			if sp.avisado {
				r.PlazoAvisadoAt = day(8)
			}
			if err := tx.InsertRecibido(ctx, r); err != nil {
				return err
			}
			ids[i] = r.ID
		}
		return nil
	})
	// Company b's document matches every filter: never listed for a.
	recB := recepcion(t, s, b, "f")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertRecibido(ctx, &store.Recibido{EmpresaID: b.ID, RecepcionID: recB.ID, DedupeKey: "0", RutEmisor: "1-9",
			TipoDTE: 33, Estado: "recibido", FechaEmision: "2026-04-01", PlazoVence: day(9)})
	})
	check := func(f store.RecibidoFilter, want ...int) {
		t.Helper()
		p, err := s.ListRecibidos(ctx, a.ID, f)
		if err != nil {
			t.Fatalf("ListRecibidos(%+v): %v", f, err)
		}
		var got, wantIDs []string
		for _, r := range p.Items {
			got = append(got, r.ID)
			if r.XML != nil {
				t.Errorf("ListRecibidos returned the XML of %s", r.ID)
			}
		}
		for _, i := range want {
			wantIDs = append(wantIDs, ids[i])
		}
		same(t, fmt.Sprintf("ListRecibidos(%+v) ids", f), got, wantIDs)
		if p.TotalCount != int64(len(want)) {
			t.Errorf("ListRecibidos(%+v).TotalCount = %d, want %d", f, p.TotalCount, len(want))
		}
	}
	check(store.RecibidoFilter{}, 4, 3, 2, 1, 0)
	check(store.RecibidoFilter{RutEmisor: "1-9"}, 2, 0)
	check(store.RecibidoFilter{TipoDTE: 33}, 4, 1, 0)
	check(store.RecibidoFilter{Estado: "recibido"}, 4, 2, 0)
	check(store.RecibidoFilter{FechaDesde: "2026-03-15"}, 4, 3, 2, 1)
	check(store.RecibidoFilter{FechaHasta: "2026-04-01"}, 2, 1, 0)
	check(store.RecibidoFilter{FechaDesde: "2026-03-15", FechaHasta: "2026-04-10"}, 3, 2, 1)
	// PlazoHasta: known windows closing at or before it (3 has none).
	check(store.RecibidoFilter{PlazoHasta: day(10)}, 1, 0)
	check(store.RecibidoFilter{PlazoHasta: day(10).Add(-time.Microsecond)}, 0)
	check(store.RecibidoFilter{PlazoHasta: day(30)}, 4, 2, 1, 0)
	check(store.RecibidoFilter{SinAviso: true}, 4, 3, 2, 0)
	// What the warning job asks: windows closing by the 11th, not warned.
	check(store.RecibidoFilter{PlazoHasta: day(11), SinAviso: true}, 2, 0)
	// PlazoDesde: windows unknown (3) or closing after it.
	check(store.RecibidoFilter{PlazoDesde: day(10)}, 4, 3, 2)
	check(store.RecibidoFilter{PlazoDesde: day(10).Add(-time.Microsecond)}, 4, 3, 2, 1)
	check(store.RecibidoFilter{PlazoDesde: day(30)}, 3)
	check(store.RecibidoFilter{PlazoDesde: day(10), Estado: "recibido"}, 4, 2)
	check(store.RecibidoFilter{RutEmisor: "2-7", TipoDTE: 33, Estado: "recibido", FechaDesde: "2026-04-01"}, 4)
	check(store.RecibidoFilter{RutEmisor: "9-9"})

	// Pages of 2: 4,3 | 2,1 | 0.
	got := pageIDs(t, 5, func(c string) (*store.Page[store.Recibido], error) {
		return s.ListRecibidos(ctx, a.ID, store.RecibidoFilter{Cursor: c, Limit: 2})
	}, func(r store.Recibido) string { return r.ID })
	same(t, "ListRecibidos paged", got, []string{ids[4], ids[3], ids[2], ids[1], ids[0]})
	// A filtered listing pages too, its cursor past the rows it skipped.
	got = pageIDs(t, 3, func(c string) (*store.Page[store.Recibido], error) {
		return s.ListRecibidos(ctx, a.ID, store.RecibidoFilter{TipoDTE: 33, Cursor: c, Limit: 1})
	}, func(r store.Recibido) string { return r.ID })
	same(t, "ListRecibidos(33) paged by 1", got, []string{ids[4], ids[1], ids[0]})

	// Cursors stable under inserts: a document received between pages
	// never shows on a later page, and none repeats or goes missing.
	first, err := s.ListRecibidos(ctx, a.ID, store.RecibidoFilter{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range first.Items {
		seen[r.ID]++
	}
	cursor := first.NextCursor
	for n := 0; cursor != ""; n++ {
		write(t, s, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertRecibido(ctx, &store.Recibido{EmpresaID: a.ID, RecepcionID: rec.ID, DedupeKey: fmt.Sprint("late-", n)})
		})
		p, err := s.ListRecibidos(ctx, a.ID, store.RecibidoFilter{Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Items {
			seen[r.ID]++
		}
		cursor = p.NextCursor
	}
	for i, id := range ids {
		if seen[id] != 1 {
			t.Errorf("document %d listed %d times while others were received, want once", i, seen[id])
		}
	}
	if len(seen) != len(ids) {
		t.Errorf("%d documents listed, want the %d received before the first page", len(seen), len(ids))
	}
	_, err = s.ListRecibidos(ctx, b.ID, store.RecibidoFilter{Cursor: first.NextCursor})
	wantErr(t, err, store.ErrInvalidCursor, "company a's cursor on company b's documents")
	_, err = s.ListRecibidos(ctx, a.ID, store.RecibidoFilter{Cursor: "not a cursor"})
	wantErr(t, err, store.ErrInvalidCursor, "ListRecibidos with a bad cursor")
	_, err = s.ListDTEs(ctx, a.ID, store.DTEFilter{Cursor: first.NextCursor})
	wantErr(t, err, store.ErrInvalidCursor, "a cursor of ListRecibidos on ListDTEs")

	// The page byte budget, in a company of its own. By hand, with
	// MaxPageBytes = 1024 KiB and the other columns under 1 KiB a row,
	// newest first: reports of 600 and 500 KiB (1100 ≥ 1024) end the
	// first page; 2 MiB alone is the second; the three small ones the
	// third. Every document also holds 2 MiB of XML, which a listing
	// never reads: counted, each page would hold one document.
	c := empresa(t, s, "76900000-9")
	recC := recepcion(t, s, c, "f")
	const kib = 1 << 10
	sizes := []int{600 * kib, 500 * kib, 2 << 20, kib, kib, kib} // newest first
	big := make([]string, len(sizes))
	for i := len(sizes) - 1; i >= 0; i-- { // oldest first
		r := &store.Recibido{EmpresaID: c.ID, RecepcionID: recC.ID, DedupeKey: fmt.Sprint(i),
			Report: bytes.Repeat([]byte("r"), sizes[i]), XML: bytes.Repeat([]byte("x"), 2<<20)}
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecibido(ctx, r) })
		big[i] = r.ID
	}
	var pages [][]string
	cursor = ""
	for len(pages) < 5 {
		p, err := s.ListRecibidos(ctx, c.ID, store.RecibidoFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for _, r := range p.Items {
			page = append(page, r.ID)
		}
		pages = append(pages, page)
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	same(t, "pages of documents under MaxPageBytes", pages, [][]string{big[0:2], big[2:3], big[3:]})
}

// testCorreo: a mail round-trips with its message; the list runs newest
// first without it, filtered by document or received document;
// UpdateCorreo changes its field list alone; a document, received
// document or company that is not the company's is refused with
// ErrNotFound, the transaction still usable.
func (h *harness) testCorreo(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75100000-1")
	b := empresa(t, s, "75200000-2")
	doc := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoAceptado)}
	docB := &store.DTE{EmpresaID: b.ID, TipoDTE: 33, Folio: 1, Estado: string(dte.EstadoAceptado)}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertDTE(ctx, doc), tx.InsertDTE(ctx, docB))
	})
	rec := recepcion(t, s, a, "f")
	rcb := recibidoSpec(rec, "k")
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertRecibido(ctx, rcb) })

	c1 := &store.Correo{EmpresaID: a.ID, Tipo: "dte", DTEID: doc.ID, Para: "dte@cliente.cl", MessageID: "<1@dtekit>",
		Estado: "pendiente", Message: []byte("Message-ID: <1@dtekit>\r\n\r\nbody")}
	c2 := &store.Correo{EmpresaID: a.ID, Tipo: "resultado", RecibidoID: rcb.ID, Para: "dte@proveedor.cl", MessageID: "<2@dtekit>",
		Estado: "pendiente", Message: []byte("two")}
	c3 := &store.Correo{EmpresaID: a.ID, Tipo: "acuse", RecibidoID: rcb.ID, DTEID: doc.ID, Para: "x@y.cl", Estado: "enviado",
		Attempts: 1, SentAt: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), Message: []byte("three")}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertCorreo(ctx, c1), tx.InsertCorreo(ctx, c2), tx.InsertCorreo(ctx, c3))
	})
	got, err := s.GetCorreo(ctx, a.ID, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCorreo", got, c1)
	got, _ = s.GetCorreo(ctx, a.ID, c3.ID)
	same(t, "GetCorreo of a sent mail", got, c3)

	list := func(f store.CorreoFilter, want ...*store.Correo) {
		t.Helper()
		p, err := s.ListCorreos(ctx, a.ID, f)
		if err != nil {
			t.Fatalf("ListCorreos(%+v): %v", f, err)
		}
		var gotIDs, wantIDs []string
		for _, c := range p.Items {
			gotIDs = append(gotIDs, c.ID)
			if c.Message != nil {
				t.Errorf("ListCorreos returned the message of %s", c.ID)
			}
			if c.ID == c3.ID {
				w := *c3
				w.Message = nil
				same(t, "ListCorreos item", c, w)
			}
		}
		for _, c := range want {
			wantIDs = append(wantIDs, c.ID)
		}
		same(t, fmt.Sprintf("ListCorreos(%+v) ids", f), gotIDs, wantIDs)
		if p.TotalCount != int64(len(want)) {
			t.Errorf("ListCorreos(%+v).TotalCount = %d, want %d", f, p.TotalCount, len(want))
		}
	}
	list(store.CorreoFilter{}, c3, c2, c1)
	list(store.CorreoFilter{DTEID: doc.ID}, c3, c1)
	list(store.CorreoFilter{RecibidoID: rcb.ID}, c3, c2)
	list(store.CorreoFilter{DTEID: doc.ID, RecibidoID: rcb.ID}, c3)
	list(store.CorreoFilter{DTEID: docB.ID})
	ids := pageIDs(t, 3, func(c string) (*store.Page[store.Correo], error) {
		return s.ListCorreos(ctx, a.ID, store.CorreoFilter{Cursor: c, Limit: 2})
	}, func(c store.Correo) string { return c.ID })
	same(t, "ListCorreos paged", ids, []string{c3.ID, c2.ID, c1.ID})

	// UpdateCorreo: its fields change, the others keep their values.
	upd := *c1
	upd.Estado, upd.Attempts, upd.LastError = "enviado", 3, "421 try later"
	upd.SentAt, upd.UpdatedAt = time.Date(2026, 4, 2, 3, 4, 5, 0, time.UTC), time.Time{}
	upd.Tipo, upd.DTEID, upd.RecibidoID, upd.Para, upd.MessageID = "changed", "changed", "changed", "changed", "changed"
	upd.Message, upd.CreatedAt = []byte("changed"), time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	before := time.Now().Add(-time.Second)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCorreo(ctx, &upd) })
	if upd.UpdatedAt.Before(before) {
		t.Errorf("UpdatedAt left zero is set to now: %v", upd.UpdatedAt)
	}
	want := *c1
	want.Estado, want.Attempts, want.LastError, want.SentAt, want.UpdatedAt = upd.Estado, upd.Attempts, upd.LastError, upd.SentAt, upd.UpdatedAt
	got, _ = s.GetCorreo(ctx, a.ID, c1.ID)
	same(t, "GetCorreo after UpdateCorreo", got, &want)
	upd2 := want
	upd2.UpdatedAt = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCorreo(ctx, &upd2) })
	got, _ = s.GetCorreo(ctx, a.ID, c1.ID)
	same(t, "GetCorreo after UpdateCorreo with an update time", got, &upd2)

	// Refusals, each leaving the transaction usable.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for name, c := range map[string]*store.Correo{
			"another company's document":          {EmpresaID: a.ID, Tipo: "dte", DTEID: docB.ID},
			"a missing document":                  {EmpresaID: a.ID, Tipo: "dte", DTEID: "no-such-dte"},
			"another company's received document": {EmpresaID: b.ID, Tipo: "resultado", RecibidoID: rcb.ID},
			"a missing company":                   {EmpresaID: "no-such-company", Tipo: "dte"},
		} {
			wantErr(t, tx.InsertCorreo(ctx, c), store.ErrNotFound, "InsertCorreo of "+name)
		}
		if _, err := tx.GetCorreo(ctx, a.ID, c1.ID); err != nil {
			return fmt.Errorf("reading after the refusals: %w", err)
		}
		return tx.InsertCorreo(ctx, &store.Correo{EmpresaID: b.ID, Tipo: "dte", DTEID: docB.ID})
	})
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertCorreo(ctx, &store.Correo{ID: c1.ID, EmpresaID: a.ID, Tipo: "dte"})
	})
	wantConflict(t, err, store.ConstraintPrimaryKey, "a mail with a taken id")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		missing := upd2
		missing.ID = "no-such-correo"
		return tx.UpdateCorreo(ctx, &missing)
	})
	wantErr(t, err, store.ErrNotFound, "UpdateCorreo of an unknown mail")
}

// testMensaje: a mail read is found again by its digest; a second one
// with that digest is a conflict that leaves the transaction usable; a
// different mail reusing a Message-ID is recorded as a mail of its own
// (issue 30: deduplicating on the Message-ID skipped it in silence);
// another company reads its own mailbox.
func (h *harness) testMensaje(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75300000-3")
	b := empresa(t, s, "75400000-4")
	m1 := &store.Mensaje{EmpresaID: a.ID, MessageID: "<abc@proveedor.cl>", Digest: "h1", From: "dte@proveedor.cl",
		Subject: "EnvioDTE", Estado: "procesado", Detalle: "1 documento"}
	n1 := &store.Mensaje{EmpresaID: a.ID, Digest: "h2", From: "x@y.cl", Estado: "rechazado", Detalle: "sin adjunto"}
	// Another message with m1's Message-ID and other bytes.
	n2 := &store.Mensaje{EmpresaID: a.ID, MessageID: m1.MessageID, Digest: "h3", Estado: "procesado"}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertMensaje(ctx, m1), tx.InsertMensaje(ctx, n1), tx.InsertMensaje(ctx, n2))
	})
	for _, c := range []struct {
		what, digest string
		want         *store.Mensaje
	}{
		{"by digest", "h1", m1},
		{"by digest without Message-ID", "h2", n1},
		{"the other with m1's Message-ID", "h3", n2},
	} {
		got, err := s.FindMensaje(ctx, a.ID, c.digest)
		if err != nil {
			t.Errorf("FindMensaje %s: %v", c.what, err)
			continue
		}
		same(t, "FindMensaje "+c.what, got, c.want)
	}
	for _, c := range []struct{ empresa, digest string }{{a.ID, "other"}, {a.ID, ""}, {b.ID, "h1"}} {
		_, err := s.FindMensaje(ctx, c.empresa, c.digest)
		wantErr(t, err, store.ErrNotFound, fmt.Sprintf("FindMensaje(%q) in company %s", c.digest, c.empresa))
	}

	write(t, s, func(ctx context.Context, tx store.Tx) error {
		wantConflict(t, tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: a.ID, MessageID: "<new@x>", Digest: "h2"}),
			store.ConstraintMensaje, "a mail with a known digest")
		again := *m1
		wantConflict(t, tx.InsertMensaje(ctx, &again), store.ConstraintMensaje, "the mail inserted again (id taken too)")
		got, err := tx.FindMensaje(ctx, a.ID, "h1")
		if err != nil {
			return fmt.Errorf("reading the mail after the conflicts: %w", err)
		}
		same(t, "FindMensaje in the transaction after the conflicts", got, m1)
		// Company b's mailbox is its own.
		return tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: b.ID, MessageID: m1.MessageID, Digest: "h1"})
	})
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMensaje(ctx, &store.Mensaje{ID: m1.ID, EmpresaID: a.ID, Digest: "fresh"})
	})
	wantConflict(t, err, store.ConstraintPrimaryKey, "a mail with a taken id and a fresh digest")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: "no-such-company", Digest: "z"})
	})
	wantErr(t, err, store.ErrNotFound, "InsertMensaje of a missing company")

	ids := pageIDs(t, 3, func(c string) (*store.Page[store.Mensaje], error) {
		return s.ListMensajes(ctx, a.ID, store.ListFilter{Cursor: c, Limit: 2})
	}, func(m store.Mensaje) string { return m.ID })
	same(t, "ListMensajes newest first", ids, []string{n2.ID, n1.ID, m1.ID})
	p, err := s.ListMensajes(ctx, a.ID, store.ListFilter{})
	if err != nil || len(p.Items) != 3 {
		t.Fatalf("ListMensajes: %+v, %v", p, err)
	}
	same(t, "ListMensajes item", p.Items[2], *m1)
}

// testCorreoConfig: a company has no mailbox settings until it records
// them; PutCorreoConfig replaces them and their passwords.
func (h *harness) testCorreoConfig(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75500000-5")
	b := empresa(t, s, "75600000-6")
	_, err := s.GetCorreoConfig(ctx, a.ID)
	wantErr(t, err, store.ErrNotFound, "GetCorreoConfig before any")

	at := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	cfg := &store.CorreoConfig{EmpresaID: a.ID, Config: []byte(`{"imap":"imap.example.com"}`), SealedIMAP: []byte("imap-secret"),
		SealedSMTP: []byte("smtp-secret"), UpdatedAt: at}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCorreoConfig(ctx, cfg) })
	got, err := s.GetCorreoConfig(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *cfg
	same(t, "GetCorreoConfig", got, &want)

	// New settings without an SMTP password.
	cfg2 := &store.CorreoConfig{EmpresaID: a.ID, Config: []byte(`{"imap":"other"}`), SealedIMAP: []byte("imap-2")}
	before := time.Now().Add(-time.Second)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCorreoConfig(ctx, cfg2) })
	if cfg2.UpdatedAt.Before(before) {
		t.Errorf("UpdatedAt left zero is set to now: %v", cfg2.UpdatedAt)
	}
	want = store.CorreoConfig{EmpresaID: a.ID, Config: cfg2.Config, SealedIMAP: []byte("imap-2"), UpdatedAt: cfg2.UpdatedAt}
	got, _ = s.GetCorreoConfig(ctx, a.ID)
	same(t, "GetCorreoConfig after PutCorreoConfig again", got, &want)

	write(t, s, func(ctx context.Context, tx store.Tx) error {
		wantErr(t, tx.PutCorreoConfig(ctx, &store.CorreoConfig{EmpresaID: "no-such-company", Config: []byte("{}")}),
			store.ErrNotFound, "PutCorreoConfig of a missing company")
		// The transaction goes on after the refusals.
		return tx.PutCorreoConfig(ctx, &store.CorreoConfig{EmpresaID: b.ID, Config: []byte("{}")})
	})
	if got, err := s.GetCorreoConfig(ctx, b.ID); err != nil || got.SealedIMAP != nil || got.SealedSMTP != nil {
		t.Errorf("company b's settings without passwords: %+v, %v", got, err)
	}
	got, _ = s.GetCorreoConfig(ctx, a.ID)
	same(t, "company a's settings after company b's", got, &want)
}

// testBuzon: a mailbox never read has no state; PutBuzon records and
// replaces it whole (zero times as zero), per company.
func (h *harness) testBuzon(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75510000-1")
	b := empresa(t, s, "75610000-3")
	_, err := s.GetBuzon(ctx, a.ID)
	wantErr(t, err, store.ErrNotFound, "GetBuzon before any read")
	at := time.Date(2026, 4, 1, 12, 0, 0, 123000, time.UTC)
	failing := &store.Buzon{EmpresaID: a.ID, Fallos: 3, UltimoError: "timeout", UltimoIntento: at,
		UltimaLectura: at.Add(-time.Hour), Proximo: at.Add(4 * time.Minute), UpdatedAt: at}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutBuzon(ctx, failing) })
	got, err := s.GetBuzon(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetBuzon", got, failing)
	ok := &store.Buzon{EmpresaID: a.ID, UltimoIntento: at.Add(5 * time.Minute), UltimaLectura: at.Add(5 * time.Minute)}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		wantErr(t, tx.PutBuzon(ctx, &store.Buzon{EmpresaID: "no-such-company"}), store.ErrNotFound, "PutBuzon of a missing company")
		return tx.PutBuzon(ctx, ok)
	})
	if ok.UpdatedAt.IsZero() {
		t.Error("UpdatedAt left zero is not set")
	}
	got, _ = s.GetBuzon(ctx, a.ID)
	same(t, "GetBuzon after a read that worked", got, ok)
	_, err = s.GetBuzon(ctx, b.ID)
	wantErr(t, err, store.ErrNotFound, "GetBuzon of another company")
}

// testDTEIntercambio: what a receptor answered is read with one document
// (GetDTE, GetDTEByFolio, GetDTEForUpdate), never by the list;
// SetDTEIntercambio replaces it alone, update time included, and only for
// the company's own document.
func (h *harness) testDTEIntercambio(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "75700000-7")
	b := empresa(t, s, "75800000-8")
	d := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 5, Estado: string(dte.EstadoAceptado), XML: []byte("<DTE/>"),
		Tracking: []byte(`{"t":1}`), Metadata: []byte(`{"m":1}`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d) })
	if got, err := s.GetDTE(ctx, a.ID, d.ID); err != nil || got.Intercambio != nil {
		t.Fatalf("a document nobody answered: %+v, %v; want Intercambio nil", got, err)
	}
	answer := []byte(`{"recibido":true,"resultado":"aceptado"}`)
	time.Sleep(2 * time.Millisecond) // a rewritten update time would differ
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SetDTEIntercambio(ctx, a.ID, d.ID, answer) })
	want := *d
	want.Intercambio = answer
	got, err := s.GetDTE(ctx, a.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetDTE after SetDTEIntercambio", got, &want)
	got, err = s.GetDTEByFolio(ctx, a.ID, "certificacion", 33, 5)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetDTEByFolio after SetDTEIntercambio", got, &want)
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		locked, err := tx.GetDTEForUpdate(ctx, a.ID, d.ID)
		if err != nil {
			return err
		}
		same(t, "GetDTEForUpdate after SetDTEIntercambio", locked, &want)
		// UpdateDTE leaves it as it is.
		locked.Estado, locked.Intercambio = string(dte.EstadoRechazado), []byte("changed")
		return tx.UpdateDTE(ctx, locked)
	})
	if got, _ := s.GetDTE(ctx, a.ID, d.ID); got == nil || !bytes.Equal(got.Intercambio, answer) || got.Estado != string(dte.EstadoRechazado) {
		t.Errorf("after UpdateDTE: %+v; want the estado changed and the answer kept", got)
	}
	p, err := s.ListDTEs(ctx, a.ID, store.DTEFilter{})
	if err != nil || len(p.Items) != 1 || p.Items[0].Intercambio != nil || p.Items[0].XML != nil {
		t.Errorf("ListDTEs: %+v, %v; want one document without XML and Intercambio", p, err)
	}
	// A document inserted with an answer keeps it.
	d2 := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 6, Estado: string(dte.EstadoAceptado), Intercambio: []byte(`{"x":1}`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d2) })
	if got, err := s.GetDTE(ctx, a.ID, d2.ID); err != nil {
		t.Fatal(err)
	} else {
		same(t, "GetDTE of a document inserted with an answer", got, d2)
	}
	// Clearing it; another company's id and a missing document.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		wantErr(t, tx.SetDTEIntercambio(ctx, b.ID, d.ID, []byte("hijacked")), store.ErrNotFound, "SetDTEIntercambio with another company's id")
		wantErr(t, tx.SetDTEIntercambio(ctx, a.ID, "no-such-dte", []byte("x")), store.ErrNotFound, "SetDTEIntercambio of a missing document")
		return tx.SetDTEIntercambio(ctx, a.ID, d2.ID, nil)
	})
	if got, _ := s.GetDTE(ctx, a.ID, d.ID); got == nil || !bytes.Equal(got.Intercambio, answer) {
		t.Errorf("a's answer after b's attempt: %+v", got)
	}
	if got, _ := s.GetDTE(ctx, a.ID, d2.ID); got == nil || got.Intercambio != nil {
		t.Errorf("answer after clearing it: %+v; want nil", got)
	}
}
