package signer

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"time"

	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/internal/xmldsig"
)

// Certificate is a signing credential: an X.509 certificate, the
// crypto.Signer that holds its private key, and any CA certificates that
// came with it. Load reads a PKCS#12 file into one whose Key is the
// *rsa.PrivateKey it holds, the default; a key kept elsewhere (an HSM
// through PKCS#11, a cloud KMS, an OpenSSL engine) plugs in as any
// crypto.Signer whose public key is the certificate's RSA key and that
// signs PKCS#1 v1.5 with crypto.SHA1 (see New). signertest.NewCertificate
// makes test ones. A Certificate is read-only afterwards and safe for
// concurrent use when its Key is.
type Certificate struct {
	// Leaf is the signer's certificate (its public key is Key's).
	Leaf *x509.Certificate
	// Key signs: each signature is one Key.Sign call with a SHA-1 digest
	// and crypto.SHA1 as options (RSA PKCS#1 v1.5, as the SII's profile
	// has it). Load sets an *rsa.PrivateKey.
	Key crypto.Signer
	// Chain holds the other certificates found in the PKCS#12 file, if any.
	Chain []*x509.Certificate

	// keyInfo caches the serialized <KeyInfo> element (built once by Load
	// and New; rebuilt per call for hand-made values).
	keyInfo string
}

// New returns the credential of leaf signed by key, a crypto.Signer whose
// public key must be leaf's RSA key (checked here): an *rsa.PrivateKey,
// or a key held outside the process. chain holds any CA certificates to
// keep beside it.
func New(leaf *x509.Certificate, key crypto.Signer, chain ...*x509.Certificate) (*Certificate, error) {
	c := &Certificate{Leaf: leaf, Key: key, Chain: chain}
	if err := c.check(); err != nil {
		return nil, err
	}
	c.keyInfo = xmldsig.BuildKeyInfo(leaf)
	return c, nil
}

// Subject returns the certificate's subject distinguished name in RFC 2253
// form, e.g. "CN=Juan Perez,SERIALNUMBER=11111111-1".
func (c *Certificate) Subject() string {
	if c == nil || c.Leaf == nil {
		return ""
	}
	return c.Leaf.Subject.String()
}

// RUT returns the signer's RUT in canonical form ("12345678-9"): from the
// subjectAltName otherName 1.3.6.1.4.1.8321.1 when present, otherwise from
// the subject serialNumber. It returns false when neither holds a RUT with a
// valid check digit.
func (c *Certificate) RUT() (string, bool) {
	if c == nil || c.Leaf == nil {
		return "", false
	}
	return xmldsig.CertRUT(c.Leaf)
}

// NotBefore returns the start of the certificate's validity period (zero
// when there is no certificate).
func (c *Certificate) NotBefore() time.Time {
	if c == nil || c.Leaf == nil {
		return time.Time{}
	}
	return c.Leaf.NotBefore
}

// NotAfter returns the end of the certificate's validity period (zero when
// there is no certificate).
func (c *Certificate) NotAfter() time.Time {
	if c == nil || c.Leaf == nil {
		return time.Time{}
	}
	return c.Leaf.NotAfter
}

// DaysToExpiry returns the whole days left before NotAfter, counted from
// now and rounded down: 0 means it expires within 24 hours, and a negative
// value means it has already expired.
func (c *Certificate) DaysToExpiry(now time.Time) int {
	d := c.NotAfter().Sub(now)
	days := int(d / (24 * time.Hour))
	if d < 0 && d%(24*time.Hour) != 0 {
		days--
	}
	return days
}

// CertificatePEM returns the signer's certificate PEM-encoded (nil when
// there is no certificate).
func (c *Certificate) CertificatePEM() []byte {
	if c == nil || c.Leaf == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Leaf.Raw})
}

// key returns what xmldsig signs with.
func (c *Certificate) key() xmldsig.Key {
	if c == nil {
		return xmldsig.Key{}
	}
	return xmldsig.Key{Leaf: c.Leaf, Signer: c.Key, KeyInfo: c.keyInfo}
}

// check reports whether c can sign.
func (c *Certificate) check() error { return c.key().Check() }

// KeyInfo returns the <KeyInfo> element of c's signatures (KeyValue then
// X509Data, as the SII's profile has it), or "" when c has no certificate
// with an RSA key.
func (c *Certificate) KeyInfo() string {
	if c == nil || c.Leaf == nil {
		return ""
	}
	if c.keyInfo != "" {
		return c.keyInfo
	}
	if _, ok := c.Leaf.PublicKey.(*rsa.PublicKey); !ok {
		return ""
	}
	return xmldsig.BuildKeyInfo(c.Leaf)
}

// Backend names the code that computes the RSA signatures of keys held in
// memory (an *rsa.PrivateKey, as Load gives): "Go (crypto/rsa)" in the
// default build; OpenSSL and its version, e.g. "OpenSSL 3.0.22 25 Aug
// 2026", in a build with the tag openssl (see OpenSSL). A Key of another
// kind signs itself in either build.
func Backend() string { return smallrsa.Backend() }
