// Package periodic registers the billing service's periodic jobs: work
// that visits the whole database on a timer (the recovery sweep, the
// idempotency purge, the delivery sweep, the certificate expiry check).
// Each subsystem registers its own on the store's job runner; they wait in
// the maintenance queue (Queue) unless they name another.
package periodic

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
)

// Queue is the maintenance queue: the periodic jobs that keep the
// records tidy (purges, sweeps, checks behind alerts) wait there, behind
// no submission or delivery, and hold none of their workers.
const Queue = "maintenance"

// DefaultWorkers is the maintenance queue's budget by default: the jobs
// are few and seldom.
const DefaultWorkers = 2

// Declare declares the maintenance queue on j with its budget (0: this
// process leaves its jobs to other processes).
func Declare(j store.Jobs, workers int) error {
	return j.DeclareQueue(Queue, workers)
}

// Job is a periodic job.
type Job struct {
	Args    store.JobArgs // the job's (empty) arguments, which name it
	Every   time.Duration
	OnStart bool          // also run as soon as the runner starts
	Timeout time.Duration // 0: the store's default
	// Queue is the queue its runs wait in; "" means the maintenance
	// queue (Queue). Its subsystem declares it.
	Queue string
	Run   func(context.Context) error
}

// Register registers p's worker and its schedule on j. A tick runs at
// most once per period (a window of the interval's length, aligned on
// the clock) however many processes share the database and however often
// they start: only the elected leader enqueues the ticks, each unique in
// its period while unfinished (UniqueByPeriod), and a finished run keeps
// its job scheduled to its period's end (see hold), so that a new
// leader's start, or a restart, in the same period finds it there and
// runs nothing.
func Register(j store.Jobs, p Job) error {
	if err := j.Register(store.Worker{
		Kind: p.Args.Kind(),
		Work: func(ctx context.Context, job *store.Job) error {
			if job.Snoozes > 0 {
				return nil // the period's end: its run is done
			}
			if err := p.Run(ctx); err != nil {
				return err
			}
			return hold(job, p.Every, time.Now())
		},
		Timeout: p.Timeout,
	}); err != nil {
		return fmt.Errorf("billing: registering %s: %w", p.Args.Kind(), err)
	}
	return j.AddPeriodic(store.PeriodicJob{Interval: p.Every, RunOnStart: p.OnStart,
		Args: func() store.JobArgs { return p.Args }, Opts: &store.JobOpts{Queue: cmp.Or(p.Queue, Queue), UniqueByPeriod: p.Every}})
}

// hold keeps a run's job unfinished until the end of the period it was
// scheduled in (the job's uniqueness covers unfinished jobs only): it
// snoozes the job to that instant, and the job then ends without running
// again (a snoozed run has Snoozes > 0). Without it, a leader that takes
// over (the old one killed or stopped) would enqueue a job marked OnStart
// again at once and run it twice in the period.
//
// The period is the one uniqueness keys on: the job's ScheduledAt
// truncated to the interval, not its CreatedAt. A tick is inserted a
// little ahead of its time with ScheduledAt at its due instant, so the
// two can lie on either side of a period's start; held to the end of
// CreatedAt's period, the job would finish as its own period begins. A
// retried run's ScheduledAt is later than the inserted one, so its hold
// may outlast its period, never fall short of it.
func hold(job *store.Job, every time.Duration, now time.Time) error {
	if rest := job.ScheduledAt.Truncate(every).Add(every).Sub(now); rest > 0 {
		return store.Snooze(rest)
	}
	return nil
}

// EachEmpresa calls fn for every company r lists, oldest first, a page at
// a time, and stops at fn's first error. The periodic jobs that visit
// every company use it.
func EachEmpresa(ctx context.Context, r store.EmpresaReader, fn func(e *store.Empresa) error) error {
	for e, err := range store.Empresas(ctx, r) {
		if err != nil {
			return fault.Failed("listing companies", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
