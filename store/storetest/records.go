package storetest

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// same fails the test when got and want differ.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got  %+v\n want %+v", what, got, want)
	}
}

func (h *harness) testEmpresa(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	// A time with nanoseconds is stored at microsecond precision and the
	// record given to Insert is updated to what was stored.
	at := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CLT", -3*3600))
	e := &store.Empresa{Rut: "76111111-6", RazonSocial: "Uno", Ambiente: "certificacion", FechaResolucion: "2014-08-22",
		NumeroResolucion: 0, Acteco: []int64{620200, 631200}, CreatedAt: at, UpdatedAt: at}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) })
	if e.ID == "" {
		t.Fatal("InsertEmpresa left ID empty")
	}
	wantAt := time.Date(2026, 3, 4, 8, 6, 7, 123456000, time.UTC)
	if !e.CreatedAt.Equal(wantAt) || e.CreatedAt.Location() != time.UTC {
		t.Errorf("CreatedAt written back = %v, want %v", e.CreatedAt, wantAt)
	}
	got, err := s.GetEmpresa(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetEmpresa", got, e)

	// Same RUT in the other environment is another tenant; same RUT and
	// environment is a conflict; so is a reused id.
	e2 := &store.Empresa{Rut: e.Rut, Ambiente: "produccion"}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e2) })
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertEmpresa(ctx, &store.Empresa{Rut: e.Rut, Ambiente: "certificacion"})
	})
	wantConflict(t, err, store.ConstraintEmpresaRut, "InsertEmpresa same rut+ambiente")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertEmpresa(ctx, &store.Empresa{ID: e.ID, Rut: "1-9", Ambiente: "certificacion"})
	})
	wantConflict(t, err, store.ConstraintPrimaryKey, "InsertEmpresa same id")

	e.RazonSocial, e.Giro, e.Acteco = "Uno Dos", "Software", []int64{1}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, e) })
	got, _ = s.GetEmpresa(ctx, e.ID)
	same(t, "GetEmpresa after update", got, e)
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		u := *e2
		u.Ambiente = "certificacion"
		return tx.UpdateEmpresa(ctx, &u)
	})
	wantConflict(t, err, store.ConstraintEmpresaRut, "UpdateEmpresa onto another company's rut+ambiente")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateEmpresa(ctx, &store.Empresa{ID: "missing", Rut: "9-9", Ambiente: "x"})
	})
	wantErr(t, err, store.ErrNotFound, "UpdateEmpresa of a missing id")
	_, err = s.GetEmpresa(ctx, "missing")
	wantErr(t, err, store.ErrNotFound, "GetEmpresa of a missing id")

	page, err := s.ListEmpresas(ctx, store.ListFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if page.TotalCount != 2 || len(page.Items) != 1 || page.Items[0].ID != e.ID || page.NextCursor == "" {
		t.Errorf("ListEmpresas first page = %+v", page)
	}
	page, err = s.ListEmpresas(ctx, store.ListFilter{Cursor: page.NextCursor, Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != e2.ID || page.NextCursor != "" {
		t.Errorf("ListEmpresas second page = %+v, %v", page, err)
	}
	_, err = s.ListEmpresas(ctx, store.ListFilter{Cursor: "not a cursor"})
	wantErr(t, err, store.ErrInvalidCursor, "ListEmpresas with a bad cursor")
	// A cursor of this listing whose id holds what no id holds (NUL,
	// which PostgreSQL refuses in a text parameter; bytes that are not
	// UTF-8; a control character; a space) is refused before any query.
	first, err := s.ListEmpresas(ctx, store.ListFilter{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(first.NextCursor)
	tag, id, ok := strings.Cut(string(raw), ":")
	if err != nil || !ok {
		t.Fatalf("the cursor %q is not base64url of tag:id", first.NextCursor)
	}
	for _, bad := range []string{id[:4] + "\x00" + id[4:], "\x00", id + "\xff", "\xc3(" + id, id + "\n", id[:4] + " " + id[4:]} {
		cur := base64.RawURLEncoding.EncodeToString([]byte(tag + ":" + bad))
		_, err = s.ListEmpresas(ctx, store.ListFilter{Cursor: cur})
		wantErr(t, err, store.ErrInvalidCursor, fmt.Sprintf("ListEmpresas with a cursor naming the id %q", bad))
	}
}

func (h *harness) testCertificado(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	e := empresa(t, s, "76222222-K")
	_, err := s.GetCertificado(ctx, e.ID)
	wantErr(t, err, store.ErrNotFound, "GetCertificado before upload")
	c := &store.Certificado{EmpresaID: e.ID, RutFirmante: "11111111-1", Subject: "CN=Firmante",
		FechaVencimiento: time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC), Sealed: []byte{1, 2, 3}, IsActive: true}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCertificado(ctx, c) })
	got, err := s.GetCertificado(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCertificado", got, c)
	c2 := &store.Certificado{EmpresaID: e.ID, RutFirmante: "22222222-2", Sealed: []byte{9}, IsActive: true}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutCertificado(ctx, c2) })
	got, _ = s.GetCertificado(ctx, e.ID)
	same(t, "GetCertificado after replacement", got, c2)
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.PutCertificado(ctx, &store.Certificado{EmpresaID: "missing", Sealed: []byte{1}})
	})
	wantErr(t, err, store.ErrNotFound, "PutCertificado for a missing company")
}

func (h *harness) testCAF(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76333333-3")
	b := empresa(t, s, "76444444-4")
	ins := func(e *store.Empresa, tipo int, desde, hasta int64) (*store.CAF, error) {
		c := &store.CAF{EmpresaID: e.ID, TipoDTE: tipo, FolioDesde: desde, FolioHasta: hasta, Ambiente: "certificacion",
			FechaAutorizacion: "2025-01-02", XML: []byte("<AUTORIZACION/>"), IsActive: true}
		return c, s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, c) })
	}
	c1, err := ins(a, 33, 101, 200)
	if err != nil {
		t.Fatal(err)
	}
	if c1.NextFolio != 101 || c1.FoliosDisponibles() != 100 {
		t.Errorf("new CAF: NextFolio %d, FoliosDisponibles %d; want 101, 100", c1.NextFolio, c1.FoliosDisponibles())
	}
	got, err := s.GetCAF(ctx, a.ID, c1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCAF", got, c1)
	for _, r := range [][2]int64{{101, 200}, {150, 160}, {1, 101}, {200, 300}, {50, 250}, {199, 199}} {
		_, err := ins(a, 33, r[0], r[1])
		wantConflict(t, err, store.ConstraintCAFRange, fmt.Sprintf("overlapping range %d-%d", r[0], r[1]))
	}
	// Adjacent ranges, another type, another company: all fine.
	c0, err := ins(a, 33, 1, 100)
	if err != nil {
		t.Errorf("adjacent range 1-100: %v", err)
	}
	if _, err := ins(a, 33, 201, 210); err != nil {
		t.Errorf("adjacent range 201-210: %v", err)
	}
	if _, err := ins(a, 34, 101, 200); err != nil {
		t.Errorf("same range, another type: %v", err)
	}
	if _, err := ins(b, 33, 101, 200); err != nil {
		t.Errorf("same range, another company: %v", err)
	}
	for _, r := range [][2]int64{{0, 5}, {10, 9}} {
		if _, err := ins(a, 39, r[0], r[1]); err == nil {
			t.Errorf("range %d-%d accepted", r[0], r[1])
		}
	}
	list, err := s.ListCAFs(ctx, a.ID, 33)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].FolioDesde != 1 || list[1].FolioDesde != 101 || list[2].FolioDesde != 201 {
		t.Errorf("ListCAFs(33) = %+v", list)
	}
	all, _ := s.ListCAFs(ctx, a.ID, 0)
	if len(all) != 4 || all[3].TipoDTE != 34 {
		t.Errorf("ListCAFs(0) has %d CAFs (want 4, type 34 last)", len(all))
	}

	// TakeFolio draws from the lowest active range first; a rolled-back
	// take gives the folio back; an inactive range is skipped. The CAF it
	// returns is the range as the take left it, without its document.
	take := func() (int64, string, error) {
		var f int64
		var id string
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			c, n, err := tx.TakeFolio(ctx, a.ID, 33)
			if err == nil {
				f, id = n, c.ID
				if c.NextFolio != n+1 {
					return fmt.Errorf("TakeFolio returned CAF with NextFolio %d for folio %d", c.NextFolio, n)
				}
				if c.XML != nil {
					return fmt.Errorf("TakeFolio returned the CAF's XML %q", c.XML)
				}
			}
			return err
		})
		return f, id, err
	}
	errRollback := errors.New("rollback")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c, n, err := tx.TakeFolio(ctx, a.ID, 33)
		if err != nil {
			return err
		}
		want := *c0
		want.NextFolio, want.XML = 2, nil
		same(t, "the CAF of the first take", c, &want)
		if n != 1 {
			t.Errorf("first take = %d, want 1", n)
		}
		return errRollback
	})
	wantErr(t, err, errRollback, "Write returning an error")
	if f, id, err := take(); err != nil || f != 1 || id != c0.ID {
		t.Errorf("first take = %d from %s, %v; want 1 from %s", f, id, err, c0.ID)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, n, err := tx.TakeFolio(ctx, a.ID, 33); err != nil || n != 2 {
			return fmt.Errorf("take in the rolled-back transaction = %d, %v", n, err)
		}
		return errRollback
	})
	wantErr(t, err, errRollback, "Write returning an error")
	if f, _, err := take(); err != nil || f != 2 {
		t.Errorf("take after rollback = %d, %v; want 2", f, err)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SetCAFActive(ctx, a.ID, c0.ID, false) })
	if f, id, err := take(); err != nil || f != 101 || id != c1.ID {
		t.Errorf("take with the first range inactive = %d from %s, %v; want 101 from %s", f, id, err, c1.ID)
	}
	got, _ = s.GetCAF(ctx, a.ID, c0.ID)
	if got.IsActive || got.FoliosDisponibles() != 98 {
		t.Errorf("inactive CAF: IsActive %v, FoliosDisponibles %d; want false, 98", got.IsActive, got.FoliosDisponibles())
	}
	_, _, err = func() (*store.CAF, int64, error) {
		var c *store.CAF
		var n int64
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			c, n, err = tx.TakeFolio(ctx, a.ID, 52)
			return err
		})
		return c, n, err
	}()
	wantErr(t, err, store.ErrNoCAF, "TakeFolio of a type without CAF")
}

func (h *harness) testDTE(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76555555-5")
	emitted := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	d := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 7, CAFID: "caf-1", Estado: store.EstadoPendiente,
		RutReceptor: "66666666-6", RazonSocialReceptor: "Cliente", FechaEmision: "2026-05-06", MontoTotal: 1190,
		AutoSend: true, Request: []byte(`{"tipo_dte":33}`), Emisor: []byte(`{"rut":"76555555-5"}`), EmittedAt: emitted,
		Metadata: []byte(`{"k":"v"}`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d) })
	got, err := s.GetDTE(ctx, a.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetDTE", got, d)
	if got.XML != nil || got.Totals != nil || got.Tracking != nil {
		t.Errorf("unset blobs read back non-nil: %q %q %q", got.XML, got.Totals, got.Tracking)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDTE(ctx, &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 7, Estado: store.EstadoPendiente})
	})
	wantConflict(t, err, store.ConstraintDTEFolio, "second DTE with the same tipo and folio")
	d34 := &store.DTE{EmpresaID: a.ID, TipoDTE: 34, Folio: 7, Estado: store.EstadoPendiente, MontoTotal: 10}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d34) })

	// The second transaction of the folio protocol: lock, sign, update.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetDTEForUpdate(ctx, a.ID, d.ID)
		if err != nil {
			return err
		}
		cur.Estado, cur.XML, cur.Totals = string(dte.EstadoFirmado), []byte("<DTE/>"), []byte(`{"MntTotal":1190}`)
		cur.Tracking = []byte(`{"intentos":0}`)
		if err := tx.UpdateDTE(ctx, cur); err != nil {
			return err
		}
		d = cur
		return nil
	})
	got, _ = s.GetDTE(ctx, a.ID, d.ID)
	same(t, "GetDTE after update", got, d)
	if !got.UpdatedAt.After(got.CreatedAt) && !got.UpdatedAt.Equal(got.CreatedAt) {
		t.Errorf("UpdatedAt %v before CreatedAt %v", got.UpdatedAt, got.CreatedAt)
	}

	// The same step without the read: a guarded update.
	updateIf := func(u store.DTE, from string) (bool, error) {
		var ok bool
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			ok, err = tx.UpdateDTEIf(ctx, &u, from)
			return err
		})
		return ok, err
	}
	again := *d
	again.Estado, again.XML = string(dte.EstadoRechazado), []byte("<other/>")
	if ok, err := updateIf(again, store.EstadoPendiente); ok || err != nil {
		t.Errorf("UpdateDTEIf of a firmado DTE from pendiente = %v, %v; want false, nil", ok, err)
	}
	got, _ = s.GetDTE(ctx, a.ID, d.ID)
	same(t, "GetDTE after a refused UpdateDTEIf", got, d)
	signed := *d34
	signed.Estado, signed.XML, signed.Totals = string(dte.EstadoFirmado), []byte("<DTE34/>"), []byte(`{"MntTotal":10}`)
	if ok, err := updateIf(signed, store.EstadoPendiente); !ok || err != nil {
		t.Errorf("UpdateDTEIf of a pendiente DTE = %v, %v; want true, nil", ok, err)
	}
	got, _ = s.GetDTE(ctx, a.ID, d34.ID)
	if got == nil || got.Estado != string(dte.EstadoFirmado) || string(got.XML) != "<DTE34/>" || string(got.Totals) != `{"MntTotal":10}` || got.MontoTotal != 10 {
		t.Errorf("after UpdateDTEIf: %+v", got)
	}
	missing := signed
	missing.ID = "no-such-dte"
	_, err = updateIf(missing, store.EstadoPendiente)
	wantErr(t, err, store.ErrNotFound, "UpdateDTEIf of a missing DTE")

	byFolio, err := s.GetDTEByFolio(ctx, a.ID, "certificacion", 33, 7)
	if err != nil || byFolio.ID != d.ID || !bytes.Equal(byFolio.XML, []byte("<DTE/>")) {
		t.Errorf("GetDTEByFolio = %+v, %v", byFolio, err)
	}
	_, err = s.GetDTEByFolio(ctx, a.ID, "certificacion", 33, 8)
	wantErr(t, err, store.ErrNotFound, "GetDTEByFolio of a missing folio")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDTE(ctx, &store.DTE{EmpresaID: "missing", TipoDTE: 33, Folio: 1, Estado: store.EstadoPendiente})
	})
	wantErr(t, err, store.ErrNotFound, "InsertDTE for a missing company")
}

func (h *harness) testDTEList(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76777777-7")
	type spec struct {
		tipo   int
		estado string
		fecha  string
		rut    string
	}
	specs := []spec{
		{33, string(dte.EstadoFirmado), "2026-01-01", "1-9"},
		{33, string(dte.EstadoAceptado), "2026-01-15", "2-7"},
		{61, string(dte.EstadoFirmado), "2026-02-01", "1-9"},
		{39, string(dte.EstadoRechazado), "2026-02-10", "3-5"},
		{33, string(dte.EstadoFirmado), "2026-03-01", "2-7"},
	}
	var ids []string
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for i, sp := range specs {
			d := &store.DTE{EmpresaID: a.ID, TipoDTE: sp.tipo, Folio: int64(i + 1), Estado: sp.estado, FechaEmision: sp.fecha,
				RutReceptor: sp.rut, XML: []byte("<big/>")}
			if err := tx.InsertDTE(ctx, d); err != nil {
				return err
			}
			ids = append(ids, d.ID)
		}
		return nil
	})
	check := func(f store.DTEFilter, want ...int) {
		t.Helper()
		p, err := s.ListDTEs(ctx, a.ID, f)
		if err != nil {
			t.Fatalf("ListDTEs(%+v): %v", f, err)
		}
		var got []string
		for _, d := range p.Items {
			got = append(got, d.ID)
			if d.XML != nil {
				t.Errorf("ListDTEs returned XML")
			}
		}
		var wantIDs []string
		for _, i := range want {
			wantIDs = append(wantIDs, ids[i])
		}
		same(t, fmt.Sprintf("ListDTEs(%+v) ids", f), got, wantIDs)
		if p.TotalCount != int64(len(want)) {
			t.Errorf("ListDTEs(%+v).TotalCount = %d, want %d", f, p.TotalCount, len(want))
		}
	}
	check(store.DTEFilter{}, 4, 3, 2, 1, 0) // newest first
	check(store.DTEFilter{TipoDTE: 33}, 4, 1, 0)
	check(store.DTEFilter{Estado: string(dte.EstadoFirmado)}, 4, 2, 0)
	check(store.DTEFilter{FechaDesde: "2026-01-15", FechaHasta: "2026-02-10"}, 3, 2, 1)
	check(store.DTEFilter{RutReceptor: "2-7"}, 4, 1)
	check(store.DTEFilter{TipoDTE: 33, RutReceptor: "2-7", FechaHasta: "2026-02-28"}, 1)
	check(store.DTEFilter{Folio: 4}, 3)
	check(store.DTEFilter{Folio: 4, TipoDTE: 33})
	check(store.DTEFilter{Folio: 99})

	// Pages of 2: 4,3 | 2,1 | 0, the count on each.
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := s.ListDTEs(ctx, a.ID, store.DTEFilter{Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.TotalCount != 5 {
			t.Errorf("page %d TotalCount %d, want 5", pages, p.TotalCount)
		}
		for _, d := range p.Items {
			got = append(got, d.ID)
		}
		if p.NextCursor == "" {
			if pages != 2 {
				t.Errorf("got %d pages, want 3", pages+1)
			}
			break
		}
		cursor = p.NextCursor
	}
	same(t, "paged ids", got, []string{ids[4], ids[3], ids[2], ids[1], ids[0]})

	// Limits: 0 → default, above max → max; a cursor of another listing
	// is refused.
	p, err := s.ListDTEs(ctx, a.ID, store.DTEFilter{Limit: 1000})
	if err != nil || len(p.Items) != 5 {
		t.Errorf("Limit 1000: %d items, %v", len(p.Items), err)
	}
	first, _ := s.ListDTEs(ctx, a.ID, store.DTEFilter{Limit: 1})
	_, err = s.ListClientes(ctx, a.ID, store.CatalogFilter{Cursor: first.NextCursor})
	wantErr(t, err, store.ErrInvalidCursor, "a DTE cursor used on clientes")
	// A cursor names the last row of its page and nothing else: no
	// position counted across companies (a sequence number would tell one
	// tenant how much the others write).
	raw, err := base64.RawURLEncoding.DecodeString(first.NextCursor)
	if err != nil {
		t.Fatalf("cursor %q is not base64url: %v", first.NextCursor, err)
	}
	rest := strings.Replace(string(raw), first.Items[0].ID, "", 1)
	if len(rest) == len(raw) || strings.ContainsAny(rest, "0123456789") {
		t.Errorf("cursor %q holds %q besides the id of its last row %s", first.NextCursor, raw, first.Items[0].ID)
	}
	// The row a cursor names is looked up within the company listed:
	// company A's cursor is no cursor of company B's listing.
	b := empresa(t, s, "77777777-7")
	_, err = s.ListDTEs(ctx, b.ID, store.DTEFilter{Cursor: first.NextCursor})
	wantErr(t, err, store.ErrInvalidCursor, "company A's cursor on company B's DTEs")
}

// testCAFPage: ListCAFPage pages through a company's CAFs in the order
// they were registered, without their documents, filtered by type; and
// CAFsInUse names, per type, the CAF TakeFolio draws from (issue 20,
// point 2: the list of CAFs is paged like the others).
func (h *harness) testCAFPage(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76333333-3")
	b := empresa(t, s, "76444444-4")
	ins := func(e *store.Empresa, tipo int, desde, hasta int64, active bool) *store.CAF {
		t.Helper()
		c := &store.CAF{EmpresaID: e.ID, TipoDTE: tipo, FolioDesde: desde, FolioHasta: hasta, Ambiente: "certificacion",
			FechaAutorizacion: "2025-01-02", XML: []byte("<AUTORIZACION/>"), IsActive: active}
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, c) })
		return c
	}
	// Registered in this order: 33 201-300, 33 101-200 (inactive),
	// 34 1-1, 33 1-100, 39 1-10; company b's 33 1-100.
	regs := []*store.CAF{ins(a, 33, 201, 300, true), ins(a, 33, 101, 200, false), ins(a, 34, 1, 1, true),
		ins(a, 33, 1, 100, true), ins(a, 39, 1, 10, true)}
	other := ins(b, 33, 1, 100, true)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := s.ListCAFPage(ctx, a.ID, store.CAFFilter{Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if p.TotalCount != int64(len(regs)) {
			t.Errorf("page %d TotalCount %d, want %d", pages, p.TotalCount, len(regs))
		}
		for _, c := range p.Items {
			if c.XML != nil {
				t.Errorf("ListCAFPage returned the XML of %s", c.ID)
			}
			got = append(got, c.ID)
		}
		if p.NextCursor == "" {
			if pages != 2 {
				t.Errorf("%d pages of 2 for 5 CAFs, want 3", pages+1)
			}
			break
		}
		cursor = p.NextCursor
	}
	var want []string
	for _, c := range regs {
		want = append(want, c.ID)
	}
	same(t, "ListCAFPage ids, in the order registered", got, want)
	p, err := s.ListCAFPage(ctx, a.ID, store.CAFFilter{TipoDTE: 33})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 3 || p.TotalCount != 3 || p.Items[0].ID != regs[0].ID || p.Items[2].ID != regs[3].ID {
		t.Errorf("ListCAFPage(33): %d items, total %d", len(p.Items), p.TotalCount)
	}
	if c := p.Items[0]; c.FolioDesde != 201 || c.FolioHasta != 300 || c.NextFolio != 201 || !c.IsActive || c.Ambiente != "certificacion" {
		t.Errorf("ListCAFPage(33) first item %+v", c)
	}
	if p, err := s.ListCAFPage(ctx, b.ID, store.CAFFilter{}); err != nil || len(p.Items) != 1 || p.Items[0].ID != other.ID {
		t.Errorf("company b's CAFs: %+v, %v", p, err)
	}

	// In use: 33 → 1-100 (lowest active with folios); 34 → 1-1 until its
	// one folio is taken; 39 → 1-10. Then 33 1-100 is disabled: 201-300
	// (101-200 is inactive).
	inUse := func(what string, want map[int]string) {
		t.Helper()
		got, err := s.CAFsInUse(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "CAFsInUse "+what, got, want)
	}
	inUse("at first", map[int]string{33: regs[3].ID, 34: regs[2].ID, 39: regs[4].ID})
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		if _, _, err := tx.TakeFolio(ctx, a.ID, 34); err != nil {
			return err
		}
		return tx.SetCAFActive(ctx, a.ID, regs[3].ID, false)
	})
	inUse("after 34 ran out and 33 1-100 was disabled", map[int]string{33: regs[0].ID, 39: regs[4].ID})
	if got, err := s.CAFsInUse(ctx, "no-such-company"); err != nil || len(got) != 0 {
		t.Errorf("CAFsInUse of no company: %v, %v", got, err)
	}
}

// testPageBytes: a page ends with the record that brings what it read to
// store.MaxPageBytes (1 MiB), before its limit, and its cursor goes on
// after that record, so a page of large records holds a few of them (or
// one) and no record is lost (issue 20, point 2: 12 documents of 8 MiB
// listed 100 at a time took a server from 36 MB to 2.1 GB).
func (h *harness) testPageBytes(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76777777-7")
	const kib = 1 << 10
	// Request sizes, newest (listed first) to oldest. By hand, with
	// MaxPageBytes = 1024 KiB and the other columns under 1 KiB a row:
	// 400, 400 (800 read) and 300 (1100 ≥ 1024): the first page ends
	// there; a 3 MiB record is a page alone; the 10 small ones that
	// remain fit the third page.
	sizes := []int{400 * kib, 400 * kib, 300 * kib, 3 << 20, kib, kib, kib, kib, kib, kib, kib, kib, kib, kib}
	ids := make([]string, len(sizes))
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := len(sizes) - 1; i >= 0; i-- { // oldest first
			d := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: int64(len(sizes) - i), Estado: string(dte.EstadoFirmado),
				FechaEmision: "2026-01-01", RutReceptor: "1-9", Request: bytes.Repeat([]byte("x"), sizes[i])}
			if err := tx.InsertDTE(ctx, d); err != nil {
				return err
			}
			ids[i] = d.ID
		}
		return nil
	})
	wantPages := [][]string{ids[0:3], ids[3:4], ids[4:]}
	var got [][]string
	cursor := ""
	for len(got) <= len(wantPages) {
		p, err := s.ListDTEs(ctx, a.ID, store.DTEFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for i, d := range p.Items {
			page = append(page, d.ID)
			if j := slices.Index(ids, d.ID); j >= 0 && len(d.Request) != sizes[j] {
				t.Errorf("page %d item %d: request of %d bytes, want %d", len(got), i, len(d.Request), sizes[j])
			}
		}
		if p.TotalCount != int64(len(sizes)) {
			t.Errorf("page %d TotalCount %d, want %d", len(got), p.TotalCount, len(sizes))
		}
		got = append(got, page)
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	same(t, "pages of ids under MaxPageBytes", got, wantPages)
	// The limit still applies first: 2 small records, then the rest.
	p, err := s.ListDTEs(ctx, a.ID, store.DTEFilter{Cursor: cursor, Limit: 2})
	if err != nil || len(p.Items) != 2 || p.NextCursor == "" {
		t.Errorf("Limit 2 among small records: %d items, next %q, %v; want 2 and a cursor", len(p.Items), p.NextCursor, err)
	}
}

func (h *harness) testCliente(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76888888-8")
	c := &store.Cliente{EmpresaID: a.ID, Rut: "12345678-5", RazonSocial: "Ferretería Núñez", Giro: "Ferretería",
		Direccion: "Av. 1", Comuna: "Ñuñoa", Ciudad: "Santiago", Email: "a@b.cl", Telefono: "+56 2", Contacto: "Ana", Notas: "n"}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertCliente(ctx, c) })
	got, err := s.GetCliente(ctx, a.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetCliente", got, c)
	byRut, err := s.GetClienteByRut(ctx, a.ID, c.Rut)
	if err != nil || byRut.ID != c.ID {
		t.Errorf("GetClienteByRut = %+v, %v", byRut, err)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: c.Rut, RazonSocial: "Otro"})
	})
	wantConflict(t, err, store.ConstraintClienteRut, "second cliente with the same rut")

	c.RazonSocial, c.Rut = "Ferretería Núñez SpA", "99999999-9" // the rut cannot change
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCliente(ctx, c) })
	got, _ = s.GetCliente(ctx, a.ID, c.ID)
	if got.RazonSocial != "Ferretería Núñez SpA" || got.Rut != "12345678-5" {
		t.Errorf("after UpdateCliente: razon_social %q rut %q", got.RazonSocial, got.Rut)
	}

	more := []*store.Cliente{
		{EmpresaID: a.ID, Rut: "11111111-1", RazonSocial: "Panadería 100% Sur"},
		{EmpresaID: a.ID, Rut: "22222222-2", RazonSocial: "Comercial FERRE_X"},
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, m := range more {
			if err := tx.InsertCliente(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
	search := func(q string, want ...string) {
		t.Helper()
		p, err := s.ListClientes(ctx, a.ID, store.CatalogFilter{Query: q})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range p.Items {
			got = append(got, c.ID)
		}
		same(t, "ListClientes(Query "+q+")", got, want)
		if p.TotalCount != int64(len(want)) {
			t.Errorf("ListClientes(Query %q).TotalCount = %d", q, p.TotalCount)
		}
	}
	search("", c.ID, more[0].ID, more[1].ID) // oldest first
	search("ferre", c.ID, more[1].ID)        // case-insensitive, by name
	search("1111", more[0].ID)               // by rut
	search("100%", more[0].ID)               // % is literal
	search("e_x", more[1].ID)                // _ is literal
	search("zzz")

	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteCliente(ctx, a.ID, c.ID) })
	_, err = s.GetCliente(ctx, a.ID, c.ID)
	wantErr(t, err, store.ErrNotFound, "GetCliente after delete")
	_, err = s.GetClienteByRut(ctx, a.ID, "12345678-5")
	wantErr(t, err, store.ErrNotFound, "GetClienteByRut after delete")
	search("", more[0].ID, more[1].ID)
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteCliente(ctx, a.ID, c.ID) })
	wantErr(t, err, store.ErrNotFound, "DeleteCliente twice")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateCliente(ctx, c) })
	wantErr(t, err, store.ErrNotFound, "UpdateCliente after delete")
	// A deleted cliente's rut is free again.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: "12345678-5", RazonSocial: "De nuevo"})
	})
}

func (h *harness) testProducto(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76999999-9")
	p := &store.Producto{EmpresaID: a.ID, Codigo: "SKU-1", Nombre: "Martillo", Descripcion: "Acero", PrecioUnitario: 9990,
		Unidad: "UN", EsExento: true, Categoria: "Herramientas"}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertProducto(ctx, p) })
	got, err := s.GetProducto(ctx, a.ID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetProducto", got, p)
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertProducto(ctx, &store.Producto{EmpresaID: a.ID, Codigo: "SKU-1", Nombre: "Otro"})
	})
	wantConflict(t, err, store.ConstraintProductoCodigo, "second producto with the same codigo")
	// Empty codigos never conflict.
	p2 := &store.Producto{EmpresaID: a.ID, Nombre: "Clavo"}
	p3 := &store.Producto{EmpresaID: a.ID, Nombre: "Tornillo"}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertProducto(ctx, p2), tx.InsertProducto(ctx, p3))
	})
	// Changing a codigo onto another producto's is a conflict, and the
	// transaction stays usable (PostgreSQL aborts a transaction on a
	// failed statement; the store must not issue one).
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		u := *p2
		u.Codigo = "SKU-1"
		err := tx.UpdateProducto(ctx, &u)
		wantConflict(t, err, store.ConstraintProductoCodigo, "UpdateProducto onto a used codigo")
		u.Codigo, u.PrecioUnitario = "SKU-2", 10
		if err := tx.UpdateProducto(ctx, &u); err != nil {
			return err
		}
		*p2 = u
		return nil
	})
	got, _ = s.GetProducto(ctx, a.ID, p2.ID)
	same(t, "GetProducto after update", got, p2)
	list, err := s.ListProductos(ctx, a.ID, store.CatalogFilter{Query: "sku"})
	if err != nil || len(list.Items) != 2 || list.Items[0].ID != p.ID || list.Items[1].ID != p2.ID || list.TotalCount != 2 {
		t.Errorf("ListProductos(sku) = %+v, %v", list, err)
	}
	list, _ = s.ListProductos(ctx, a.ID, store.CatalogFilter{Query: "TORN"})
	if len(list.Items) != 1 || list.Items[0].ID != p3.ID {
		t.Errorf("ListProductos(TORN) = %+v", list)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteProducto(ctx, a.ID, p.ID) })
	_, err = s.GetProducto(ctx, a.ID, p.ID)
	wantErr(t, err, store.ErrNotFound, "GetProducto after delete")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertProducto(ctx, &store.Producto{EmpresaID: a.ID, Codigo: "SKU-1", Nombre: "Martillo 2"})
	})
}

func (h *harness) testWebhook(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77000000-0")
	w := &store.Webhook{EmpresaID: a.ID, URL: "https://example.com/h", Events: []string{"dte.created", "dte.accepted"},
		Secret: []byte("sealed"), IsActive: true}
	w2 := &store.Webhook{EmpresaID: a.ID, URL: "https://example.com/2", Events: []string{"caf.low_stock"}, IsActive: true}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertWebhook(ctx, w), tx.InsertWebhook(ctx, w2))
	})
	got, err := s.GetWebhook(ctx, a.ID, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetWebhook", got, w)
	w.Secret, w.Events, w.IsActive = []byte("rotated"), []string{"dte.rejected"}, false
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateWebhook(ctx, w) })
	list, err := s.ListWebhooks(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "ListWebhooks", list, []store.Webhook{*w, *w2})
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteWebhook(ctx, a.ID, w.ID) })
	_, err = s.GetWebhook(ctx, a.ID, w.ID)
	wantErr(t, err, store.ErrNotFound, "GetWebhook after delete")
	list, _ = s.ListWebhooks(ctx, a.ID)
	if len(list) != 1 || list[0].ID != w2.ID {
		t.Errorf("ListWebhooks after delete = %+v", list)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.UpdateWebhook(ctx, w) })
	wantErr(t, err, store.ErrNotFound, "UpdateWebhook after delete")
}

func (h *harness) testAPIKey(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77111111-1")
	k := &store.APIKey{EmpresaID: a.ID, Hash: []byte("hash-1"), Write: true, Label: "ci"}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertAPIKey(ctx, k) })
	got, err := s.FindAPIKey(ctx, []byte("hash-1"))
	if err != nil {
		t.Fatal(err)
	}
	same(t, "FindAPIKey", got, k)
	_, err = s.FindAPIKey(ctx, []byte("hash-2"))
	wantErr(t, err, store.ErrNotFound, "FindAPIKey of an unknown hash")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertAPIKey(ctx, &store.APIKey{EmpresaID: a.ID, Hash: []byte("hash-1")})
	})
	wantConflict(t, err, store.ConstraintAPIKeyHash, "second key with the same hash")
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevokeAPIKey(ctx, a.ID, k.ID, at) })
	list, err := s.ListAPIKeys(ctx, a.ID)
	if err != nil || len(list) != 1 || !list[0].RevokedAt.Equal(at) {
		t.Errorf("ListAPIKeys after revoke = %+v, %v", list, err)
	}
}

func (h *harness) testIdempotency(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77222222-2")
	b := empresa(t, s, "77333333-3")
	old := time.Now().Add(-25 * time.Hour)
	r := &store.Idempotency{EmpresaID: a.ID, Key: "k1", BodyHash: []byte{1, 2}}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, r) })
	if r.State != store.IdempotencyInProgress {
		t.Errorf("new key state %q, want %q", r.State, store.IdempotencyInProgress)
	}
	// A second insert conflicts, and the same transaction can go on to
	// read the existing record and write.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		err := tx.InsertIdempotency(ctx, &store.Idempotency{EmpresaID: a.ID, Key: "k1", BodyHash: []byte{3}})
		wantConflict(t, err, store.ConstraintIdempotency, "second insert of a key")
		cur, err := tx.GetIdempotency(ctx, a.ID, "", "k1")
		if err != nil {
			return err
		}
		if !bytes.Equal(cur.BodyHash, []byte{1, 2}) {
			t.Errorf("existing key's hash = %v", cur.BodyHash)
		}
		cur.State, cur.DTEID, cur.ResponseStatus, cur.ResponseBody = store.IdempotencyDone, "dte-1", 201, []byte(`{"id":"dte-1"}`)
		return tx.UpdateIdempotency(ctx, cur)
	})
	got, err := s.GetIdempotency(ctx, a.ID, "", "k1")
	if err != nil || got.State != store.IdempotencyDone || got.ResponseStatus != 201 || string(got.ResponseBody) != `{"id":"dte-1"}` || got.DTEID != "dte-1" {
		t.Errorf("after completion: %+v, %v", got, err)
	}
	// The same key in another company is another key.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIdempotency(ctx, &store.Idempotency{EmpresaID: b.ID, Key: "k1", CreatedAt: old})
	})
	var n int64
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.PurgeIdempotency(ctx, time.Now().Add(-24*time.Hour))
		return err
	})
	if n != 1 {
		t.Errorf("PurgeIdempotency deleted %d keys, want 1", n)
	}
	if _, err := s.GetIdempotency(ctx, a.ID, "", "k1"); err != nil {
		t.Errorf("recent key purged: %v", err)
	}
	_, err = s.GetIdempotency(ctx, b.ID, "", "k1")
	wantErr(t, err, store.ErrNotFound, "old key after purge")
}

func (h *harness) testEventDeliveryEnvio(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77444444-4")
	w := &store.Webhook{EmpresaID: a.ID, URL: "https://example.com", Events: []string{"dte.created"}, IsActive: true}
	e1 := &store.Event{EmpresaID: a.ID, Type: "dte.created", Payload: []byte(`{"type":"dte.created","data":{}}`)}
	e2 := &store.Event{EmpresaID: a.ID, Type: "dte.accepted", Payload: []byte(`{}`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertWebhook(ctx, w), tx.InsertEvent(ctx, e1), tx.InsertEvent(ctx, e2))
	})
	got, err := s.GetEvent(ctx, a.ID, e1.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetEvent", got, e1)
	evs, err := s.ListEvents(ctx, a.ID, store.ListFilter{})
	if err != nil || len(evs.Items) != 2 || evs.Items[0].ID != e2.ID || evs.TotalCount != 2 {
		t.Errorf("ListEvents = %+v, %v", evs, err)
	}

	d := &store.Delivery{EmpresaID: a.ID, WebhookID: w.ID, EventID: e1.ID}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDelivery(ctx, d) })
	if d.State != store.DeliveryPending {
		t.Errorf("new delivery state %q", d.State)
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDelivery(ctx, &store.Delivery{EmpresaID: a.ID, WebhookID: w.ID, EventID: e1.ID})
	})
	wantConflict(t, err, store.ConstraintDelivery, "second delivery of an event to a webhook")
	d.State, d.Attempts, d.LastStatusCode, d.LastError = store.DeliveryPending, 1, 500, "server error"
	d.NextAttemptAt = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateDelivery(ctx, d) })
	gd, err := s.GetDelivery(ctx, a.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetDelivery", gd, d)
	dl, err := s.ListDeliveries(ctx, a.ID, w.ID, store.ListFilter{})
	if err != nil || len(dl.Items) != 1 || dl.TotalCount != 1 {
		t.Errorf("ListDeliveries = %+v, %v", dl, err)
	}

	en := &store.Envio{EmpresaID: a.ID, DTEIDs: []string{"d1", "d2"}, Ambiente: "certificacion", Estado: "pendiente",
		Results: []byte(`[{"dte_id":"d1"}]`)}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertEnvio(ctx, en) })
	if ge, err := s.GetEnvio(ctx, a.ID, en.ID); err != nil || ge.XML != nil || ge.Response != nil {
		t.Errorf("GetEnvio of an envelope not built yet = %+v, %v; want XML and Response nil", ge, err)
	} else {
		same(t, "GetEnvio before an update", ge, en)
	}
	en.TrackID, en.Estado, en.Attempts, en.Response = "123", "EPR", 1, []byte("<RESP/>")
	en.XML, en.Results = []byte("<EnvioDTE/>"), []byte(`[{"dte_id":"d1","estado":"aceptado"}]`)
	// DTEIDs and Ambiente never change.
	upd := *en
	upd.DTEIDs, upd.Ambiente = []string{"x"}, "produccion"
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEnvio(ctx, &upd) })
	en.UpdatedAt = upd.UpdatedAt
	ge, err := s.GetEnvio(ctx, a.ID, en.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetEnvio", ge, en)
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		locked, err := tx.GetEnvioForUpdate(ctx, a.ID, en.ID)
		if err != nil {
			return err
		}
		same(t, "GetEnvioForUpdate", locked, en)
		return nil
	})
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetEnvioForUpdate(ctx, a.ID, "no-such-envio")
		return err
	})
	wantErr(t, err, store.ErrNotFound, "GetEnvioForUpdate of an unknown envelope")

	// The list: newest first, without the envelope's XML and the SII's
	// answer, paged by cursor.
	en2 := &store.Envio{EmpresaID: a.ID, DTEIDs: []string{"d3"}, Ambiente: "produccion", Estado: "nuevo", XML: []byte("<EnvioBOLETA/>")}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertEnvio(ctx, en2) })
	page, err := s.ListEnvios(ctx, a.ID, store.EnvioFilter{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != en2.ID || page.TotalCount != 2 || page.NextCursor == "" {
		t.Fatalf("ListEnvios first page = %+v, %v; want the newer envelope, a total of 2 and a cursor", page, err)
	}
	if got := page.Items[0]; got.XML != nil || got.Response != nil || len(got.DTEIDs) != 1 || got.DTEIDs[0] != "d3" || got.Ambiente != "produccion" {
		t.Errorf("ListEnvios item = %+v; want d3 in produccion without XML and Response", got)
	}
	page, err = s.ListEnvios(ctx, a.ID, store.EnvioFilter{Limit: 1, Cursor: page.NextCursor})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != en.ID || page.NextCursor != "" {
		t.Fatalf("ListEnvios second page = %+v, %v; want the older envelope and no cursor", page, err)
	}
	if got := page.Items[0]; got.XML != nil || got.Response != nil || string(got.Results) != string(en.Results) || got.TrackID != "123" {
		t.Errorf("ListEnvios item = %+v; want its results and track id without XML and Response", got)
	}
}

func (h *harness) testRollback(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77555555-5")
	boom := errors.New("boom")
	var cid, did string
	var jid int64
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c := &store.Cliente{EmpresaID: a.ID, Rut: "1-9", RazonSocial: "x"}
		d := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 1, Estado: store.EstadoPendiente}
		if err := errors.Join(tx.InsertCliente(ctx, c), tx.InsertDTE(ctx, d)); err != nil {
			return err
		}
		res, err := tx.Enqueue(ctx, testArgs{N: 1}, nil)
		if err != nil {
			return err
		}
		cid, did, jid = c.ID, d.ID, res.ID
		return boom
	})
	wantErr(t, err, boom, "Write's error")
	_, err = s.GetCliente(ctx, a.ID, cid)
	wantErr(t, err, store.ErrNotFound, "cliente of a rolled-back Write")
	_, err = s.GetDTE(ctx, a.ID, did)
	wantErr(t, err, store.ErrNotFound, "dte of a rolled-back Write")
	if _, err = s.Jobs().Job(ctx, jid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("job of a rolled-back Write: %v, want not found", err)
	}
	// A panic in fn rolls back too, and the store stays usable.
	func() {
		defer func() { recover() }()
		s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: "2-7", RazonSocial: "p"})
			panic("in fn")
		})
	}()
	if _, err := s.GetClienteByRut(ctx, a.ID, "2-7"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cliente of a panicking Write: %v", err)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: "2-7", RazonSocial: "p"})
	})
}

func (h *harness) testNested(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	done := make(chan error, 1)
	go func() {
		done <- s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := s.Write(ctx, func(context.Context, store.Tx) error { return nil }); err == nil {
				return errors.New("a nested Write succeeded")
			}
			if _, err := s.Jobs().Enqueue(ctx, testArgs{}, nil); err == nil {
				return errors.New("Jobs().Enqueue inside Write succeeded")
			}
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a nested Write deadlocked")
	}
}

// testReopen closes and reopens a database: the records are there and
// the migrations run again harmlessly.
func (h *harness) testReopen(t *testing.T) {
	loc := h.b.NewDB(t)
	s1, err := h.b.Open(t, loc, testJobs)
	if err != nil {
		t.Fatal(err)
	}
	e := empresa(t, s1, "77666666-6")
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := h.openAt(t, loc, testJobs)
	if _, err := s2.GetEmpresa(ctxT(t), e.ID); err != nil {
		t.Errorf("after reopening: %v", err)
	}
}

// testEmpresasIterator: store.Empresas walks every company across pages
// (more than MaxLimit of them), oldest first, each once, and stops when
// the loop breaks.
func (h *harness) testEmpresasIterator(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	const n = store.MaxLimit + 3
	var want []string
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		want = want[:0]
		for i := range n {
			e := &store.Empresa{Rut: fmt.Sprintf("%d-K", 1000+i), Ambiente: "certificacion"}
			if err := tx.InsertEmpresa(ctx, e); err != nil {
				return err
			}
			want = append(want, e.ID)
		}
		return nil
	})
	var got []string
	for e, err := range store.Empresas(ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Empresas yielded %d companies, want the %d inserted in order", len(got), len(want))
	}
	seen := 0
	for _, err := range store.Empresas(ctx, s) {
		if err != nil {
			t.Fatal(err)
		}
		if seen++; seen == 2 {
			break
		}
	}
	if seen != 2 {
		t.Fatalf("the loop saw %d companies before breaking, want 2", seen)
	}
}

// testEmpresaByRut: GetEmpresaByRut finds a company by its RUT and
// environment, each of the two companies a RUT may have, inside and
// outside transactions, follows a changed RUT, and reports ErrNotFound
// for a RUT or an environment with no company and for a RUT written in
// another form than the stored one.
func (h *harness) testEmpresaByRut(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	cert := &store.Empresa{Rut: "76192083-9", RazonSocial: "Cert SpA", Ambiente: "certificacion", Acteco: []int64{620200}}
	prod := &store.Empresa{Rut: "76192083-9", RazonSocial: "Prod SpA", Ambiente: "produccion", Acteco: []int64{620200}}
	other := &store.Empresa{Rut: "77888888-8", RazonSocial: "Otra SpA", Ambiente: "certificacion", Acteco: []int64{}}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.InsertEmpresa(ctx, cert), tx.InsertEmpresa(ctx, prod), tx.InsertEmpresa(ctx, other))
	})
	for _, want := range []*store.Empresa{cert, prod, other} {
		got, err := s.GetEmpresaByRut(ctx, want.Rut, want.Ambiente)
		if err != nil {
			t.Fatalf("GetEmpresaByRut(%s, %s): %v", want.Rut, want.Ambiente, err)
		}
		same(t, "GetEmpresaByRut("+want.Rut+", "+want.Ambiente+")", got, want)
	}
	missing := [][2]string{
		{"77888888-8", "produccion"},    // the RUT has no company in this environment
		{"11111111-1", "certificacion"}, // no company with this RUT
		{"76.192.083-9", "certificacion"},
		{"76192083", "certificacion"},
		{"76192083-9", ""},
		{"", "certificacion"},
	}
	for _, m := range missing {
		_, err := s.GetEmpresaByRut(ctx, m[0], m[1])
		wantErr(t, err, store.ErrNotFound, fmt.Sprintf("GetEmpresaByRut(%q, %q)", m[0], m[1]))
	}

	// A transaction finds its own new company and a changed RUT; after
	// commit, so does the store, and the old RUT finds nothing.
	fresh := &store.Empresa{Rut: "78000000-K", Ambiente: "produccion"}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, fresh); err != nil {
			return err
		}
		if got, err := tx.GetEmpresaByRut(ctx, "78000000-K", "produccion"); err != nil || got.ID != fresh.ID {
			t.Errorf("Tx.GetEmpresaByRut of its own company: %+v, %v", got, err)
		}
		other.Rut = "79000000-7"
		if err := tx.UpdateEmpresa(ctx, other); err != nil {
			return err
		}
		if got, err := tx.GetEmpresaByRut(ctx, "79000000-7", "certificacion"); err != nil || got.ID != other.ID {
			t.Errorf("Tx.GetEmpresaByRut of a changed RUT: %+v, %v", got, err)
		}
		return nil
	})
	if got, err := s.GetEmpresaByRut(ctx, "79000000-7", "certificacion"); err != nil || got.ID != other.ID {
		t.Errorf("GetEmpresaByRut of the new RUT: %+v, %v", got, err)
	}
	_, err := s.GetEmpresaByRut(ctx, "77888888-8", "certificacion")
	wantErr(t, err, store.ErrNotFound, "GetEmpresaByRut of the old RUT")
	if got, err := s.GetEmpresaByRut(ctx, "78000000-K", "produccion"); err != nil || got.ID != fresh.ID {
		t.Errorf("GetEmpresaByRut of a committed company: %+v, %v", got, err)
	}
}

// testPing: Ping succeeds on a new (empty) database and on one with
// companies, and fails once its context has ended or the store is closed.
func (h *harness) testPing(t *testing.T) {
	loc := h.b.NewDB(t)
	s, err := h.b.Open(t, loc, testJobs)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	ctx := ctxT(t)
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping of an empty database: %v", err)
	}
	empresa(t, s, "76192083-9")
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping with a company: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Ping(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a cancelled context: %v, want context.Canceled", err)
	}
	closed = true
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err == nil {
		t.Error("Ping of a closed store succeeded")
	}
}
