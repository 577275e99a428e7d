// Package testpki makes the test credentials that signer/signertest
// exports and that package signer's own tests use (they cannot import
// signertest, which imports signer): self-signed RSA certificates shaped
// like the ones Chilean certification authorities issue, and PKCS#12 files
// in the encodings found in the field.
package testpki

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
	"software.sslmate.com/src/go-pkcs12"
)

// CertOptions describes a test signing certificate. Zero fields take the
// documented defaults.
type CertOptions struct {
	// CommonName is the subject CN (default "dtekit test signer").
	CommonName string
	// RUT is the holder's RUT, e.g. "11111111-1" (default); it must have a
	// valid check digit and is stored normalized.
	RUT string
	// NotBefore and NotAfter bound the validity (default: from one hour
	// before now to one year after now).
	NotBefore, NotAfter time.Time
	// Bits is the RSA key size (default 2048, at least 1024).
	Bits int
}

// OIDs of the subjectAltName extension and of the otherName in which
// Chilean CAs carry the holder's RUT.
var (
	oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}
	oidRUTOtherName   = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 8321, 1}
)

// NewCertificate creates a self-signed certificate and its key: the RUT is
// carried both in the subjectAltName otherName 1.3.6.1.4.1.8321.1 and in
// the subject serialNumber, and the key usage allows signing. random
// supplies the serial number (nil means crypto/rand); the key comes from
// crypto/rand.
func NewCertificate(random io.Reader, opts CertOptions) (*x509.Certificate, *rsa.PrivateKey, error) {
	if random == nil {
		random = rand.Reader
	}
	if opts.CommonName == "" {
		opts.CommonName = "dtekit test signer"
	}
	if opts.RUT == "" {
		opts.RUT = "11111111-1"
	}
	n, dv, err := chile.ParseRUT(opts.RUT)
	if err != nil {
		return nil, nil, fmt.Errorf("test certificate: %w", err)
	}
	rut := chile.FormatRUT(n, dv)
	now := time.Now()
	if opts.NotBefore.IsZero() {
		opts.NotBefore = now.Add(-time.Hour)
	}
	if opts.NotAfter.IsZero() {
		opts.NotAfter = now.AddDate(1, 0, 0)
	}
	if !opts.NotAfter.After(opts.NotBefore) {
		return nil, nil, fmt.Errorf("test certificate: NotAfter %v is not after NotBefore %v", opts.NotAfter, opts.NotBefore)
	}
	if opts.Bits == 0 {
		opts.Bits = 2048
	}
	if opts.Bits < 1024 {
		return nil, nil, fmt.Errorf("test certificate: a key of %d bits is too small (minimum 1024)", opts.Bits)
	}
	key, err := rsa.GenerateKey(rand.Reader, opts.Bits)
	if err != nil {
		return nil, nil, fmt.Errorf("test certificate: generating a %d-bit RSA key: %w", opts.Bits, err)
	}
	serial, err := rand.Int(random, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("test certificate: serial number: %w", err)
	}
	san, err := rutOtherNameSAN(rut)
	if err != nil {
		return nil, nil, fmt.Errorf("test certificate: encoding the RUT %s: %w", rut, err)
	}
	name := pkix.Name{CommonName: opts.CommonName, SerialNumber: rut, Country: []string{"CL"}}
	tmpl := &x509.Certificate{
		SerialNumber:          serial.Add(serial, big.NewInt(1)),
		Subject:               name,
		Issuer:                name,
		NotBefore:             opts.NotBefore,
		NotAfter:              opts.NotAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageEmailProtection},
		BasicConstraintsValid: true,
		ExtraExtensions:       []pkix.Extension{{Id: oidSubjectAltName, Value: san}},
	}
	der, err := x509.CreateCertificate(random, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("test certificate: creating it for %s: %w", rut, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("test certificate: parsing it back: %w", err)
	}
	return leaf, key, nil
}

// rutOtherNameSAN builds a subjectAltName extension value holding the RUT
// otherName, encoded as the Chilean CAs do (IA5String).
func rutOtherNameSAN(rut string) ([]byte, error) {
	ia5, err := asn1.MarshalWithParams(rut, "ia5")
	if err != nil {
		return nil, err
	}
	value, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: ia5})
	if err != nil {
		return nil, err
	}
	oid, err := asn1.Marshal(oidRUTOtherName)
	if err != nil {
		return nil, err
	}
	other, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: append(oid, value...)})
	if err != nil {
		return nil, err
	}
	return asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: other})
}

// Encryption selects how EncodePKCS12 protects the file.
type Encryption int

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
	switch e {
	case Modern:
		return "modern"
	case Legacy:
		return "legacy"
	case LegacyDES:
		return "legacy-des"
	}
	return fmt.Sprintf("Encryption(%d)", int(e))
}

// EncodePKCS12 writes key, leaf and chain as a PKCS#12 file protected by
// password with the chosen encryption. The key must belong to leaf.
func EncodePKCS12(key *rsa.PrivateKey, leaf *x509.Certificate, chain []*x509.Certificate, password string, enc Encryption) ([]byte, error) {
	if key == nil || leaf == nil {
		return nil, errors.New("PKCS#12: a key and a certificate are required")
	}
	if pub, ok := leaf.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, fmt.Errorf("PKCS#12: the private key does not belong to certificate %q", leaf.Subject)
	}
	var encoder *pkcs12.Encoder
	switch enc {
	case Modern:
		encoder = pkcs12.Modern2023
	case Legacy:
		encoder = pkcs12.LegacyRC2
	case LegacyDES:
		encoder = pkcs12.LegacyDES
	default:
		return nil, fmt.Errorf("PKCS#12: unknown encryption %v", enc)
	}
	out, err := encoder.Encode(key, leaf, chain, password)
	if err != nil {
		return nil, fmt.Errorf("PKCS#12: encoding (%v) for %q: %w", enc, leaf.Subject, err)
	}
	return out, nil
}
