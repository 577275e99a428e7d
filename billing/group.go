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

// groupCommit runs the short transactions of concurrent emissions
// together: while one group's transaction commits, the next requests
// queue, and the next group runs all of them in one transaction with one
// commit (one fsync on SQLite) instead of one each. A function that fails
// makes the group roll back; its members are then run again each in its
// own transaction, so one request's failure never becomes another's. The
// functions must therefore be safe to run more than once (as store.Write
// already requires: they may only act through tx).
type groupCommit struct {
	st store.Store
	// after runs at the end of each group transaction with what the
	// members collected.
	after func(ctx context.Context, tx store.Tx, gt *groupTx) error

	mu      sync.Mutex
	pending []*groupOp
	running bool
}

type groupOp struct {
	ctx  context.Context
	fn   groupFunc
	done chan error
}

// groupFunc is one member's work in a group transaction.
type groupFunc func(ctx context.Context, tx store.Tx, gt *groupTx) error

// groupTx collects what a group's members ask to run once per
// transaction: the recovery of the emissions whose folios they took, one
// recovery job for the whole group instead of one job each.
type groupTx struct {
	recover []recoverItem
}

// addRecovery asks for the emission's recovery job.
func (gt *groupTx) addRecovery(empresaID, dteID string) {
	gt.recover = append(gt.recover, recoverItem{EmpresaID: empresaID, DTEID: dteID})
}

// write runs fn in a write transaction shared with other concurrent
// callers and returns fn's error (or the transaction's).
func (g *groupCommit) write(ctx context.Context, fn groupFunc) error {
	op := &groupOp{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, op)
	if !g.running {
		g.running = true
		go g.lead()
	}
	g.mu.Unlock()
	return <-op.done
}

// lead runs groups until nothing is pending.
func (g *groupCommit) lead() {
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.running = false
			g.mu.Unlock()
			return
		}
		n := min(len(g.pending), maxGroup)
		group := make([]*groupOp, 0, n)
		for _, op := range g.pending[:n] {
			if err := op.ctx.Err(); err != nil {
				op.done <- err
				continue
			}
			group = append(group, op)
		}
		g.pending = append(g.pending[:0], g.pending[n:]...)
		g.mu.Unlock()
		g.run(group)
	}
}

func (g *groupCommit) run(group []*groupOp) {
	if len(group) == 0 {
		return
	}
	if len(group) == 1 {
		op := group[0]
		op.done <- g.alone(op)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(group[0].ctx), groupTimeout)
	err := g.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		gt := &groupTx{}
		for _, op := range group {
			if err := op.fn(ctx, tx, gt); err != nil {
				return err
			}
		}
		return g.finish(ctx, tx, gt)
	})
	cancel()
	if err == nil {
		for _, op := range group {
			op.done <- nil
		}
		return
	}
	for _, op := range group {
		op.done <- g.alone(op)
	}
}

// alone runs one member in its own transaction.
func (g *groupCommit) alone(op *groupOp) error {
	return g.st.Write(op.ctx, func(ctx context.Context, tx store.Tx) error {
		gt := &groupTx{}
		if err := op.fn(ctx, tx, gt); err != nil {
			return err
		}
		return g.finish(ctx, tx, gt)
	})
}

func (g *groupCommit) finish(ctx context.Context, tx store.Tx, gt *groupTx) error {
	if g.after == nil {
		return nil
	}
	return g.after(ctx, tx, gt)
}
