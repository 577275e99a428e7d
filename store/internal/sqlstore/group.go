package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/dtekit/dtekit/store"
)

// Group commit (SQLite). With one writer connection and synchronous=FULL,
// every commit waits for an fsync of the WAL, and that wait, not the SQL,
// bounds how many Writes per second the store takes. So concurrent Writes
// are gathered by one writer goroutine and run one after the other in a
// single database transaction, each inside its own SAVEPOINT: a function
// that fails is rolled back to its savepoint alone, the others commit
// together, and every Write returns only once that commit is durable. The
// outcome is the same as running the functions one by one in separate
// transactions, in the order they were gathered; only the fsyncs are
// shared.

// maxGroup bounds how many Writes share one commit.
const maxGroup = 64

type writeReq struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx store.Tx) error
	done chan writeResult
}

type writeResult struct {
	err      error
	panicked bool
	panicVal any
}

// group is the writer goroutine's state.
type group struct {
	queue chan *writeReq
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

var errClosed = errors.New("store: closed")

func (db *DB) startGroup() {
	g := &group{queue: make(chan *writeReq), stop: make(chan struct{})}
	db.group = g
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			select {
			case <-g.stop:
				return
			case r := <-g.queue:
				batch := []*writeReq{r}
			gather:
				for len(batch) < maxGroup {
					select {
					case r := <-g.queue:
						batch = append(batch, r)
					default:
						break gather
					}
				}
				db.runGroup(batch)
			}
		}
	}()
}

func (db *DB) stopGroup() {
	if db.group == nil {
		return
	}
	db.group.once.Do(func() {
		close(db.group.stop)
		db.group.wg.Wait()
	})
}

// groupWrite hands fn to the writer goroutine and waits for its outcome.
func (db *DB) groupWrite(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	r := &writeReq{ctx: ctx, fn: fn, done: make(chan writeResult, 1)}
	select {
	case db.group.queue <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.group.stop:
		return errClosed
	}
	// Once handed over, fn may run: wait for the outcome whatever ctx
	// does (the writer skips fn if ctx ends before its turn).
	res := <-r.done
	if res.panicked {
		panic(res.panicVal)
	}
	return res.err
}

// runGroup runs a batch in one transaction. A request whose savepoint
// cannot be rolled back or released (the transaction itself failed) gets
// that error; every other request of the batch is run again in a new
// batch without it, as Write's contract allows. The first request runs
// without a savepoint; when it fails, the transaction is rolled back and
// the others, not run yet, form the next batch.
func (db *DB) runGroup(batch []*writeReq) {
	for len(batch) > 0 {
		batch = db.runGroupOnce(batch)
	}
}

func (db *DB) runGroupOnce(batch []*writeReq) (again []*writeReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- writeResult{err: err}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return nil
	}
	fail := func(rs []*writeReq, err error) {
		for _, r := range rs {
			r.done <- writeResult{err: err}
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
		live[0].done <- results[0]
		return append([]*writeReq{}, live[1:]...)
	}
	for i, r := range live {
		if i == 0 {
			continue
		}
		if _, err := sqlTx.ExecContext(bg, "SAVEPOINT "+sp); err != nil {
			sqlTx.Rollback()
			r.done <- writeResult{err: db.errf(err, "opening a savepoint")}
			return append(append([]*writeReq{}, live[:i]...), live[i+1:]...)
		}
		res := db.runFn(r, sqlTx)
		if res.err != nil || res.panicked {
			if _, err := sqlTx.ExecContext(bg, "ROLLBACK TO "+sp); err != nil {
				sqlTx.Rollback()
				if res.err == nil && !res.panicked {
					res.err = db.errf(err, "rolling back")
				}
				r.done <- res
				return append(append([]*writeReq{}, live[:i]...), live[i+1:]...)
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
			r.done <- res
			return append(append([]*writeReq{}, live[:i]...), live[i+1:]...)
		}
		results[i] = res
	}
	if err := sqlTx.Commit(); err != nil {
		err = db.errf(err, "committing")
		for i, r := range live {
			if results[i].err == nil && !results[i].panicked {
				results[i].err = err
			}
			r.done <- results[i]
		}
		return nil
	}
	for i, r := range live {
		r.done <- results[i]
	}
	return nil
}

// runFn runs one request's function on the group's transaction,
// catching a panic so that it reaches the request's own goroutine.
func (db *DB) runFn(r *writeReq, sqlTx *sql.Tx) (res writeResult) {
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panicked: true, panicVal: p}
		}
	}()
	t := &tx{reader: reader{d: db.cfg.Dialect, q: sqlTx, now: db.cfg.Now}, tx: sqlTx, jobs: db.jobs}
	t.snapshot = func(ctx context.Context, fn func(q querier) error) error { return fn(sqlTx) }
	return writeResult{err: r.fn(r.ctx, t)}
}
