package sqlstore

import (
	"context"
	"errors"

	"github.com/dtekit/dtekit/internal/groupcommit"
	"github.com/dtekit/dtekit/store"
)

// Group commit (SQLite). With one writer connection and synchronous=FULL,
// every commit waits for an fsync of the WAL, and that wait, not the SQL,
// bounds how many Writes per second the store takes. So concurrent Writes
// are gathered into batches (internal/groupcommit, one batch at a time),
// and a batch runs one Write after the other in a single database
// transaction, each inside its own SAVEPOINT: a function
// that fails is rolled back to its savepoint alone, the others commit
// together, and every Write returns only once that commit is durable. The
// outcome is the same as running the functions one by one in separate
// transactions, in the order they were gathered; only the fsyncs are
// shared.

// maxGroup bounds how many Writes share one commit.
const maxGroup = 64

// writeReq is one Write handed to the group: its function and, once the
// group ran it, its outcome.
type writeReq struct {
	fn  func(ctx context.Context, tx store.Tx) error
	res writeResult
}

type writeResult struct {
	err      error
	panicked bool
	panicVal any
}

// writeOp is a Write in the group's queue.
type writeOp = groupcommit.Op[*writeReq]

// finish hands r its outcome.
func finish(r *writeOp, res writeResult) {
	r.Item.res = res
	r.Finish(nil)
}

var errClosed = errors.New("store: closed")

func (db *DB) startGroup() {
	db.group = &groupcommit.Group[*writeReq]{Max: maxGroup,
		Run: func(b *groupcommit.Batch[*writeReq]) { db.runGroup(b.Ops) }}
}

func (db *DB) stopGroup() {
	if db.group != nil {
		db.group.Close()
	}
}

// groupWrite hands fn to the group and waits for its outcome. Once
// queued, fn may run: the outcome is awaited whatever ctx does (the group
// skips fn if ctx ends before its batch forms).
func (db *DB) groupWrite(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &writeReq{fn: fn}
	if err := db.group.Do(ctx, nil, r); err != nil {
		if errors.Is(err, groupcommit.ErrClosed) {
			return errClosed
		}
		return err
	}
	if r.res.panicked {
		panic(r.res.panicVal)
	}
	return r.res.err
}

// runGroup runs a batch in one transaction. A request whose savepoint
// cannot be rolled back or released (the transaction itself failed) gets
// that error; every other request of the batch is run again in a new
// batch without it, as Write's contract allows. The first request runs
// without a savepoint; when it fails, the transaction is rolled back and
// the others, not run yet, form the next batch.
func (db *DB) runGroup(batch []*writeOp) {
	for len(batch) > 0 {
		batch = db.runGroupOnce(batch)
	}
}

func (db *DB) runGroupOnce(batch []*writeOp) (again []*writeOp) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.Ctx.Err(); err != nil {
			finish(r, writeResult{err: err})
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return nil
	}
	fail := func(rs []*writeOp, err error) {
		for _, r := range rs {
			finish(r, writeResult{err: err})
		}
	}
	sqlTx, err := db.cfg.Writer.BeginTx(context.Background(), nil)
	if err != nil {
		fail(live, db.errf(err, "beginning a write transaction"))
		return nil
	}
	bg := context.Background()
	results := make([]writeResult, len(live))
	// Each Write's savepoint is released (after a rollback to it, if need
	// be) before the next one opens, so one name serves them all, and
	// the connection's statement cache holds three texts rather than
	// three per position in the group.
	const sp = "dtekit_w"
	// The first Write needs no savepoint: if it fails, rolling back the
	// whole transaction undoes it alone, and the others, not run yet, go
	// to the next batch. (Each savepoint costs two statements and a copy
	// of every page it changes to the sub-journal.)
	if results[0] = db.runFn(live[0], sqlTx); results[0].err != nil || results[0].panicked {
		sqlTx.Rollback()
		finish(live[0], results[0])
		return append([]*writeOp{}, live[1:]...)
	}
	for i, r := range live {
		if i == 0 {
			continue
		}
		if _, err := sqlTx.ExecContext(bg, "SAVEPOINT "+sp); err != nil {
			sqlTx.Rollback()
			finish(r, writeResult{err: db.errf(err, "opening a savepoint")})
			return append(append([]*writeOp{}, live[:i]...), live[i+1:]...)
		}
		res := db.runFn(r, sqlTx)
		if res.err != nil || res.panicked {
			if _, err := sqlTx.ExecContext(bg, "ROLLBACK TO "+sp); err != nil {
				sqlTx.Rollback()
				if res.err == nil && !res.panicked {
					res.err = db.errf(err, "rolling back")
				}
				finish(r, res)
				return append(append([]*writeOp{}, live[:i]...), live[i+1:]...)
			}
		}
		if _, err := sqlTx.ExecContext(bg, "RELEASE "+sp); err != nil {
			// The transaction is gone (e.g. SQLite rolled it back after an
			// interrupted statement): r's writes and those before it are
			// lost; r learns it, the others run again.
			sqlTx.Rollback()
			if res.err == nil && !res.panicked {
				res.err = db.errf(err, "releasing a savepoint")
			}
			finish(r, res)
			return append(append([]*writeOp{}, live[:i]...), live[i+1:]...)
		}
		results[i] = res
	}
	if err := sqlTx.Commit(); err != nil {
		err = db.errf(err, "committing")
		for i, r := range live {
			if results[i].err == nil && !results[i].panicked {
				results[i].err = err
			}
			finish(r, results[i])
		}
		return nil
	}
	for i, r := range live {
		finish(r, results[i])
	}
	return nil
}

// runFn runs one request's function on the group's transaction,
// catching a panic so that it reaches the request's own goroutine.
func (db *DB) runFn(r *writeOp, sqlTx Tx) (res writeResult) {
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panicked: true, panicVal: p}
		}
	}()
	t := &tx{reader: reader{d: db.cfg.Dialect, q: sqlTx, now: db.cfg.Now}, tx: sqlTx, jobs: db.jobs}
	t.snapshot = func(ctx context.Context, fn func(q querier) error) error { return fn(sqlTx) }
	return writeResult{err: r.Item.fn(r.Ctx, t)}
}
