package signer

import (
	"github.com/dtekit/dtekit/internal/signerlink"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// init hands dtekit's own packages the entry points whose signatures carry
// xmltree's types, which signer does not export (see package signerlink
// for the types and how they are read).
func init() {
	signerlink.SignInPlace = (*Certificate).signInPlace
	signerlink.NewVerifier = func(d *xmltree.Document) signerlink.Checker[VerifiedSignature] {
		return newVerifier(d)
	}
}
