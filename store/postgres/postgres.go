// Package postgres stores dtekit's records in PostgreSQL, for deployments
// that run several server processes or want the database apart from the
// server.
//
// It runs on github.com/jackc/pgx/v5's own interface, over one pgxpool:
// the SQL shared with store/sqlite goes through sqlstore's Querier, which
// a small adapter (pgx.go) implements on pgx's pool and transactions.
// Transactions run at READ COMMITTED; the few writes that read before
// they write lock what they read (SELECT … FOR UPDATE, or a guarded
// UPDATE that re-checks its condition), so concurrent processes never
// hand out one folio twice nor register overlapping CAF ranges. Listings
// read their page and their total count in one REPEATABLE READ snapshot.
//
// The schema is created and upgraded by embedded goose migrations at
// Open, River's tables the same way, both under a PostgreSQL advisory lock
// so that processes starting together migrate once (goose runs on a
// database/sql handle borrowed from the pool, pgx/v5/stdlib, for the
// migration only). Background jobs use River's pgx driver (riverpgxv5) on
// the same pool, and a job is inserted on the pgx.Tx of the very
// transaction that writes the records it follows. Committing that
// transaction notifies the job's queue (NOTIFY), and every runner on the
// database LISTENs, so a job starts within milliseconds of its commit, in
// whichever process is free; JobsConfig.PollInterval is only the fallback
// that finds a job whose notification did not reach a runner (a listener
// reconnecting), so it could be long, though its default stays 1 s to
// bound such a job's wait. The listener takes one connection out of the
// pool for itself.
//
// The URL is any pgx connection string, e.g.
// postgres://user@host/db?sslmode=disable; a search_path parameter selects
// the schema (tests use one schema each).
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/internal/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tunes Open. The zero value is fine.
type Options struct {
	// Jobs tunes the background job runner.
	Jobs store.JobsConfig
	// MaxConns bounds the connection pool (default 20). A started job
	// runner takes one more connection out of it for its listener.
	MaxConns int
}

// Open connects to the PostgreSQL database at url, applies the
// migrations, and returns the store. Close it when done.
func Open(ctx context.Context, url string, opts *Options) (store.Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 20
	}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The parse error may quote the URL and its password: keep it out.
		return nil, errors.New("store/postgres: the database URL does not parse")
	}
	pc.MaxConns = int32(min(o.MaxConns, math.MaxInt32))
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("store/postgres: connecting to %s: %w", pc.ConnConfig.Host, err)
	}
	closePool := func() error { pool.Close(); return nil }
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store/postgres: connecting to %s: %w", pc.ConnConfig.Host, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store/postgres: migrating: %w", err)
	}
	p := pgxPool{pool}
	s, err := sqlstore.New(sqlstore.Config{
		Dialect: &dialect,
		Writer:  p,
		Reader:  p,
		River:   sqlstore.RiverDriver(riverpgxv5.New(pool)),
		Jobs:    o.Jobs,
		Close:   closePool,
	})
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// migrateLock is the advisory lock key held while migrating.
const migrateLock = 0x647465_6b6974 // "dtekit"

// migrate applies dtekit's migrations and River's, holding an advisory
// lock so that concurrent Opens migrate one after the other.
func migrate(ctx context.Context, pool *pgxpool.Pool) (err error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close() // the pool stays open
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		return err
	}
	defer func() {
		_, uerr := conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", int64(migrateLock))
		err = errors.Join(err, uerr)
	}()
	return sqlstore.Migrate(ctx, db, goose.DialectPostgres, migrations, sqlstore.RiverDriver(riverpgxv5.New(pool)))
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

var dialect = sqlstore.Dialect{
	Name:         "postgres",
	ForUpdate:    " FOR UPDATE",
	LockEmpresa:  "SELECT 1 FROM empresas WHERE id = $1 FOR NO KEY UPDATE",
	TimeArg:      func(t time.Time) any { return t },
	IsForeignKey: func(err error) bool { return pgCode(err) == "23503" },
	IsRetryable: func(err error) bool {
		c := pgCode(err)
		return c == "40001" || c == "40P01"
	},
	// 53100 is disk_full (class 53, insufficient resources).
	IsStorageFull: func(err error) bool { return pgCode(err) == "53100" },
	ReadTx:        &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},

	// A transaction-level advisory lock: sign-ins wait for each other and
	// for nothing else. Its key is "dtks" in the high half and the
	// table's oid in the low one, so each schema's sessions have a lock
	// of their own and no key falls on migrateLock.
	LockConsoleSessions: "SELECT pg_advisory_xact_lock((1685351283::bigint << 32) | 'console_sesiones'::regclass::oid::bigint)",
}
