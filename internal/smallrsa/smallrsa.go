// Package smallrsa implements RSA PKCS#1 v1.5 signatures with SHA-1 for keys
// of any size, including the 512-bit keys that the SII uses to sign CAFs
// (its IDK keys) and that every CAF hands to the emitter (RSASK).
//
// Since Go 1.24, crypto/rsa refuses keys under 1024 bits unless the program
// sets GODEBUG=rsa1024min=0, which a library cannot do for its importers. This
// package therefore computes the RSA operations with math/big for keys below
// 1024 bits and delegates to crypto/rsa (constant-time, well reviewed) for
// keys of 1024 bits and more. Both paths produce identical bytes: PKCS#1 v1.5
// signatures are deterministic.
//
// Side channels: the math/big path is not constant-time and does not blind.
// That is a deliberate trade-off for CAF keys: a CAF's private key is
// delivered in clear inside the CAF file, is 512 bits long (factorable with
// public tools) and only stamps documents the holder issues, so timing
// resistance would protect nothing of value. Signing does check its result
// (s^e mod n must give back the encoded message) so a corrupt key never
// yields a bad signature silently. Verification compares the whole encoded
// message in constant time and never parses the padding, which rules out the
// classic forged-signature attacks on e=3 keys.
//
// Built with the tag openssl, the signatures of keys held in memory are
// computed by OpenSSL's libcrypto instead (internal/osslrsa): SignDigestSHA1
// for every key size, and Signer for whoever signs through an
// *rsa.PrivateKey (the XML signatures of internal/xmldsig). The bytes are the
// same; only the speed differs. Verification stays in Go in both builds.
//
// Key parsing relies on crypto/x509, which (checked on Go 1.26) accepts
// 512-bit keys; crypto/rsa.GenerateKey does not, so GenerateKey here builds
// keys from primes drawn from the caller's random source.
package smallrsa

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
)

// MaxBits is the largest modulus this package accepts, to bound the work an
// untrusted key can cause.
const MaxBits = 16384

// stdlibMinBits is the smallest modulus handed to crypto/rsa; smaller keys
// are processed with math/big.
const stdlibMinBits = 1024

// sha1DigestInfo is the DER prefix of a DigestInfo holding a SHA-1 digest
// (RFC 8017 §9.2, note 1).
var sha1DigestInfo = []byte{0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14}

// minModulusBytes is the smallest modulus length, in bytes, that can carry a
// PKCS#1 v1.5 SHA-1 signature: DigestInfo (35 bytes) plus 11 padding bytes.
var minModulusBytes = len(sha1DigestInfo) + sha1.Size + 11

// ErrVerification is returned (wrapped) when a signature does not match.
var ErrVerification = errors.New("smallrsa: signature verification failed")

// ErrInvalidKey is returned (wrapped) when a key is unusable: nil fields, a
// non-positive modulus, an exponent below 2, or a size outside the accepted
// range.
var ErrInvalidKey = errors.New("smallrsa: invalid RSA key")

// CheckPublicKey reports whether pub can be used to verify a PKCS#1 v1.5
// SHA-1 signature.
func CheckPublicKey(pub *rsa.PublicKey) error {
	if pub == nil || pub.N == nil {
		return fmt.Errorf("%w: missing public key", ErrInvalidKey)
	}
	if pub.N.Sign() <= 0 {
		return fmt.Errorf("%w: modulus is not positive", ErrInvalidKey)
	}
	if pub.N.Bit(0) == 0 {
		return fmt.Errorf("%w: modulus is even", ErrInvalidKey)
	}
	if bits := pub.N.BitLen(); bits > MaxBits {
		return fmt.Errorf("%w: %d-bit modulus is larger than %d bits", ErrInvalidKey, bits, MaxBits)
	}
	if k := (pub.N.BitLen() + 7) / 8; k < minModulusBytes {
		return fmt.Errorf("%w: %d-bit modulus is too small for a SHA-1 PKCS#1 v1.5 signature (minimum %d bytes)", ErrInvalidKey, pub.N.BitLen(), minModulusBytes)
	}
	if pub.E < 3 || pub.E&1 == 0 || pub.E > 1<<31-1 {
		return fmt.Errorf("%w: public exponent %d must be odd, at least 3 and below 2^31", ErrInvalidKey, pub.E)
	}
	return nil
}

// encode returns the EMSA-PKCS1-v1_5 encoding of a SHA-1 digest for a
// modulus of k bytes: 0x00 0x01 FF…FF 0x00 DigestInfo.
func encode(digest []byte, k int) []byte {
	em := make([]byte, k)
	tLen := len(sha1DigestInfo) + len(digest)
	em[1] = 0x01
	for i := 2; i < k-tLen-1; i++ {
		em[i] = 0xff
	}
	copy(em[k-tLen:], sha1DigestInfo)
	copy(em[k-len(digest):], digest)
	return em
}

// accelerated, set in the build with the tag openssl (openssl.go), returns
// the OpenSSL key of priv, loaded once and kept while priv lives; nil in the
// default build.
var accelerated func(priv *rsa.PrivateKey) (crypto.Signer, error)

// backend names what computes the signatures of keys in memory.
var backend = "Go (crypto/rsa)"

// Backend names the code that computes RSA signatures with keys held in
// memory: "Go (crypto/rsa)" in the default build, OpenSSL and its version
// in the build with the tag openssl.
func Backend() string { return backend }

// Signer returns what signs for s. In the default build, and for any s
// that is not an *rsa.PrivateKey, that is s itself. In the build with the
// tag openssl it is the key's OpenSSL twin, loaded on the first call and
// kept while the key lives (s itself when OpenSSL refuses the key).
func Signer(s crypto.Signer) crypto.Signer {
	if accelerated == nil {
		return s
	}
	priv, ok := s.(*rsa.PrivateKey)
	if !ok || priv == nil {
		return s
	}
	if k, err := accelerated(priv); err == nil {
		return k
	}
	return s
}

// SignSHA1 returns the SHA1withRSA (PKCS#1 v1.5) signature of msg.
func SignSHA1(priv *rsa.PrivateKey, msg []byte) ([]byte, error) {
	d := sha1.Sum(msg)
	return SignDigestSHA1(priv, d[:])
}

// SignDigestSHA1 returns the PKCS#1 v1.5 signature of a SHA-1 digest
// (20 bytes). The signature is as long as the modulus.
func SignDigestSHA1(priv *rsa.PrivateKey, digest []byte) ([]byte, error) {
	if len(digest) != sha1.Size {
		return nil, fmt.Errorf("smallrsa: digest is %d bytes, SHA-1 needs %d", len(digest), sha1.Size)
	}
	if priv == nil {
		return nil, fmt.Errorf("%w: missing private key", ErrInvalidKey)
	}
	if err := CheckPublicKey(&priv.PublicKey); err != nil {
		return nil, err
	}
	if priv.D == nil || priv.D.Sign() <= 0 {
		return nil, fmt.Errorf("%w: missing private exponent", ErrInvalidKey)
	}
	if accelerated != nil {
		if k, err := accelerated(priv); err == nil {
			sig, err := k.Sign(nil, digest, crypto.SHA1)
			if err != nil {
				return nil, fmt.Errorf("smallrsa: signing with a %d-bit key: %w", priv.N.BitLen(), err)
			}
			// The same check as below: a signature that does not verify
			// under the public key is never returned.
			if err := VerifyDigestSHA1(&priv.PublicKey, digest, sig); err != nil {
				return nil, fmt.Errorf("%w: private key does not match its public key (signature self-check failed)", ErrInvalidKey)
			}
			return sig, nil
		}
	}
	if priv.N.BitLen() >= stdlibMinBits {
		sig, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA1, digest)
		if err != nil {
			return nil, fmt.Errorf("smallrsa: signing with a %d-bit key: %w", priv.N.BitLen(), err)
		}
		return sig, nil
	}
	k := (priv.N.BitLen() + 7) / 8
	m := new(big.Int).SetBytes(encode(digest, k))
	s := privateOp(priv, m)
	// Check the result with the public exponent: a wrong D or CRT value
	// must never produce a signature that merely looks valid.
	if new(big.Int).Exp(s, big.NewInt(int64(priv.E)), priv.N).Cmp(m) != 0 {
		return nil, fmt.Errorf("%w: private key does not match its public key (signature self-check failed)", ErrInvalidKey)
	}
	return s.FillBytes(make([]byte, k)), nil
}

// privateOp computes m^d mod n, with the Chinese remainder theorem when the
// key carries two primes and their precomputed values.
func privateOp(priv *rsa.PrivateKey, m *big.Int) *big.Int {
	pc := priv.Precomputed
	if len(priv.Primes) == 2 && pc.Dp != nil && pc.Dq != nil && pc.Qinv != nil &&
		priv.Primes[0] != nil && priv.Primes[1] != nil &&
		priv.Primes[0].Sign() > 0 && priv.Primes[1].Sign() > 0 {
		p, q := priv.Primes[0], priv.Primes[1]
		m1 := new(big.Int).Exp(m, pc.Dp, p)
		m2 := new(big.Int).Exp(m, pc.Dq, q)
		h := m1.Sub(m1, m2)
		h.Mul(h, pc.Qinv)
		h.Mod(h, p)
		h.Mul(h, q)
		return h.Add(h, m2)
	}
	return new(big.Int).Exp(m, priv.D, priv.N)
}

// VerifySHA1 checks a SHA1withRSA (PKCS#1 v1.5) signature over msg. It
// returns nil when the signature is valid, an error wrapping ErrVerification
// when it is not, and one wrapping ErrInvalidKey when the key is unusable.
func VerifySHA1(pub *rsa.PublicKey, msg, sig []byte) error {
	d := sha1.Sum(msg)
	return VerifyDigestSHA1(pub, d[:], sig)
}

// VerifyDigestSHA1 checks a PKCS#1 v1.5 signature over a SHA-1 digest. The
// signature must be exactly as long as the modulus (RFC 8017 §8.2.2), as
// OpenSSL and crypto/rsa also require.
func VerifyDigestSHA1(pub *rsa.PublicKey, digest, sig []byte) error {
	if len(digest) != sha1.Size {
		return fmt.Errorf("smallrsa: digest is %d bytes, SHA-1 needs %d", len(digest), sha1.Size)
	}
	if err := CheckPublicKey(pub); err != nil {
		return err
	}
	k := (pub.N.BitLen() + 7) / 8
	if len(sig) != k {
		return fmt.Errorf("%w: signature is %d bytes, the %d-bit key needs %d", ErrVerification, len(sig), pub.N.BitLen(), k)
	}
	if pub.N.BitLen() >= stdlibMinBits {
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA1, digest, sig); err != nil {
			return fmt.Errorf("%w: %v", ErrVerification, err)
		}
		return nil
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(pub.N) >= 0 {
		return fmt.Errorf("%w: signature value is not below the modulus", ErrVerification)
	}
	m := new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N)
	em := m.FillBytes(make([]byte, k))
	if subtle.ConstantTimeCompare(em, encode(digest, k)) != 1 {
		return fmt.Errorf("%w: decoded signature does not match the SHA-1 digest", ErrVerification)
	}
	return nil
}

// GenerateKey returns a new RSA key with a modulus of exactly bits bits
// (384 to 4096) and public exponent e (odd, at least 3), such as the 512-bit
// e=3 keys of CAFs. Primes are drawn from random (crypto/rand.Reader when
// nil): unlike crypto/rsa.GenerateKey on Go 1.26, the reader is honoured, so
// a deterministic reader gives reproducible test keys. Never use a
// deterministic reader for a real key.
func GenerateKey(random io.Reader, bits, e int) (*rsa.PrivateKey, error) {
	if bits < 384 || bits > 4096 {
		return nil, fmt.Errorf("smallrsa: key size %d bits is outside 384..4096", bits)
	}
	if e < 3 || e&1 == 0 || e > 1<<31-1 {
		return nil, fmt.Errorf("smallrsa: public exponent %d must be odd, at least 3 and below 2^31", e)
	}
	if random == nil {
		random = rand.Reader
	}
	E := big.NewInt(int64(e))
	one := big.NewInt(1)
	pBits := (bits + 1) / 2
	qBits := bits - pBits
	for attempt := 0; attempt < 16; attempt++ {
		p, err := randomPrime(random, pBits, E)
		if err != nil {
			return nil, err
		}
		q, err := randomPrime(random, qBits, E)
		if err != nil {
			return nil, err
		}
		if p.Cmp(q) == 0 {
			continue
		}
		n := new(big.Int).Mul(p, q)
		if n.BitLen() != bits {
			continue // cannot happen with the top two bits set; kept as a guard
		}
		pm1 := new(big.Int).Sub(p, one)
		qm1 := new(big.Int).Sub(q, one)
		gcd := new(big.Int).GCD(nil, nil, pm1, qm1)
		lambda := new(big.Int).Mul(pm1, qm1)
		lambda.Div(lambda, gcd)
		d := new(big.Int).ModInverse(E, lambda)
		if d == nil {
			continue
		}
		priv := &rsa.PrivateKey{
			PublicKey: rsa.PublicKey{N: n, E: e},
			D:         d,
			Primes:    []*big.Int{p, q},
		}
		priv.Precompute()
		if err := priv.Validate(); err != nil {
			return nil, fmt.Errorf("smallrsa: generated key failed validation: %w", err)
		}
		return priv, nil
	}
	return nil, errors.New("smallrsa: random source keeps producing equal primes")
}

// maxPrimeCandidates bounds the search for one prime, so that a broken
// random source (for instance one returning only zeros) ends in an error
// rather than an endless loop. A 256-bit search needs about 180 odd
// candidates on average.
const maxPrimeCandidates = 100000

// randomPrime returns a prime of exactly bits bits with its two top bits set
// and p-1 coprime with e.
func randomPrime(random io.Reader, bits int, e *big.Int) (*big.Int, error) {
	buf := make([]byte, (bits+7)/8)
	one := big.NewInt(1)
	pm1 := new(big.Int)
	gcd := new(big.Int)
	for i := 0; i < maxPrimeCandidates; i++ {
		if _, err := io.ReadFull(random, buf); err != nil {
			return nil, fmt.Errorf("smallrsa: reading random bytes: %w", err)
		}
		// Keep exactly bits bits, set the top two (so that p*q has the full
		// length) and the lowest (odd).
		excess := uint(len(buf)*8 - bits)
		buf[0] &= byte(0xff >> excess)
		p := new(big.Int).SetBytes(buf)
		p.SetBit(p, bits-1, 1)
		p.SetBit(p, bits-2, 1)
		p.SetBit(p, 0, 1)
		if !p.ProbablyPrime(20) {
			continue
		}
		pm1.Sub(p, one)
		if gcd.GCD(nil, nil, pm1, e).Cmp(one) != 0 {
			continue
		}
		return p, nil
	}
	return nil, fmt.Errorf("smallrsa: no %d-bit prime found in %d candidates (is the random source working?)", bits, maxPrimeCandidates)
}

// ParsePrivateKeyPEM reads an RSA private key from the first PEM block of
// data: "RSA PRIVATE KEY" (PKCS#1, as in a CAF's RSASK) or "PRIVATE KEY"
// (PKCS#8). Encrypted PEM is not supported.
func ParsePrivateKeyPEM(data []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("smallrsa: no PEM block found in private key data")
	}
	if _, ok := block.Headers["Proc-Type"]; ok {
		return nil, errors.New("smallrsa: encrypted PEM private keys are not supported")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("smallrsa: PKCS#1 private key: %w", err)
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("smallrsa: PKCS#8 private key: %w", err)
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("smallrsa: PKCS#8 private key is %T, not RSA", k)
		}
		return rk, nil
	default:
		return nil, fmt.Errorf("smallrsa: PEM block type %q is not an RSA private key", block.Type)
	}
}

// ParsePublicKeyPEM reads an RSA public key from the first PEM block of
// data: "PUBLIC KEY" (PKIX SubjectPublicKeyInfo, as in a CAF's RSAPUBK and the
// SII's published keys) or "RSA PUBLIC KEY" (PKCS#1).
func ParsePublicKeyPEM(data []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("smallrsa: no PEM block found in public key data")
	}
	switch block.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("smallrsa: PKIX public key: %w", err)
		}
		rk, ok := k.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("smallrsa: PKIX public key is %T, not RSA", k)
		}
		return rk, nil
	case "RSA PUBLIC KEY":
		k, err := x509.ParsePKCS1PublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("smallrsa: PKCS#1 public key: %w", err)
		}
		return k, nil
	default:
		return nil, fmt.Errorf("smallrsa: PEM block type %q is not an RSA public key", block.Type)
	}
}

// MarshalPrivateKeyPEM encodes priv as a PKCS#1 "RSA PRIVATE KEY" PEM block,
// the form of a CAF's RSASK.
func MarshalPrivateKeyPEM(priv *rsa.PrivateKey) ([]byte, error) {
	if priv == nil || priv.N == nil || priv.D == nil || len(priv.Primes) < 2 {
		return nil, fmt.Errorf("%w: private key lacks modulus, exponent or primes", ErrInvalidKey)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(priv)}), nil
}

// MarshalPublicKeyPEM encodes pub as a PKIX "PUBLIC KEY" PEM block, the form
// of a CAF's RSAPUBK and of the SII's published keys.
func MarshalPublicKeyPEM(pub *rsa.PublicKey) ([]byte, error) {
	if err := CheckPublicKey(pub); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("smallrsa: encoding public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// EqualPublicKeys reports whether a and b have the same modulus and exponent.
func EqualPublicKeys(a, b *rsa.PublicKey) bool {
	if a == nil || b == nil || a.N == nil || b.N == nil {
		return false
	}
	return a.E == b.E && a.N.Cmp(b.N) == 0
}
