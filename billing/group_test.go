package billing

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

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
func startWrite(g *groupCommit, a *arrival, ran *atomic.Int64) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- g.write(context.Background(), a, func(context.Context, store.Tx, *groupTx) error {
			ran.Add(1)
			return nil
		})
	}()
	return done
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

func TestGroupLoneCallerNotDelayed(t *testing.T) {
	st := &writeCounter{}
	g := &groupCommit{st: st, linger: time.Hour}
	var ran atomic.Int64
	waitDone(t, startWrite(g, g.coming(), &ran), "the only announced caller")
	if st.writes.Load() != 1 || ran.Load() != 1 {
		t.Fatalf("writes %d, functions run %d; want 1 and 1", st.writes.Load(), ran.Load())
	}
}

func TestGroupWaitsForAnnouncedCaller(t *testing.T) {
	st := &writeCounter{}
	g := &groupCommit{st: st, linger: time.Hour}
	arrA, arrB := g.coming(), g.coming()
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

// TestGroupForgetsCallersThatWrote: an announced caller stops counting
// once its write is queued, so a later group does not wait for callers
// that already wrote (and may never call again).
func TestGroupForgetsCallersThatWrote(t *testing.T) {
	st := &writeCounter{}
	g := &groupCommit{st: st, linger: time.Hour}
	arrA, arrB := g.coming(), g.coming()
	var ran atomic.Int64
	a, b := startWrite(g, arrA, &ran), startWrite(g, arrB, &ran)
	waitDone(t, a, "first caller")
	waitDone(t, b, "second caller")
	waitDone(t, startWrite(g, nil, &ran), "a caller after both wrote")
	g.withdraw(arrA) // after its write, a withdrawal changes nothing
	if n := onTheWay(g); n != 0 {
		t.Fatalf("callers on their way %d after both wrote, want 0", n)
	}
}

func TestGroupStopsWaitingWhenCallerWithdraws(t *testing.T) {
	st := &writeCounter{}
	g := &groupCommit{st: st, linger: time.Hour}
	arrA, arrB := g.coming(), g.coming()
	var ran atomic.Int64
	a := startWrite(g, arrA, &ran)
	time.Sleep(20 * time.Millisecond)
	g.withdraw(arrB) // the second caller failed before its write
	g.withdraw(arrB) // a second call changes nothing
	waitDone(t, a, "first caller after the second withdrew")
	if n := onTheWay(g); n != 0 {
		t.Fatalf("callers on their way %d after one wrote and one withdrew, want 0", n)
	}
}

func TestGroupLingerIsBounded(t *testing.T) {
	st := &writeCounter{}
	const linger = 30 * time.Millisecond
	g := &groupCommit{st: st, linger: linger}
	arrA, arrB := g.coming(), g.coming()
	defer g.withdraw(arrB) // announced, never writes
	var ran atomic.Int64
	start := time.Now()
	waitDone(t, startWrite(g, arrA, &ran), "caller whose partner never comes")
	if d := time.Since(start); d < linger {
		t.Fatalf("group ran after %v, before the linger of %v although another caller was announced", d, linger)
	}
}

// TestGroupMemberFailureLosesNobody: when a member that joined the
// running group fails, every member, including those that joined with it
// and had not run yet, runs again alone and gets its own answer. Nobody is
// announced, so the group starts at once and B and C join it while A runs.
func TestGroupMemberFailureLosesNobody(t *testing.T) {
	st := &writeCounter{}
	g := &groupCommit{st: st, linger: time.Hour}
	release := make(chan struct{})
	var aRuns atomic.Int64
	a := make(chan error, 1)
	go func() {
		a <- g.write(context.Background(), nil, func(context.Context, store.Tx, *groupTx) error {
			if aRuns.Add(1) == 1 {
				<-release // hold the group until B and C are pending
			}
			return nil
		})
	}()
	errB := errors.New("B fails")
	b, c := make(chan error, 1), make(chan error, 1)
	for len(pendingOf(g)) != 0 || aRuns.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		b <- g.write(context.Background(), nil, func(context.Context, store.Tx, *groupTx) error { return errB })
	}()
	for len(pendingOf(g)) != 1 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		c <- g.write(context.Background(), nil, func(context.Context, store.Tx, *groupTx) error { return nil })
	}()
	for len(pendingOf(g)) != 2 {
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

// onTheWay returns how many announced callers g still counts on.
func onTheWay(g *groupCommit) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.expected
}

// pendingOf returns a copy of g's pending operations.
func pendingOf(g *groupCommit) []*groupOp {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*groupOp(nil), g.pending...)
}
