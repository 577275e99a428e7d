package signer

import "github.com/dtekit/dtekit/internal/xmldsig"

// Algorithm identifiers of the SII XML-DSig profile (xmldsignature_v10.xsd),
// the ones internal/xmldsig writes.
const (
	AlgC14N10    = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
	AlgRSASHA1   = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	AlgSHA1      = "http://www.w3.org/2000/09/xmldsig#sha1"
	AlgEnveloped = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
)

// SignEnveloped signs the element of doc whose ID attribute equals id
// (Documento, Liquidacion, Exportaciones, SetDTE...) in the SII profile and
// returns doc with the Signature inserted right after that element's end
// tag, as its next sibling. Every other byte of doc is kept as it was, so a
// signed DTE can be pasted verbatim into an envelope.
//
// doc is a complete XML document, UTF-8 or ISO-8859-1 (declared). The
// reference digest is SHA-1 over the inclusive C14N 1.0 form of the element
// in its context (namespaces inherited from its ancestors included); the
// Signature carries Reference URI="#id" with one C14N 1.0 Transform, as the
// SII's own signed example does, and KeyInfo with KeyValue then X509Data.
// The signature value is one call of c.Key's Sign.
func (c *Certificate) SignEnveloped(doc []byte, id string) ([]byte, error) {
	return xmldsig.SignEnveloped(c.key(), doc, id, nil, false)
}

// SignSeed builds the signed getToken request for a seed obtained from the
// SII (getSeed): <getToken><item><Semilla>seed</Semilla></item><Signature>
// </getToken>, signed over the whole document (Reference URI "" with the
// enveloped-signature transform). The result is UTF-8 with an XML
// declaration.
func (c *Certificate) SignSeed(seed string) ([]byte, error) {
	return xmldsig.SignSeed(c.key(), seed)
}

// Canonicalize returns the inclusive C14N 1.0 form (without comments) of
// the element of doc whose ID attribute equals id, in its document context,
// or of the whole document when id is "". It is what SignEnveloped digests.
func Canonicalize(doc []byte, id string) ([]byte, error) { return xmldsig.Canonicalize(doc, id) }
