// Package groupcommit gathers operations submitted concurrently into
// batches, so that one transaction and one commit serve many callers.
//
// A Group has at most one leader goroutine at a time, started by the
// first submission and gone when nothing is pending. The leader takes the
// pending operations (up to Max) as a batch and hands it to Run; while
// Run works, new submissions queue for the next batch, and Run may take
// them into its own batch with More. Run must Finish every operation of
// its batch exactly once.
//
// A caller that knows it will submit soon (it is still preparing its
// operation) may Announce itself: while announced callers are on their
// way, the leader waits for them, up to Linger, before it hands the batch
// to Run. A lone caller is never delayed, and a batch never waits inside
// Run. This is how the service's emissions share SQLite commits (and
// their fsync) and how the SQLite store batches its Writes.
package groupcommit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultMax is the batch size bound when Group.Max is zero.
const DefaultMax = 64

// ErrClosed is what a submission to a closed Group returns.
var ErrClosed = errors.New("groupcommit: closed")

// Group batches operations carrying items of type T. Set Run (and
// optionally Max and Linger) before the first submission; a Group must
// not be copied after first use.
type Group[T any] struct {
	// Run runs one batch. It must call Finish on every operation of the
	// batch (and of what More added to it) exactly once.
	Run func(b *Batch[T])
	// Max bounds how many operations one batch holds; zero means
	// DefaultMax.
	Max int
	// Linger bounds how long the leader waits for announced callers
	// before running a batch; zero means it does not wait.
	Linger time.Duration

	mu      sync.Mutex
	pending []*Op[T]
	running bool
	closed  bool
	leaders sync.WaitGroup
	// expected counts announced callers still on their way: neither
	// queued nor withdrawn.
	expected int
	// wake, while the leader lingers, tells it that an operation arrived
	// or an announced caller withdrew.
	wake chan struct{}
}

// Op is one submitted operation.
type Op[T any] struct {
	// Ctx is the submitter's context.
	Ctx context.Context
	// Item is what the submitter asked to run.
	Item T
	done chan error
}

// Finish delivers the operation's outcome to its submitter. Call it once.
func (op *Op[T]) Finish(err error) { op.done <- err }

// Batch is what Run receives: the operations taken for one run.
type Batch[T any] struct {
	g *Group[T]
	// Ops are the batch's operations, oldest first.
	Ops []*Op[T]
}

// More takes up to room operations submitted since the batch was formed
// (skipping, and finishing with their context's error, those whose
// context ended) and returns them; they belong to the batch from now on.
// It returns nothing when none is pending.
func (b *Batch[T]) More(room int) []*Op[T] {
	b.g.mu.Lock()
	more := b.g.takeLocked(room)
	b.g.mu.Unlock()
	b.Ops = append(b.Ops, more...)
	return more
}

// Arrival is an announced caller (see Announce).
type Arrival struct{ done bool }

// Announce tells the group that the caller will submit soon, so that the
// batch then forming waits for it (up to Linger) instead of running
// without it. Pass the Arrival to Start or Do, or to Withdraw if the
// caller gives up before submitting.
func (g *Group[T]) Announce() *Arrival {
	g.mu.Lock()
	g.expected++
	g.mu.Unlock()
	return &Arrival{}
}

// Withdraw tells the group that the announced caller a will not submit
// after all. It does nothing once a submitted or withdrew, nor for a nil
// a.
func (g *Group[T]) Withdraw(a *Arrival) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.arrivedLocked(a) {
		g.signalLocked()
	}
}

// Do submits item and waits for its outcome: the error Run finished it
// with, ctx's error if ctx ended before its batch was formed, or
// ErrClosed. a is the caller's announcement, nil when it made none.
func (g *Group[T]) Do(ctx context.Context, a *Arrival, item T) error {
	return <-g.Start(ctx, a, item)
}

// Start submits item like Do but returns at once; the channel receives
// what Do would return.
func (g *Group[T]) Start(ctx context.Context, a *Arrival, item T) <-chan error {
	op := &Op[T]{Ctx: ctx, Item: item, done: make(chan error, 1)}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.arrivedLocked(a)
	if g.closed {
		op.done <- ErrClosed
		return op.done
	}
	g.pending = append(g.pending, op)
	if !g.running {
		g.running = true
		g.leaders.Add(1)
		go g.lead()
	} else {
		g.signalLocked()
	}
	return op.done
}

// Close refuses new submissions and waits until the operations already
// submitted have run.
func (g *Group[T]) Close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.leaders.Wait()
}

// Pending reports how many operations wait for a batch.
func (g *Group[T]) Pending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// Announced reports how many announced callers are still on their way.
func (g *Group[T]) Announced() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.expected
}

func (g *Group[T]) max() int {
	if g.Max > 0 {
		return g.Max
	}
	return DefaultMax
}

// arrivedLocked stops counting a as on its way and reports whether it
// was. Called with mu held.
func (g *Group[T]) arrivedLocked(a *Arrival) bool {
	if a == nil || a.done {
		return false
	}
	a.done = true
	g.expected--
	return true
}

// signalLocked wakes a lingering leader. Called with mu held.
func (g *Group[T]) signalLocked() {
	if g.wake != nil {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// takeLocked moves up to room pending operations whose callers still
// wait into a batch. Called with mu held.
func (g *Group[T]) takeLocked(room int) []*Op[T] {
	n := min(len(g.pending), room)
	taken := make([]*Op[T], 0, n)
	for _, op := range g.pending[:n] {
		if err := op.Ctx.Err(); err != nil {
			op.done <- err
			continue
		}
		taken = append(taken, op)
	}
	g.pending = append(g.pending[:0], g.pending[n:]...)
	return taken
}

// lead runs batches until nothing is pending.
func (g *Group[T]) lead() {
	defer g.leaders.Done()
	l := &lingerer{wake: make(chan struct{}, 1)}
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		if g.Linger > 0 {
			g.gather(l, time.Now().Add(g.Linger))
		}
		g.mu.Lock()
		ops := g.takeLocked(g.max())
		g.mu.Unlock()
		if len(ops) > 0 {
			g.Run(&Batch[T]{g: g, Ops: ops})
		}
	}
}

// gather waits until the pending operations fill a batch, every announced
// caller has submitted or withdrawn, or the deadline passes.
func (g *Group[T]) gather(l *lingerer, deadline time.Time) {
	for {
		g.mu.Lock()
		complete := len(g.pending) >= g.max() || g.expected == 0
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

// lingerer is the leader's wait for more operations.
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
