package dte_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// peakHeap runs f once and returns the highest heap seen meanwhile above
// the heap before it, with f's error, sampled every 50 µs. The collector runs whenever the
// heap grows by a tenth (GOGC=10), so that the figure is the live memory f
// needs rather than the garbage the collector let pile up.
func peakHeap(tb testing.TB, f func() error) (uint64, error) {
	tb.Helper()
	gc := debug.SetGCPercent(10)
	defer debug.SetGCPercent(gc)
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	runtime.GC()
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(50 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	err := f()
	close(done)
	wg.Wait()
	if peak < base {
		return 0, err
	}
	return peak - base, err
}
