package dte

import (
	"github.com/dtekit/dtekit/internal/signerlink"
	"github.com/dtekit/dtekit/internal/xmltree"
	"github.com/dtekit/dtekit/signer"
)

// signer's entry points that take xmltree's types, which signer does not
// export (package signerlink documents them): signInPlace signs a document
// built for the call into its own storage, stepping over verified spans;
// newSigVerifier returns the checker of the signatures of a document read
// in part. The type assertions run once, when dte is initialized, after
// signer has set the variables.
var (
	signInPlace    = signerlink.SignInPlace.(func(*signer.Certificate, []byte, string, []xmltree.Span) ([]byte, error))
	newSigVerifier = signerlink.NewVerifier.(func(*xmltree.Document) signerlink.Checker[signer.VerifiedSignature])
)
