// Package clocktest provides a clock that tests set and move by hand, for
// the code that takes its time from an injected func() time.Time.
package clocktest

import (
	"sync"
	"testing"
	"time"
)

// Clock is a settable clock, safe for concurrent use. Pass its Now method
// where the code under test wants a clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock that reads t until it is moved.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Eventually polls cond every 20 ms until it holds, and fails t when it
// still does not after within. The bound is a liveness limit for a loaded
// machine (the race detector, other packages' tests), not a timing claim.
func Eventually(t testing.TB, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
