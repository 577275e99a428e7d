package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// blockArgs is a job that holds its worker until the test releases it.
type blockArgs struct {
	N int `json:"n"`
}

func (blockArgs) Kind() string { return "storetest.block" }

// queuedArgs carries its queue in its kind's options, as a subsystem's
// jobs do.
type queuedArgs struct {
	N int `json:"n"`
}

func (queuedArgs) Kind() string { return "storetest.queued" }
func (queuedArgs) JobOpts() store.JobOpts {
	return store.JobOpts{Queue: "declared-later"}
}

// blocker is the worker of blockArgs: it counts the jobs running at once
// per queue tag (the job's N / 100) and holds each until release closes.
type blocker struct {
	mu      sync.Mutex
	running map[int]int
	peak    map[int]int
	release chan struct{}
}

func newBlocker() *blocker {
	return &blocker{running: map[int]int{}, peak: map[int]int{}, release: make(chan struct{})}
}

func (b *blocker) work(ctx context.Context, j *store.Job) error {
	a, err := store.DecodeArgs[blockArgs](j)
	if err != nil {
		return err
	}
	tag := a.N / 100
	b.mu.Lock()
	b.running[tag]++
	b.peak[tag] = max(b.peak[tag], b.running[tag])
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.running[tag]--
		b.mu.Unlock()
	}()
	select {
	case <-b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *blocker) counts(tag int) (running, peak int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running[tag], b.peak[tag]
}

// testJobsQueueDeclare: DeclareQueue refuses bad names and budgets and a
// second budget for one queue, accepts the same declaration twice, and is
// closed after Start; a job on a queue not declared is refused by both
// Enqueues (the transaction's writes roll back with it), whether its
// queue comes from the options or from its kind's defaults, and a
// periodic job on one stops Start.
func (h *harness) testJobsQueueDeclare(t *testing.T) {
	s, _ := h.open(t)
	j := s.Jobs()
	for _, c := range []struct {
		name    string
		workers int
	}{
		{"", 1}, {"Upper", 1}, {"two words", 1}, {"a__b", 1}, {"-a", 1}, {"a-", 1}, {"default", 1},
		{strings.Repeat("q", 65), 1}, {"fine", -1},
	} {
		if err := j.DeclareQueue(c.name, c.workers); err == nil {
			t.Errorf("DeclareQueue(%q, %d) succeeded", c.name, c.workers)
		}
	}
	if err := j.DeclareQueue("webhook_delivery-2", 3); err != nil {
		t.Fatal(err)
	}
	if err := j.DeclareQueue("webhook_delivery-2", 3); err != nil {
		t.Errorf("the same declaration twice: %v", err)
	}
	if err := j.DeclareQueue("webhook_delivery-2", 4); err == nil {
		t.Error("a second budget for one queue was accepted")
	}
	ctx := ctxT(t)
	if _, err := j.Enqueue(ctx, testArgs{N: 1}, &store.JobOpts{Queue: "nobody"}); !errors.Is(err, store.ErrUnknownQueue) ||
		!strings.Contains(err.Error(), `"nobody"`) {
		t.Errorf("Enqueue on an undeclared queue: %v, want ErrUnknownQueue naming it", err)
	}
	if _, err := j.Enqueue(ctx, queuedArgs{N: 1}, nil); !errors.Is(err, store.ErrUnknownQueue) {
		t.Errorf("Enqueue of a kind whose queue is not declared: %v, want ErrUnknownQueue", err)
	}
	e := &store.Empresa{Rut: "76000001-1", RazonSocial: "Rolled back", Giro: "g", Direccion: "d", Comuna: "c", Ciudad: "c",
		Ambiente: "certificacion", FechaResolucion: "2014-08-22", NumeroResolucion: 80}
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		_, err := tx.Enqueue(ctx, testArgs{N: 2}, &store.JobOpts{Queue: "nobody"})
		return err
	})
	if !errors.Is(err, store.ErrUnknownQueue) {
		t.Errorf("tx.Enqueue on an undeclared queue: %v, want ErrUnknownQueue", err)
	}
	if _, err := s.GetEmpresa(ctx, e.ID); e.ID != "" && !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the company of the failed transaction: %v, want not found", err)
	}
	// Declared, the same jobs are accepted.
	if err := j.DeclareQueue("declared-later", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Enqueue(ctx, queuedArgs{N: 1}, nil); err != nil {
		t.Errorf("Enqueue once its queue is declared: %v", err)
	}
	if _, err := j.Enqueue(ctx, testArgs{N: 3}, &store.JobOpts{Queue: "webhook_delivery-2"}); err != nil {
		t.Errorf("Enqueue on a declared queue: %v", err)
	}

	// A periodic job on an undeclared queue: Start fails, naming it.
	s2, _ := h.open(t)
	if err := s2.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(context.Context, *store.Job) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Jobs().AddPeriodic(store.PeriodicJob{Interval: time.Hour, Args: func() store.JobArgs { return testArgs{} },
		Opts: &store.JobOpts{Queue: "upkeep"}}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Jobs().Start(context.Background()); !errors.Is(err, store.ErrUnknownQueue) || !strings.Contains(err.Error(), "upkeep") {
		t.Errorf("Start with a periodic job on an undeclared queue: %v, want ErrUnknownQueue naming it", err)
		if err == nil {
			s2.Jobs().Stop(ctx)
		}
	}
	if err := s2.Jobs().DeclareQueue("upkeep", 1); err != nil {
		t.Fatal(err)
	}
	startJobs(t, s2)
	if err := s2.Jobs().DeclareQueue("late", 1); err == nil {
		t.Error("DeclareQueue after Start succeeded")
	}
}

// testJobsQueueIsolation: each named queue runs at most its budget of
// jobs at once, and jobs of one queue run while every worker of another
// (and of the default queue) is held; a queue declared with no workers is
// not worked by this process.
func (h *harness) testJobsQueueIsolation(t *testing.T) {
	s, _ := h.open(t) // the default queue: 4 workers (testJobs)
	j := s.Jobs()
	b := newBlocker()
	defer func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	}()
	done := make(chan int, 16)
	for _, err := range []error{
		j.DeclareQueue("slow", 1),
		j.DeclareQueue("pair", 2),
		j.DeclareQueue("fast", 1),
		j.DeclareQueue("elsewhere", 0),
		j.Register(store.Worker{Kind: blockArgs{}.Kind(), Work: b.work}),
		j.Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(ctx context.Context, job *store.Job) error {
			a, err := store.DecodeArgs[testArgs](job)
			done <- a.N
			return err
		}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := ctxT(t)
	enqueue := func(args store.JobArgs, queue string) int64 {
		t.Helper()
		res, err := j.Enqueue(ctx, args, &store.JobOpts{Queue: queue})
		if err != nil {
			t.Fatal(err)
		}
		return res.ID
	}
	// Tags: 1 for "slow", 2 for "pair", 0 for the default queue (more
	// jobs than each has workers).
	var held []int64
	for i := range 3 {
		held = append(held, enqueue(blockArgs{N: 100 + i}, "slow"))
	}
	for i := range 4 {
		held = append(held, enqueue(blockArgs{N: 200 + i}, "pair"))
	}
	for i := range 6 {
		held = append(held, enqueue(blockArgs{N: i}, ""))
	}
	away := enqueue(testArgs{N: 99}, "elsewhere")
	startJobs(t, s)
	deadline := time.Now().Add(60 * time.Second)
	for {
		r1, _ := b.counts(1)
		r2, _ := b.counts(2)
		r0, _ := b.counts(0)
		if r1 == 1 && r2 == 2 && r0 == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queues never filled their budgets: slow %d/1, pair %d/2, default %d/4", r1, r2, r0)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Every worker of slow, pair and the default queue is held: a job on
	// fast still runs.
	enqueue(testArgs{N: 7}, "fast")
	select {
	case n := <-done:
		if n != 7 {
			t.Fatalf("job %d ran, want the fast queue's job 7", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a job on its own queue waited for the workers of the other queues")
	}
	// Several polls later, no queue ran more than its budget, and the
	// queue with no workers here was left alone.
	time.Sleep(10 * testJobs.PollInterval)
	for tag, budget := range map[int]int{1: 1, 2: 2, 0: 4} {
		if _, peak := b.counts(tag); peak != budget {
			t.Errorf("queue tag %d ran %d jobs at once, want its budget %d", tag, peak, budget)
		}
	}
	if info, err := j.Job(ctx, away); err != nil || info.State != store.JobAvailable {
		t.Errorf("the job on a queue with no workers here: %+v, %v; want available", info, err)
	}
	close(b.release)
	for _, id := range held {
		waitJob(t, s, id, 60*time.Second, "completion", stateIs(store.JobCompleted))
	}
}

// testJobsSnooze: a job whose worker snoozes it runs again after the
// delay, as the same attempt, however often it is snoozed, and each run
// knows how many snoozes came before it: a kind with a single attempt
// snoozed three times still completes, with no error recorded.
func (h *harness) testJobsSnooze(t *testing.T) {
	s, _ := h.open(t)
	const delay = 200 * time.Millisecond
	var mu sync.Mutex
	var runs []time.Time
	var attempts, snoozed []int
	if err := s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(ctx context.Context, j *store.Job) error {
		mu.Lock()
		defer mu.Unlock()
		runs = append(runs, time.Now())
		attempts = append(attempts, j.Attempt)
		snoozed = append(snoozed, j.Snoozes)
		if len(runs) <= 3 {
			return store.Snooze(delay)
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Jobs().Enqueue(ctxT(t), testArgs{N: 1}, &store.JobOpts{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	startJobs(t, s)
	info := waitJob(t, s, res.ID, 60*time.Second, "completion", func(i *store.JobInfo) bool {
		return i.State == store.JobCompleted || i.State == store.JobDiscarded
	})
	mu.Lock()
	defer mu.Unlock()
	if info.State != store.JobCompleted || info.Attempt != 1 || len(info.Errors) != 0 {
		t.Errorf("snoozed job: %+v; want completed as attempt 1 with no errors", info)
	}
	if len(runs) != 4 {
		t.Fatalf("worker ran %d times, want 4 (three snoozes)", len(runs))
	}
	for i, a := range attempts {
		if a != 1 || snoozed[i] != i {
			t.Errorf("run %d saw attempt %d after %d snoozes, want attempt 1 after %d", i+1, a, snoozed[i], i)
		}
	}
	const slack = 20 * time.Millisecond
	for i := 1; i < len(runs); i++ {
		if gap := runs[i].Sub(runs[i-1]); gap < delay-slack {
			t.Errorf("run %d came %v after a snooze of %v", i+1, gap, delay)
		}
	}
}

// testJobsQueueDepth: QueueDepth counts the unfinished jobs by queue and
// state (here: jobs of a runner not started wait available, or scheduled
// when due later), lists every queue this process declared and the
// default one with every unfinished state at zero, and a queue only
// another process declared once it has jobs; summed over queues it is
// Depth.
func (h *harness) testJobsQueueDepth(t *testing.T) {
	s, loc := h.open(t)
	j := s.Jobs()
	ctx := ctxT(t)
	for _, q := range []string{"alpha", "idle"} {
		if err := j.DeclareQueue(q, 1); err != nil {
			t.Fatal(err)
		}
	}
	enqueue := func(j store.Jobs, n int, opts *store.JobOpts) {
		t.Helper()
		if _, err := j.Enqueue(ctx, testArgs{N: n}, opts); err != nil {
			t.Fatal(err)
		}
	}
	enqueue(j, 1, &store.JobOpts{Queue: "alpha"})
	enqueue(j, 2, &store.JobOpts{Queue: "alpha"})
	enqueue(j, 3, &store.JobOpts{Queue: "alpha", ScheduledAt: time.Now().Add(time.Hour)})
	enqueue(j, 4, &store.JobOpts{ScheduledAt: time.Now().Add(time.Hour)})
	other := h.openAt(t, loc, testJobs)
	if err := other.Jobs().DeclareQueue("beta", 0); err != nil {
		t.Fatal(err)
	}
	enqueue(other.Jobs(), 5, &store.JobOpts{Queue: "beta"})

	got, err := j.QueueDepth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	zero := map[string]int64{store.JobAvailable: 0, store.JobScheduled: 0, store.JobRunning: 0, store.JobRetryable: 0, store.JobPending: 0}
	with := func(state string, n int64) map[string]int64 {
		m := maps.Clone(zero)
		m[state] = n
		return m
	}
	alpha := with(store.JobAvailable, 2)
	alpha[store.JobScheduled] = 1
	want := map[string]map[string]int64{
		"alpha":   alpha,
		"idle":    zero,
		"default": with(store.JobScheduled, 1),
		"beta":    with(store.JobAvailable, 1),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("QueueDepth = %v\nwant %v", got, want)
	}
	depth, err := j.Depth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if depth[store.JobAvailable] != 3 || depth[store.JobScheduled] != 2 {
		t.Errorf("Depth = %v, want 3 available and 2 scheduled (QueueDepth summed)", depth)
	}
}
