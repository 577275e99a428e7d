package periodic

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// tick and other are periodic jobs of the tests.
type tick struct{}

func (tick) Kind() string { return "test.tick" }

type other struct{}

func (other) Kind() string { return "test.other" }

// TestRegister: a registered job runs on its runner's start when asked
// (OnStart), once per period (an hour here: once in the test), in the
// maintenance queue unless it names another, whose runner must have it
// declared; its kind is registered once.
func TestRegister(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.NewStore(t, store.JobsConfig{})
		ctx := context.Background()
		if err := Declare(st.Jobs(), 1); err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		job := Job{Args: tick{}, Every: time.Hour, OnStart: true, Run: func(context.Context) error { runs.Add(1); return nil }}
		if err := Register(st.Jobs(), job); err != nil {
			t.Fatal(err)
		}
		if err := Register(st.Jobs(), job); err == nil || !strings.Contains(err.Error(), "test.tick") {
			t.Errorf("the same kind registered twice: %v, want an error naming it", err)
		}
		if err := st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Jobs().Stop(context.Background()) })
		clocktest.Eventually(t, 30*time.Second, func() bool { return runs.Load() >= 1 })
		// Settle: a second run would follow the first within a few
		// polls; none may come within the hour.
		time.Sleep(300 * time.Millisecond)
		if n := runs.Load(); n != 1 {
			t.Errorf("%d runs, want 1 (on start, then an hour later)", n)
		}
		depth, err := st.Jobs().QueueDepth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := depth[Queue]; !ok {
			t.Errorf("queue depth %v names no %q queue", depth, Queue)
		}
		// The runner stops and starts again within the hour, as a new
		// leader starts when the old one died: the hour's run is done, so
		// nothing runs (before the fix, the start's enqueue ran it again
		// within a poll). The run holds its job, scheduled, to the hour's
		// end.
		if depth[Queue][store.JobScheduled] != 1 {
			t.Errorf("%d scheduled jobs in the maintenance queue after the run, want 1 (the run's, held to the hour's end)", depth[Queue][store.JobScheduled])
		}
		if err := st.Jobs().Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if err := st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if n := runs.Load(); n != 1 {
			t.Errorf("%d runs after a second start within the hour, want 1", n)
		}
	})
	t.Run("undeclared queue", func(t *testing.T) {
		t.Parallel()
		st := backendtest.SQLite.NewStore(t, store.JobsConfig{})
		if err := Declare(st.Jobs(), 1); err != nil {
			t.Fatal(err)
		}
		if err := Register(st.Jobs(), Job{Args: other{}, Every: time.Hour, Queue: "correo", Run: func(context.Context) error { return nil }}); err != nil {
			t.Fatal(err)
		}
		err := st.Jobs().Start(context.Background())
		if err == nil {
			_ = st.Jobs().Stop(context.Background())
		}
		if !errors.Is(err, store.ErrUnknownQueue) {
			t.Errorf("Start with a periodic job in an undeclared queue: %v, want ErrUnknownQueue", err)
		}
	})
}

// early is a third periodic job of the tests.
type early struct{}

func (early) Kind() string { return "test.early" }

// straddle returns a period of 40 to 80 seconds whose next start (aligned
// on the clock, as uniqueness aligns it) comes between 100 and 600 ms
// after now, and that start: a tick inserted now for that start is
// created in one period and scheduled in the next.
func straddle(t *testing.T, now time.Time) (time.Duration, time.Time) {
	for p := 40 * time.Second; p <= 80*time.Second; p += time.Millisecond {
		start := now.Truncate(p).Add(p)
		if d := start.Sub(now); d >= 100*time.Millisecond && d <= 600*time.Millisecond {
			return p, start
		}
	}
	t.Fatal("no period of 40 to 80 s starts within 100-600 ms")
	return 0, time.Time{}
}

// TestHoldScheduledPeriod: a tick inserted a little ahead of its time
// (CreatedAt in one period, ScheduledAt at the next one's start, as the
// leader enqueues ticks) is held to the end of the period it is
// scheduled in, the one its uniqueness covers: once it has run, a second
// tick for that period is a duplicate and does not run. Held to the end
// of CreatedAt's period instead (the bug), the job completed at once
// after its run and the second tick ran again.
func TestHoldScheduledPeriod(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.NewStore(t, store.JobsConfig{PollInterval: 100 * time.Millisecond})
		ctx := context.Background()
		if err := Declare(st.Jobs(), 1); err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		every, start := straddle(t, time.Now())
		if err := Register(st.Jobs(), Job{Args: early{}, Every: every, Run: func(context.Context) error { runs.Add(1); return nil }}); err != nil {
			t.Fatal(err)
		}
		opts := &store.JobOpts{Queue: Queue, ScheduledAt: start, UniqueByPeriod: every}
		first, err := st.Jobs().Enqueue(ctx, early{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Jobs().Stop(context.Background()) })
		// The runner makes a scheduled job available every 5 s or so.
		clocktest.Eventually(t, 30*time.Second, func() bool { return runs.Load() >= 1 })
		var info *store.JobInfo
		clocktest.Eventually(t, 10*time.Second, func() bool {
			info, err = st.Jobs().Job(ctx, first.ID)
			return err == nil && info.State != store.JobRunning && info.State != store.JobAvailable
		})
		if err != nil {
			t.Fatal(err)
		}
		// Snoozed to the period's end, give or take the time between the
		// hold's reading of the clock and the runner's.
		end := start.Add(every)
		if d := info.ScheduledAt.Sub(end); info.State != store.JobScheduled || d < -time.Millisecond || d > time.Second {
			t.Errorf("after its run the job is %s until %s, want scheduled until its period's end %s (created before %s, scheduled at it)",
				info.State, info.ScheduledAt.Format(time.RFC3339Nano), end.UTC().Format(time.RFC3339Nano), start.UTC().Format(time.RFC3339Nano))
		}
		second, err := st.Jobs().Enqueue(ctx, early{}, &store.JobOpts{Queue: Queue, ScheduledAt: start, UniqueByPeriod: every})
		if err != nil {
			t.Fatal(err)
		}
		if !second.Duplicate || second.ID != first.ID {
			t.Errorf("a second tick for the same period: %+v, want a duplicate of job %d", *second, first.ID)
			// Show what the duplicate costs: the period's work again, once
			// the runner makes the tick available (every 5 s or so).
			for deadline := time.Now().Add(30 * time.Second); runs.Load() < 2 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("%d runs in one period, want 1", n)
		}
	})
}

// companies is the number of companies TestEachEmpresa walks: more than
// two pages of store.MaxLimit.
const companies = 2*store.MaxLimit + 5

// rut returns the i-th RUT of the tests, with its check digit (module 11,
// computed here by hand from its definition).
func rut(i int) string {
	n := 10_000_000 + i
	sum, mul := 0, 2
	for m := n; m > 0; m /= 10 {
		sum += (m % 10) * mul
		if mul++; mul > 7 {
			mul = 2
		}
	}
	switch dv := 11 - sum%11; dv {
	case 11:
		return fmt.Sprintf("%d-0", n)
	case 10:
		return fmt.Sprintf("%d-K", n)
	default:
		return fmt.Sprintf("%d-%d", n, dv)
	}
}

// TestEachEmpresa: the walk visits every company once, oldest first,
// across pages; it stops at the first company whose work fails and
// returns that failure as it is, visiting no company after it; a store
// that cannot list companies is an internal fault that wraps the cause.
func TestEachEmpresa(t *testing.T) {
	t.Parallel()
	if got := rut(0); got != "10000000-8" {
		// By hand: the one non-zero digit, 1, is the eighth from the
		// right, weighed 3; 11 - 3 = 8.
		t.Fatalf("rut(0) = %s, want 10000000-8", got)
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.NewStore(t, store.JobsConfig{})
		ctx := context.Background()
		var ids []string
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for i := range companies {
				e := &store.Empresa{Rut: rut(i), RazonSocial: fmt.Sprintf("Empresa %03d", i), Ambiente: "certificacion"}
				if err := tx.InsertEmpresa(ctx, e); err != nil {
					return err
				}
				ids = append(ids, e.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var seen []string
		if err := EachEmpresa(ctx, st, func(e *store.Empresa) error { seen = append(seen, e.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(seen, ids) {
			t.Errorf("visited %d companies, want the %d in the order they were created", len(seen), len(ids))
		}

		// The 150th company's work fails: the walk ends there.
		failure := errors.New("the 150th company's certificate cannot be read")
		seen = nil
		err = EachEmpresa(ctx, st, func(e *store.Empresa) error {
			seen = append(seen, e.ID)
			if e.ID == ids[149] {
				return failure
			}
			return nil
		})
		if err != failure {
			t.Errorf("EachEmpresa = %v, want the work's own failure", err)
		}
		if !slices.Equal(seen, ids[:150]) {
			t.Errorf("visited %d companies, want the first 150 and none after the failure", len(seen))
		}
	})
	t.Run("listing fails", func(t *testing.T) {
		t.Parallel()
		cause := errors.New("connection reset")
		var calls int
		err := EachEmpresa(context.Background(), failingReader{err: cause, calls: &calls}, func(*store.Empresa) error {
			t.Error("a company visited while the list failed")
			return nil
		})
		if fault.KindOf(err) != fault.KindInternal || !errors.Is(err, cause) || calls != 1 {
			t.Errorf("EachEmpresa over a failing store: %v (%d listings), want one internal fault wrapping %v", err, calls, cause)
		}
	})
}

// failingReader is a store whose list of companies fails.
type failingReader struct {
	store.Reader
	err   error
	calls *int
}

func (r failingReader) ListEmpresas(context.Context, store.ListFilter) (*store.Page[store.Empresa], error) {
	*r.calls++
	return nil, r.err
}
