package groupcommit

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a Group whose Run records the size of each batch and
// finishes every operation with the error its item names.
type recorder struct {
	g       Group[error]
	mu      sync.Mutex
	batches []int
	hold    chan struct{} // when set, Run waits on it before finishing
}

func newRecorder(linger time.Duration) *recorder {
	r := &recorder{}
	r.g.Linger = linger
	r.g.Run = func(b *Batch[error]) {
		if r.hold != nil {
			<-r.hold
		}
		b.More(r.g.max() - len(b.Ops))
		r.mu.Lock()
		r.batches = append(r.batches, len(b.Ops))
		r.mu.Unlock()
		for _, op := range b.Ops {
			op.Finish(op.Item)
		}
	}
	return r
}

func (r *recorder) sizes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.batches...)
}

// waitDone waits for a submission's outcome, failing after a while.
func waitDone(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still waiting after 10 s", what)
		return nil
	}
}

func TestLoneCallerNotDelayed(t *testing.T) {
	r := newRecorder(time.Hour)
	start := time.Now()
	if err := waitDone(t, r.g.Start(context.Background(), r.g.Announce(), nil), "the only announced caller"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a lone announced caller waited %v", d)
	}
	if got := r.sizes(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("batches %v, want [1]", got)
	}
}

func TestWaitsForAnnouncedCaller(t *testing.T) {
	r := newRecorder(time.Hour)
	arrA, arrB := r.g.Announce(), r.g.Announce()
	a := r.g.Start(context.Background(), arrA, nil)
	select {
	case err := <-a:
		t.Fatalf("the first caller's batch ran without the announced second caller (err %v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if got := r.sizes(); len(got) != 0 {
		t.Fatalf("batches %v ran while the leader waited for an announced caller, want none", got)
	}
	b := r.g.Start(context.Background(), arrB, nil)
	waitDone(t, a, "first caller")
	waitDone(t, b, "second caller")
	if got := r.sizes(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("batches %v, want one batch of both: [2]", got)
	}
}

// TestForgetsCallersThatSubmitted: an announced caller stops counting once
// it submitted, so a later batch does not wait for it.
func TestForgetsCallersThatSubmitted(t *testing.T) {
	r := newRecorder(time.Hour)
	arrA, arrB := r.g.Announce(), r.g.Announce()
	a, b := r.g.Start(context.Background(), arrA, nil), r.g.Start(context.Background(), arrB, nil)
	waitDone(t, a, "first caller")
	waitDone(t, b, "second caller")
	waitDone(t, r.g.Start(context.Background(), nil, nil), "a caller after both submitted")
	r.g.Withdraw(arrA) // after its submission, a withdrawal changes nothing
	if n := r.g.Announced(); n != 0 {
		t.Fatalf("callers on their way %d after both submitted, want 0", n)
	}
}

func TestStopsWaitingWhenCallerWithdraws(t *testing.T) {
	r := newRecorder(time.Hour)
	arrA, arrB := r.g.Announce(), r.g.Announce()
	a := r.g.Start(context.Background(), arrA, nil)
	time.Sleep(20 * time.Millisecond)
	r.g.Withdraw(arrB) // the second caller failed before submitting
	r.g.Withdraw(arrB) // a second call changes nothing
	waitDone(t, a, "first caller after the second withdrew")
	if n := r.g.Announced(); n != 0 {
		t.Fatalf("callers on their way %d after one submitted and one withdrew, want 0", n)
	}
}

func TestLingerIsBounded(t *testing.T) {
	const linger = 30 * time.Millisecond
	r := newRecorder(linger)
	arrA, arrB := r.g.Announce(), r.g.Announce()
	defer r.g.Withdraw(arrB) // announced, never submits
	start := time.Now()
	waitDone(t, r.g.Start(context.Background(), arrA, nil), "caller whose partner never comes")
	if d := time.Since(start); d < linger {
		t.Fatalf("batch ran after %v, before the linger of %v although another caller was announced", d, linger)
	}
}

// TestLaterSubmissionsJoinOrWait: while a batch runs, new submissions
// queue; Run's More takes them into its batch, up to Max, and the rest
// form the next batch. Every submitter gets its own outcome.
func TestLaterSubmissionsJoinOrWait(t *testing.T) {
	r := newRecorder(0)
	r.g.Max = 3
	r.hold = make(chan struct{})
	errs := []error{nil, errors.New("b"), nil, errors.New("d"), nil}
	done := make([]<-chan error, len(errs))
	done[0] = r.g.Start(context.Background(), nil, errs[0])
	for r.g.Pending() != 0 { // the leader took A and holds in Run
		time.Sleep(time.Millisecond)
	}
	for i := 1; i < len(errs); i++ {
		done[i] = r.g.Start(context.Background(), nil, errs[i])
	}
	close(r.hold)
	for i := range errs {
		if err := waitDone(t, done[i], "submission"); err != errs[i] {
			t.Errorf("submission %d: %v, want %v", i, err, errs[i])
		}
	}
	// By hand: A's batch takes B and C (Max 3); D and E form the next.
	if got := r.sizes(); len(got) != 2 || got[0] != 3 || got[1] != 2 {
		t.Fatalf("batches %v, want [3 2]", got)
	}
}

func TestEndedContextIsNotRun(t *testing.T) {
	r := newRecorder(0)
	r.hold = make(chan struct{})
	first := r.g.Start(context.Background(), nil, nil)
	for r.g.Pending() != 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithCancel(context.Background())
	second := r.g.Start(ctx, nil, nil)
	cancel()
	r.hold <- struct{}{} // the first batch finishes (its More finds the cancelled one and skips it)
	if err := waitDone(t, first, "first"); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, second, "cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled submission: %v, want context.Canceled", err)
	}
	if got := r.sizes(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("batches %v, want [1]: the cancelled operation never runs", got)
	}
}

func TestCloseRunsPendingThenRefuses(t *testing.T) {
	r := newRecorder(0)
	var ran atomic.Int64
	r.g.Run = func(b *Batch[error]) {
		time.Sleep(10 * time.Millisecond)
		for _, op := range b.Ops {
			ran.Add(1)
			op.Finish(nil)
		}
	}
	var chans []<-chan error
	for range 5 {
		chans = append(chans, r.g.Start(context.Background(), nil, nil))
	}
	r.g.Close()
	if n := ran.Load(); n != 5 {
		t.Fatalf("Close returned with %d of 5 submitted operations run", n)
	}
	for _, c := range chans {
		if err := waitDone(t, c, "submitted before Close"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.g.Do(context.Background(), nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("submission after Close: %v, want ErrClosed", err)
	}
}
