package webhook_test

import (
	"crypto/rand"
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
