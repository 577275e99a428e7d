package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/store/storetest"
)

// TestMigrateAmbientes: a database of schema version 8 (before documents
// kept their environment) migrates, its documents, keys and envelopes
// take their environment, and its company registers a produccion CAF
// that starts at folio 1 (storetest.MigrateAmbientes).
func TestMigrateAmbientes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, os.DirFS("migrations"), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
	storetest.MigrateAmbientes(t, db, func(t *testing.T) store.Store {
		s, err := sqlite.Open(context.Background(), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
