package billing

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/store"
)

// Schedules of the service's own periodic jobs.
const (
	// purgeInterval is how often expired Idempotency-Keys are deleted.
	purgeInterval = time.Hour
	// sweepInterval is how often pendiente emissions are looked for, in
	// case a recovery job was lost (a backstop: transaction 1 of every
	// emission makes sure a recovery job covers it; see enqueueRecovery).
	sweepInterval = 5 * time.Minute
)

// Workers are the budgets of the service's job queues: how many jobs of
// each queue one process runs at once. Each kind of work waits in a queue
// of its own, so that one never waits for another's workers (deliveries
// to a receiver that hangs hold up no submission to the SII). Zero means
// the default; a negative value means none, for a process that leaves
// that work to other processes on the same database (it still enqueues).
type Workers struct {
	// Submission: sending documents to the SII and following them
	// (default 8; always none when Config.Submission is nil).
	Submission int
	// Recovery: finishing emissions a crash interrupted, and their
	// sweep (default 2).
	Recovery int
	// Delivery: webhook delivery attempts (default 10). One company's
	// attempts take at most DeliveryConfig.MaxInFlightPerCompany of them.
	Delivery int
	// Maintenance: the periodic purges, sweeps and checks (default 2).
	Maintenance int
	// Mail: sending mail (default 2; none when Config.Mail.Off).
	Mail int
	// Mailbox: reading the companies' mailboxes (default 2; none when
	// Config.Mail.Off). A mailbox is read by one job at a time, and
	// mailboxes whose last read failed take at most half of them.
	Mailbox int
	// Cesion: uploading cesiones to the SII's registry of credit
	// transfers and following them (default 2; always none when
	// Config.Submission is nil).
	Cesion int
}

// Default budgets of Workers.
const (
	DefaultSubmissionWorkers  = submission.DefaultWorkers
	DefaultRecoveryWorkers    = 2
	DefaultDeliveryWorkers    = delivery.DefaultWorkers
	DefaultMaintenanceWorkers = periodic.DefaultWorkers
	DefaultMailWorkers        = mailer.DefaultWorkers
	DefaultMailboxWorkers     = mailer.DefaultMailboxWorkers
)

// budget resolves one field of Workers: zero is def, negative is none.
func budget(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// recoveryQueue is the queue recovery jobs and their sweep wait in.
const recoveryQueue = "recovery"

// purgeArgs is the periodic job that deletes Idempotency-Keys older than
// the retention.
type purgeArgs struct{}

// Kind names the purge job.
func (purgeArgs) Kind() string { return "idempotency.purge" }

// sweepArgs is the periodic job that finishes every pendiente emission
// older than RecoveryAfter.
type sweepArgs struct{}

// Kind names the sweep job.
func (sweepArgs) Kind() string { return "dte.sweep" }

// JobOpts: recovery jobs wait in the recovery queue.
func (recoverArgs) JobOpts() store.JobOpts { return store.JobOpts{Queue: recoveryQueue} }

// registerJobs registers every worker and periodic job of the service on
// the store's runner: emission's own (recovery, idempotency purge) and
// those of the subsystems under billing/internal (webhook delivery,
// alerts, and submission to the SII when it is on).
//
// Each subsystem declares the queue its jobs wait in, with its budget
// from Config.Workers; the maintenance queue of the periodic jobs is
// declared here. A process that does not submit declares the submission
// queue with no workers: it may still queue documents for those that do.
func (s *Service) registerJobs() error {
	for _, reg := range []func() error{
		func() error {
			return periodic.Declare(s.st.Jobs(), budget(s.cfg.Workers.Maintenance, DefaultMaintenanceWorkers))
		},
		s.registerRecovery,
		s.registerIdempotencyPurge,
		func() error { return s.dlv.Register(s.st.Jobs()) },
		func() error { return s.alerts.Register(s.st.Jobs()) },
		func() error {
			if s.sub == nil {
				return submission.Declare(s.st.Jobs(), 0)
			}
			return s.sub.Register(s.st.Jobs())
		},
		func() error { return s.inbox.Register(s.st.Jobs()) },
		func() error { return s.mailer.Register(s.st.Jobs()) },
		func() error { return s.ces.Register(s.st.Jobs()) },
	} {
		if err := reg(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) registerRecovery() error {
	j := s.st.Jobs()
	if err := j.DeclareQueue(recoveryQueue, budget(s.cfg.Workers.Recovery, DefaultRecoveryWorkers)); err != nil {
		return err
	}
	if err := j.Register(store.Worker{
		Kind: recoverArgs{}.Kind(),
		Work: func(ctx context.Context, job *store.Job) error {
			a, err := store.DecodeArgs[recoverArgs](job)
			if err != nil {
				return err
			}
			if a.EmpresaID != "" {
				_, err := s.recoverEmpresaPending(ctx, a.EmpresaID, time.UnixMicro(a.Before))
				return err
			}
			var first error
			for _, it := range a.Items {
				if err := s.recoverDTE(ctx, it.EmpresaID, it.DTEID); err != nil && first == nil {
					first = err
				}
			}
			return first
		},
		Retry: []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute},
	}); err != nil {
		return fmt.Errorf("billing: registering %s: %w", recoverArgs{}.Kind(), err)
	}
	return periodic.Register(s.st.Jobs(), periodic.Job{Args: sweepArgs{}, Every: sweepInterval, OnStart: true, Timeout: 10 * time.Minute,
		Queue: recoveryQueue, Run: func(ctx context.Context) error { _, err := s.recoverPending(ctx); return err }})
}

func (s *Service) registerIdempotencyPurge() error {
	return periodic.Register(s.st.Jobs(), periodic.Job{Args: purgeArgs{}, Every: purgeInterval, OnStart: true,
		Run: func(ctx context.Context) error { _, err := s.purgeIdempotency(ctx); return err }})
}

// Start starts the store's job runner with the service's workers
// (recovery of interrupted emissions, idempotency purge and whatever other
// features registered). Stop stops it.
//
// First it checks that the Keyring is the key the database's secrets are
// sealed under (CheckKEK: a *KEKError otherwise, and nothing starts), and
// seals the private keys of CAFs that an earlier version stored in clear.
func (s *Service) Start(ctx context.Context) error {
	if s.emits.isStopped() {
		return errors.New("billing: a stopped Service does not start again; build a new one")
	}
	if err := CheckKEK(ctx, s.st, s.keys); err != nil {
		return err
	}
	n, err := sealCAFKeys(ctx, s.st, s.keys)
	if n > 0 {
		s.log.Info("billing: sealed the private keys of CAFs stored in clear", "cafs", n)
		if err := scrub(ctx, s.st); err != nil {
			s.log.Warn("billing: the database files may still hold the CAF keys sealed until their next checkpoint", "error", err.Error())
		}
	}
	if err != nil {
		return err
	}
	return s.st.Jobs().Start(ctx)
}

// Stop undoes what New and Start began, in this order: new emissions are
// refused (fault.KindUnavailable) and those under way finish; the job
// runner stops once its running jobs end; the two group commits close;
// the idle connections of the webhook client New built close. Each wait
// lasts at most until ctx's deadline. The store is the caller's, and
// stays open. A stopped Service does not start again: build another.
//
// It returns the runner's error (as store.Jobs.Stop: one that was never
// started fails) joined with ctx's when emissions were still running.
func (s *Service) Stop(ctx context.Context) error {
	var errs []error
	select {
	case <-s.emits.stop():
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("billing: stopping with emissions under way: %w", ctx.Err()))
	}
	if err := s.st.Jobs().Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	// Emissions and jobs are over: the groups have nothing left to run,
	// and refuse what a late caller would bring.
	s.group.Close()
	s.finishes.Close()
	s.dlv.Close()
	return errors.Join(errs...)
}

// errStopped answers an emission after Stop.
var errStopped = &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable,
	Message: "the service is stopping; retry the request (with the same Idempotency-Key) later"}

// emissions counts the emissions under way, so that Stop waits for them
// and refuses new ones.
type emissions struct {
	mu      sync.Mutex
	n       int
	stopped bool
	drained chan struct{} // closed once stopped and no emission is under way
}

// enter counts an emission in; false once Stop has begun.
func (e *emissions) enter() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return false
	}
	e.n++
	return true
}

// leave counts an emission out.
func (e *emissions) leave() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n--; e.stopped && e.n == 0 {
		close(e.drained)
	}
}

// stop refuses new emissions and returns a channel closed once those
// under way have left.
func (e *emissions) stop() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopped {
		e.stopped, e.drained = true, make(chan struct{})
		if e.n == 0 {
			close(e.drained)
		}
	}
	return e.drained
}

// isStopped reports whether Stop has begun.
func (e *emissions) isStopped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

// purgeIdempotency deletes the Idempotency-Keys older than the retention
// (24 hours by default) and reports how many it deleted: the body of the
// periodic purge job.
func (s *Service) purgeIdempotency(ctx context.Context) (int64, error) {
	var n int64
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.PurgeIdempotency(ctx, s.now().Add(-s.ttl))
		return err
	})
	if err != nil {
		return 0, fault.Failed("purging idempotency keys", err)
	}
	return n, nil
}

// recoverPending finishes every emission of every company left pendiente
// for longer than RecoveryAfter (a process died between its two
// transactions) and reports how many it finished: the body of the sweep
// job, which also runs as soon as the runner starts.
func (s *Service) recoverPending(ctx context.Context) (int, error) {
	return s.recoverPendingOlder(ctx, s.now().Add(-s.recAge))
}

func (s *Service) recoverPendingOlder(ctx context.Context, before time.Time) (int, error) {
	done := 0
	err := periodic.EachEmpresa(ctx, s.st, func(e *store.Empresa) error {
		n, err := s.recoverEmpresaPending(ctx, e.ID, before)
		done += n
		return err
	})
	return done, err
}

// recoverEmpresaPending finishes every emission of the company left
// pendiente that was created no later than before, and reports how many it
// finished.
func (s *Service) recoverEmpresaPending(ctx context.Context, empresaID string, before time.Time) (int, error) {
	done := 0
	f := store.DTEFilter{Estado: store.EstadoPendiente, Limit: store.MaxLimit}
	for {
		page, err := s.st.ListDTEs(ctx, empresaID, f)
		if err != nil {
			return done, fault.Failed("listing pending documents", err)
		}
		for _, d := range page.Items {
			if d.CreatedAt.After(before) {
				continue
			}
			if err := s.recoverDTE(ctx, empresaID, d.ID); err != nil {
				return done, err
			}
			done++
		}
		if page.NextCursor == "" {
			return done, nil
		}
		f.Cursor = page.NextCursor
	}
}
