package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// Ping reads at most one row of the empresas table through the reader
// pool: a round trip that also proves the database is open, migrated and
// readable. An empty table is a success.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	err := db.cfg.Reader.QueryRowContext(ctx, "SELECT 1 FROM empresas LIMIT 1").Scan(&one)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return db.errf(err, "pinging the database")
	}
	return nil
}
