package billing

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/groupcommit"
	"github.com/dtekit/dtekit/store"
)

// writeCounter is a store whose Write runs fn without a database and
// counts the transactions.
type writeCounter struct {
	store.Store
	writes atomic.Int64
}

func (w *writeCounter) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	w.writes.Add(1)
	return fn(ctx, nil)
}

// startWrite runs one write of g in the background; its result arrives
// on the returned channel.
func startWrite(g *txGroup, a *groupcommit.Arrival, ran *atomic.Int64) <-chan error {
	return g.Start(context.Background(), a, func(context.Context, store.Tx, *groupTx) error {
		ran.Add(1)
		return nil
	})
}

// waitDone waits for a write to finish, failing the test after a while.
func waitDone(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10 s", what)
	}
}

// TestGroupWaitsForAnnouncedCaller: the group waits for an announced
// caller outside any transaction, then runs both in one. (The waiting
// itself is tested in internal/groupcommit.)
func TestGroupWaitsForAnnouncedCaller(t *testing.T) {
	t.Parallel()
	st := &writeCounter{}
	g := newTxGroup(st, time.Hour, nil)
	arrA, arrB := g.Announce(), g.Announce()
	var ran atomic.Int64
	a := startWrite(g, arrA, &ran)
	select {
	case err := <-a:
		t.Fatalf("the first caller's group ran without the announced second caller (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if n := st.writes.Load(); n != 0 {
		t.Fatalf("%d transactions opened while the group waited for an announced caller, want none", n)
	}
	b := startWrite(g, arrB, &ran)
	waitDone(t, a, "first caller")
	waitDone(t, b, "second caller")
	if st.writes.Load() != 1 || ran.Load() != 2 {
		t.Fatalf("writes %d, functions run %d; want one transaction running both", st.writes.Load(), ran.Load())
	}
}

// TestGroupMemberFailureLosesNobody: when a member that joined the
// running group fails, every member, including those that joined with it
// and had not run yet, runs again alone and gets its own answer. Nobody is
// announced, so the group starts at once and B and C join it while A runs.
func TestGroupMemberFailureLosesNobody(t *testing.T) {
	t.Parallel()
	st := &writeCounter{}
	g := newTxGroup(st, time.Hour, nil)
	release := make(chan struct{})
	var aRuns atomic.Int64
	a := make(chan error, 1)
	go func() {
		a <- g.Do(context.Background(), nil, func(context.Context, store.Tx, *groupTx) error {
			if aRuns.Add(1) == 1 {
				<-release // hold the group until B and C are pending
			}
			return nil
		})
	}()
	errB := errors.New("B fails")
	b, c := make(chan error, 1), make(chan error, 1)
	for g.Pending() != 0 || aRuns.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		b <- g.Do(context.Background(), nil, func(context.Context, store.Tx, *groupTx) error { return errB })
	}()
	for g.Pending() != 1 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		c <- g.Do(context.Background(), nil, func(context.Context, store.Tx, *groupTx) error { return nil })
	}()
	for g.Pending() != 2 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	waitDone(t, a, "A")
	waitDone(t, c, "C")
	select {
	case err := <-b:
		if !errors.Is(err, errB) {
			t.Fatalf("B: %v, want its own failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("B: still waiting after 10 s")
	}
}
