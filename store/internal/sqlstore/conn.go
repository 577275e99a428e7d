package sqlstore

import (
	"context"
	"database/sql"
)

// Querier runs statements: a pool or a transaction of either driver
// family (database/sql for SQLite, pgx for PostgreSQL). Its methods keep
// database/sql's names, so the shared SQL reads the same over both; what
// they return are the small interfaces below, which *sql.Rows and *sql.Row
// satisfy as they are and the pgx adapter (store/postgres) implements.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) Row
}

// querier is the package's own name for Querier.
type querier = Querier

// Rows is the result of a query, read row by row. A query's error may
// surface at Next (reported by Err) rather than from QueryContext.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Row is the result of a query of at most one row: Scan reports
// sql.ErrNoRows (or an error wrapping it) when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Pool is a database's pool of connections.
type Pool interface {
	Querier
	// BeginTx starts a transaction; nil opts is the database's default.
	BeginTx(ctx context.Context, opts *sql.TxOptions) (Tx, error)
}

// Tx is a transaction of a Pool. Rollback after Commit (or a second
// Rollback) reports sql.ErrTxDone.
type Tx interface {
	Querier
	Commit() error
	Rollback() error
	// Native is the driver's own transaction (*sql.Tx, pgx.Tx), which the
	// River driver of the same family takes to insert a job in it.
	Native() any
}

// SQLPool adapts a database/sql pool.
func SQLPool(db *sql.DB) Pool { return sqlPool{db} }

type sqlPool struct{ db *sql.DB }

func (p sqlPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.db.ExecContext(ctx, query, args...)
}

func (p sqlPool) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	return nilRows(p.db.QueryContext(ctx, query, args...))
}

func (p sqlPool) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	return p.db.QueryRowContext(ctx, query, args...)
}

func (p sqlPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (Tx, error) {
	t, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return sqlTx{t}, nil
}

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, query, args...)
}

func (t sqlTx) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	return nilRows(t.tx.QueryContext(ctx, query, args...))
}

func (t sqlTx) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t sqlTx) Commit() error   { return t.tx.Commit() }
func (t sqlTx) Rollback() error { return t.tx.Rollback() }
func (t sqlTx) Native() any     { return t.tx }

// nilRows keeps a failed query's nil *sql.Rows a nil Rows (not an
// interface holding a nil pointer).
func nilRows(r *sql.Rows, err error) (Rows, error) {
	if err != nil {
		return nil, err
	}
	return r, nil
}
