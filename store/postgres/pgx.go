package postgres

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dtekit/dtekit/store/internal/sqlstore"
)

// The shared SQL runs on pgx's own interface through these adapters:
// they give pgx's pool and transactions the method names of database/sql
// that sqlstore's Querier keeps. What differs between the two is settled
// here or is already the same: pgx.ErrNoRows wraps sql.ErrNoRows; a
// closed transaction is reported as sql.ErrTxDone; the affected-row
// count comes from the command tag; pgx scans into sql.Scanner values
// (sqlstore's time and NULL scanners) as database/sql does, handing
// timestamptz as a time.Time that sqlstore brings to UTC; a scan that
// fails is a pgx.ScanArgError naming the column, which sqlstore reports
// as an unreadable record.

type pgxPool struct{ p *pgxpool.Pool }

var _ sqlstore.Pool = pgxPool{}

func (p pgxPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tag, err := p.p.Exec(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgxResult(tag), nil
}

func (p pgxPool) QueryContext(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r, err := p.p.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return pgxRows{r}, nil
}

func (p pgxPool) QueryRowContext(ctx context.Context, query string, args ...any) sqlstore.Row {
	return p.p.QueryRow(ctx, query, args...)
}

func (p pgxPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (sqlstore.Tx, error) {
	var o pgx.TxOptions
	if opts != nil {
		switch opts.Isolation {
		case sql.LevelDefault:
		case sql.LevelReadCommitted:
			o.IsoLevel = pgx.ReadCommitted
		case sql.LevelRepeatableRead:
			o.IsoLevel = pgx.RepeatableRead
		case sql.LevelSerializable:
			o.IsoLevel = pgx.Serializable
		default:
			return nil, errors.New("store/postgres: unsupported isolation level " + opts.Isolation.String())
		}
		if opts.ReadOnly {
			o.AccessMode = pgx.ReadOnly
		}
	}
	t, err := p.p.BeginTx(ctx, o)
	if err != nil {
		return nil, err
	}
	return &pgxTx{tx: t, ctx: ctx}, nil
}

// pgxTx is a transaction; like database/sql's, it commits under the
// context it began with.
type pgxTx struct {
	tx  pgx.Tx
	ctx context.Context
}

func (t *pgxTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tag, err := t.tx.Exec(ctx, query, args...)
	if err != nil {
		return nil, txDone(err)
	}
	return pgxResult(tag), nil
}

func (t *pgxTx) QueryContext(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r, err := t.tx.Query(ctx, query, args...)
	if err != nil {
		return nil, txDone(err)
	}
	return pgxRows{r}, nil
}

func (t *pgxTx) QueryRowContext(ctx context.Context, query string, args ...any) sqlstore.Row {
	return t.tx.QueryRow(ctx, query, args...)
}

func (t *pgxTx) Commit() error { return txDone(t.tx.Commit(t.ctx)) }

// rollbackTimeout bounds a rollback, which runs even when the
// transaction's context has ended, so that its connection goes back to
// the pool clean (a failed rollback closes it instead).
const rollbackTimeout = 5 * time.Second

func (t *pgxTx) Rollback() error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), rollbackTimeout)
	defer cancel()
	return txDone(t.tx.Rollback(ctx))
}

// Native is the pgx.Tx, which riverpgxv5 takes.
func (t *pgxTx) Native() any { return t.tx }

// txDone reports pgx's closed transaction as database/sql's.
func txDone(err error) error {
	if errors.Is(err, pgx.ErrTxClosed) {
		return sql.ErrTxDone
	}
	return err
}

// pgxResult is an Exec's command tag as a sql.Result.
type pgxResult pgconn.CommandTag

func (r pgxResult) RowsAffected() (int64, error) { return pgconn.CommandTag(r).RowsAffected(), nil }

func (pgxResult) LastInsertId() (int64, error) {
	return 0, errors.New("store/postgres: LastInsertId is not supported (use RETURNING)")
}

// pgxRows gives pgx.Rows database/sql's Close, which reports the query's
// error.
type pgxRows struct{ pgx.Rows }

func (r pgxRows) Close() error {
	r.Rows.Close()
	return r.Rows.Err()
}
