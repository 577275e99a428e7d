//go:build openssl

package smallrsa

import (
	"crypto/rsa"
	"errors"
	"math/big"
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
	// A key whose private values are wrong (D and the CRT exponents) goes
	// to OpenSSL, which signs with them; the self-check refuses the result.
	broken := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: new(big.Int).Add(priv.D, big.NewInt(2)), Primes: priv.Primes}
	broken.Precomputed.Dp = new(big.Int).Add(priv.Precomputed.Dp, big.NewInt(2))
	broken.Precomputed.Dq = new(big.Int).Add(priv.Precomputed.Dq, big.NewInt(2))
	broken.Precomputed.Qinv = priv.Precomputed.Qinv
	if _, ok := Signer(broken).(*osslrsa.Key); !ok {
		t.Fatalf("the broken key signs through %T, not OpenSSL: the check below would test Go", Signer(broken))
	}
	if _, err := SignSHA1(broken, msg); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("wrong private values through OpenSSL: %v, want ErrInvalidKey", err)
	}
}
