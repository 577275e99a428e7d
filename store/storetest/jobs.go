package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// testArgs is the job used by the suite.
type testArgs struct {
	N   int    `json:"n"`
	Tag string `json:"tag,omitempty"`
}

func (testArgs) Kind() string { return "storetest.test" }

// uniqueArgs carries its kind's default options: unique by arguments,
// two attempts.
type uniqueArgs struct {
	N int `json:"n"`
}

func (uniqueArgs) Kind() string { return "storetest.unique" }
func (uniqueArgs) JobOpts() store.JobOpts {
	return store.JobOpts{UniqueByArgs: true, MaxAttempts: 2}
}

// compactJSON drops insignificant space (PostgreSQL stores job
// arguments as jsonb, which reformats them).
func compactJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return string(b)
	}
	return out.String()
}

// startJobs starts s's runner and stops it when t ends.
func startJobs(t *testing.T, s store.Store) {
	t.Helper()
	if err := s.Jobs().Start(context.Background()); err != nil {
		t.Fatalf("starting the job runner: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Jobs().Stop(ctx)
	})
}

// waitJob polls a job until cond holds for its info, or fails after d.
func waitJob(t *testing.T, s store.Store, id int64, d time.Duration, what string, cond func(*store.JobInfo) bool) *store.JobInfo {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		info, err := s.Jobs().Job(ctxT(t), id)
		if err == nil && cond(info) {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d: waited %v for %s; last state %+v, %v", id, d, what, info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func stateIs(state string) func(*store.JobInfo) bool {
	return func(i *store.JobInfo) bool { return i.State == state }
}

func (h *harness) testJobsTransactional(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "80000000-0")
	ran := make(chan int, 10)
	due := make(chan [2]time.Time, 10) // the third job's ScheduledAt and CreatedAt
	if err := s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(ctx context.Context, j *store.Job) error {
		args, err := store.DecodeArgs[testArgs](j)
		if err != nil {
			return err
		}
		if args.N == 3 {
			due <- [2]time.Time{j.ScheduledAt, j.CreatedAt}
		}
		ran <- args.N
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	// Enqueued before the runner starts, in the transaction of a write,
	// then once more on its own.
	var committed, rolledBack int64
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: "1-9", RazonSocial: "x"}); err != nil {
			return err
		}
		res, err := tx.Enqueue(ctx, testArgs{N: 1}, nil)
		if err == nil {
			committed = res.ID
		}
		return err
	})
	errNo := errors.New("no")
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		res, err := tx.Enqueue(ctx, testArgs{N: 2}, nil)
		if err != nil {
			return err
		}
		rolledBack = res.ID
		return errNo
	})
	wantErr(t, err, errNo, "rolled-back Write")
	// The third is due an hour before it is created: its run reports
	// both instants as they were given and written.
	dueAt := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
	own, err := s.Jobs().Enqueue(ctx, testArgs{N: 3}, &store.JobOpts{ScheduledAt: dueAt})
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Jobs().Job(ctx, committed)
	if err != nil || info.Kind != "storetest.test" || info.State != store.JobAvailable || compactJSON(info.Args) != `{"n":1}` {
		t.Errorf("committed job before start: %+v, %v", info, err)
	}
	startJobs(t, s)
	got := map[int]bool{}
	for range 2 {
		select {
		case n := <-ran:
			got[n] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("jobs did not run; ran %v", got)
		}
	}
	if !got[1] || !got[3] {
		t.Errorf("ran %v, want 1 and 3", got)
	}
	if d := <-due; !d[0].Equal(dueAt) || !d[1].After(dueAt) {
		t.Errorf("the third job ran with ScheduledAt %v, CreatedAt %v; want ScheduledAt %v, CreatedAt after it", d[0], d[1], dueAt)
	}
	waitJob(t, s, committed, 10*time.Second, "completion", stateIs(store.JobCompleted))
	waitJob(t, s, own.ID, 10*time.Second, "completion", stateIs(store.JobCompleted))
	// The rolled-back job is gone (SQLite may reuse its id for a later
	// job, so compare the arguments) and never ran.
	if info, err := s.Jobs().Job(ctx, rolledBack); err == nil && compactJSON(info.Args) == `{"n":2}` {
		t.Errorf("job enqueued in a rolled-back Write exists: %+v", info)
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Error(err)
	}
	select {
	case n := <-ran:
		t.Errorf("job %d ran, want none", n)
	case <-time.After(300 * time.Millisecond):
	}
}

func (h *harness) testJobsRetry(t *testing.T) {
	s, _ := h.open(t)
	var mu sync.Mutex
	var starts []time.Time
	schedule := []time.Duration{300 * time.Millisecond, 700 * time.Millisecond}
	if err := s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Retry: schedule, Work: func(ctx context.Context, j *store.Job) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		if j.Attempt < 3 {
			return fmt.Errorf("failing attempt %d", j.Attempt)
		}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Jobs().Enqueue(ctxT(t), testArgs{N: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	startJobs(t, s)
	info := waitJob(t, s, res.ID, 60*time.Second, "completion", stateIs(store.JobCompleted))
	if info.Attempt != 3 || len(info.Errors) != 2 || info.Errors[0] != "failing attempt 1" || info.Errors[1] != "failing attempt 2" {
		t.Errorf("completed job: attempt %d, errors %q; want 3 and the two failures", info.Attempt, info.Errors)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != 3 {
		t.Fatalf("worker ran %d times, want 3", len(starts))
	}
	// Each retry waits at least its kind's delay (lower bounds only: the
	// runner may be later, never earlier).
	const slack = 20 * time.Millisecond
	for i, d := range schedule {
		if gap := starts[i+1].Sub(starts[i]); gap < d-slack {
			t.Errorf("retry %d ran %v after the failure, before its %v delay", i+1, gap, d)
		}
	}
}

func (h *harness) testJobsDiscard(t *testing.T) {
	s, _ := h.open(t)
	var runs sync.WaitGroup
	runs.Add(2)
	if err := s.Jobs().Register(store.Worker{Kind: uniqueArgs{}.Kind(), Retry: []time.Duration{50 * time.Millisecond}, Work: func(ctx context.Context, j *store.Job) error {
		runs.Done()
		return errors.New("always fails")
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Jobs().Enqueue(ctxT(t), uniqueArgs{N: 1}, nil) // MaxAttempts 2 from the kind's JobOpts
	if err != nil {
		t.Fatal(err)
	}
	startJobs(t, s)
	info := waitJob(t, s, res.ID, 60*time.Second, "discard", stateIs(store.JobDiscarded))
	if info.Attempt != 2 || info.MaxAttempts != 2 || len(info.Errors) != 2 {
		t.Errorf("discarded job: %+v", info)
	}
}

func (h *harness) testJobsUnique(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	first, err := s.Jobs().Enqueue(ctx, uniqueArgs{N: 1}, nil)
	if err != nil || first.Duplicate {
		t.Fatalf("first unique job: %+v, %v", first, err)
	}
	var again *store.JobResult
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		var err error
		again, err = tx.Enqueue(ctx, uniqueArgs{N: 1}, nil)
		return err
	})
	if !again.Duplicate || again.ID != first.ID {
		t.Errorf("same unique job again: %+v, want a duplicate of %d", again, first.ID)
	}
	other, err := s.Jobs().Enqueue(ctx, uniqueArgs{N: 2}, nil)
	if err != nil || other.Duplicate || other.ID == first.ID {
		t.Errorf("unique job with other args: %+v, %v", other, err)
	}
	// Options given to Enqueue: unique by args for a kind without defaults.
	a1, err1 := s.Jobs().Enqueue(ctx, testArgs{N: 5}, &store.JobOpts{UniqueByArgs: true})
	a2, err2 := s.Jobs().Enqueue(ctx, testArgs{N: 5}, &store.JobOpts{UniqueByArgs: true})
	a3, err3 := s.Jobs().Enqueue(ctx, testArgs{N: 5}, nil)
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	if a1.Duplicate || !a2.Duplicate || a2.ID != a1.ID || a3.Duplicate || a3.ID == a1.ID {
		t.Errorf("unique by options: %+v %+v %+v", a1, a2, a3)
	}
	// Once the job has finished, the same arguments make a new job.
	ran := make(chan struct{}, 10)
	s.Jobs().Register(store.Worker{Kind: uniqueArgs{}.Kind(), Work: func(context.Context, *store.Job) error {
		ran <- struct{}{}
		return nil
	}})
	s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(context.Context, *store.Job) error { return nil }})
	startJobs(t, s)
	waitJob(t, s, first.ID, 30*time.Second, "completion", stateIs(store.JobCompleted))
	after, err := s.Jobs().Enqueue(ctx, uniqueArgs{N: 1}, nil)
	if err != nil || after.Duplicate || after.ID == first.ID {
		t.Errorf("unique job after the first completed: %+v, %v", after, err)
	}
}

func (h *harness) testJobsPeriodic(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for leader election and two ticks")
	}
	s, _ := h.open(t)
	var mu sync.Mutex
	var tags []string
	if err := s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(ctx context.Context, j *store.Job) error {
		a, err := store.DecodeArgs[testArgs](j)
		mu.Lock()
		tags = append(tags, a.Tag)
		mu.Unlock()
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Jobs().AddPeriodic(store.PeriodicJob{Interval: 500 * time.Millisecond, RunOnStart: true,
		Args: func() store.JobArgs { return testArgs{Tag: "tick"} }}); err != nil {
		t.Fatal(err)
	}
	startJobs(t, s)
	deadline := time.Now().Add(60 * time.Second)
	for {
		mu.Lock()
		n := len(tags)
		mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("periodic job ran %d times in 60 s, want ≥ 3", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, tag := range tags {
		if tag != "tick" {
			t.Errorf("periodic job ran with tag %q", tag)
		}
	}
}

func (h *harness) testJobsRegistration(t *testing.T) {
	s, _ := h.open(t)
	j := s.Jobs()
	work := func(context.Context, *store.Job) error { return nil }
	if err := j.Register(store.Worker{Kind: "storetest.x", Work: work}); err != nil {
		t.Fatal(err)
	}
	if err := j.Register(store.Worker{Kind: "storetest.x", Work: work}); err == nil {
		t.Error("a second worker for one kind was accepted")
	}
	if err := j.Register(store.Worker{Kind: "storetest.y"}); err == nil {
		t.Error("a worker without Work was accepted")
	}
	if err := j.AddPeriodic(store.PeriodicJob{Interval: 0, Args: func() store.JobArgs { return testArgs{} }}); err == nil {
		t.Error("a periodic job without interval was accepted")
	}
	ran := make(chan struct{}, 10)
	if err := j.Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(context.Context, *store.Job) error {
		ran <- struct{}{}
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := j.Start(context.Background()); err == nil {
		t.Error("Start twice succeeded")
	}
	if err := j.Register(store.Worker{Kind: "storetest.z", Work: work}); err == nil {
		t.Error("Register after Start succeeded")
	}
	if err := j.AddPeriodic(store.PeriodicJob{Interval: time.Hour, Args: func() store.JobArgs { return testArgs{} }}); err == nil {
		t.Error("AddPeriodic after Start succeeded")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := j.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// Stopped, then started again: jobs still run.
	startJobs(t, s)
	if _, err := j.Enqueue(ctxT(t), testArgs{N: 1}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		t.Fatal("no job ran after a restart of the runner")
	}
	if _, err := j.Job(ctxT(t), 1<<40); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Job of an unknown id: %v", err)
	}
}

// Child mode: the rescue test re-executes the test binary to get a worker
// process it can kill.
const (
	envChild    = "DTEKIT_STORETEST_CHILD"
	envChildLoc = "DTEKIT_STORETEST_LOC"
)

type child struct{ kind, loc string }

func childMode() *child {
	switch os.Getenv(envChild) {
	case "rescue", "durable":
		return &child{kind: os.Getenv(envChild), loc: os.Getenv(envChildLoc)}
	}
	return nil
}

// run is the child's side.
func (c *child) run(t *testing.T, b Backend) {
	if c.kind == "durable" {
		durableChild(t, b, c.loc)
		return
	}
	rescueChild(t, b, c.loc)
}

// rescueChild works the rescue job and hangs inside it until killed.
func rescueChild(t *testing.T, b Backend, loc string) {
	s, err := b.Open(t, loc, testJobs)
	if err != nil {
		t.Fatalf("child: opening %s: %v", loc, err)
	}
	s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Timeout: -1, Work: func(ctx context.Context, j *store.Job) error {
		select {} // the parent kills this process here
	}})
	if err := s.Jobs().Start(context.Background()); err != nil {
		t.Fatalf("child: %v", err)
	}
	time.Sleep(3 * time.Minute)
	t.Fatal("child: not killed within 3 minutes")
}

// testJobsCompleteInTx: a job that completes itself with CompleteJob in a
// Write is completed as soon as that Write commits, while its Work still
// runs (a crash from then on cannot make the runner run it again), and
// stays completed once Work returns; completed in a Write that rolls back,
// it is still running. Outside a job's Work, CompleteJob does nothing.
func (h *harness) testJobsCompleteInTx(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	errNo := errors.New("no")
	wrote := make(chan error)
	release := make(chan struct{})
	if err := s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(ctx context.Context, j *store.Job) error {
		args, err := store.DecodeArgs[testArgs](j)
		if err != nil {
			return err
		}
		err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := tx.CompleteJob(ctx); err != nil {
				return err
			}
			if args.Tag == "rollback" {
				return errNo
			}
			return nil
		})
		wrote <- err
		<-release
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.CompleteJob(ctx) })
	startJobs(t, s)
	for _, c := range []struct {
		tag, state string
		err        error
	}{{"commit", store.JobCompleted, nil}, {"rollback", store.JobRunning, errNo}} {
		res, err := s.Jobs().Enqueue(ctx, testArgs{N: 1, Tag: c.tag}, nil)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-wrote:
			wantErr(t, err, c.err, c.tag+" Write")
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the job did not run within 30 s", c.tag)
		}
		info, err := s.Jobs().Job(ctx, res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if info.State != c.state || info.Attempt != 1 {
			t.Errorf("%s: while Work still runs, after its Write: %s attempt %d, want %s attempt 1", c.tag, info.State, info.Attempt, c.state)
		}
		release <- struct{}{}
		info = waitJob(t, s, res.ID, 30*time.Second, "completion", stateIs(store.JobCompleted))
		if info.Attempt != 1 || len(info.Errors) != 0 {
			t.Errorf("%s: once Work returned: attempt %d, errors %v; want attempt 1 and no error", c.tag, info.Attempt, info.Errors)
		}
	}
}

// testJobsRescue: a child process takes a job and is killed -9 while
// running it; the job stays running until this process's runner, with a
// short rescue delay, schedules it again and runs it to completion.
func (h *harness) testJobsRescue(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a child process and waits for River's rescuer (about a minute)")
	}
	loc := h.b.NewDB(t)
	s := h.openAt(t, loc, store.JobsConfig{PollInterval: 50 * time.Millisecond, RescueAfter: 2 * time.Second})
	res, err := s.Jobs().Enqueue(ctxT(t), testArgs{N: 42}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := childCommand(t, "rescue", loc)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	deadline := time.Now().Add(90 * time.Second)
	for {
		info, err := s.Jobs().Job(ctxT(t), res.ID)
		if err == nil && info.State == store.JobRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never ran the job (state %+v, %v); child output:\n%s", info, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	killed = true
	if info, _ := s.Jobs().Job(ctxT(t), res.ID); info.State != store.JobRunning || info.Attempt != 1 {
		t.Fatalf("after the kill the job is %+v, want running attempt 1", info)
	}

	done := make(chan int, 1)
	if err := s.Jobs().Register(store.Worker{Kind: testArgs{}.Kind(), Timeout: time.Second, Work: func(ctx context.Context, j *store.Job) error {
		done <- j.Attempt
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	startJobs(t, s)
	select {
	case attempt := <-done:
		if attempt != 2 {
			t.Errorf("rescued job ran as attempt %d, want 2", attempt)
		}
	case <-time.After(3 * time.Minute):
		info, err := s.Jobs().Job(ctxT(t), res.ID)
		t.Fatalf("the job was not rescued within 3 minutes: %+v, %v", info, err)
	}
	waitJob(t, s, res.ID, 30*time.Second, "completion", stateIs(store.JobCompleted))
}

// testJobsRunning: Running is false before Start, true once started,
// still true after a refused second Start, false from Stop, true again
// after a restart, false once the context given to Start is cancelled,
// and false after Close.
func (h *harness) testJobsRunning(t *testing.T) {
	loc := h.b.NewDB(t)
	s, err := h.b.Open(t, loc, testJobs)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	j := s.Jobs()
	if err := j.Register(store.Worker{Kind: testArgs{}.Kind(), Work: func(context.Context, *store.Job) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	if j.Running() {
		t.Error("Running before Start")
	}
	stop := func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := j.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !j.Running() {
		t.Error("not Running after Start")
	}
	if err := j.Start(context.Background()); err == nil {
		t.Error("Start twice succeeded")
	}
	if !j.Running() {
		t.Error("not Running after a refused second Start")
	}
	stop()
	if j.Running() {
		t.Error("Running after Stop")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := j.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !j.Running() {
		t.Error("not Running after a restart")
	}
	cancel()
	if j.Running() {
		t.Error("Running after the context given to Start was cancelled")
	}
	stop()

	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed = true
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if j.Running() {
		t.Error("Running after Close")
	}
}
