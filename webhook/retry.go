package webhook

import (
	"net/http"
	"time"
)

// RetryPolicy decides when a failed delivery is tried again and when an
// endpoint that keeps failing is disabled. Its methods are pure functions
// of their arguments (the caller brings the clock and the random number),
// so a schedule can be checked exactly.
type RetryPolicy struct {
	// Schedule[i] is the wait before attempt i+1, counted from the end of
	// attempt i (Schedule[0], the wait before the first attempt, is
	// normally 0). Its length is the number of attempts.
	Schedule []time.Duration
	// Jitter spreads each wait uniformly over ±Jitter of it (0.2 = ±20 %),
	// so endpoints failing together do not retry together.
	Jitter float64
	// MinAfterThrottle is the least wait after a timeout or a 429.
	MinAfterThrottle time.Duration
	// DisableAfter is how long an endpoint may fail without a single
	// success before it is disabled.
	DisableAfter time.Duration
}

// DefaultRetryPolicy is dtekit's documented policy: eight attempts, the
// first immediately, then after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
// and 10 h (±20 % jitter; about 27.6 h from first to last attempt); at
// least 60 s after a timeout or a 429; a Retry-After on 429 or 5xx
// honoured up to twice the scheduled wait; endpoints failing for 5 days
// disabled.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Schedule: []time.Duration{
			0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute,
			2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
		},
		Jitter:           0.2,
		MinAfterThrottle: time.Minute,
		DisableAfter:     5 * 24 * time.Hour,
	}
}

// Attempts is the number of attempts the schedule allows.
func (p RetryPolicy) Attempts() int { return len(p.Schedule) }

// Next returns the wait before the next attempt of a delivery whose
// attempt number attempts (1 for the first) ended with r, and false when
// there is none: r succeeded, r was 410 Gone (disable the endpoint), or
// the schedule is exhausted. u is a uniform random number in [0, 1) for
// the jitter.
//
// The wait is the scheduled one with jitter, raised to MinAfterThrottle
// after a timeout or a 429, and raised to the receiver's Retry-After when
// that is longer, but never beyond twice the scheduled wait (or
// MinAfterThrottle, when larger): a receiver can slow its retries down
// within bounds, never speed them up.
func (p RetryPolicy) Next(attempts int, r Result, u float64) (time.Duration, bool) {
	if r.OK() || r.Gone() || attempts < 1 || attempts >= len(p.Schedule) {
		return 0, false
	}
	base := p.Schedule[attempts]
	if u < 0 || u >= 1 {
		u = 0.5
	}
	d := base + time.Duration(float64(base)*p.Jitter*(2*u-1))
	throttled := r.Class == ClassTimeout || r.Status == http.StatusTooManyRequests
	if throttled && d < p.MinAfterThrottle {
		d = p.MinAfterThrottle
	}
	if r.RetryAfter > d {
		d = min(r.RetryAfter, max(2*base, p.MinAfterThrottle))
	}
	return d, true
}

// ShouldDisable reports whether an endpoint failing since failingSince
// (its first failure after the last success; zero when it is not failing)
// has failed long enough at now to be disabled.
func (p RetryPolicy) ShouldDisable(failingSince, now time.Time) bool {
	return !failingSince.IsZero() && now.Sub(failingSince) >= p.DisableAfter
}
