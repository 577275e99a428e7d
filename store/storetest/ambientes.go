package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// testAmbientes: the SII numbers folios from 1 in certificacion and again
// in produccion, so a company that moved keeps two numberings apart. A
// produccion CAF 1–200 is registered beside a certificacion CAF 1–100000
// of the same type (an overlap only within one environment is refused);
// TakeFolio draws from the current environment only and tells "no CAF
// registered here" from "none has folios left"; a type and folio name one
// document per environment; an Idempotency-Key is one key per
// environment; and the lists of documents, CAFs and envelopes filter by
// environment.
func (h *harness) testAmbientes(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76999999-9")
	caf := func(ambiente string, tipo int, desde, hasta int64) (*store.CAF, error) {
		c := &store.CAF{EmpresaID: a.ID, TipoDTE: tipo, FolioDesde: desde, FolioHasta: hasta, Ambiente: ambiente,
			FechaAutorizacion: "2025-01-02", XML: []byte("<AUTORIZACION/>"), IsActive: true}
		return c, s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, c) })
	}
	take := func(tipo int) (*store.CAF, int64, error) {
		var c *store.CAF
		var folio int64
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			c, folio, err = tx.TakeFolio(ctx, a.ID, tipo)
			if err != nil {
				return err
			}
			return tx.InsertDTE(ctx, &store.DTE{EmpresaID: a.ID, TipoDTE: tipo, Folio: folio, CAFID: c.ID, Estado: store.EstadoPendiente})
		})
		return c, folio, err
	}
	cert, err := caf(store.AmbienteCertificacion, 33, 1, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := caf(store.AmbienteCertificacion, 34, 1, 10); err != nil {
		t.Fatal(err)
	}
	// Two certificacion emissions: folios 1 and 2 of the certificacion CAF.
	for want := int64(1); want <= 2; want++ {
		c, folio, err := take(33)
		if err != nil || folio != want || c.ID != cert.ID {
			t.Fatalf("certificacion take %d = %d from %v, %v", want, folio, c, err)
		}
	}

	// Within one environment an overlap is still refused.
	_, err = caf(store.AmbienteCertificacion, 33, 100000, 100001)
	wantConflict(t, err, store.ConstraintCAFRange, "a certificacion range overlapping the certificacion CAF")

	// The move. Before any produccion CAF, the type has none registered
	// (ErrNoCAF), not "no folios left".
	a.Ambiente = store.AmbienteProduccion
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, a) })
	_, _, err = take(33)
	wantErr(t, err, store.ErrNoCAF, "TakeFolio in produccion without a produccion CAF")
	if errors.Is(err, store.ErrNoFolios) {
		t.Errorf("TakeFolio without a produccion CAF matches ErrNoFolios too: %v", err)
	}

	// The first produccion CAF starts at 1, inside the certificacion
	// range: registered. A second overlapping it in produccion is not.
	prod, err := caf(store.AmbienteProduccion, 33, 1, 200)
	if err != nil {
		t.Fatalf("produccion CAF 1-200 beside a certificacion CAF 1-100000: %v", err)
	}
	for _, r := range [][2]int64{{200, 300}, {1, 1}, {50, 60}} {
		_, err := caf(store.AmbienteProduccion, 33, r[0], r[1])
		wantConflict(t, err, store.ConstraintCAFRange, fmt.Sprintf("produccion range %d-%d over the produccion CAF", r[0], r[1]))
	}
	inUse, err := s.CAFsInUse(ctx, a.ID)
	if err != nil || inUse[33] != prod.ID || inUse[34] != "" {
		t.Errorf("CAFsInUse after the move = %v, %v; want tipo 33 from the produccion CAF and no tipo 34", inUse, err)
	}

	// Produccion folios start at 1 again, and the documents of both
	// environments coexist.
	for want := int64(1); want <= 3; want++ {
		c, folio, err := take(33)
		if err != nil || folio != want || c.ID != prod.ID || c.Ambiente != store.AmbienteProduccion {
			t.Fatalf("produccion take %d = %d from %+v, %v", want, folio, c, err)
		}
	}
	// A produccion CAF of one folio, used up: ErrNoFolios, not ErrNoCAF.
	if _, err := caf(store.AmbienteProduccion, 39, 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, f, err := take(39); err != nil || f != 1 {
		t.Fatalf("the one produccion boleta folio: %d, %v", f, err)
	}
	_, _, err = take(39)
	wantErr(t, err, store.ErrNoFolios, "TakeFolio of a used-up produccion CAF")
	// Tipo 34 has only a certificacion CAF with folios left.
	_, _, err = take(34)
	wantErr(t, err, store.ErrNoCAF, "TakeFolio of a type with certificacion CAFs only")

	// One document per environment, type and folio.
	for _, amb := range []string{store.AmbienteCertificacion, store.AmbienteProduccion} {
		d, err := s.GetDTEByFolio(ctx, a.ID, amb, 33, 1)
		if err != nil || d.Ambiente != amb || d.Folio != 1 {
			t.Errorf("GetDTEByFolio(%s, 33, 1) = %+v, %v", amb, d, err)
		}
	}
	_, err = s.GetDTEByFolio(ctx, a.ID, store.AmbienteProduccion, 33, 4)
	wantErr(t, err, store.ErrNotFound, "GetDTEByFolio of a produccion folio not taken")
	for _, amb := range []string{store.AmbienteCertificacion, store.AmbienteProduccion} {
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertDTE(ctx, &store.DTE{EmpresaID: a.ID, Ambiente: amb, TipoDTE: 33, Folio: 1, Estado: store.EstadoPendiente})
		})
		wantConflict(t, err, store.ConstraintDTEFolio, "a second "+amb+" document 33/1")
	}
	// An empty Ambiente is the company's current one, written back.
	d := &store.DTE{EmpresaID: a.ID, TipoDTE: 33, Folio: 4, Estado: store.EstadoPendiente}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertDTE(ctx, d) })
	if got, err := s.GetDTE(ctx, a.ID, d.ID); err != nil || d.Ambiente != store.AmbienteProduccion || got.Ambiente != store.AmbienteProduccion {
		t.Errorf("a document inserted without Ambiente: %q written back, %+v stored, %v", d.Ambiente, got, err)
	}

	// Lists by environment: certificacion holds folios 1 and 2, produccion
	// 1 to 4 of tipo 33 and the boleta.
	count := func(f store.DTEFilter) int64 {
		t.Helper()
		f.Limit = 1
		p, err := s.ListDTEs(ctx, a.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			if f.Ambiente != "" && it.Ambiente != f.Ambiente {
				t.Errorf("ListDTEs(%s) lists a document of %s", f.Ambiente, it.Ambiente)
			}
		}
		return p.TotalCount
	}
	if c, p, all := count(store.DTEFilter{Ambiente: store.AmbienteCertificacion}), count(store.DTEFilter{Ambiente: store.AmbienteProduccion}),
		count(store.DTEFilter{}); c != 2 || p != 5 || all != 7 {
		t.Errorf("ListDTEs totals: certificacion %d, produccion %d, all %d; want 2, 5, 7", c, p, all)
	}
	if n := count(store.DTEFilter{Ambiente: store.AmbienteProduccion, TipoDTE: 33}); n != 4 {
		t.Errorf("ListDTEs(produccion, 33) total %d, want 4", n)
	}
	cafCount := func(amb string) int64 {
		t.Helper()
		p, err := s.ListCAFPage(ctx, a.ID, store.CAFFilter{Ambiente: amb, TipoDTE: 33})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			if amb != "" && it.Ambiente != amb {
				t.Errorf("ListCAFPage(%s) lists a CAF of %s", amb, it.Ambiente)
			}
		}
		return p.TotalCount
	}
	if c, p, all := cafCount(store.AmbienteCertificacion), cafCount(store.AmbienteProduccion), cafCount(""); c != 1 || p != 1 || all != 2 {
		t.Errorf("ListCAFPage(33) totals: certificacion %d, produccion %d, all %d; want 1, 1, 2", c, p, all)
	}
	for _, amb := range []string{store.AmbienteCertificacion, store.AmbienteProduccion} {
		e := &store.Envio{EmpresaID: a.ID, DTEIDs: []string{"x-" + amb}, Ambiente: amb, Estado: "nuevo"}
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertEnvio(ctx, e) })
		p, err := s.ListEnvios(ctx, a.ID, store.EnvioFilter{Ambiente: amb})
		if err != nil || p.TotalCount != 1 || len(p.Items) != 1 || p.Items[0].ID != e.ID {
			t.Errorf("ListEnvios(%s) = %+v, %v; want its one envelope", amb, p, err)
		}
	}
	if p, err := s.ListEnvios(ctx, a.ID, store.EnvioFilter{}); err != nil || p.TotalCount != 2 {
		t.Errorf("ListEnvios of both environments = %+v, %v; want 2", p, err)
	}

	// An Idempotency-Key is one key per environment.
	for i, amb := range []string{store.AmbienteCertificacion, store.AmbienteProduccion} {
		k := &store.Idempotency{EmpresaID: a.ID, Ambiente: amb, Key: "same-key", BodyHash: []byte{byte(i)}}
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, k) })
	}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIdempotency(ctx, &store.Idempotency{EmpresaID: a.ID, Ambiente: store.AmbienteProduccion, Key: "same-key"})
	})
	wantConflict(t, err, store.ConstraintIdempotency, "the key again in produccion")
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateIdempotency(ctx, &store.Idempotency{EmpresaID: a.ID, Ambiente: store.AmbienteProduccion, Key: "same-key",
			State: store.IdempotencyDone, DTEID: "p"})
	})
	for i, amb := range []string{store.AmbienteCertificacion, store.AmbienteProduccion} {
		k, err := s.GetIdempotency(ctx, a.ID, amb, "same-key")
		wantState := map[bool]string{false: store.IdempotencyInProgress, true: store.IdempotencyDone}[i == 1]
		if err != nil || k.Ambiente != amb || len(k.BodyHash) != 1 || k.BodyHash[0] != byte(i) || k.State != wantState {
			t.Errorf("GetIdempotency(%s) = %+v, %v; want its own record in state %s", amb, k, err, wantState)
		}
	}
}

// testAmbienteCAFOverlapConcurrent registers, at once, the same produccion
// range several times and a certificacion range over it: exactly one
// produccion CAF is registered, and the certificacion one beside it.
func (h *harness) testAmbienteCAFOverlapConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "77999999-7")
	var wg sync.WaitGroup
	errs := make([]error, 9)
	for i := range errs {
		amb := store.AmbienteProduccion
		if i == 0 {
			amb = store.AmbienteCertificacion
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &store.CAF{EmpresaID: a.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 200, Ambiente: amb,
				FechaAutorizacion: "2025-01-02", XML: []byte("<AUTORIZACION/>"), IsActive: true}
			errs[i] = s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, c) })
		}()
	}
	wg.Wait()
	if errs[0] != nil {
		t.Errorf("the certificacion range beside the produccion ones: %v", errs[0])
	}
	ok := 0
	for _, err := range errs[1:] {
		if err == nil {
			ok++
		} else {
			wantConflict(t, err, store.ConstraintCAFRange, "a concurrent produccion range")
		}
	}
	list, err := s.ListCAFs(ctx, a.ID, 33)
	if ok != 1 || err != nil || len(list) != 2 {
		t.Errorf("%d concurrent produccion registrations succeeded and %d CAFs are stored (%v); want 1 and 2", ok, len(list), err)
	}
}

// Rows of migration 00009's test, written at schema version 8.
const (
	migEmpresa  = "01900000-0000-7000-8000-000000000001"
	migCAFCert  = "01900000-0000-7000-8000-0000000000c1"
	migDocCert  = "01900000-0000-7000-8000-0000000000d1"
	migDocOrfan = "01900000-0000-7000-8000-0000000000d2"
	migEnvio    = "01900000-0000-7000-8000-0000000000e1"
)

// MigrateAmbientes checks migration 00009 on a database that db holds at
// schema version 8 (before it): a company that already moved to
// produccion, its certificacion CAF 1–100000 of tipo 33, a document of
// that CAF (folio 1), one whose CAF is unknown (folio 2), its
// Idempotency-Key and an envelope of the first written before envelopes
// kept their environment. open then opens the store (which migrates it).
// The document of the CAF takes the CAF's environment, the other the
// company's, the key its document's and the envelope its first
// document's; and the company can then register a produccion CAF 1–200
// and take folio 1 of it.
func MigrateAmbientes(t *testing.T, db *sql.DB, open func(t *testing.T) store.Store) {
	t.Helper()
	ctx := ctxT(t)
	const at = "2026-01-02T03:04:05Z"
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO empresas (id, rut, razon_social, giro, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion,
			inbound_email, inbound_status, acteco, created_at, updated_at, oficina_sii)
			VALUES ($1, '76543210-3', 'Mig SpA', 'Comercio', 'Calle 1', 'Santiago', 'Santiago', 'produccion', '2014-08-22', 80, '', '', '[620200]', $2, $2, '')`,
			[]any{migEmpresa, at}},
		{`INSERT INTO cafs (id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, ambiente, fecha_autorizacion, xml, is_active, created_at)
			VALUES ($1, $2, 33, 1, 100000, 3, 'certificacion', '2025-01-02', $3, $4, $5)`,
			[]any{migCAFCert, migEmpresa, []byte("<AUTORIZACION/>"), true, at}},
		{`INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, created_at, updated_at) VALUES ($1, $2, 33, 1, $3, 'aceptado', $4, $4)`,
			[]any{migDocCert, migEmpresa, migCAFCert, at}},
		{`INSERT INTO dtes (id, empresa_id, tipo_dte, folio, caf_id, estado, created_at, updated_at) VALUES ($1, $2, 33, 2, '', 'aceptado', $3, $3)`,
			[]any{migDocOrfan, migEmpresa, at}},
		{`INSERT INTO idempotency_keys (empresa_id, idem_key, state, dte_id, created_at, updated_at) VALUES ($1, 'k-cert', 'done', $2, $3, $3)`,
			[]any{migEmpresa, migDocCert, at}},
		{`INSERT INTO envios (id, empresa_id, dte_ids, track_id, estado, attempts, created_at, updated_at) VALUES ($1, $2, $3, '', 'aceptado', 1, $4, $4)`,
			[]any{migEnvio, migEmpresa, `["` + migDocCert + `"]`, at}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("writing a version-8 row: %v\n%s", err, q.sql)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := open(t)
	for id, want := range map[string]string{migDocCert: store.AmbienteCertificacion, migDocOrfan: store.AmbienteProduccion} {
		if d, err := s.GetDTE(ctx, migEmpresa, id); err != nil || d.Ambiente != want {
			t.Errorf("document %s after the migration: %+v, %v; want ambiente %s", id, d, err, want)
		}
	}
	if k, err := s.GetIdempotency(ctx, migEmpresa, store.AmbienteCertificacion, "k-cert"); err != nil || k.DTEID != migDocCert {
		t.Errorf("the key of the certificacion document after the migration: %+v, %v", k, err)
	}
	if e, err := s.GetEnvio(ctx, migEmpresa, migEnvio); err != nil || e.Ambiente != store.AmbienteCertificacion {
		t.Errorf("the envelope after the migration: %+v, %v; want certificacion", e, err)
	}
	c := &store.CAF{EmpresaID: migEmpresa, TipoDTE: 33, FolioDesde: 1, FolioHasta: 200, Ambiente: store.AmbienteProduccion,
		FechaAutorizacion: "2026-01-01", XML: []byte("<AUTORIZACION/>"), IsActive: true}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, c) })
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		got, folio, err := tx.TakeFolio(ctx, migEmpresa, 33)
		if err != nil {
			return err
		}
		if got.ID != c.ID || folio != 1 {
			t.Errorf("the first produccion folio after the migration: %d of %s, want 1 of %s", folio, got.ID, c.ID)
		}
		return tx.InsertDTE(ctx, &store.DTE{EmpresaID: migEmpresa, TipoDTE: 33, Folio: folio, CAFID: got.ID, Ambiente: got.Ambiente, Estado: store.EstadoPendiente})
	})
	if p, err := s.ListDTEs(ctx, migEmpresa, store.DTEFilter{Ambiente: store.AmbienteProduccion}); err != nil || p.TotalCount != 2 {
		t.Errorf("produccion documents after the migration and one emission: %+v, %v; want 2", p, err)
	}
}
