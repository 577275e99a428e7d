package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
)

// uploadArgs stands for the SII upload job an emission queues in its
// second transaction, on a named queue as billing's submission queue.
type uploadArgs struct {
	N int `json:"n"`
}

func (uploadArgs) Kind() string           { return "bench_upload" }
func (uploadArgs) JobOpts() store.JobOpts { return store.JobOpts{Queue: "upload"} }

// startRunner opens a store with jobs, declares the upload queue,
// registers a worker that reports the time each job starts, and starts
// the runner.
func startRunner(tb testing.TB, jobs store.JobsConfig) (store.Store, <-chan time.Time) {
	tb.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, pgtest.URL(tb), &postgres.Options{Jobs: jobs})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	started := make(chan time.Time, 1)
	j := st.Jobs()
	if err := j.DeclareQueue("upload", 4); err != nil {
		tb.Fatal(err)
	}
	if err := j.Register(store.Worker{Kind: uploadArgs{}.Kind(), Work: func(ctx context.Context, job *store.Job) error {
		started <- time.Now()
		return nil
	}}); err != nil {
		tb.Fatal(err)
	}
	if err := j.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	return st, started
}

// emit writes as an emission's second transaction does (a record and
// the upload job, committed together) and returns when it committed.
func emit(tb testing.TB, st store.Store, n int) time.Time {
	tb.Helper()
	err := st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutSetting(ctx, "bench_last_emission", fmt.Sprint(n)); err != nil {
			return err
		}
		_, err := tx.Enqueue(ctx, uploadArgs{N: n}, nil)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return time.Now()
}

// TestJobStartsOnNotify polls once an hour, so only the notification of
// the committing transaction can start its job: three jobs in a row each
// start within seconds (milliseconds on a quiet machine; the bound leaves
// room for a loaded one).
func TestJobStartsOnNotify(t *testing.T) {
	t.Parallel()
	st, started := startRunner(t, store.JobsConfig{PollInterval: time.Hour})
	time.Sleep(200 * time.Millisecond) // let the runner's first fetch pass
	for i := range 3 {
		committed := emit(t, st, i)
		select {
		case at := <-started:
			t.Logf("job %d started %v after its commit", i, at.Sub(committed).Round(time.Microsecond))
		case <-time.After(10 * time.Second):
			t.Fatalf("job %d not started 10 s after its commit, with polling once an hour: no notification reached the runner", i)
		}
	}
}

// BenchmarkJobStart measures the time from an emission's commit (a
// write that queues its SII upload job in the same transaction) to that
// job starting, with the runner's production settings (a zero
// JobsConfig), one emission at a time. It reports the mean, the median
// and the slowest in milliseconds (a job that starts before Write has
// returned counts as 0), and how many jobs started over 100 ms after
// their commit (late-jobs: those a poll found rather than a
// notification).
//
//	go test -run '^$' -bench BenchmarkJobStart -benchtime 40x ./store/postgres/
func BenchmarkJobStart(b *testing.B) {
	st, started := startRunner(b, store.JobsConfig{})
	time.Sleep(200 * time.Millisecond)
	waits := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		committed := emit(b, st, i)
		select {
		case at := <-started:
			waits = append(waits, max(at.Sub(committed), 0))
		case <-time.After(time.Minute):
			b.Fatalf("job %d not started a minute after its commit", i)
		}
	}
	b.StopTimer()
	slices.Sort(waits)
	var sum time.Duration
	late := 0
	for _, w := range waits {
		sum += w
		if w > 100*time.Millisecond {
			late++
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum)/float64(len(waits)), "ms-to-start")
	b.ReportMetric(ms(waits[len(waits)/2]), "p50-ms")
	b.ReportMetric(ms(waits[len(waits)-1]), "max-ms")
	b.ReportMetric(float64(late), "late-jobs")
}
