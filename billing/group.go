package billing

import (
	"context"
	"time"

	"github.com/dtekit/dtekit/internal/groupcommit"
	"github.com/dtekit/dtekit/store"
)

// maxGroup bounds how many emission transactions share one commit.
const maxGroup = 64

// groupTimeout bounds one group's transaction.
const groupTimeout = 30 * time.Second

// groupLinger bounds how long a group waits for more members while
// callers that announced themselves are still on their way.
const groupLinger = 2 * time.Millisecond

// txGroup runs the short transactions of concurrent emissions together
// (internal/groupcommit): while one group's transaction commits, the next
// requests queue, and the next group runs all of them in one transaction
// with one commit (one fsync on SQLite) instead of one each. A caller
// announces itself (Announce) while it prepares or signs, so that the
// group then forming waits for it, up to the linger, before it opens its
// transaction; a transaction never waits. A function that fails makes
// the group roll back; its members are then run again each in its own
// transaction, so one request's failure never becomes another's. The
// functions must therefore be safe to run more than once (as store.Write
// already requires: they may only act through tx).
type txGroup struct {
	*groupcommit.Group[groupFunc]
	st store.Store
	// after runs at the end of each group transaction with what the
	// members collected.
	after func(ctx context.Context, tx store.Tx, gt *groupTx) error
}

// newTxGroup returns a group writing to st that waits up to linger for
// announced callers; after, when not nil, is each transaction's last step.
func newTxGroup(st store.Store, linger time.Duration, after func(ctx context.Context, tx store.Tx, gt *groupTx) error) *txGroup {
	g := &txGroup{Group: &groupcommit.Group[groupFunc]{Max: maxGroup, Linger: linger}, st: st, after: after}
	g.Run = g.run
	return g
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

// run runs one group: the members, then any that arrived meanwhile
// (they join without waiting), then the group's last step, in one
// transaction. The transaction holds the write lock (and, on PostgreSQL,
// the row locks of the folios taken) only while statements and the commit
// run. If it fails, every member runs again alone.
func (g *txGroup) run(b *groupcommit.Batch[groupFunc]) {
	members := b.Ops
	ctx, cancel := context.WithTimeout(context.WithoutCancel(members[0].Ctx), groupTimeout)
	var gt *groupTx
	err := g.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		// The store may run this function again after a rollback: every
		// member taken so far runs again.
		gt = &groupTx{}
		members = b.Ops
		for _, op := range members {
			if err := op.Item(ctx, tx, gt); err != nil {
				return err
			}
		}
		for len(members) < maxGroup {
			more := b.More(maxGroup - len(members))
			if len(more) == 0 {
				break
			}
			// Members first: if one fails, all of them run again alone.
			members = b.Ops
			for _, op := range more {
				if err := op.Item(ctx, tx, gt); err != nil {
					return err
				}
			}
		}
		return g.finish(ctx, tx, gt)
	})
	cancel()
	members = b.Ops
	if err == nil {
		gt.commit()
		for _, op := range members {
			op.Finish(nil)
		}
		return
	}
	for _, op := range members {
		op.Finish(g.alone(op))
	}
}

// alone runs one member in its own transaction.
func (g *txGroup) alone(op *groupcommit.Op[groupFunc]) error {
	ctx, cancel := context.WithTimeout(op.Ctx, groupTimeout)
	defer cancel()
	var gt *groupTx
	err := g.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		gt = &groupTx{}
		if err := op.Item(ctx, tx, gt); err != nil {
			return err
		}
		return g.finish(ctx, tx, gt)
	})
	if err == nil {
		gt.commit()
	}
	return err
}

func (g *txGroup) finish(ctx context.Context, tx store.Tx, gt *groupTx) error {
	if g.after == nil {
		return nil
	}
	return g.after(ctx, tx, gt)
}
