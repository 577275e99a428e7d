package postgres

import (
	"context"
	"database/sql"
	"io/fs"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
)

// TestMigrateRecepcionTipo: a database from before migration 00010 (the
// column rolled back with its own Down) holds a received file; opened
// again, it migrates and the file reads as an envelope, the only kind
// recorded before.
func TestMigrateRecepcionTipo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := pgtest.URL(t)
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Empresa", Ambiente: "certificacion"}
	r := &store.Recepcion{Digest: "d", Tipo: "respuesta", Origen: "upload", XML: []byte("<x/>")}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		r.EmpresaID = e.ID
		return tx.InsertRecepcion(ctx, r)
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", path)
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 9); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.GetRecepcion(ctx, e.ID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tipo != "envio" || got.Digest != "d" {
		t.Errorf("the file after migrating: tipo %q digest %q, want envio d", got.Tipo, got.Digest)
	}
}
