package webhook

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/clocktest"
)

func TestMemoryDeduperTTL(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	d := NewMemoryDeduper(time.Hour, clk.Now)
	claim := func(id string, want bool) {
		t.Helper()
		got, err := d.Claim(ctx, id)
		if err != nil || got != want {
			t.Fatalf("Claim(%s) at %s = %v, %v; want %v", id, clk.Now().UTC().Format(time.TimeOnly), got, err, want)
		}
	}
	claim("a", true)
	claim("a", false)
	clk.Advance(59 * time.Minute)
	claim("b", true)
	claim("a", false)
	clk.Advance(time.Minute) // a is exactly one hour old: expired
	claim("a", true)
	claim("b", false)
	if err := d.Release(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	claim("b", true) // re-claimed at 60 min, expires at 120 min
	clk.Advance(59*time.Minute + 30*time.Second)
	// The first claim of b (made at 59 min) expires now; sweeping it must
	// not drop the re-claim.
	claim("b", false)
	clk.Advance(2 * time.Hour)
	claim("c", true)
	if n := d.Len(); n != 1 {
		t.Errorf("Len() = %d after expiry, want 1", n)
	}
	if _, err := d.Claim(ctx, ""); err == nil {
		t.Error("empty id claimed")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Claim(cctx, "z"); err == nil {
		t.Error("claim with a cancelled context succeeded")
	}
}

func TestMemoryDeduperDefaults(t *testing.T) {
	d := NewMemoryDeduper(0, nil)
	if d.ttl != DefaultDedupTTL || DefaultDedupTTL < 4*24*time.Hour {
		t.Errorf("default TTL %v must outlast the ~3-day retry schedule", d.ttl)
	}
}

func TestMemoryDeduperAtomic(t *testing.T) {
	ctx := context.Background()
	d := NewMemoryDeduper(time.Hour, nil)
	const ids, workers = 50, 8
	var wins [ids]atomic.Int32
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < ids; i++ {
				first, err := d.Claim(ctx, fmt.Sprint("msg_", i))
				if err != nil {
					t.Error(err)
					return
				}
				if first {
					wins[i].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for i := range wins {
		if n := wins[i].Load(); n != 1 {
			t.Errorf("id %d claimed first %d times, want exactly 1", i, n)
		}
	}
}

func TestMemoryDeduperCompacts(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(0, 0))
	d := NewMemoryDeduper(time.Second, clk.Now)
	for i := 0; i < 10000; i++ {
		if first, _ := d.Claim(ctx, fmt.Sprint(i)); !first {
			t.Fatalf("id %d not first", i)
		}
		clk.Advance(time.Second / 4)
	}
	if n := d.Len(); n > 5 {
		t.Errorf("Len() = %d, expired ids are kept", n)
	}
	d.mu.Lock()
	q := len(d.queue) - d.head
	capq := cap(d.queue)
	d.mu.Unlock()
	if q > 5 || capq > 1024 {
		t.Errorf("queue holds %d live entries with capacity %d; it does not compact", q, capq)
	}
}
