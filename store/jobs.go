package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// JobArgs is the payload of a background job. It is stored as JSON
// (encoding/json) and Kind names the worker that runs it; kinds are short
// stable identifiers such as "dte.recover".
type JobArgs interface {
	Kind() string
}

// JobArgsWithOpts is implemented by job arguments that carry default
// options for their kind (retry attempts, uniqueness, queue). Options given
// to Enqueue override them field by field (non-zero fields win).
type JobArgsWithOpts interface {
	JobArgs
	JobOpts() JobOpts
}

// JobOpts adjusts how one job is inserted. The zero value means: default
// queue, priority 1, 25 attempts, available at once, not unique.
type JobOpts struct {
	// Queue names the queue the job waits in; "" means the default queue.
	// A named queue must be declared first (Jobs.DeclareQueue), or
	// Enqueue fails with ErrUnknownQueue.
	Queue       string
	Priority    int       // 1 (first) to 4; 0 means 1
	MaxAttempts int       // 0 means 25
	ScheduledAt time.Time // zero means now

	// UniqueByArgs makes the job unique among jobs of its kind with the
	// same JSON arguments that are not yet finished (available, scheduled,
	// running, retryable or pending): inserting a duplicate returns the
	// existing job with JobResult.Duplicate set.
	UniqueByArgs bool
	// UniqueByPeriod, when positive, narrows uniqueness to jobs scheduled
	// within the same period window (of this length, aligned on the clock:
	// the window holding ScheduledAt, or the insert's instant when it is
	// zero) — alone it makes a kind unique per window regardless of
	// arguments.
	UniqueByPeriod time.Duration
}

// merge returns o with its zero fields taken from d.
func (o JobOpts) merge(d JobOpts) JobOpts {
	if o.Queue == "" {
		o.Queue = d.Queue
	}
	if o.Priority == 0 {
		o.Priority = d.Priority
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = d.MaxAttempts
	}
	if o.ScheduledAt.IsZero() {
		o.ScheduledAt = d.ScheduledAt
	}
	if !o.UniqueByArgs {
		o.UniqueByArgs = d.UniqueByArgs
	}
	if o.UniqueByPeriod == 0 {
		o.UniqueByPeriod = d.UniqueByPeriod
	}
	return o
}

// EffectiveJobOpts combines the options passed to Enqueue with the kind's
// defaults (JobArgsWithOpts). Backends use it; callers rarely need it.
func EffectiveJobOpts(args JobArgs, opts *JobOpts) JobOpts {
	var o JobOpts
	if opts != nil {
		o = *opts
	}
	if d, ok := args.(JobArgsWithOpts); ok {
		o = o.merge(d.JobOpts())
	}
	return o
}

// JobResult reports an inserted job. Duplicate is true when a unique job
// already existed and no new job was inserted (ID is then the existing
// job's id).
type JobResult struct {
	ID        int64
	Duplicate bool
}

// Job is one run of a job handed to a worker.
type Job struct {
	ID          int64
	Kind        string
	Args        json.RawMessage // the arguments as stored
	Attempt     int             // 1 on the first run
	MaxAttempts int
	CreatedAt   time.Time
	// ScheduledAt is when the job was due for this run: the instant it
	// was inserted for, or for a retry or a snoozed run the instant that
	// rescheduled it. UniqueByPeriod keys the window on the inserted one,
	// which may lie after CreatedAt (a job inserted ahead of its time).
	ScheduledAt time.Time
	// Snoozes counts the times the job was snoozed before this run
	// (Snooze), so that a worker can wait longer each time.
	Snoozes int
}

// DecodeArgs decodes a job's arguments into a value of type T.
func DecodeArgs[T any](job *Job) (T, error) {
	var v T
	if err := json.Unmarshal(job.Args, &v); err != nil {
		return v, fmt.Errorf("store: job %d (%s): decoding args: %w", job.ID, job.Kind, err)
	}
	return v, nil
}

// Worker runs jobs of one kind. Work returning nil completes the job; an
// error schedules a retry (per Retry) until MaxAttempts runs have failed,
// after which the job is discarded; the error Snooze returns puts the job
// back for later without using up an attempt. A worker whose process dies
// while running a job leaves it running; the runner rescues it (schedules
// it again) after the store's rescue delay.
type Worker struct {
	Kind string
	Work func(ctx context.Context, job *Job) error
	// Retry is the delay before each retry: Retry[0] after the first
	// failure, Retry[1] after the second, …, the last entry repeating.
	// Nil means the runner's default (exponential, attempt⁴ seconds).
	Retry []time.Duration
	// Timeout bounds one run (its context is cancelled); 0 means one
	// minute (or JobsConfig.RescueAfter when shorter), negative means no
	// timeout. A running job is rescued only once both its Timeout and
	// JobsConfig.RescueAfter have passed, so a kind with no timeout is
	// never rescued.
	Timeout time.Duration
}

// RetryDelay returns the delay Retry gives after the attempt-th failed
// run (attempt ≥ 1), and false when Retry is empty.
func (w *Worker) RetryDelay(attempt int) (time.Duration, bool) {
	if len(w.Retry) == 0 {
		return 0, false
	}
	return Pause(w.Retry, attempt-1), true
}

// Pause returns the n-th pause of a schedule (n from 0), its last one
// repeating once n runs past it: the one reading of a retry or poll
// schedule, which Worker.Retry and the rooms' step schedules share. It
// returns 0 for an empty schedule.
func Pause(schedule []time.Duration, n int) time.Duration {
	if len(schedule) == 0 {
		return 0
	}
	return schedule[max(0, min(n, len(schedule)-1))]
}

// SnoozeError is the error Snooze returns.
type SnoozeError struct {
	// Delay is how long the job waits before it runs again.
	Delay time.Duration
}

// Error says the job was snoozed, and for how long.
func (e *SnoozeError) Error() string { return fmt.Sprintf("store: job snoozed for %s", e.Delay) }

// Snooze returns the error a Worker's Work returns to put its job back, to
// run again after d (0 or less: at once), without counting the run as an
// attempt: the job is neither failed nor discarded, however often it is
// snoozed. A worker uses it for a job it may not run yet (a concurrency
// cap is reached).
func Snooze(d time.Duration) error { return &SnoozeError{Delay: max(d, 0)} }

// ErrUnknownQueue is the error (wrapped) of an Enqueue whose job names a
// queue that was not declared (Jobs.DeclareQueue): no runner would ever
// work it.
var ErrUnknownQueue = errors.New("store: the job's queue is not declared")

// PeriodicJob enqueues a job at a fixed interval. With several processes
// on one database, only the elected leader enqueues periodic jobs.
type PeriodicJob struct {
	Interval   time.Duration
	Args       func() JobArgs // builds the job at each tick
	Opts       *JobOpts
	RunOnStart bool // also enqueue once as soon as the runner starts
}

// Job states reported by JobInfo.
const (
	JobAvailable = "available"
	JobScheduled = "scheduled"
	JobRunning   = "running"
	JobRetryable = "retryable"
	JobCompleted = "completed"
	JobDiscarded = "discarded"
	JobCancelled = "cancelled"
	JobPending   = "pending"
)

// JobInfo is the current state of a job, for inspection and tests.
type JobInfo struct {
	ID          int64
	Kind        string
	State       string
	Attempt     int
	MaxAttempts int
	Args        json.RawMessage // as stored (PostgreSQL's jsonb may respace it)
	Errors      []string        // one per failed attempt, oldest first
	ScheduledAt time.Time
}

// DefaultRescueAfter is JobsConfig.RescueAfter's default: after a crash,
// a job left running is run again within this time (or its kind's
// Timeout, when longer).
const DefaultRescueAfter = 2 * time.Minute

// JobsConfig tunes the runner; the zero value is fine for production.
// The budgets of named queues are given where they are declared
// (Jobs.DeclareQueue).
type JobsConfig struct {
	// Workers is how many jobs of the default queue run at once (default
	// 10).
	Workers int
	// PollInterval is how often an idle runner looks for new jobs
	// (default 1 s). On SQLite it is the delay before a new job starts
	// (lower it in tests). On PostgreSQL a runner is told of each new job
	// by LISTEN/NOTIFY and starts it within about 10 ms of its commit, so
	// polling is only the fallback for a notification that did not reach
	// it, and could be long; the default keeps such a job's wait at 1 s.
	PollInterval time.Duration
	// RescueAfter is how long a job may stay running before it is
	// considered abandoned by a dead worker and scheduled again (default
	// DefaultRescueAfter). A job whose kind has a longer Timeout is
	// rescued only once that Timeout has passed too, so the delay may be
	// short without a live job being run twice.
	RescueAfter time.Duration
	// Logger receives the runner's own messages (warnings and errors of
	// jobs); nil discards messages below warnings. Its routine messages
	// (job counts, maintenance runs, start and stop) come at debug level.
	Logger *slog.Logger
}

// Jobs is the background job runner of a store. Declare queues and
// register workers and periodic jobs before Start; Enqueue works whether
// or not the runner is started (in this process or in any other on the
// same database).
//
// Jobs wait in queues. The default queue ("") always exists, its budget
// JobsConfig.Workers; a named queue is declared with its own budget, so
// that the jobs of one queue never wait for the workers of another (slow
// webhook deliveries do not hold up submissions).
type Jobs interface {
	// DeclareQueue declares the named queue and how many of its jobs this
	// process runs at once: workers ≥ 1, or 0 for a queue this process
	// enqueues on but leaves to other processes on the database. A name is
	// 1 to 64 lower-case letters and digits, single '_' or '-' between
	// them. Declaring a queue again with the same budget does nothing;
	// with another budget, after Start, or with a bad name or budget, it
	// fails. Declare a queue before enqueuing on it: Enqueue on an
	// undeclared queue fails with ErrUnknownQueue, and so does Start when
	// a periodic job names one.
	DeclareQueue(name string, workers int) error
	// Register adds a worker; it fails after Start or when the kind is
	// already registered.
	Register(w Worker) error
	// AddPeriodic adds a periodic job; it fails after Start.
	AddPeriodic(p PeriodicJob) error
	// Start begins working jobs until Stop or until ctx is cancelled.
	Start(ctx context.Context) error
	// Stop waits for running jobs to finish (up to ctx's deadline, then
	// cancels them) and stops the runner; it fails when the runner is not
	// started.
	Stop(ctx context.Context) error
	// Running reports whether this runner works jobs, for readiness: it
	// is true from a successful Start until Stop (or the store's Close)
	// begins, the context given to Start is cancelled, or the runner
	// stops on its own; false before Start and after a failed Start. A
	// runner started again after Stop is running again.
	Running() bool
	// Enqueue inserts a job in its own transaction; its queue must be
	// the default one or declared (else ErrUnknownQueue).
	Enqueue(ctx context.Context, args JobArgs, opts *JobOpts) (*JobResult, error)
	// Job reports a job's current state.
	Job(ctx context.Context, id int64) (*JobInfo, error)
	// Depth counts the jobs that have not finished, by state (available,
	// scheduled, running, retryable, pending), across every process on
	// the database; states with no job are absent. It feeds the server's
	// queue-depth gauge.
	Depth(ctx context.Context) (map[string]int64, error)
	// QueueDepth is Depth by queue: for each queue, its unfinished jobs by
	// state, across every process on the database. Every queue declared
	// in this process and the default one (named "default") appear with
	// every unfinished state, zero when it has no job; a queue only
	// another process declared appears when it has jobs.
	QueueDepth(ctx context.Context) (map[string]map[string]int64, error)
}

// UnfinishedStates are the states of a job that has not finished, which
// Jobs.Depth and Jobs.QueueDepth count.
func UnfinishedStates() []string {
	return []string{JobAvailable, JobScheduled, JobRunning, JobRetryable, JobPending}
}
