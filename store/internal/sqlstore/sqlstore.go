package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/dtekit/dtekit/internal/groupcommit"
	"github.com/dtekit/dtekit/store"
)

// Config is what a backend hands to New.
type Config struct {
	Dialect *Dialect
	// Writer runs write transactions and the job runner. SQLite: a pool of
	// exactly one connection opened with immediate transactions.
	Writer Pool
	// Reader runs reads outside transactions; it may be Writer.
	Reader Pool
	// River is the River driver over Writer, of the same family: its
	// transaction type is what Writer's transactions give as Native.
	River JobDriver
	// Jobs tunes the job runner.
	Jobs store.JobsConfig
	// Close releases what the backend opened (after the runner stops).
	Close func() error
	// Now is the clock used to fill empty timestamps (time.Now if nil).
	Now func() time.Time
	// Scrub, when not nil, makes the database's files hold no bytes that
	// committed writes replaced or deleted (store.Scrubber).
	Scrub func(ctx context.Context) error
	// GroupCommit runs concurrent Writes in one transaction each in its
	// own savepoint (see group.go); for a single-writer database whose
	// commits each wait for an fsync.
	GroupCommit bool
}

// DB implements store.Store.
type DB struct {
	reader
	cfg    Config
	jobs   *jobs
	group  *groupcommit.Group[*writeReq] // nil unless cfg.GroupCommit
	health writeHealth
}

var (
	_ store.Store        = (*DB)(nil)
	_ store.SerialWriter = (*DB)(nil)
	_ store.Scrubber     = (*DB)(nil)
)

// New builds the store over databases already opened and migrated.
func New(cfg Config) (*DB, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	db := &DB{cfg: cfg}
	db.reader = reader{d: cfg.Dialect, q: cfg.Reader, now: cfg.Now, snapshot: db.readSnapshot}
	j, err := newJobs(cfg)
	if err != nil {
		return nil, err
	}
	db.jobs = j
	if cfg.GroupCommit {
		db.startGroup()
	}
	return db, nil
}

// readSnapshot runs fn in a read-only transaction on the reader pool, so
// that a page and its count agree.
func (db *DB) readSnapshot(ctx context.Context, fn func(q querier) error) error {
	tx, err := db.cfg.Reader.BeginTx(ctx, db.cfg.Dialect.ReadTx)
	if err != nil {
		return db.errf(err, "beginning a read transaction")
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// SerialWrites reports whether Writes run one at a time, on the one
// writer connection (SQLite).
func (db *DB) SerialWrites() bool { return db.group != nil }

// Jobs returns the job runner.
func (db *DB) Jobs() store.Jobs { return db.jobs }

// Close stops the runner (if started) and closes the databases.
func (db *DB) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := db.jobs.stopIfStarted(ctx)
	db.stopGroup()
	if db.cfg.Close != nil {
		err = errors.Join(err, db.cfg.Close())
	}
	return err
}

type inWriteKey struct{}

// errNested reports a Write (or a Jobs().Enqueue) started from inside a
// Write function: on SQLite it would wait forever for the one writer
// connection its caller holds.
var errNested = errors.New("store: Write or Enqueue called inside a Write function; use the Tx given to the function")

// maxRetries bounds how often Write reruns a transaction the database
// asked to retry.
const maxRetries = 5

// Write runs fn in a write transaction.
func (db *DB) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if ctx.Value(inWriteKey{}) != nil {
		return errNested
	}
	wctx := context.WithValue(ctx, inWriteKey{}, true)
	if db.group != nil {
		return db.health.observe(db.classify(db.groupWrite(wctx, fn)))
	}
	for attempt := 1; ; attempt++ {
		err := db.classify(db.writeOnce(wctx, fn))
		if err == nil || attempt == maxRetries || db.cfg.Dialect.IsRetryable == nil || !db.cfg.Dialect.IsRetryable(err) {
			return db.health.observe(err)
		}
		if err := sleep(ctx, time.Duration(attempt)*10*time.Millisecond); err != nil {
			return err
		}
	}
}

func (db *DB) writeOnce(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	sqlTx, err := db.cfg.Writer.BeginTx(ctx, nil)
	if err != nil {
		return db.errf(err, "beginning a write transaction")
	}
	// A panic in fn must not leave the transaction (and, on SQLite, the
	// only writer connection) open.
	defer func() {
		if p := recover(); p != nil {
			sqlTx.Rollback()
			panic(p)
		}
	}()
	t := &tx{reader: reader{d: db.cfg.Dialect, q: sqlTx, now: db.cfg.Now}, tx: sqlTx, jobs: db.jobs}
	t.snapshot = func(ctx context.Context, fn func(q querier) error) error { return fn(sqlTx) }
	if err := fn(ctx, t); err != nil {
		if rbErr := sqlTx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, db.errf(rbErr, "rolling back"))
		}
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return db.errf(err, "committing")
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reader implements store.Reader over a querier.
type reader struct {
	d        *Dialect
	q        querier
	now      func() time.Time
	snapshot func(ctx context.Context, fn func(q querier) error) error
}

// errf wraps a database error with what was being done. Retryable and
// foreign key errors keep their chain so callers up the stack can tell.
func (r *reader) errf(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, store.ErrInvalidCursor) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if unreadable(err) && !errors.Is(err, store.ErrUnreadable) {
		return fmt.Errorf("store (%s): %s: %w: %w", r.d.Name, fmt.Sprintf(format, args...), store.ErrUnreadable, err)
	}
	return fmt.Errorf("store (%s): %s: %w", r.d.Name, fmt.Sprintf(format, args...), err)
}

// unreadable reports whether err is a driver's failure to convert a
// stored value into its Go field (database/sql's "sql: Scan error on
// column index …", pgx's ScanArgError, both naming the column): the
// stored value is damaged.
func unreadable(err error) bool {
	if errors.As(err, new(pgx.ScanArgError)) {
		return true
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.HasPrefix(e.Error(), "sql: Scan error on column") {
			return true
		}
	}
	return false
}

// notFound converts sql.ErrNoRows to store.ErrNotFound naming the record.
func (r *reader) notFound(err error, what, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s %q", store.ErrNotFound, what, id)
	}
	return r.errf(err, "reading %s %q", what, id)
}

// stamp fills an empty id and zero times and returns the normalized times.
func (r *reader) stamp(id *string, times ...*time.Time) {
	if id != nil && *id == "" {
		*id = uuid.NewString()
	}
	now := normTime(r.now())
	for _, t := range times {
		if t.IsZero() {
			*t = now
		} else {
			*t = normTime(*t)
		}
	}
}

// tx implements store.Tx.
type tx struct {
	reader
	tx   Tx
	jobs *jobs
}

var _ store.Tx = (*tx)(nil)

// affectedOne maps "no row changed" to ErrNotFound.
func (t *tx) affectedOne(res sql.Result, err error, what, id string) error {
	if err != nil {
		if t.d.IsForeignKey(err) {
			return fmt.Errorf("%w: %s %q refers to a missing record: %v", store.ErrNotFound, what, id, err)
		}
		return t.errf(err, "writing %s %q", what, id)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.errf(err, "writing %s %q", what, id)
	}
	if n == 0 {
		return fmt.Errorf("%w: %s %q", store.ErrNotFound, what, id)
	}
	return nil
}

// inserted interprets an INSERT … ON CONFLICT DO NOTHING: no row means a
// uniqueness rule refused it; pkTaken tells whether the id itself was
// taken (then the conflict is on the primary key, else on constraint).
func (t *tx) inserted(ctx context.Context, res sql.Result, err error, what, table, id, constraint string) error {
	if err != nil {
		if t.d.IsForeignKey(err) {
			return fmt.Errorf("%w: %s %q: its company (or a record it refers to) does not exist", store.ErrNotFound, what, id)
		}
		return t.errf(err, "inserting %s %q", what, id)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.errf(err, "inserting %s %q", what, id)
	}
	if n == 1 {
		return nil
	}
	if table != "" {
		var one int
		err := t.q.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE id = $1", id).Scan(&one)
		if err == nil {
			return &store.ConflictError{Constraint: store.ConstraintPrimaryKey}
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return t.errf(err, "inserting %s %q", what, id)
		}
	}
	return &store.ConflictError{Constraint: constraint}
}

// boolArg passes a bool; both drivers bind it (SQLite as 0/1).
func boolArg(b bool) any { return b }

// blob keeps nil as NULL and an empty non-nil slice as empty.
func blob(b []byte) any {
	if b == nil {
		return nil
	}
	return b
}
