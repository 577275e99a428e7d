package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

// TestSignMatchesOpenSSL computes the HMAC of "<id>.<ts>.<body>" with
// openssl for keys of 24, 32 and 64 bytes and compares it with the tag Sign
// writes.
func TestSignMatchesOpenSSL(t *testing.T) {
	oracle.Tool(t, "openssl")
	dir := t.TempDir()
	for _, n := range []int{24, 32, 64} {
		key := make([]byte, n)
		rand.Read(key)
		s, err := NewSecret(key)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, 1000+n)
		rand.Read(body)
		id, ts := NewMessageID(), int64(1700000000+n)
		h, err := Sign([]Secret{s}, id, time.Unix(ts, 0), body)
		if err != nil {
			t.Fatal(err)
		}
		in := filepath.Join(dir, "in")
		content := append([]byte(id+"."+h.Get(HeaderTimestamp)+"."), body...)
		if err := os.WriteFile(in, content, 0o600); err != nil {
			t.Fatal(err)
		}
		out := oracle.Run(t, "openssl", "mac", "-digest", "SHA256", "-macopt", "hexkey:"+hex.EncodeToString(key), "-in", in, "HMAC")
		want, err := hex.DecodeString(strings.TrimSpace(string(out)))
		if err != nil {
			t.Fatalf("openssl output %q: %v", out, err)
		}
		if got := h.Get(HeaderSignature); got != "v1,"+base64.StdEncoding.EncodeToString(want) {
			t.Errorf("%d-byte key: signature %s, openssl says %x", n, got, want)
		}
	}
}
