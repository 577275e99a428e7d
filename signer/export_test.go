package signer

import (
	"github.com/dtekit/dtekit/internal/xmldsig"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// The engine's parts that signer's own tests exercise, under the names
// those tests use.
const nsDSig = xmldsig.NSDSig

var (
	fullCanonical      = xmldsig.FullCanonical
	signedInfoStartTag = xmldsig.SignedInfoStartTag
	isNCName           = xmldsig.IsNCName
	normalizeRUT       = xmldsig.NormalizeRUT
)

// signature is xmldsig.Signature with c's key.
func (c *Certificate) signature(parent *xmltree.Element, uri, transform string, digest []byte) ([]byte, error) {
	return xmldsig.Signature(c.key(), parent, uri, transform, digest)
}
