package delivery

import (
	"fmt"
	"sync"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/store"
)

// Defaults of the delivery queue and its caps, and the ping allowance.
const (
	// DefaultWorkers is the delivery queue's budget: how many attempts
	// run at once in one process.
	DefaultWorkers = 10
	// DefaultMaxPerEndpoint is how many attempts to one webhook run at
	// once in one process.
	DefaultMaxPerEndpoint = 3
	// PingsPerMinute is how many pings one webhook accepts a minute
	// (a burst of as many, refilled evenly), per process.
	PingsPerMinute = 5
)

// DefaultMaxPerCompany is how many attempts of one company run at once
// in one process when Config.MaxPerCompany is zero: half the workers, at
// least one, so one company's slow endpoints leave the other half to the
// others.
func DefaultMaxPerCompany(workers int) int { return max(workers/2, 1) }

// Declare declares the delivery queue on j with its budget (0: this
// process leaves deliveries to other processes on the database).
func Declare(j store.Jobs, workers int) error {
	return j.DeclareQueue(outbox.DeliverQueue, workers)
}

// inFlight counts the attempts running in this process per company and
// per webhook, against their caps, and keeps spare workers free for the
// companies that have none running.
type inFlight struct {
	perCompany, perEndpoint int
	// shared is how many attempts may run at once for companies that
	// already have one running: the workers less the spare ones.
	shared int

	mu       sync.Mutex
	total    int
	company  map[string]int
	endpoint map[string]int
}

// spareWorkers is how many of the delivery workers only a company with no
// attempt running may take: a fifth, at least one when there are two or
// more. The per-company cap alone (half the workers) let two companies
// whose receivers hang hold every worker for an attempt's whole bound,
// and a third company's deliveries waited that long (15 s).
func spareWorkers(workers int) int {
	if workers < 2 {
		return 0
	}
	return max(workers/5, 1)
}

func newInFlight(perCompany, perEndpoint, workers int) *inFlight {
	return &inFlight{perCompany: perCompany, perEndpoint: perEndpoint, shared: max(workers-spareWorkers(workers), 1),
		company: map[string]int{}, endpoint: map[string]int{}}
}

// acquire takes a slot of the company and of its webhook, or reports
// false when either is at its cap, or when the company already has an
// attempt running and only the spare workers are left; release gives a
// taken slot back. A company's first attempt is never held back by the
// others: it may take a spare worker.
func (f *inFlight) acquire(empresaID, webhookID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.company[empresaID] >= f.perCompany || f.endpoint[webhookID] >= f.perEndpoint {
		return false
	}
	if f.company[empresaID] > 0 && f.total >= f.shared {
		return false
	}
	f.total++
	f.company[empresaID]++
	f.endpoint[webhookID]++
	return true
}

func (f *inFlight) release(empresaID, webhookID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total--
	if f.company[empresaID]--; f.company[empresaID] <= 0 {
		delete(f.company, empresaID)
	}
	if f.endpoint[webhookID]--; f.endpoint[webhookID] <= 0 {
		delete(f.endpoint, webhookID)
	}
}

// maxSnooze bounds how long an attempt over a cap waits at a time.
const maxSnooze = 5 * time.Minute

// snoozeFor is how long an attempt over a cap waits before it asks
// again, after it has waited snoozes times already: one attempt's bound
// (the longest a slot can stay taken) more each time, up to three bounds,
// plus up to as much again of jitter, at most maxSnooze. Waiting longer
// the first times, as Sidekiq's concurrency limiter does, keeps a long line
// behind a receiver that hangs from asking ever more often; stopping the
// growth at three bounds (45 s, 90 s with jitter, in production) keeps a
// burst to a healthy receiver (hundreds of events after a restart) from
// leaving some of them waiting many minutes.
func (d *Deliverer) snoozeFor(snoozes int) time.Duration {
	base := time.Duration(min(snoozes+1, 3)) * d.cfg.Timeout
	return min(base+time.Duration(d.cfg.Rand()*float64(base)), maxSnooze)
}

// allowPing takes one of the webhook's pings, or answers a RATE_LIMITED
// fault.Error saying when the next one is allowed.
func (d *Deliverer) allowPing(webhookID string) error {
	ok, wait := d.pings.Allow(webhookID, d.now())
	if ok {
		return nil
	}
	return fault.Throttled(fmt.Sprintf("a webhook accepts at most %d pings a minute", PingsPerMinute), wait)
}
