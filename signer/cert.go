package signer

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
)

// Certificate is a signing credential: an X.509 certificate with its RSA
// private key, and any CA certificates that came with it. Build one with
// Load (signertest.NewCertificate makes test ones); a Certificate is read-only afterwards and safe
// for concurrent use.
type Certificate struct {
	// Leaf is the signer's certificate (its public key matches Key).
	Leaf *x509.Certificate
	// Key is the private key that signs.
	Key *rsa.PrivateKey
	// Chain holds the other certificates found in the PKCS#12 file, if any.
	Chain []*x509.Certificate

	// keyInfo caches the serialized <KeyInfo> element (built once by Load;
	// rebuilt per call for hand-made values).
	keyInfo string
}

// OID of the SAN otherName the Chilean certification authorities use for
// the holder's RUT (an IA5String such as "07880442-4").
var oidRUTOtherName = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 8321, 1}

var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

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
	return certRUT(c.Leaf)
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

// check reports whether c can sign.
func (c *Certificate) check() error {
	switch {
	case c == nil || c.Leaf == nil:
		return errors.New("signer: no certificate")
	case c.Key == nil:
		return errors.New("signer: certificate has no private key")
	}
	pub, ok := c.Leaf.PublicKey.(*rsa.PublicKey)
	if !ok || !pub.Equal(&c.Key.PublicKey) {
		return fmt.Errorf("signer: the private key does not belong to certificate %q", c.Subject())
	}
	return nil
}

// keyInfoXML returns the <KeyInfo> element of the SII profile:
// KeyValue/RSAKeyValue then X509Data/X509Certificate.
func (c *Certificate) keyInfoXML() string {
	if c.keyInfo != "" {
		return c.keyInfo
	}
	return buildKeyInfo(c.Leaf, &c.Key.PublicKey)
}

func buildKeyInfo(leaf *x509.Certificate, pub *rsa.PublicKey) string {
	var b strings.Builder
	b.WriteString("<KeyInfo><KeyValue><RSAKeyValue><Modulus>")
	b.WriteString(base64.StdEncoding.EncodeToString(pub.N.Bytes()))
	b.WriteString("</Modulus><Exponent>")
	b.WriteString(base64.StdEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()))
	b.WriteString("</Exponent></RSAKeyValue></KeyValue><X509Data><X509Certificate>")
	b.WriteString(base64.StdEncoding.EncodeToString(leaf.Raw))
	b.WriteString("</X509Certificate></X509Data></KeyInfo>")
	return b.String()
}

// certRUT extracts the holder's RUT from a certificate.
func certRUT(cert *x509.Certificate) (string, bool) {
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(oidSubjectAltName) {
			if rut, ok := sanRUT(ext.Value); ok {
				return rut, true
			}
		}
	}
	return normalizeRUT(cert.Subject.SerialNumber)
}

// sanRUT looks for the RUT otherName in a DER-encoded GeneralNames value.
func sanRUT(der []byte) (string, bool) {
	var names []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &names); err != nil || len(rest) != 0 {
		return "", false
	}
	for _, n := range names {
		if n.Class != asn1.ClassContextSpecific || n.Tag != 0 || !n.IsCompound {
			continue // not an otherName
		}
		// OtherName ::= SEQUENCE { type-id OID, value [0] EXPLICIT ANY };
		// the [0] IMPLICIT tag replaced the SEQUENCE tag, so n.Bytes holds
		// the two fields.
		var oid asn1.ObjectIdentifier
		rest, err := asn1.Unmarshal(n.Bytes, &oid)
		if err != nil || !oid.Equal(oidRUTOtherName) {
			continue
		}
		var wrapped asn1.RawValue
		if _, err := asn1.Unmarshal(rest, &wrapped); err != nil || wrapped.Tag != 0 || wrapped.Class != asn1.ClassContextSpecific {
			continue
		}
		var inner asn1.RawValue
		if _, err := asn1.Unmarshal(wrapped.Bytes, &inner); err != nil || inner.Class != asn1.ClassUniversal {
			continue
		}
		switch inner.Tag {
		case asn1.TagIA5String, asn1.TagPrintableString, asn1.TagUTF8String, 26 /* VisibleString */, asn1.TagT61String:
			if rut, ok := normalizeRUT(string(inner.Bytes)); ok {
				return rut, true
			}
		}
	}
	return "", false
}

// normalizeRUT turns "07.880.442-4", "7880442-4" or "78804424" into
// "7880442-4" and checks the modulo-11 verifier digit.
func normalizeRUT(s string) (string, bool) {
	n, dv, err := chile.ParseRUT(s)
	if err != nil {
		return "", false
	}
	return chile.FormatRUT(n, dv), true
}
