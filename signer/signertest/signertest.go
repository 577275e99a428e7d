// Package signertest provides signing credentials for tests and demos, as
// net/http/httptest does for servers: self-signed certificates shaped like
// those of Chilean certification authorities, and PKCS#12 files in the
// encodings found in the field. Nothing here is a real credential.
package signertest

import (
	"crypto/rsa"
	"fmt"
	"io"
	"time"

	"github.com/dtekit/dtekit/internal/testpki"
	"github.com/dtekit/dtekit/signer"
)

// CertOptions describes a test signing certificate. Zero fields take the
// documented defaults.
type CertOptions struct {
	// CommonName is the subject CN (default "dtekit test signer").
	CommonName string
	// RUT is the holder's RUT, e.g. "11111111-1" (default); it must have a
	// valid check digit and is stored normalized ("7.880.442-4" becomes
	// "7880442-4").
	RUT string
	// NotBefore and NotAfter bound the validity (default: from one hour
	// before now to one year after now).
	NotBefore, NotAfter time.Time
	// Bits is the RSA key size (default 2048, at least 1024).
	Bits int
}

// NewCertificate creates a self-signed RSA certificate and its key: the RUT
// is carried both in the subjectAltName otherName 1.3.6.1.4.1.8321.1 and in
// the subject serialNumber, and the key usage allows signing. random
// supplies the serial number (nil means crypto/rand); the key comes from
// crypto/rand. The result is read back through signer.Load, so it is the
// value a real .p12 file would give.
func NewCertificate(random io.Reader, opts CertOptions) (*signer.Certificate, error) {
	leaf, key, err := testpki.NewCertificate(random, testpki.CertOptions(opts))
	if err != nil {
		return nil, fmt.Errorf("signertest: %w", err)
	}
	const password = "signertest"
	p12, err := testpki.EncodePKCS12(key, leaf, nil, password, testpki.Modern)
	if err != nil {
		return nil, fmt.Errorf("signertest: %w", err)
	}
	c, err := signer.Load(p12, password)
	if err != nil {
		return nil, fmt.Errorf("signertest: reading the new certificate back: %w", err)
	}
	return c, nil
}

// Encryption selects how EncodePKCS12 protects the file: Modern, Legacy or
// LegacyDES.
type Encryption int

// The PKCS#12 encodings EncodePKCS12 writes.
const (
	// Modern is PBES2 with PBKDF2-HMAC-SHA-256 and AES-256-CBC and an
	// HMAC-SHA-256 MAC: what OpenSSL 3 writes by default.
	Modern Encryption = iota
	// Legacy encrypts certificates with RC2-40 and the key with 3DES under
	// an HMAC-SHA-1 MAC: what OpenSSL 1.x and older Windows wrote. OpenSSL 3
	// reads it only with -legacy.
	Legacy
	// LegacyDES uses 3DES for both certificates and key (OpenSSL's
	// -descert); OpenSSL 3 reads it without the legacy provider.
	LegacyDES
)

// String names the encryption ("modern", "legacy", "legacy-des").
func (e Encryption) String() string {
	if enc, ok := e.pki(); ok {
		return enc.String()
	}
	return fmt.Sprintf("Encryption(%d)", int(e))
}

// pki returns the encoder setting of the test PKI that e stands for, and
// false when e is none of the three.
func (e Encryption) pki() (testpki.Encryption, bool) {
	switch e {
	case Modern:
		return testpki.Modern, true
	case Legacy:
		return testpki.Legacy, true
	case LegacyDES:
		return testpki.LegacyDES, true
	}
	return 0, false
}

// EncodePKCS12 writes c (key, certificate and chain) as a PKCS#12 file
// protected by password with the chosen encryption, as a user would
// receive it from a certification authority.
func EncodePKCS12(c *signer.Certificate, password string, enc Encryption) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("signertest: no certificate to encode")
	}
	pe, ok := enc.pki()
	if !ok {
		return nil, fmt.Errorf("signertest: PKCS#12: unknown encryption %v", enc)
	}
	key, ok := c.Key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signertest: PKCS#12 holds a key in memory, not a %T", c.Key)
	}
	out, err := testpki.EncodePKCS12(key, c.Leaf, c.Chain, password, pe)
	if err != nil {
		return nil, fmt.Errorf("signertest: %w", err)
	}
	return out, nil
}
