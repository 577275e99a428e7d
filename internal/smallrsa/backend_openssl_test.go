//go:build openssl

package smallrsa

import (
	"crypto/rsa"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/osslrsa"
)

// TestBackendIsOpenSSL: the build with the tag signs keys in memory through
// OpenSSL, one Key per Go key, and falls back to Go for a key OpenSSL is
// not given (no primes), which still signs correctly.
func TestBackendIsOpenSSL(t *testing.T) {
	t.Parallel()
	priv := testKey(t, 512, 3)
	k, ok := Signer(priv).(*osslrsa.Key)
	if !ok {
		t.Fatalf("Signer gave %T, want *osslrsa.Key", Signer(priv))
	}
	if Signer(priv) != k {
		t.Error("Signer loaded the key twice")
	}
	if b := Backend(); !strings.HasPrefix(b, "OpenSSL 3.") {
		t.Errorf("Backend() = %q in the openssl build", b)
	}
	noPrimes := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: priv.D}
	if s := Signer(noPrimes); s != noPrimes {
		t.Errorf("a key without primes signs through %T, want the key itself", s)
	}
	msg := []byte("fallback")
	sig, err := SignSHA1(noPrimes, msg)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySHA1(&priv.PublicKey, msg, sig); err != nil {
		t.Fatal(err)
	}
}
