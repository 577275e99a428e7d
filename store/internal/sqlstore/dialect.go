// Package sqlstore is the one SQL implementation of store.Store shared by
// store/sqlite and store/postgres. It runs SQL both dialects accept ($n
// placeholders, ON CONFLICT DO NOTHING, RETURNING, partial unique indexes)
// through a Querier with database/sql's method names, which a backend
// provides over its own driver (SQLPool for database/sql; store/postgres
// adapts pgx), and River through a JobDriver of the same family. What
// differs is gathered in a Dialect supplied by the backend package:
// row-lock clauses, how times travel, how a driver error is classified.
package sqlstore

import (
	"database/sql"
	"fmt"
	"time"
)

// Dialect is what a backend tells the shared implementation about its
// database.
type Dialect struct {
	// Name is "sqlite" or "postgres" (used in error messages).
	Name string
	// ForUpdate is appended to a SELECT that must lock the rows it reads
	// until the transaction ends (" FOR UPDATE" on PostgreSQL; "" on
	// SQLite, where a write transaction already excludes every other).
	ForUpdate string
	// LockEmpresa is a statement, taking the company id as $1, that
	// serializes writers of one company's CAF ranges ("" when the
	// database already serializes every write transaction).
	LockEmpresa string
	// LockConsoleSessions is a statement that serializes the writers of
	// console sessions until their transaction ends, so that each one
	// counts the live sessions the others committed ("" when the
	// database already serializes every write transaction).
	LockConsoleSessions string
	// TimeArg converts a non-zero UTC time (truncated to microseconds) to
	// the value bound as a parameter.
	TimeArg func(time.Time) any
	// IsForeignKey reports a foreign key violation.
	IsForeignKey func(error) bool
	// IsRetryable reports an error after which the whole transaction may
	// be run again (serialization failure, deadlock).
	IsRetryable func(error) bool
	// IsStorageFull reports an error by which the database refused a
	// write for want of space (nil: never).
	IsStorageFull func(error) bool
	// ReadTx is the options of the read-only transactions that give
	// listings one snapshot for their page and their total count.
	ReadTx *sql.TxOptions
}

// timeLayout is the SQLite text form of a time: UTC, fixed width, so
// text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// SQLiteTimeArg formats a time as SQLite columns store it.
func SQLiteTimeArg(t time.Time) any { return t.UTC().Format(timeLayout) }

// normTime is the form every time takes before it is stored or handed
// back: UTC, microsecond precision (PostgreSQL's), no monotonic reading.
func normTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond).Round(0)
}

// targ returns the parameter for t: NULL when zero.
func (d *Dialect) targ(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return d.TimeArg(normTime(t))
}

// timeScan scans a nullable time column of either backend.
type timeScan struct{ t *time.Time }

func (s timeScan) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*s.t = time.Time{}
	case time.Time:
		*s.t = normTime(v)
	case string:
		return s.parse(v)
	case []byte:
		return s.parse(string(v))
	default:
		return fmt.Errorf("sqlstore: cannot scan %T into a time", src)
	}
	return nil
}

func (s timeScan) parse(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("sqlstore: bad stored time %q: %w", v, err)
	}
	*s.t = normTime(t)
	return nil
}

// ts wraps a *time.Time for Scan.
func ts(t *time.Time) timeScan { return timeScan{t} }
