//go:build openssl && cgo

package osslrsa

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

// opensslKey has openssl generate an RSA key and returns it parsed, with
// the path of its PEM file.
func opensslKey(t testing.TB, dir string, bits, e string) (*rsa.PrivateKey, string) {
	t.Helper()
	name := filepath.Join(dir, "k"+bits+"-"+e+".pem")
	oracle.Run(t, "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:"+bits, "-pkeyopt", "rsa_keygen_pubexp:"+e, "-out", name)
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("openssl wrote no PEM block in %s", name)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey), name
}

// TestSignsAsTheOpenSSLCommand: for the certificate's size and the CAF's
// (512 bits, e=3), SHA-1 and SHA-256, the signature is the one the openssl
// command writes with the same key (PKCS#1 v1.5 is deterministic), and for
// 2048 bits the one crypto/rsa computes.
func TestSignsAsTheOpenSSLCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	msg := []byte("<DD><RE>76000000-0</RE><RSR>ÑANDÚ &amp; CÍA</RSR></DD>")
	msgFile := filepath.Join(dir, "msg.bin")
	if err := os.WriteFile(msgFile, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ bits, e string }{{"2048", "65537"}, {"512", "3"}} {
		priv, keyFile := opensslKey(t, dir, tc.bits, tc.e)
		k, err := New(priv)
		if err != nil {
			t.Fatalf("%s bits: %v", tc.bits, err)
		}
		if !priv.PublicKey.Equal(k.Public()) {
			t.Errorf("%s bits: Public is not the key's public half", tc.bits)
		}
		s1, s256 := sha1.Sum(msg), sha256.Sum256(msg)
		for _, h := range []struct {
			name   string
			hash   crypto.Hash
			digest []byte
		}{{"sha1", crypto.SHA1, s1[:]}, {"sha256", crypto.SHA256, s256[:]}} {
			sigFile := filepath.Join(dir, "sig-"+tc.bits+h.name)
			oracle.Run(t, "openssl", "dgst", "-"+h.name, "-sign", keyFile, "-out", sigFile, msgFile)
			want, err := os.ReadFile(sigFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != k.Size() {
				t.Fatalf("%s bits %s: openssl wrote %d bytes, Size says %d", tc.bits, h.name, len(want), k.Size())
			}
			got, err := k.Sign(nil, h.digest, h.hash)
			if err != nil {
				t.Fatalf("%s bits %s: %v", tc.bits, h.name, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s bits %s: the signature differs from the openssl command's", tc.bits, h.name)
			}
			if tc.bits == "2048" {
				goSig, err := rsa.SignPKCS1v15(nil, priv, h.hash, h.digest)
				if err != nil || !bytes.Equal(goSig, got) {
					t.Errorf("%s bits %s: crypto/rsa gives another signature (%v)", tc.bits, h.name, err)
				}
			}
		}
	}
}

// TestConcurrentSigning signs with one key from many goroutines (run under
// -race), closing a second key while others sign with it: every signature
// is the expected one or, after Close, ErrClosed; nothing crashes.
func TestConcurrentSigning(t *testing.T) {
	t.Parallel()
	priv, _ := opensslKey(t, t.TempDir(), "1024", "65537")
	digest := sha1.Sum([]byte("concurrent"))
	want, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA1, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	shared, err := New(priv)
	if err != nil {
		t.Fatal(err)
	}
	closing, err := New(priv)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				k := shared
				if g%2 == 1 {
					k = closing
				}
				sig, err := k.Sign(nil, digest[:], crypto.SHA1)
				switch {
				case k == closing && errors.Is(err, ErrClosed):
				case err != nil:
					errs <- err
				case !bytes.Equal(sig, want):
					errs <- errors.New("a concurrent signature differs")
				}
				if g == 1 && i == 5 {
					closing.Close()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := closing.Sign(nil, digest[:], crypto.SHA1); !errors.Is(err, ErrClosed) {
		t.Errorf("Sign after Close: %v, want ErrClosed", err)
	}
	if err := closing.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestRefusals: keys and requests the binding cannot serve fail with an
// error that says why, never a panic.
func TestRefusals(t *testing.T) {
	t.Parallel()
	priv, _ := opensslKey(t, t.TempDir(), "512", "3")
	noPrimes := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: priv.D}
	for name, k := range map[string]*rsa.PrivateKey{"nil": nil, "no modulus": {D: priv.D}, "no primes": noPrimes} {
		if _, err := New(k); err == nil || !strings.HasPrefix(err.Error(), "osslrsa: ") {
			t.Errorf("New(%s): %v", name, err)
		}
	}
	k, err := New(priv)
	if err != nil {
		t.Fatal(err)
	}
	d1 := sha1.Sum([]byte("x"))
	for name, c := range map[string]struct {
		digest []byte
		opts   crypto.SignerOpts
		want   string
	}{
		"short digest":            {d1[:10], crypto.SHA1, "digest is 10 bytes"},
		"sha-1 digest as sha-256": {d1[:], crypto.SHA256, "digest is 20 bytes"},
		"md5":                     {d1[:16], crypto.MD5, "not supported"},
		"pss":                     {d1[:], &rsa.PSSOptions{Hash: crypto.SHA1}, "PSS"},
	} {
		if _, err := k.Sign(nil, c.digest, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
	}
	// A SHA-256 DigestInfo (51 bytes) with padding does not fit a 384-bit
	// modulus: OpenSSL's refusal comes back as an error.
	ks, err := New(key384(t))
	if err != nil {
		t.Fatalf("a 384-bit key: %v", err)
	}
	d256 := sha256.Sum256([]byte("x"))
	if _, err := ks.Sign(nil, d256[:], crypto.SHA256); err == nil || !strings.Contains(err.Error(), "OpenSSL could not sign") {
		t.Errorf("SHA-256 with a 384-bit key: %v", err)
	}
}

// key384 builds a 384-bit key with e=3 (the openssl command makes none
// under 512 bits).
func key384(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	three, one := big.NewInt(3), big.NewInt(1)
	prime := func() *big.Int {
		for {
			p, err := rand.Prime(rand.Reader, 192)
			if err != nil {
				t.Fatal(err)
			}
			if new(big.Int).GCD(nil, nil, new(big.Int).Sub(p, one), three).Cmp(one) == 0 {
				return p
			}
		}
	}
	for {
		p, q := prime(), prime()
		n := new(big.Int).Mul(p, q)
		if p.Cmp(q) == 0 || n.BitLen() != 384 {
			continue
		}
		phi := new(big.Int).Mul(new(big.Int).Sub(p, one), new(big.Int).Sub(q, one))
		k := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: 3}, D: new(big.Int).ModInverse(three, phi), Primes: []*big.Int{p, q}}
		k.Precompute()
		return k
	}
}

// TestForKeepsOneKeyPerGoKey: For loads a key once, gives the same Key for
// the same *rsa.PrivateKey, loads a changed key anew, and forgets a key
// once the Go key is garbage collected.
func TestForKeepsOneKeyPerGoKey(t *testing.T) {
	priv, _ := opensslKey(t, t.TempDir(), "512", "3")
	a, err := For(priv)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := For(priv); b != a {
		t.Error("For loaded the same key twice")
	}
	other, _ := opensslKey(t, t.TempDir(), "512", "3")
	changed := *priv
	if c, _ := For(&changed); c == a {
		t.Error("a copy of the key at another address shares the first Key")
	}
	changed2 := &rsa.PrivateKey{PublicKey: other.PublicKey, D: other.D, Primes: other.Primes}
	if _, err := For(changed2); err != nil {
		t.Fatal(err)
	}
	before := cached()
	changed2.PublicKey, changed2.D, changed2.Primes, changed2.Precomputed = priv.PublicKey, priv.D, priv.Primes, priv.Precomputed
	c, err := For(changed2)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.PublicKey.Equal(c.Public()) {
		t.Error("For gave the Key loaded before the Go key changed")
	}
	runtime.KeepAlive(changed2)
	if cached() != before {
		t.Errorf("For kept %d keys after reloading a changed one, %d before", cached(), before)
	}
	// Dropping every Go key lets the cache empty itself.
	priv, changed2 = nil, nil
	_ = priv
	deadline := time.Now().Add(10 * time.Second)
	for cached() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := cached(); n > 0 {
		t.Errorf("For still keeps %d keys after their Go keys were collected", n)
	}
}
