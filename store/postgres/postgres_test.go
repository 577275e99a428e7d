package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		NewDB: func(t *testing.T) string { return pgtest.URL(t) },
		Open: func(t *testing.T, loc string, jobs store.JobsConfig) (store.Store, error) {
			return postgres.Open(context.Background(), loc, &postgres.Options{Jobs: jobs})
		},
		Exec: storetest.ExecWith("pgx"),
	})
}

// TestStorageFull makes PostgreSQL refuse inserts with SQLSTATE 53100
// (disk_full, the code PostgreSQL gives when it cannot extend a file),
// raised by triggers so that the error travels the real driver path: the
// write's error matches store.ErrStorageFull, Writable reports the store
// unwritable while its probe is refused too, and writable again once
// inserts succeed.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	loc := pgtest.URL(t)
	st, err := postgres.Open(ctx, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := st.Writable(ctx); err != nil {
		t.Fatalf("Writable before any failure: %v", err)
	}
	exec(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`)
	exec(`CREATE TRIGGER full_empresas BEFORE INSERT ON empresas FOR EACH ROW EXECUTE FUNCTION disk_full()`)
	exec(`CREATE TRIGGER full_probe BEFORE INSERT ON storage_probe FOR EACH ROW EXECUTE FUNCTION disk_full()`)

	e := &store.Empresa{Rut: "76086428-5", RazonSocial: "Empresa", Giro: "Servicios", Direccion: "Calle 1",
		Comuna: "Santiago", Ciudad: "Santiago", Ambiente: "certificacion", FechaResolucion: "2014-08-22",
		NumeroResolucion: 80, Acteco: []int64{620200}}
	insert := func() error {
		return st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) })
	}
	if err := insert(); !errors.Is(err, store.ErrStorageFull) {
		t.Fatalf("insert on a full disk: got %v, want an error matching store.ErrStorageFull", err)
	}
	if err := st.Writable(ctx); !errors.Is(err, store.ErrStorageFull) {
		t.Fatalf("Writable on a full disk: got %v, want an error matching store.ErrStorageFull", err)
	}
	if _, err := st.GetEmpresaByRut(ctx, e.Rut, e.Ambiente); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused insert left a record: %v", err)
	}

	exec(`DROP TRIGGER full_probe ON storage_probe`)
	time.Sleep(1100 * time.Millisecond) // Writable probes at most once a second
	if err := st.Writable(ctx); err != nil {
		t.Fatalf("Writable once the probe succeeds: %v", err)
	}
	exec(`DROP TRIGGER full_empresas ON empresas`)
	if err := insert(); err != nil {
		t.Fatalf("insert once space is back: %v", err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM storage_probe").Scan(&n); err != nil || n != 0 {
		t.Fatalf("storage_probe holds %d rows (%v); the probe must leave it empty", n, err)
	}
}
