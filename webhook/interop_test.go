package webhook_test

import (
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/dtekit/dtekit/webhook"
)

// interopCase is one random message for the interop tests.
type interopCase struct {
	secret webhook.Secret
	id     string
	body   []byte
}

// interopCases makes messages with keys of 24 to 64 bytes and bodies of 0
// to 4 KiB, reproducibly.
func interopCases(t *testing.T, n int) []interopCase {
	t.Helper()
	rng := mrand.New(mrand.NewPCG(1, 2))
	var cs []interopCase
	for i := 0; i < n; i++ {
		key := make([]byte, webhook.MinSecretBytes+rng.IntN(webhook.MaxSecretBytes-webhook.MinSecretBytes+1))
		rand.Read(key)
		s, err := webhook.NewSecret(key)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, rng.IntN(4097))
		rand.Read(body)
		cs = append(cs, interopCase{secret: s, id: fmt.Sprintf("msg_interop_%d", i), body: body})
	}
	return cs
}

func TestInteropOfficialVerifiesOurs(t *testing.T) {
	for _, c := range interopCases(t, 50) {
		// Both printed forms of the secret are accepted by the official library.
		official, err := standardwebhooks.NewWebhook(c.secret.Encode())
		if err != nil {
			t.Fatal(err)
		}
		h, err := webhook.Sign([]webhook.Secret{c.secret}, c.id, time.Now(), c.body)
		if err != nil {
			t.Fatal(err)
		}
		if err := official.Verify(c.body, h); err != nil {
			t.Fatalf("official library rejects our signature for %s (key %d bytes, body %d bytes): %v", c.id, len(c.secret.Encode()), len(c.body), err)
		}
		// Rotation: ours signs with an unrelated key first, then the real one.
		h, err = webhook.Sign([]webhook.Secret{webhook.GenerateSecret(), c.secret}, c.id, time.Now(), c.body)
		if err != nil {
			t.Fatal(err)
		}
		if err := official.Verify(c.body, h); err != nil {
			t.Fatalf("official library rejects our two-entry signature: %v", err)
		}
		// And it rejects what we signed for another body.
		h, _ = webhook.Sign([]webhook.Secret{c.secret}, c.id, time.Now(), append(c.body, 'x'))
		if err := official.Verify(c.body, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Fatalf("official library on a mismatched body: %v, want no match", err)
		}
	}
}

func TestInteropOursVerifiesOfficial(t *testing.T) {
	for _, c := range interopCases(t, 50) {
		official, err := standardwebhooks.NewWebhook(c.secret.Encode())
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		sig, err := official.Sign(c.id, now, c.body)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set(standardwebhooks.HeaderWebhookID, c.id)
		h.Set(standardwebhooks.HeaderWebhookTimestamp, fmt.Sprint(now.Unix()))
		h.Set(standardwebhooks.HeaderWebhookSignature, sig)
		v, err := webhook.NewVerifier([]webhook.Secret{webhook.GenerateSecret(), c.secret})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(h, c.body); err != nil {
			t.Fatalf("we reject the official signature %q for %s: %v", sig, c.id, err)
		}
		if err := v.Verify(h, append(c.body, 'x')); !errors.Is(err, webhook.ErrNoMatchingSignature) {
			t.Fatalf("we accept the official signature for another body: %v", err)
		}
		// Bare base64 form, as the official examples write it.
		bare, err := webhook.ParseSecret(c.secret.Encode()[len(webhook.SecretPrefix):])
		if err != nil || !bare.Equal(c.secret) {
			t.Fatalf("bare form: %v", err)
		}
	}
}
