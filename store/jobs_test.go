package store

import (
	"testing"
	"time"
)

func TestPause(t *testing.T) {
	s := []time.Duration{time.Second, 5 * time.Second, time.Minute}
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{-1, time.Second}, {0, time.Second}, {1, 5 * time.Second}, {2, time.Minute}, {3, time.Minute}, {100, time.Minute}} {
		if got := Pause(s, c.n); got != c.want {
			t.Errorf("Pause(%v, %d) = %v, want %v", s, c.n, got, c.want)
		}
	}
	if got := Pause(nil, 3); got != 0 {
		t.Errorf("Pause(nil, 3) = %v, want 0", got)
	}
	w := Worker{Retry: s}
	if d, ok := w.RetryDelay(1); !ok || d != time.Second {
		t.Errorf("RetryDelay(1) = %v, %v; want 1s, true (the first failed run waits the first pause)", d, ok)
	}
	if _, ok := (&Worker{}).RetryDelay(1); ok {
		t.Error("RetryDelay of an empty schedule reports a delay")
	}
}
