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

// TestMigrateRecibidosAmbiente: a database from before migration 00015
// (rolled back with its own Down) holds a received file and a document of
// a company that works in produccion now; opened again, it migrates, and
// both take the company's current environment, the document's dedupe key
// naming it.
func TestMigrateRecibidosAmbiente(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := pgtest.URL(t)
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Empresa", Ambiente: "certificacion"}
	r := &store.Recepcion{Digest: "d", Origen: "upload", XML: []byte("<x/>")}
	d := &store.Recibido{DedupeKey: "certificacion:dte:76543210-3:33:7", RutEmisor: "76543210-3", TipoDTE: 33, Folio: 7, Estado: "pendiente"}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		r.EmpresaID, d.EmpresaID = e.ID, e.ID
		if err := tx.InsertRecepcion(ctx, r); err != nil {
			return err
		}
		d.RecepcionID = r.ID
		return tx.InsertRecibido(ctx, d)
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
	if _, err := p.DownTo(ctx, 14); err != nil {
		t.Fatal(err)
	}
	var key string
	if err := db.QueryRowContext(ctx, "SELECT dedupe_key FROM recibidos").Scan(&key); err != nil || key != "dte:76543210-3:33:7" {
		t.Fatalf("the key before 00015: %q, %v", key, err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE empresas SET ambiente = 'produccion'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	gotR, err := st.GetRecepcion(ctx, e.ID, r.ID)
	if err != nil || gotR.Ambiente != store.AmbienteProduccion {
		t.Errorf("the file after migrating: %+v, %v; want ambiente produccion", gotR, err)
	}
	gotD, err := st.GetRecibidoByKey(ctx, e.ID, "produccion:dte:76543210-3:33:7")
	if err != nil || gotD.ID != d.ID || gotD.Ambiente != store.AmbienteProduccion {
		t.Errorf("the document after migrating: %+v, %v; want ambiente produccion and its key naming it", gotD, err)
	}
}
