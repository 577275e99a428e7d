package server

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/internal/ratelimit"
)

// RateLimit configures the per-credential token bucket. The zero value
// means the defaults (20 requests per second, burst 40); a negative
// PerSecond disables limiting.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// limiters holds one token bucket per key (a credential, or a client
// address for requests that fail authentication).
type limiters struct {
	b   *ratelimit.Buckets
	now func() time.Time
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
	return &limiters{b: ratelimit.New(cfg.PerSecond, cfg.Burst), now: now}
}

// allow takes one token for key; when none is left it returns the wait
// until one will be.
func (l *limiters) allow(key string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	return l.b.Allow(key, l.now())
}

// rateLimited is the 429 answer with Retry-After in whole seconds (at
// least 1); what says which limit was reached ("" for the per-credential
// one).
func rateLimited(what string, wait time.Duration) *httpError {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	if what == "" {
		what = "rate limit exceeded"
	}
	he := newError(http.StatusTooManyRequests, fault.RateLimited, what+"; retry after "+strconv.Itoa(secs)+" s")
	he.header = http.Header{"Retry-After": {strconv.Itoa(secs)}}
	return he
}

// uploadLimit is the per-company limit of received files: up, or a tenth
// of the per-credential rate (whose default is 20) with a burst of 10.
func uploadLimit(cred, up RateLimit) RateLimit {
	if up.PerSecond != 0 {
		return up
	}
	switch {
	case cred.PerSecond < 0:
		return RateLimit{PerSecond: -1}
	case cred.PerSecond == 0:
		cred.PerSecond = 20
	}
	return RateLimit{PerSecond: cred.PerSecond / 10, Burst: max(up.Burst, 10)}
}

// allowUpload takes one token of the company's upload bucket, or answers
// 429 with Retry-After.
func (s *Server) allowUpload(empresaID string) error {
	if ok, wait := s.uploads.allow("upload:" + empresaID); !ok {
		return rateLimited("the company's limit of received files per second is reached", wait)
	}
	return nil
}
