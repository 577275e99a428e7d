// Package ratelimit keeps one token bucket per key (a credential, a
// client address, a webhook), in memory, with a bound on how many buckets
// it holds: the one rate limiter of the server and of the billing
// service. Limits kept here are per process.
package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// MaxKeys bounds the buckets a Buckets keeps; idle ones are dropped first.
const MaxKeys = 10000

// Buckets holds a token bucket per key, each refilled at the same rate up
// to the same burst. Build it with New; it is safe for concurrent use.
type Buckets struct {
	every rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// New returns buckets that refill perSecond tokens a second (> 0) up to
// burst (≥ 1).
func New(perSecond float64, burst int) *Buckets {
	return &Buckets{every: rate.Limit(perSecond), burst: max(burst, 1), buckets: map[string]*bucket{}}
}

// Allow takes one token from key's bucket at now; when none is left it
// takes nothing and returns the wait until one will be.
func (l *Buckets) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= MaxKeys {
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
	return delay == 0, delay
}

// evict drops buckets idle long enough to have refilled (they hold no
// state worth keeping), and if none is, the least recently seen one.
func (l *Buckets) evict(now time.Time) {
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
	if len(l.buckets) >= MaxKeys && oldestKey != "" {
		delete(l.buckets, oldestKey)
	}
}
