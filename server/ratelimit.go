package server

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"golang.org/x/time/rate"
)

// RateLimit configures the per-credential token bucket. The zero value
// means the defaults (20 requests per second, burst 40); a negative
// PerSecond disables limiting.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// limiterCap bounds the number of buckets kept; idle ones are dropped first.
const limiterCap = 10000

// limiters holds one token bucket per key (a credential, or a client
// address for requests that fail authentication).
type limiters struct {
	every rate.Limit
	burst int
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiters(cfg RateLimit, now func() time.Time) *limiters {
	if cfg.PerSecond < 0 {
		return nil
	}
	if cfg.PerSecond == 0 {
		cfg.PerSecond = 20
	}
	if cfg.Burst <= 0 {
		cfg.Burst = int(math.Max(1, math.Ceil(2*cfg.PerSecond)))
	}
	return &limiters{every: rate.Limit(cfg.PerSecond), burst: cfg.Burst, now: now, buckets: map[string]*bucket{}}
}

// allow takes one token for key; when none is left it returns the wait
// until one will be.
func (l *limiters) allow(key string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= limiterCap {
			l.evict(now)
		}
		b = &bucket{lim: rate.NewLimiter(l.every, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	delay := res.DelayFrom(now)
	if delay > 0 {
		res.CancelAt(now)
	}
	l.mu.Unlock()
	return delay == 0, delay
}

// evict drops buckets idle long enough to have refilled (they hold no
// state worth keeping), and if none is, the least recently seen one.
func (l *limiters) evict(now time.Time) {
	full := time.Duration(float64(l.burst)/float64(l.every)*float64(time.Second)) + time.Second
	var oldestKey string
	var oldest time.Time
	for k, b := range l.buckets {
		if now.Sub(b.seen) > full {
			delete(l.buckets, k)
			continue
		}
		if oldestKey == "" || b.seen.Before(oldest) {
			oldestKey, oldest = k, b.seen
		}
	}
	if len(l.buckets) >= limiterCap && oldestKey != "" {
		delete(l.buckets, oldestKey)
	}
}

// rateLimited is the 429 answer with Retry-After in whole seconds (at
// least 1).
func rateLimited(wait time.Duration) *httpError {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	he := newError(http.StatusTooManyRequests, fault.RateLimited,
		"rate limit exceeded; retry after "+strconv.Itoa(secs)+" s")
	he.header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return he
}
