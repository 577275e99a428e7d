package postgres_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/storetest"
)

// TestMigrateAmbientes: a database of schema version 8 (before documents
// kept their environment) migrates, its documents, keys and envelopes
// take their environment, and its company registers a produccion CAF
// that starts at folio 1 (storetest.MigrateAmbientes).
func TestMigrateAmbientes(t *testing.T) {
	loc := pgtest.URL(t)
	db, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"), goose.WithLogger(goose.NopLogger()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
	storetest.MigrateAmbientes(t, db, func(t *testing.T) store.Store {
		s, err := postgres.Open(context.Background(), loc, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
