package signer

import (
	"crypto/rsa"
	"fmt"
	"io"

	"github.com/dtekit/dtekit/internal/testpki"
	"github.com/dtekit/dtekit/internal/xmldsig"
)

// newTestCertificate makes a test Certificate for this package's own tests,
// which cannot import signertest (it imports signer); both build on
// internal/testpki.
func newTestCertificate(random io.Reader, o testpki.CertOptions) (*Certificate, error) {
	leaf, key, err := testpki.NewCertificate(random, o)
	if err != nil {
		return nil, fmt.Errorf("signer test: %w", err)
	}
	return &Certificate{Leaf: leaf, Key: key, keyInfo: xmldsig.BuildKeyInfo(leaf)}, nil
}

// encodePKCS12 writes c as a PKCS#12 file, as signertest.EncodePKCS12 does.
func encodePKCS12(c *Certificate, password string, enc testpki.Encryption) ([]byte, error) {
	return testpki.EncodePKCS12(c.Key.(*rsa.PrivateKey), c.Leaf, c.Chain, password, enc)
}
