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
	rollBack(t, path, 9)
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

// TestMigrateInboxQuota: a database from before migration 00013 holds a
// refused envelope and a conforme one with a document; opened again, each
// reads its size and stored bytes (counted here by hand: the conforme
// file's 11 bytes of XML and its document's 6 of XML and 2 of report),
// the refused one is descartado (so the retention deletes it) and the
// conforme one is not.
func TestMigrateInboxQuota(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := pgtest.URL(t)
	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Empresa", Ambiente: "certificacion"}
	bad := &store.Recepcion{Digest: "bad", Tipo: "envio", Estado: "rechazada", Origen: "upload", XML: []byte("<junk/>"), Report: []byte("{}")}
	good := &store.Recepcion{Digest: "good", Tipo: "envio", Estado: "conforme", Origen: "upload", XML: []byte("<EnvioDTE/>")}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		bad.EmpresaID, good.EmpresaID = e.ID, e.ID
		if err := tx.InsertRecepcion(ctx, bad); err != nil {
			return err
		}
		if err := tx.InsertRecepcion(ctx, good); err != nil {
			return err
		}
		return tx.InsertRecibido(ctx, &store.Recibido{EmpresaID: e.ID, RecepcionID: good.ID, RutEmisor: "77777777-7", TipoDTE: 33,
			Folio: 1, Estado: "pendiente", DedupeKey: "dte:77777777-7:33:1", XML: []byte("<DTE/>"), Report: []byte("[]")})
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	rollBack(t, path, 12)
	st, err = Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range []struct {
		r            *store.Recepcion
		size, stored int64
		descartado   bool
	}{{bad, 7, 9, true}, {good, 11, 11 + 6 + 2, false}} {
		got, err := st.GetRecepcion(ctx, e.ID, c.r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Size != c.size || got.Stored != c.stored || got.Descartado != c.descartado {
			t.Errorf("file %s after migrating: size %d stored %d descartado %v, want %d %d %v", c.r.Digest,
				got.Size, got.Stored, got.Descartado, c.size, c.stored, c.descartado)
		}
	}
}

// rollBack takes the database at url down to migration version with the
// migrations' own Down steps: a database as an older release left it.
func rollBack(t *testing.T, url string, version int64) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sub, _ := fs.Sub(migrations, "migrations")
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
}
