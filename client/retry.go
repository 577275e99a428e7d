package client

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// RetryPolicy bounds the retries of one call. The zero value is
// DefaultRetryPolicy; MaxAttempts 1 turns retries off.
type RetryPolicy struct {
	// MaxAttempts is how many times a call is sent at most, the first
	// included; 0 means 4.
	MaxAttempts int
	// MaxElapsed bounds the time from the first attempt to the start of
	// the last; 0 means 30 seconds. A Retry-After beyond it ends the
	// retries.
	MaxElapsed time.Duration
	// BaseDelay is the first backoff's ceiling, doubled at each retry up
	// to MaxDelay; 0 means 250 ms and 8 s.
	BaseDelay, MaxDelay time.Duration
}

// DefaultRetryPolicy is the policy of a Client built without
// WithRetryPolicy.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, MaxElapsed: 30 * time.Second,
	BaseDelay: 250 * time.Millisecond, MaxDelay: 8 * time.Second}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts > 0 {
		d.MaxAttempts = p.MaxAttempts
	}
	if p.MaxElapsed > 0 {
		d.MaxElapsed = p.MaxElapsed
	}
	if p.BaseDelay > 0 {
		d.BaseDelay = p.BaseDelay
	}
	if p.MaxDelay > 0 {
		d.MaxDelay = p.MaxDelay
	}
	return d
}

// backoff returns the wait before retry n (1 for the first retry): a
// uniform random duration up to min(MaxDelay, BaseDelay·2^(n-1)).
func (p RetryPolicy) backoff(n int) time.Duration {
	ceil := p.BaseDelay
	for i := 1; i < n && ceil < p.MaxDelay; i++ {
		ceil *= 2
	}
	ceil = min(ceil, p.MaxDelay)
	return time.Duration(rand.Int64N(int64(ceil) + 1))
}

// retryable reports whether an answer of this status may be retried: the
// server had a transient problem or asked the caller to wait.
func retryable(status int, code string) bool {
	switch {
	case status == http.StatusTooManyRequests:
		return true
	case status == http.StatusConflict && code == "IDEMPOTENCY_IN_PROGRESS":
		return true
	case status >= 500 && status != http.StatusNotImplemented:
		return true
	}
	return false
}

// retryAfter reads a Retry-After header in seconds or as an HTTP date
// (webhook reads it for its sender on its own: that package stays on the
// standard library alone, so the two cannot share an internal one); ok
// is false when there is none or it cannot be read.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
