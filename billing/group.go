package billing

import (
	"context"
	"sync"
	"time"

	"github.com/dtekit/dtekit/store"
)

// maxGroup bounds how many emission transactions share one commit.
const maxGroup = 64

// groupTimeout bounds one group's transaction.
const groupTimeout = 30 * time.Second

// groupLinger bounds how long a group waits for more members while
// callers that announced themselves (see coming) are still on their way.
const groupLinger = 2 * time.Millisecond

// groupCommit runs the short transactions of concurrent emissions
// together: while one group's transaction commits, the next requests
// queue, and the next group runs all of them in one transaction with one
// commit (one fsync on SQLite) instead of one each. A group whose
// announced callers are still on their way waits for them, up to the
// linger, before it opens its transaction. A function that fails
// makes the group roll back; its members are then run again each in its
// own transaction, so one request's failure never becomes another's. The
// functions must therefore be safe to run more than once (as store.Write
// already requires: they may only act through tx).
type groupCommit struct {
	st store.Store
	// after runs at the end of each group transaction with what the
	// members collected.
	after func(ctx context.Context, tx store.Tx, gt *groupTx) error

	// linger is how long a group waits for announced callers; zero
	// means groupLinger.
	linger time.Duration

	mu      sync.Mutex
	pending []*groupOp
	running bool
	// expected counts the announced callers still on their way (see
	// coming): neither queued nor withdrawn.
	expected int
	// wake, while the leader gathers a group, tells it that an operation
	// arrived or an announced caller withdrew.
	wake chan struct{}
}

type groupOp struct {
	ctx  context.Context
	fn   groupFunc
	done chan error
}

// groupFunc is one member's work in a group transaction.
type groupFunc func(ctx context.Context, tx store.Tx, gt *groupTx) error

// groupTx collects what a group's members ask to run once per
// transaction: the recovery jobs of the emissions whose folios they took
// (one per company instead of one per emission), and what to do once the
// transaction has committed.
type groupTx struct {
	// recover names the companies that took folios in the transaction.
	recover map[string]struct{}
	// committed runs after the transaction commits.
	committed []func()
}

// addRecovery asks for a recovery job covering an emission of the
// company.
func (gt *groupTx) addRecovery(empresaID string) {
	if gt.recover == nil {
		gt.recover = make(map[string]struct{}, 1)
	}
	gt.recover[empresaID] = struct{}{}
}

// onCommit runs fn once the transaction has committed.
func (gt *groupTx) onCommit(fn func()) { gt.committed = append(gt.committed, fn) }

// commit runs what waited for the transaction's commit.
func (gt *groupTx) commit() {
	for _, fn := range gt.committed {
		fn()
	}
}

// arrival is a caller announced by coming and still on its way to
// write: it stops counting once its write is queued or it withdraws.
type arrival struct{ done bool }

// coming announces a caller that will call write soon, so that the group
// then forming waits for it (up to the linger) instead of committing
// without it: on a busy service every commit then carries more members,
// and each emission pays a smaller share of the commit (the WAL write and
// fsync on SQLite) and of the group's recovery job. The caller passes the
// arrival to write (or start), or to withdraw when it gives up before. A
// group waits only for callers still on their way, so a lone caller is
// never delayed.
func (g *groupCommit) coming() *arrival {
	g.mu.Lock()
	g.expected++
	g.mu.Unlock()
	return &arrival{}
}

// withdraw tells the group that the announced caller a will not write
// after all. It does nothing once a's write was queued or a withdrew, nor
// for a nil a.
func (g *groupCommit) withdraw(a *arrival) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.arrivedLocked(a) {
		g.signalLocked()
	}
}

// arrivedLocked stops counting a as on its way and reports whether it was.
// Called with mu held.
func (g *groupCommit) arrivedLocked(a *arrival) bool {
	if a == nil || a.done {
		return false
	}
	a.done = true
	g.expected--
	return true
}

// completeLocked reports whether the group being gathered should stop
// waiting for more: the pending operations fill it, or no announced
// caller is still on its way. Called with mu held.
func (g *groupCommit) completeLocked() bool {
	return len(g.pending) >= maxGroup || g.expected == 0
}

// signalLocked wakes a lingering leader. Called with mu held.
func (g *groupCommit) signalLocked() {
	if g.wake != nil {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// write runs fn in a write transaction shared with other concurrent
// callers and returns fn's error (or the transaction's). a is the
// caller's announcement (see coming), nil when it made none.
func (g *groupCommit) write(ctx context.Context, a *arrival, fn groupFunc) error {
	return <-g.start(ctx, a, fn)
}

// start queues fn like write but returns at once; the channel receives
// what write would return once fn's group has committed or failed.
func (g *groupCommit) start(ctx context.Context, a *arrival, fn groupFunc) <-chan error {
	op := &groupOp{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.arrivedLocked(a)
	g.pending = append(g.pending, op)
	if !g.running {
		g.running = true
		go g.lead()
	} else {
		g.signalLocked()
	}
	g.mu.Unlock()
	return op.done
}

// lead runs groups until nothing is pending.
func (g *groupCommit) lead() {
	l := &lingerer{wake: make(chan struct{}, 1)}
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		g.run(l)
	}
}

// takeLocked moves up to room pending operations whose callers still
// wait into the group. Called with mu held.
func (g *groupCommit) takeLocked(room int) []*groupOp {
	n := min(len(g.pending), room)
	taken := make([]*groupOp, 0, n)
	for _, op := range g.pending[:n] {
		if err := op.ctx.Err(); err != nil {
			op.done <- err
			continue
		}
		taken = append(taken, op)
	}
	g.pending = append(g.pending[:0], g.pending[n:]...)
	return taken
}

// lingerer is the leader's wait for more members.
type lingerer struct {
	wake  chan struct{}
	timer *time.Timer
}

// wait blocks until an operation arrives, an announced caller withdraws,
// or the deadline passes; it reports false once the deadline has passed.
func (l *lingerer) wait(deadline time.Time) bool {
	d := time.Until(deadline)
	if d <= 0 {
		return false
	}
	if l.timer == nil {
		l.timer = time.NewTimer(d)
	} else {
		l.timer.Reset(d)
	}
	select {
	case <-l.wake:
		l.timer.Stop()
		return true
	case <-l.timer.C:
		return false
	}
}

// run runs one group. While announced callers are still on their way it
// waits for them, up to the linger, before opening the transaction: a
// transaction never waits, so the write lock (and, on PostgreSQL, the row
// locks of the folios taken) is held only while the members' statements
// and the commit run, never while a caller still prepares or signs. In the
// transaction it runs the members, then any that arrived meanwhile, then
// the group's last step, and commits. If the transaction fails, every
// member runs again alone.
func (g *groupCommit) run(l *lingerer) {
	linger := g.linger
	if linger <= 0 {
		linger = groupLinger
	}
	g.gather(l, time.Now().Add(linger))
	g.mu.Lock()
	members := g.takeLocked(maxGroup)
	g.mu.Unlock()
	if len(members) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(members[0].ctx), groupTimeout)
	var gt *groupTx
	err := g.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		// The store may run this function again after a rollback: every
		// member taken so far runs again.
		gt = &groupTx{}
		for _, op := range members {
			if err := op.fn(ctx, tx, gt); err != nil {
				return err
			}
		}
		// Those that arrived while the members ran join without waiting.
		for len(members) < maxGroup {
			g.mu.Lock()
			more := g.takeLocked(maxGroup - len(members))
			g.mu.Unlock()
			if len(more) == 0 {
				break
			}
			// Members first: if one fails, all of them run again alone.
			members = append(members, more...)
			for _, op := range more {
				if err := op.fn(ctx, tx, gt); err != nil {
					return err
				}
			}
		}
		return g.finish(ctx, tx, gt)
	})
	cancel()
	if err == nil {
		gt.commit()
		for _, op := range members {
			op.done <- nil
		}
		return
	}
	for _, op := range members {
		op.done <- g.alone(op)
	}
}

// gather waits, outside any transaction, until the pending operations
// fill a group, every announced caller is pending or has withdrawn, or the
// deadline passes.
func (g *groupCommit) gather(l *lingerer, deadline time.Time) {
	for {
		g.mu.Lock()
		complete := g.completeLocked()
		if !complete {
			g.wake = l.wake
		}
		g.mu.Unlock()
		if complete {
			return
		}
		waited := l.wait(deadline)
		g.mu.Lock()
		g.wake = nil
		g.mu.Unlock()
		select { // a signal sent after the timer fired
		case <-l.wake:
		default:
		}
		if !waited {
			return
		}
	}
}

// alone runs one member in its own transaction.
func (g *groupCommit) alone(op *groupOp) error {
	ctx, cancel := context.WithTimeout(op.ctx, groupTimeout)
	defer cancel()
	var gt *groupTx
	err := g.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		gt = &groupTx{}
		if err := op.fn(ctx, tx, gt); err != nil {
			return err
		}
		return g.finish(ctx, tx, gt)
	})
	if err == nil {
		gt.commit()
	}
	return err
}

func (g *groupCommit) finish(ctx context.Context, tx store.Tx, gt *groupTx) error {
	if g.after == nil {
		return nil
	}
	return g.after(ctx, tx, gt)
}
