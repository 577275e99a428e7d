package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/dtekit/dtekit/store"
)

// jobs implements store.Jobs on River. Two River clients share the
// database: an insert-only client built at open (so jobs can be enqueued,
// inside store transactions too, before or without Start), and the
// working client built by Start once every worker is registered.
type jobs struct {
	cfg    Config
	insert jobClient

	mu       sync.Mutex
	workers  *river.Workers
	kinds    map[string]bool
	periodic []*river.PeriodicJob
	// periodicQueues names the queue of each periodic job, checked at
	// Start.
	periodicQueues []periodicQueue
	runner         jobClient
	started        bool

	// queues maps each declared queue to its budget. Enqueue reads it
	// without the lock (Stop holds the lock while jobs finish, and jobs
	// enqueue); DeclareQueue replaces the map under the lock.
	queues atomic.Pointer[map[string]int]

	// working is the runner started and not being stopped, with the
	// context Start was given; nil otherwise. Running reads it without
	// the lock, which Stop holds while jobs finish.
	working atomic.Pointer[startedRunner]
}

// periodicQueue is the queue a periodic job of a kind is inserted on.
type periodicQueue struct{ queue, kind string }

// defaultWorkers is JobsConfig.Workers' default.
const defaultWorkers = 10

// startedRunner is a started River client and the context it runs under.
type startedRunner struct {
	client jobClient
	ctx    context.Context
}

func (j *jobs) logger() *slog.Logger {
	if j.cfg.Jobs.Logger != nil {
		return slog.New(routineHandler{j.cfg.Jobs.Logger.Handler()})
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// listenPollInterval is the runner's default poll interval when the
// driver listens. Each insert notifies the job's queue, so polling only
// finds what no notification started: a notification lost while the
// listener reconnected or before it listened, or one the insert client
// held back (below). It could be long; it stays River's default, 1 s,
// because it bounds the wait of such a job, and BenchmarkJobStart in
// store/postgres saw one now and then under heavy load (see
// docs/performance.md), while an idle poll costs one short query per
// queue and second.
const listenPollInterval = river.FetchPollIntervalDefault

// listenFetchCooldown is the least time between two fetches of a queue
// when the driver listens. River's default, 100 ms, is what a job
// announced just after a fetch (the one its predecessor's completion set
// off, say) waits for the next: emissions one after another would each
// wait about that long. At 10 ms a notified job starts within about
// 10 ms, and a queue is fetched at most 100 times a second per process.
const listenFetchCooldown = 10 * time.Millisecond

func newJobs(cfg Config) (*jobs, error) {
	j := &jobs{cfg: cfg, workers: river.NewWorkers(), kinds: map[string]bool{}}
	j.queues.Store(&map[string]int{})
	// River's insert client notifies a queue at most once per
	// FetchCooldown (100 ms by default) and drops the notifications in
	// between, so a job inserted soon after another would wait for a
	// poll: the shortest cooldown keeps nearly every insert of a job that
	// is due now announced (scheduled jobs notify nothing). The price is a
	// pg_notify in more transactions, and PostgreSQL commits the
	// transactions that notified one at a time (a lock on its notification
	// queue, held through the commit's flush): billing's group commit
	// puts many emissions in one such transaction, which keeps them few.
	c, err := cfg.River.newClient(&river.Config{Logger: j.logger(), FetchCooldown: river.FetchCooldownMin})
	if err != nil {
		return nil, fmt.Errorf("store (%s): building the job client: %w", cfg.Dialect.Name, err)
	}
	j.insert = c
	return j, nil
}

// uniqueStates are the states in which a unique job blocks a duplicate:
// every state of a job that has not finished.
var uniqueStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

func insertOpts(args store.JobArgs, opts *store.JobOpts) *river.InsertOpts {
	return riverOpts(store.EffectiveJobOpts(args, opts))
}

func riverOpts(o store.JobOpts) *river.InsertOpts {
	ro := &river.InsertOpts{Queue: o.Queue, Priority: o.Priority, MaxAttempts: o.MaxAttempts, ScheduledAt: o.ScheduledAt}
	if o.UniqueByArgs || o.UniqueByPeriod > 0 {
		ro.UniqueOpts = river.UniqueOpts{ByArgs: o.UniqueByArgs, ByPeriod: o.UniqueByPeriod, ByState: uniqueStates}
	}
	return ro
}

// checkedOpts returns the insert options of a job, or ErrUnknownQueue
// when its queue is neither the default one nor declared.
func (j *jobs) checkedOpts(args store.JobArgs, opts *store.JobOpts) (*river.InsertOpts, error) {
	o := store.EffectiveJobOpts(args, opts)
	if err := j.checkQueue(o.Queue); err != nil {
		return nil, fmt.Errorf("store (%s): enqueuing a %s job: %w", j.cfg.Dialect.Name, args.Kind(), err)
	}
	return riverOpts(o), nil
}

// checkQueue reports ErrUnknownQueue for a queue that is neither the
// default one nor declared.
func (j *jobs) checkQueue(name string) error {
	if name == "" || name == river.QueueDefault {
		return nil
	}
	if _, ok := (*j.queues.Load())[name]; !ok {
		return fmt.Errorf("%w: queue %q (declare it with Jobs.DeclareQueue before enqueuing on it)", store.ErrUnknownQueue, name)
	}
	return nil
}

func jobResult(res *rivertype.JobInsertResult) *store.JobResult {
	return &store.JobResult{ID: res.Job.ID, Duplicate: res.UniqueSkippedAsDuplicate}
}

// Enqueue on a Tx inserts the job in the store transaction.
func (t *tx) Enqueue(ctx context.Context, args store.JobArgs, opts *store.JobOpts) (*store.JobResult, error) {
	ro, err := t.jobs.checkedOpts(args, opts)
	if err != nil {
		return nil, err
	}
	res, err := t.jobs.insert.InsertTx(ctx, t.tx, args, ro)
	if err != nil {
		return nil, fmt.Errorf("store (%s): enqueuing a %s job: %w", t.d.Name, args.Kind(), err)
	}
	return jobResult(res), nil
}

// CompleteJob completes, in the transaction, the job whose Work ctx
// belongs to (River's transactional completion: the runner's own
// completion after Work returns then finds it done and changes nothing).
func (t *tx) CompleteJob(ctx context.Context) error {
	job, ok := ctx.Value(runningJobKey{}).(*river.Job[rawArgs])
	if !ok {
		return nil
	}
	if err := t.jobs.insert.CompleteTx(ctx, t.tx, job); err != nil {
		return fmt.Errorf("store (%s): completing job %d (%s): %w", t.d.Name, job.ID, job.Kind, err)
	}
	return nil
}

// Enqueue inserts a job in its own transaction.
func (j *jobs) Enqueue(ctx context.Context, args store.JobArgs, opts *store.JobOpts) (*store.JobResult, error) {
	if ctx.Value(inWriteKey{}) != nil {
		return nil, errNested
	}
	ro, err := j.checkedOpts(args, opts)
	if err != nil {
		return nil, err
	}
	res, err := j.insert.Insert(ctx, args, ro)
	if err != nil {
		return nil, j.cfg.Dialect.classify(fmt.Errorf("store (%s): enqueuing a %s job: %w", j.cfg.Dialect.Name, args.Kind(), err))
	}
	return jobResult(res), nil
}

// Job reports a job's state.
func (j *jobs) Job(ctx context.Context, id int64) (*store.JobInfo, error) {
	row, err := j.insert.JobGet(ctx, id)
	if errors.Is(err, river.ErrNotFound) {
		return nil, fmt.Errorf("%w: job %d", store.ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store (%s): reading job %d: %w", j.cfg.Dialect.Name, id, err)
	}
	info := &store.JobInfo{ID: row.ID, Kind: row.Kind, State: string(row.State), Attempt: row.Attempt,
		MaxAttempts: row.MaxAttempts, Args: json.RawMessage(row.EncodedArgs), ScheduledAt: row.ScheduledAt.UTC(), Errors: []string{}}
	for _, e := range row.Errors {
		info.Errors = append(info.Errors, e.Error)
	}
	return info, nil
}

// Depth counts the unfinished jobs by state.
func (j *jobs) Depth(ctx context.Context) (map[string]int64, error) {
	rows, err := j.cfg.Reader.QueryContext(ctx, `SELECT state, count(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'running', 'retryable', 'pending') GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("store (%s): counting jobs: %w", j.cfg.Dialect.Name, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var state string
		var n int64
		if err := rows.Scan(&state, &n); err != nil {
			return nil, fmt.Errorf("store (%s): counting jobs: %w", j.cfg.Dialect.Name, err)
		}
		out[state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store (%s): counting jobs: %w", j.cfg.Dialect.Name, err)
	}
	return out, nil
}

// QueueDepth counts the unfinished jobs by queue and state; the declared
// queues and the default one appear with every state.
func (j *jobs) QueueDepth(ctx context.Context) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	zero := func(queue string) {
		if out[queue] == nil {
			out[queue] = map[string]int64{}
			for _, st := range store.UnfinishedStates() {
				out[queue][st] = 0
			}
		}
	}
	zero(river.QueueDefault)
	for name := range *j.queues.Load() {
		zero(name)
	}
	rows, err := j.cfg.Reader.QueryContext(ctx, `SELECT queue, state, count(*) FROM river_job
		WHERE state IN ('available', 'scheduled', 'running', 'retryable', 'pending') GROUP BY queue, state`)
	if err != nil {
		return nil, fmt.Errorf("store (%s): counting jobs by queue: %w", j.cfg.Dialect.Name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var queue, state string
		var n int64
		if err := rows.Scan(&queue, &state, &n); err != nil {
			return nil, fmt.Errorf("store (%s): counting jobs by queue: %w", j.cfg.Dialect.Name, err)
		}
		zero(queue)
		out[queue][state] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store (%s): counting jobs by queue: %w", j.cfg.Dialect.Name, err)
	}
	return out, nil
}

// rawArgs carries a job's arguments undecoded to a store.Worker, which
// decodes them itself (store.DecodeArgs). Its kind is the registered one.
type rawArgs struct {
	kind string
	raw  json.RawMessage
}

func (a rawArgs) Kind() string                  { return a.kind }
func (a rawArgs) MarshalJSON() ([]byte, error)  { return a.raw, nil }
func (a *rawArgs) UnmarshalJSON(b []byte) error { a.raw = append(a.raw[:0], b...); return nil }

// bridge runs a store.Worker as a River worker.
type bridge struct {
	river.WorkerDefaults[rawArgs]
	w store.Worker
}

// snoozes reads the count of snoozes River keeps in a job's metadata.
func snoozes(metadata []byte) int {
	var m struct {
		Snoozes int `json:"snoozes"`
	}
	if len(metadata) == 0 || json.Unmarshal(metadata, &m) != nil {
		return 0
	}
	return m.Snoozes
}

// runningJobKey carries, in the context of a job's Work, the River job
// being run, for Tx.CompleteJob.
type runningJobKey struct{}

func (b *bridge) Work(ctx context.Context, job *river.Job[rawArgs]) error {
	ctx = context.WithValue(ctx, runningJobKey{}, job)
	err := b.w.Work(ctx, &store.Job{ID: job.ID, Kind: job.Kind, Args: job.EncodedArgs, Attempt: job.Attempt,
		MaxAttempts: job.MaxAttempts, CreatedAt: job.CreatedAt.UTC(), ScheduledAt: job.ScheduledAt.UTC(), Snoozes: snoozes(job.Metadata)})
	var snooze *store.SnoozeError
	if errors.As(err, &snooze) {
		// River snoozes without counting the run as an attempt.
		return river.JobSnooze(max(snooze.Delay, 0))
	}
	return err
}

// NextRetry applies the worker's own schedule; a zero time lets River use
// its default.
func (b *bridge) NextRetry(job *river.Job[rawArgs]) time.Time {
	if d, ok := b.w.RetryDelay(job.Attempt); ok {
		return time.Now().Add(d)
	}
	return time.Time{}
}

func (b *bridge) Timeout(*river.Job[rawArgs]) time.Duration {
	if b.w.Timeout < 0 {
		return -1
	}
	return b.w.Timeout
}

var errStarted = errors.New("store: the job runner is already started")

// queueName is River's rule for queue names.
var queueName = regexp.MustCompile(`^[a-z0-9]+(?:[_-][a-z0-9]+)*$`)

// DeclareQueue declares a named queue and its budget in this process.
func (j *jobs) DeclareQueue(name string, workers int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.started {
		return fmt.Errorf("store: declaring queue %q: %w", name, errStarted)
	}
	if len(name) > 64 || !queueName.MatchString(name) || name == river.QueueDefault {
		return fmt.Errorf("store: declaring queue %q: a name is 1 to 64 lower-case letters and digits with single _ or - between them, and not %q",
			name, river.QueueDefault)
	}
	if workers < 0 {
		return fmt.Errorf("store: declaring queue %q: %d workers; want 0 (enqueue only) or more", name, workers)
	}
	cur := *j.queues.Load()
	if n, ok := cur[name]; ok {
		if n != workers {
			return fmt.Errorf("store: queue %q is declared already with %d workers, not %d", name, n, workers)
		}
		return nil
	}
	next := maps.Clone(cur)
	next[name] = workers
	j.queues.Store(&next)
	return nil
}

// Register adds a worker.
func (j *jobs) Register(w store.Worker) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.started {
		return errStarted
	}
	if w.Kind == "" || w.Work == nil {
		return errors.New("store: registering a worker: Kind and Work are required")
	}
	if j.kinds[w.Kind] {
		return fmt.Errorf("store: a worker for kind %q is already registered", w.Kind)
	}
	j.kinds[w.Kind] = true
	// AddWorkerArgs takes the kind from the value given rather than from
	// a type, which lets one Go type serve every registered kind.
	river.AddWorkerArgs(j.workers, rawArgs{kind: w.Kind}, &bridge{w: w})
	return nil
}

// AddPeriodic adds a periodic job.
func (j *jobs) AddPeriodic(p store.PeriodicJob) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.started {
		return errStarted
	}
	if p.Interval <= 0 || p.Args == nil {
		return errors.New("store: adding a periodic job: Interval and Args are required")
	}
	args := p.Args()
	j.periodicQueues = append(j.periodicQueues, periodicQueue{queue: store.EffectiveJobOpts(args, p.Opts).Queue, kind: args.Kind()})
	j.periodic = append(j.periodic, river.NewPeriodicJob(river.PeriodicInterval(p.Interval),
		func() (river.JobArgs, *river.InsertOpts) {
			args := p.Args()
			return args, insertOpts(args, p.Opts)
		}, &river.PeriodicJobOpts{RunOnStart: p.RunOnStart}))
	return nil
}

// Start builds the working client and starts it.
func (j *jobs) Start(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.started {
		return errStarted
	}
	jc := j.cfg.Jobs
	for _, pq := range j.periodicQueues {
		if err := j.checkQueue(pq.queue); err != nil {
			return fmt.Errorf("store (%s): starting the job runner: periodic job %s: %w", j.cfg.Dialect.Name, pq.kind, err)
		}
	}
	queues := map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cmp.Or(max(jc.Workers, 0), defaultWorkers)}}
	for name, n := range *j.queues.Load() {
		if n > 0 { // 0: enqueue only, other processes work it
			queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	rc := &river.Config{
		Logger:               j.logger(),
		Workers:              j.workers,
		Queues:               queues,
		PeriodicJobs:         j.periodic,
		RescueStuckJobsAfter: cmp.Or(jc.RescueAfter, store.DefaultRescueAfter),
	}
	// River wants the rescue delay to be at least the default run
	// timeout; a short rescue delay (tests) shortens the default timeout.
	if jc.RescueAfter > 0 && jc.RescueAfter < time.Minute {
		rc.JobTimeout = jc.RescueAfter
	}
	switch {
	case j.cfg.River.listens():
		rc.FetchPollInterval = cmp.Or(jc.PollInterval, listenPollInterval)
		rc.FetchCooldown = max(min(listenFetchCooldown, rc.FetchPollInterval), river.FetchCooldownMin)
	case jc.PollInterval > 0:
		rc.FetchPollInterval = jc.PollInterval
		rc.FetchCooldown = min(max(jc.PollInterval/2, river.FetchCooldownMin), river.FetchCooldownDefault)
	}
	c, err := j.cfg.River.newClient(rc)
	if err != nil {
		return fmt.Errorf("store (%s): building the job runner: %w", j.cfg.Dialect.Name, err)
	}
	if err := c.Start(ctx); err != nil {
		return fmt.Errorf("store (%s): starting the job runner: %w", j.cfg.Dialect.Name, err)
	}
	j.runner, j.started = c, true
	j.working.Store(&startedRunner{client: c, ctx: ctx})
	return nil
}

// Running reports whether the runner works jobs: true from a successful
// Start until Stop or Close begins, the context given to Start ends, or
// River stops on its own.
func (j *jobs) Running() bool {
	w := j.working.Load()
	if w == nil || w.ctx.Err() != nil {
		return false
	}
	select {
	case <-w.client.Stopped():
		return false
	default:
		return true
	}
}

// Stop stops the runner: running jobs get until ctx's deadline to finish,
// then they are cancelled.
func (j *jobs) Stop(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.started {
		return errors.New("store: the job runner is not started")
	}
	return j.stopLocked(ctx)
}

func (j *jobs) stopLocked(ctx context.Context) error {
	j.working.Store(nil)
	err := j.runner.Stop(ctx)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = j.runner.StopAndCancel(cctx)
	}
	j.started = false
	// A stopped River client cannot start again with new registrations;
	// keep the registrations for a later Start.
	j.runner = nil
	if err != nil {
		return fmt.Errorf("store (%s): stopping the job runner: %w", j.cfg.Dialect.Name, err)
	}
	return nil
}

func (j *jobs) stopIfStarted(ctx context.Context) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.started {
		return nil
	}
	return j.stopLocked(ctx)
}
