package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pressly/goose/v3"

	"github.com/dtekit/dtekit/store"
)

// TestMigratesFrom00008: a database migrated before the SII's list of
// contribuyentes (through 00008) opens at the current schema, keeps its
// rows and takes a list.
func TestMigratesFrom00008(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{}
	err = fs.WalkDir(migrations, "migrations", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := strings.TrimPrefix(path, "migrations/")
		if name < "00009" {
			b, err := fs.ReadFile(migrations, path)
			old[name] = &fstest.MapFile{Data: b}
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, old, goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO settings (name, value) VALUES ('antes', 'de 00011')"); err != nil {
		t.Fatal(err)
	}
	// A company with a mail read before 00014, whose Message-ID a
	// different mail reuses afterwards.
	for _, q := range []string{
		"INSERT INTO empresas (id, rut, ambiente, created_at, updated_at) VALUES ('e-1', '76543210-3', 'certificacion', '2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z')",
		"INSERT INTO mensajes (id, empresa_id, message_id, digest, created_at) VALUES ('m-1', 'e-1', '<uno@x.cl>', 'd1', '2026-01-02T03:04:05Z')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	st, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, ok, err := st.Setting(ctx, "antes"); err != nil || !ok || v != "de 00011" {
		t.Errorf("a row written before the migration: %q %v %v", v, ok, err)
	}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		l, err := tx.BeginContribuyentes(ctx, "x.csv")
		if err != nil {
			return err
		}
		if _, err := tx.AddContribuyentes(ctx, l.ID, []store.Contribuyente{{Rut: "76543210-3", Correo: "dte@x.cl"}}); err != nil {
			return err
		}
		_, err = tx.CompleteContribuyentes(ctx, l.ID)
		return err
	})
	if c, gerr := st.GetContribuyente(ctx, "76543210-3"); err != nil || gerr != nil || c.Correo != "dte@x.cl" {
		t.Errorf("a list after the migration: %+v, %v, %v", c, err, gerr)
	}
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMensaje(ctx, &store.Mensaje{EmpresaID: "e-1", MessageID: "<uno@x.cl>", Digest: "d2"})
	})
	if m, ferr := st.FindMensaje(ctx, "e-1", "d1"); err != nil || ferr != nil || m.ID != "m-1" {
		t.Errorf("a mail reusing the Message-ID of one read before 00014: %v; the old one: %+v, %v", err, m, ferr)
	}
}
