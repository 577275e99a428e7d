package ratelimit

import (
	"strconv"
	"testing"
	"time"
)

// TestBuckets: a key takes its burst at once, then one token per
// 1/rate; the wait it is told is exactly that; keys do not share; the
// buckets kept stay within MaxKeys, idle ones going first.
func TestBuckets(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	b := New(5.0/60, 5) // 5 a minute: one every 12 s
	for i := range 5 {
		if ok, _ := b.Allow("a", t0); !ok {
			t.Fatalf("take %d of the burst refused", i+1)
		}
	}
	if ok, wait := b.Allow("a", t0); ok || wait != 12*time.Second {
		t.Errorf("sixth take: %v, wait %s; want refused, 12 s", ok, wait)
	}
	if ok, wait := b.Allow("a", t0.Add(5*time.Second)); ok || wait != 7*time.Second {
		t.Errorf("5 s later: %v, wait %s; want refused, 7 s", ok, wait)
	}
	if ok, _ := b.Allow("b", t0); !ok {
		t.Error("another key was refused")
	}
	if ok, _ := b.Allow("a", t0.Add(12*time.Second)); !ok {
		t.Error("12 s later the refilled token was refused")
	}
	if ok, _ := b.Allow("a", t0.Add(12*time.Second)); ok {
		t.Error("12 s later a second token was given")
	}
	// Many keys: the map stays bounded; a key idle long enough to be full
	// again is dropped first, and comes back full.
	later := t0.Add(time.Hour)
	for i := range MaxKeys + 10 {
		b.Allow("k"+strconv.Itoa(i), later)
	}
	if n := len(b.buckets); n > MaxKeys {
		t.Errorf("%d buckets kept, more than %d", n, MaxKeys)
	}
	if _, kept := b.buckets["a"]; kept {
		t.Error("the idle bucket of a was kept while the map was full")
	}
}
