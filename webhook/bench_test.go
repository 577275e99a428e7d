package webhook_test

import (
	"crypto/rand"
	"slices"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/dtekit/dtekit/webhook"
)

// BenchmarkVerify verifies the same 1 KiB delivery with this package and
// with the official Standard Webhooks Go library, in one run, so their
// ns/op and allocs/op can be compared directly. The header is built as
// net/http builds it (canonical keys) and carries one v1 entry.
func BenchmarkVerify(b *testing.B) {
	secret := webhook.GenerateSecret()
	body := make([]byte, 1024)
	rand.Read(body)
	id := webhook.NewMessageID()
	header, err := webhook.Sign([]webhook.Secret{secret}, id, time.Now(), body)
	if err != nil {
		b.Fatal(err)
	}
	// The request's header map also holds the usual transport headers.
	header.Set("Content-Type", "application/json")
	header.Set("Content-Length", "1024")
	header.Set("User-Agent", "dtekit-webhooks/1")
	header.Set("Accept-Encoding", "gzip")

	b.Run("dtekit", func(b *testing.B) {
		v, err := webhook.NewVerifier([]webhook.Secret{secret})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := v.Verify(header, body); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Both libraries alternately in one loop, so a busy machine slows them
	// alike; the medians of the per-call times and their ratio (ours /
	// official) resist the spikes that a shared machine adds to means.
	b.Run("interleaved", func(b *testing.B) {
		v, err := webhook.NewVerifier([]webhook.Secret{secret})
		if err != nil {
			b.Fatal(err)
		}
		wh, err := standardwebhooks.NewWebhook(secret.Encode())
		if err != nil {
			b.Fatal(err)
		}
		var ours, theirs []time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := v.Verify(header, body); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := wh.Verify(body, header); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			ours = append(ours, t1.Sub(t0))
			theirs = append(theirs, t2.Sub(t1))
		}
		mo, mt := median(ours), median(theirs)
		b.ReportMetric(float64(mo.Nanoseconds()), "dtekit-median-ns")
		b.ReportMetric(float64(mt.Nanoseconds()), "official-median-ns")
		b.ReportMetric(float64(mo)/float64(mt), "ratio")
	})
	b.Run("standardwebhooks", func(b *testing.B) {
		wh, err := standardwebhooks.NewWebhook(secret.Encode())
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := wh.Verify(body, header); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSign measures producing the three headers for a 1 KiB body.
func BenchmarkSign(b *testing.B) {
	secret := webhook.GenerateSecret()
	body := make([]byte, 1024)
	ts := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := webhook.Sign([]webhook.Secret{secret}, "msg_bench", ts, body); err != nil {
			b.Fatal(err)
		}
	}
}

// median returns the middle value of ds (which it sorts).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
