package smallrsa

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// vector holds the SII certification manual's TED example, read from
// ../shared/sii/vectors/ted-instructivo.md: the signed DD, the CAF's private
// key and the expected FRMT.
type vector struct {
	dd, keyPEM, frmt string
}

func readVector(t testing.TB) vector {
	t.Helper()
	b, err := os.ReadFile(oracle.SharedFile(t, "sii", "vectors", "ted-instructivo.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```\n(.*?)\n```").FindAllStringSubmatch(string(b), -1)
	if len(blocks) < 3 {
		t.Fatalf("ted-instructivo.md: expected 3 code blocks, found %d", len(blocks))
	}
	return vector{dd: blocks[0][1], keyPEM: blocks[1][1], frmt: blocks[2][1]}
}

func TestSIIManualVector(t *testing.T) {
	v := readVector(t)
	priv, err := ParsePrivateKeyPEM([]byte(v.keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	if priv.N.BitLen() != 512 || priv.E != 3 {
		t.Fatalf("vector key: %d bits, e=%d; the manual's key is 512-bit e=3", priv.N.BitLen(), priv.E)
	}
	if len(v.dd) != 583 {
		t.Fatalf("vector DD is %d bytes, the manual says 583", len(v.dd))
	}
	sig, err := SignSHA1(priv, []byte(v.dd))
	if err != nil {
		t.Fatal(err)
	}
	if got := base64.StdEncoding.EncodeToString(sig); got != v.frmt {
		t.Fatalf("FRMT\n got %s\nwant %s", got, v.frmt)
	}
	want, _ := base64.StdEncoding.DecodeString(v.frmt)
	if err := VerifySHA1(&priv.PublicKey, []byte(v.dd), want); err != nil {
		t.Fatalf("manual's FRMT does not verify: %v", err)
	}
	// The same key without CRT values goes through the plain d path.
	plain := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: priv.D}
	sig2, err := SignSHA1(plain, []byte(v.dd))
	if err != nil || !bytes.Equal(sig2, want) {
		t.Fatalf("non-CRT signing: %v, equal=%v", err, bytes.Equal(sig2, want))
	}
}

// TestSIIKeyVerifiesManualCAF checks the FRMA of the manual's CAF with the
// SII's IDK 100 key, both taken from ../shared.
func TestSIIKeyVerifiesManualCAF(t *testing.T) {
	v := readVector(t)
	pemData, err := os.ReadFile(oracle.SharedFile(t, "sii", "keys", "sii-idk100-certificacion.pub.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ParsePublicKeyPEM(pemData)
	if err != nil {
		t.Fatal(err)
	}
	da := v.dd[strings.Index(v.dd, "<DA>") : strings.Index(v.dd, "</DA>")+len("</DA>")]
	m := regexp.MustCompile(`<FRMA algoritmo="SHA1withRSA">([^<]+)</FRMA>`).FindStringSubmatch(v.dd)
	frma, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySHA1(pub, []byte(da), frma); err != nil {
		t.Fatalf("FRMA of the manual's CAF: %v", err)
	}
	if err := VerifySHA1(pub, []byte(strings.Replace(da, "PRUEBA", "PRUEBa", 1)), frma); !errors.Is(err, ErrVerification) {
		t.Fatalf("altered DA: got %v, want ErrVerification", err)
	}
}

// TestNoGODEBUG documents that nothing in this module lowers crypto/rsa's
// minimum key size: the stdlib refuses 512-bit keys here, and this package
// still signs with them.
func TestNoGODEBUG(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "rsa1024min") {
		t.Fatalf("GODEBUG=%q: tests must run without rsa1024min", os.Getenv("GODEBUG"))
	}
	gomod, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*godebug\b`).Match(gomod) {
		t.Fatal("go.mod has a godebug line; importers would not get it")
	}
	priv := testKey(t, 512, 3)
	h := sha1.Sum([]byte("x"))
	if _, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA1, h[:]); err == nil {
		t.Fatal("crypto/rsa signed with a 512-bit key: the test environment lowered rsa1024min")
	}
	if _, err := SignDigestSHA1(priv, h[:]); err != nil {
		t.Fatalf("smallrsa refuses a 512-bit key: %v", err)
	}
}

func testKey(t testing.TB, bits, e int) *rsa.PrivateKey {
	t.Helper()
	k, err := GenerateKey(rand.Reader, bits, e)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestOpenSSLKeys signs with keys that openssl generated and compares with
// openssl's own signatures, for the math/big sizes and the crypto/rsa sizes.
func TestOpenSSLKeys(t *testing.T) {
	oracle.Tool(t, "openssl")
	dir := t.TempDir()
	msg := filepath.Join(dir, "msg.bin")
	content := []byte("<DD><RE>76000000-0</RE><RSR>ÑANDÚ &amp; CÍA</RSR></DD>")
	if err := os.WriteFile(msg, content, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bits int
		e    string
	}{{512, "3"}, {512, "65537"}, {768, "3"}, {1000, "65537"}, {1024, "3"}, {2048, "65537"}} {
		name := filepath.Join(dir, "k.pem")
		oracle.Run(t, "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:"+itoa(tc.bits), "-pkeyopt", "rsa_keygen_pubexp:"+tc.e, "-out", name)
		pkcs8, _ := os.ReadFile(name)
		pkcs1 := oracle.Run(t, "openssl", "pkey", "-in", name, "-traditional")
		pubPEM := oracle.Run(t, "openssl", "pkey", "-in", name, "-pubout")
		want := oracle.Run(t, "openssl", "dgst", "-sha1", "-sign", name, msg)
		for label, keyPEM := range map[string][]byte{"pkcs8": pkcs8, "pkcs1": pkcs1} {
			priv, err := ParsePrivateKeyPEM(keyPEM)
			if err != nil {
				t.Fatalf("%d-bit %s: %v", tc.bits, label, err)
			}
			got, err := SignSHA1(priv, content)
			if err != nil {
				t.Fatalf("%d-bit e=%s: %v", tc.bits, tc.e, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%d-bit e=%s %s: signature differs from openssl's", tc.bits, tc.e, label)
			}
		}
		pub, err := ParsePublicKeyPEM(pubPEM)
		if err != nil {
			t.Fatal(err)
		}
		if err := VerifySHA1(pub, content, want); err != nil {
			t.Fatalf("%d-bit: openssl's signature rejected: %v", tc.bits, err)
		}
		bad := append([]byte(nil), want...)
		bad[len(bad)/2] ^= 1
		if err := VerifySHA1(pub, content, bad); !errors.Is(err, ErrVerification) {
			t.Fatalf("%d-bit: altered signature: %v", tc.bits, err)
		}
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

// TestGeneratedKeysWithOpenSSL checks our generated keys with openssl: the
// key passes `openssl rsa -check`, and openssl verifies our signature with
// the public key it extracts itself.
func TestGeneratedKeysWithOpenSSL(t *testing.T) {
	oracle.Tool(t, "openssl")
	dir := t.TempDir()
	content := []byte("dtekit smallrsa cross-check")
	msg := filepath.Join(dir, "msg.bin")
	if err := os.WriteFile(msg, content, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ bits, e int }{{512, 3}, {512, 65537}, {1024, 3}} {
		priv := testKey(t, tc.bits, tc.e)
		if priv.N.BitLen() != tc.bits || priv.E != tc.e {
			t.Fatalf("GenerateKey(%d, %d) gave %d bits, e=%d", tc.bits, tc.e, priv.N.BitLen(), priv.E)
		}
		keyPEM, err := MarshalPrivateKeyPEM(priv)
		if err != nil {
			t.Fatal(err)
		}
		keyFile := filepath.Join(dir, "k.pem")
		if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		out := oracle.Run(t, "openssl", "rsa", "-check", "-noout", "-in", keyFile)
		if !bytes.Contains(out, []byte("RSA key ok")) {
			t.Fatalf("openssl rsa -check: %s", out)
		}
		pubFile := filepath.Join(dir, "pub.pem")
		oracle.Run(t, "openssl", "rsa", "-in", keyFile, "-pubout", "-out", pubFile)
		ours, err := MarshalPublicKeyPEM(&priv.PublicKey)
		if err != nil {
			t.Fatal(err)
		}
		theirs, _ := os.ReadFile(pubFile)
		if !bytes.Equal(ours, theirs) {
			t.Fatalf("public key PEM differs from openssl's:\n%s\n%s", ours, theirs)
		}
		sig, err := SignSHA1(priv, content)
		if err != nil {
			t.Fatal(err)
		}
		sigFile := filepath.Join(dir, "sig.bin")
		if err := os.WriteFile(sigFile, sig, 0o600); err != nil {
			t.Fatal(err)
		}
		out = oracle.Run(t, "openssl", "dgst", "-sha1", "-verify", pubFile, "-signature", sigFile, msg)
		if !bytes.Contains(out, []byte("Verified OK")) {
			t.Fatalf("openssl: %s", out)
		}
	}
}

// TestStrictEncoding signs malformed encodings with the raw private
// operation: a verifier that parsed the padding loosely would accept some of
// them; ours compares the whole block and must reject every one.
func TestStrictEncoding(t *testing.T) {
	priv := testKey(t, 512, 3)
	digest := sha1.Sum([]byte("message"))
	k := 64
	good := encode(digest[:], k)
	rawSign := func(em []byte) []byte {
		return privateOp(priv, new(big.Int).SetBytes(em)).FillBytes(make([]byte, k))
	}
	if err := VerifyDigestSHA1(&priv.PublicKey, digest[:], rawSign(good)); err != nil {
		t.Fatalf("well-formed block rejected: %v", err)
	}
	variants := map[string]func([]byte){
		"block type 02":   func(em []byte) { em[1] = 2 },
		"padding byte FE": func(em []byte) { em[5] = 0xfe },
		"no NULL parameters": func(em []byte) {
			copy(em[2:], bytes.Repeat([]byte{0xff}, k-2-33-1))
			em[k-34] = 0
			copy(em[k-33:], append([]byte{0x30, 0x1f, 0x30, 0x07, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x04, 0x14}, digest[:]...))
		},
		"garbage after hash": func(em []byte) {
			copy(em[2:], bytes.Repeat([]byte{0xff}, 3))
			em[5] = 0
			copy(em[6:], sha1DigestInfo)
			copy(em[6+15:], digest[:])
			em[k-1] ^= 0x55
		},
		"other digest":       func(em []byte) { em[k-1] ^= 1 },
		"missing leading 00": func(em []byte) { em[0] = 0x01; em[1] = 0xff },
		"separator not zero": func(em []byte) { em[k-36] = 0x01 },
		"short padding (7 B)": func(em []byte) {
			copy(em[2:], make([]byte, k-2))
			copy(em[2:], bytes.Repeat([]byte{0xff}, 7))
			copy(em[10:], sha1DigestInfo)
			copy(em[25:], digest[:])
		},
	}
	for name, mutate := range variants {
		em := append([]byte(nil), good...)
		mutate(em)
		if bytes.Equal(em, good) {
			t.Fatalf("%s: mutation left the block unchanged", name)
		}
		if new(big.Int).SetBytes(em).Cmp(priv.N) >= 0 {
			continue // not signable with this key
		}
		if err := VerifyDigestSHA1(&priv.PublicKey, digest[:], rawSign(em)); !errors.Is(err, ErrVerification) {
			t.Errorf("%s: got %v, want ErrVerification", name, err)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	priv := testKey(t, 512, 3)
	other := testKey(t, 512, 3)
	msg := []byte("hello")
	sig, err := SignSHA1(priv, msg)
	if err != nil {
		t.Fatal(err)
	}
	pub := &priv.PublicKey
	cases := map[string]struct {
		pub  *rsa.PublicKey
		msg  []byte
		sig  []byte
		want error
	}{
		"other message":       {pub, []byte("hellO"), sig, ErrVerification},
		"other key":           {&other.PublicKey, msg, sig, ErrVerification},
		"short signature":     {pub, msg, sig[1:], ErrVerification},
		"long signature":      {pub, msg, append([]byte{0}, sig...), ErrVerification},
		"signature >= N":      {pub, msg, bytes.Repeat([]byte{0xff}, 64), ErrVerification},
		"empty signature":     {pub, msg, nil, ErrVerification},
		"nil key":             {nil, msg, sig, ErrInvalidKey},
		"nil modulus":         {&rsa.PublicKey{E: 3}, msg, sig, ErrInvalidKey},
		"exponent 1":          {&rsa.PublicKey{N: pub.N, E: 1}, msg, sig, ErrInvalidKey},
		"even exponent":       {&rsa.PublicKey{N: pub.N, E: 4}, msg, sig, ErrInvalidKey},
		"negative modulus":    {&rsa.PublicKey{N: new(big.Int).Neg(pub.N), E: 3}, msg, sig, ErrInvalidKey},
		"even modulus":        {&rsa.PublicKey{N: new(big.Int).Add(pub.N, big.NewInt(1)), E: 3}, msg, sig, ErrInvalidKey},
		"too small (256 bit)": {&rsa.PublicKey{N: new(big.Int).Rsh(pub.N, 256), E: 3}, msg, sig[:32], ErrInvalidKey},
		"too large":           {&rsa.PublicKey{N: new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), MaxBits), big.NewInt(1)), E: 3}, msg, sig, ErrInvalidKey},
	}
	for name, c := range cases {
		if err := VerifySHA1(c.pub, c.msg, c.sig); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
	if err := VerifyDigestSHA1(pub, msg, sig); err == nil {
		t.Error("a 5-byte digest was accepted")
	}
}

func TestSignErrors(t *testing.T) {
	priv := testKey(t, 512, 3)
	h := sha1.Sum(nil)
	broken := &rsa.PrivateKey{PublicKey: priv.PublicKey, D: new(big.Int).Add(priv.D, big.NewInt(2))}
	if _, err := SignDigestSHA1(broken, h[:]); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("wrong D: got %v, want ErrInvalidKey", err)
	}
	if _, err := SignDigestSHA1(nil, h[:]); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("nil key: %v", err)
	}
	if _, err := SignDigestSHA1(&rsa.PrivateKey{PublicKey: priv.PublicKey}, h[:]); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("no D: %v", err)
	}
	if _, err := SignDigestSHA1(priv, h[:10]); err == nil {
		t.Error("short digest accepted")
	}
}

func TestGenerateKey(t *testing.T) {
	a, err := GenerateKey(mrand.NewChaCha8([32]byte{1}), 512, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKey(mrand.NewChaCha8([32]byte{1}), 512, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.N.Cmp(b.N) != 0 {
		t.Error("the same seeded reader gave different keys: the reader is not honoured")
	}
	c, err := GenerateKey(mrand.NewChaCha8([32]byte{2}), 512, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.N.Cmp(c.N) == 0 {
		t.Error("different seeds gave the same key")
	}
	for _, p := range a.Primes {
		if new(big.Int).GCD(nil, nil, new(big.Int).Sub(p, big.NewInt(1)), big.NewInt(3)).Int64() != 1 {
			t.Errorf("prime %v: p-1 shares a factor with e", p)
		}
	}
	if _, err := GenerateKey(bytes.NewReader(make([]byte, 1<<20)), 512, 3); err == nil {
		t.Error("a zero-filled (then exhausted) reader produced a key")
	}
	if _, err := GenerateKey(iotestErr{}, 512, 3); err == nil {
		t.Error("a failing reader produced a key")
	}
	for _, bad := range []struct{ bits, e int }{{256, 3}, {8192, 3}, {512, 2}, {512, 1}, {512, 4}} {
		if _, err := GenerateKey(nil, bad.bits, bad.e); err == nil {
			t.Errorf("GenerateKey(%d, %d) accepted", bad.bits, bad.e)
		}
	}
}

type iotestErr struct{}

func (iotestErr) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

func TestParseErrors(t *testing.T) {
	priv := testKey(t, 512, 3)
	pubPEM, _ := MarshalPublicKeyPEM(&priv.PublicKey)
	privPEM, _ := MarshalPrivateKeyPEM(priv)
	if _, err := ParsePrivateKeyPEM(pubPEM); err == nil {
		t.Error("public key accepted as private")
	}
	if _, err := ParsePublicKeyPEM(privPEM); err == nil {
		t.Error("private key accepted as public")
	}
	if _, err := ParsePrivateKeyPEM([]byte("not pem")); err == nil {
		t.Error("garbage accepted")
	}
	if _, err := ParsePublicKeyPEM(nil); err == nil {
		t.Error("empty accepted")
	}
	enc := bytes.Replace(privPEM, []byte("-----\n"), []byte("-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00000000000000000000000000000000\n\n"), 1)
	if _, err := ParsePrivateKeyPEM(enc); err == nil || !strings.Contains(err.Error(), "encrypted") {
		t.Errorf("encrypted PEM: %v", err)
	}
	corrupt := bytes.Replace(privPEM, []byte("MII"), []byte("MIJ"), 1)
	if _, err := ParsePrivateKeyPEM(corrupt); err == nil {
		t.Error("corrupt DER accepted")
	}
	got, err := ParsePrivateKeyPEM(privPEM)
	if err != nil || got.D.Cmp(priv.D) != 0 {
		t.Fatalf("round trip of a 512-bit PKCS#1 key: %v", err)
	}
	gotPub, err := ParsePublicKeyPEM(pubPEM)
	if err != nil || !EqualPublicKeys(gotPub, &priv.PublicKey) {
		t.Fatalf("round trip of a 512-bit PKIX key: %v", err)
	}
	if EqualPublicKeys(nil, gotPub) || EqualPublicKeys(gotPub, &rsa.PublicKey{}) {
		t.Error("EqualPublicKeys accepted a nil key")
	}
	if _, err := MarshalPrivateKeyPEM(&rsa.PrivateKey{}); err == nil {
		t.Error("empty private key marshalled")
	}
}

func BenchmarkSign512(b *testing.B) {
	priv := testKey(b, 512, 3)
	msg := bytes.Repeat([]byte("x"), 600)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignSHA1(priv, msg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify512(b *testing.B) {
	priv := testKey(b, 512, 3)
	msg := bytes.Repeat([]byte("x"), 600)
	sig, _ := SignSHA1(priv, msg)
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifySHA1(&priv.PublicKey, msg, sig); err != nil {
			b.Fatal(err)
		}
	}
}
