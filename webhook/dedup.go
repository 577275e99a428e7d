package webhook

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultDedupTTL is how long [MemoryDeduper] remembers an id unless told
// otherwise: a week, longer than a sender's retry horizon (about three days
// for the Standard Webhooks schedule), so a late retry is still recognized.
const DefaultDedupTTL = 7 * 24 * time.Hour

// Deduper remembers which webhook-ids a receiver has processed, so a
// redelivered event is acknowledged without being processed twice. Use it
// only after the delivery verified: an unverified id proves nothing.
//
// Implementations must be safe for concurrent use. A database-backed one
// typically maps Claim to an INSERT that fails on a unique key, and Release
// to a DELETE.
type Deduper interface {
	// Claim records id if it is absent and reports whether this call
	// recorded it: true means "first time, process it", false means "seen
	// before, skip it". Check and insert must be one atomic step, so two
	// concurrent deliveries of one id cannot both get true.
	Claim(ctx context.Context, id string) (first bool, err error)
	// Release forgets id, so a later redelivery is processed again. A
	// receiver calls it when processing a claimed delivery failed.
	Release(ctx context.Context, id string) error
}

// MemoryDeduper is an in-memory [Deduper] whose entries expire after a TTL.
// It suits a single receiver process; entries are lost on restart. Create it
// with [NewMemoryDeduper].
type MemoryDeduper struct {
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	seen  map[string]time.Time // id -> expiry
	queue []dedupEntry         // claims in order, for expiry
	head  int                  // first live element of queue
}

// dedupEntry is one claim in expiry order.
type dedupEntry struct {
	id     string
	expiry time.Time
}

// NewMemoryDeduper returns a MemoryDeduper remembering ids for ttl (zero or
// negative means [DefaultDedupTTL]) and reading time from now (nil means
// time.Now).
func NewMemoryDeduper(ttl time.Duration, now func() time.Time) *MemoryDeduper {
	if ttl <= 0 {
		ttl = DefaultDedupTTL
	}
	if now == nil {
		now = time.Now
	}
	return &MemoryDeduper{ttl: ttl, now: now, seen: make(map[string]time.Time)}
}

// Claim implements [Deduper]. An empty id is an error.
func (d *MemoryDeduper) Claim(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, errors.New("webhook: dedup claim: empty id")
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.expire(now)
	if exp, ok := d.seen[id]; ok && now.Before(exp) {
		return false, nil
	}
	exp := now.Add(d.ttl)
	d.seen[id] = exp
	d.queue = append(d.queue, dedupEntry{id: id, expiry: exp})
	return true, nil
}

// Release implements [Deduper].
func (d *MemoryDeduper) Release(ctx context.Context, id string) error {
	d.mu.Lock()
	delete(d.seen, id)
	d.mu.Unlock()
	return nil
}

// Len returns the number of ids currently remembered (expired ones that
// have not been swept yet included).
func (d *MemoryDeduper) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}

// expire drops the entries whose time has passed. Because the TTL is fixed,
// the queue is in expiry order (unless the clock steps back, which only
// delays a sweep). Entries released or re-claimed since are skipped by
// comparing expiries. Caller holds d.mu.
func (d *MemoryDeduper) expire(now time.Time) {
	for d.head < len(d.queue) {
		e := d.queue[d.head]
		if now.Before(e.expiry) {
			break
		}
		if exp, ok := d.seen[e.id]; ok && exp.Equal(e.expiry) {
			delete(d.seen, e.id)
		}
		d.queue[d.head] = dedupEntry{}
		d.head++
	}
	// Compact once the dead prefix dominates, keeping appends amortized O(1).
	if d.head > 64 && d.head*2 >= len(d.queue) {
		n := copy(d.queue, d.queue[d.head:])
		clear(d.queue[n:])
		d.queue = d.queue[:n]
		d.head = 0
	}
}
