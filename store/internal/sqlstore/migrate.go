package sqlstore

import (
	"context"
	"database/sql"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// Migrate applies a backend's embedded dtekit migrations (the files under
// "migrations" in fsys, in goose's format) and then River's own, through
// the backend's River driver, filling what migrations leave to Go (the
// search text of older catalog records, backfillSearch) in between. All
// are idempotent: a store opened again
// applies only what is new.
func Migrate(ctx context.Context, db *sql.DB, dialect goose.Dialect, fsys fs.FS, rd JobDriver) error {
	sub, err := fs.Sub(fsys, "migrations")
	if err != nil {
		return err
	}
	// Out of order: a database that holds a later migration but lacks an
	// earlier one (one made on a development branch before the earlier
	// one existed, or a test that takes one migration back) gets the
	// missing one applied rather than refused. A database migrated by
	// released binaries only ever holds a prefix, for which this changes
	// nothing.
	p, err := goose.NewProvider(dialect, db, sub, goose.WithLogger(goose.NopLogger()), goose.WithAllowOutofOrder(true))
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return err
	}
	if err := backfillSearch(ctx, db); err != nil {
		return err
	}
	return rd.migrate(ctx)
}
