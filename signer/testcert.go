package signer

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"time"
)

// TestCertOptions describes a test signing certificate for
// NewTestCertificate. Zero fields take the documented defaults.
type TestCertOptions struct {
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

// NewTestCertificate creates a self-signed RSA certificate for tests and
// demos, shaped like the ones Chilean CAs issue: the RUT is carried both in
// the subjectAltName otherName 1.3.6.1.4.1.8321.1 and in the subject
// serialNumber, and the key usage allows signing. random supplies the
// serial number (nil means crypto/rand); the key comes from crypto/rand.
func NewTestCertificate(random io.Reader, opts TestCertOptions) (*Certificate, error) {
	if random == nil {
		random = rand.Reader
	}
	if opts.CommonName == "" {
		opts.CommonName = "dtekit test signer"
	}
	if opts.RUT == "" {
		opts.RUT = "11111111-1"
	}
	rut, ok := normalizeRUT(opts.RUT)
	if !ok {
		return nil, fmt.Errorf("signer: test certificate RUT %q is not a valid RUT", opts.RUT)
	}
	now := time.Now()
	if opts.NotBefore.IsZero() {
		opts.NotBefore = now.Add(-time.Hour)
	}
	if opts.NotAfter.IsZero() {
		opts.NotAfter = now.AddDate(1, 0, 0)
	}
	if !opts.NotAfter.After(opts.NotBefore) {
		return nil, fmt.Errorf("signer: test certificate NotAfter %v is not after NotBefore %v", opts.NotAfter, opts.NotBefore)
	}
	if opts.Bits == 0 {
		opts.Bits = 2048
	}
	if opts.Bits < 1024 {
		return nil, fmt.Errorf("signer: test certificate key of %d bits is too small (minimum 1024)", opts.Bits)
	}
	key, err := rsa.GenerateKey(rand.Reader, opts.Bits)
	if err != nil {
		return nil, fmt.Errorf("signer: generating a %d-bit RSA key: %w", opts.Bits, err)
	}
	serial, err := rand.Int(random, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("signer: test certificate serial number: %w", err)
	}
	san, err := rutOtherNameSAN(rut)
	if err != nil {
		return nil, fmt.Errorf("signer: encoding the RUT %s for the certificate: %w", rut, err)
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
		return nil, fmt.Errorf("signer: creating the test certificate for %s: %w", rut, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("signer: parsing the new test certificate: %w", err)
	}
	return &Certificate{Leaf: leaf, Key: key, keyInfo: buildKeyInfo(leaf, &key.PublicKey)}, nil
}
