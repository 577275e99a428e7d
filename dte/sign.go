package dte

import (
	"github.com/dtekit/dtekit/internal/xmldsig"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// signInPlace signs the element with ID id of doc, a document built for
// this call, as cert.SignEnveloped does, through cert's crypto.Signer; the
// result may share doc's storage, and verified lists spans already checked
// by xmltree.ScanRoot that the fast canonical path steps over (see
// xmldsig.SignEnveloped).
func signInPlace(cert *signer.Certificate, doc []byte, id string, verified []xmltree.Span) ([]byte, error) {
	out, _, err := signInPlaceStrict(cert, doc, id, verified)
	return out, err
}

// signInPlaceStrict is signInPlace that also reports whether the signed
// element was read in the strict canonical shape (see
// xmldsig.SignEnvelopedStrict).
func signInPlaceStrict(cert *signer.Certificate, doc []byte, id string, verified []xmltree.Span) ([]byte, bool, error) {
	var k xmldsig.Key
	if cert != nil {
		k = xmldsig.Key{Leaf: cert.Leaf, Signer: cert.Key, KeyInfo: cert.KeyInfo()}
	}
	return xmldsig.SignEnvelopedStrict(k, doc, id, verified, true)
}
