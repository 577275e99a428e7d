// Package signerlink hands dtekit's own packages the entry points of
// package signer whose signatures carry xmltree's types, so that signer's
// exported API names no internal type.
//
// signer sets the variables in its init function. This package cannot
// import signer (signer imports it, and internal packages import no public
// dtekit package), so each variable is an any holding a function of the
// type its comment gives. A reader imports signer and asserts that type
// once, in a package-level variable: Go initializes signer before any
// package that imports it, so the variable is set by then, and a type that
// drifted fails the importer's initialization at once, in every test and
// every program, rather than on one path.
package signerlink

import "github.com/dtekit/dtekit/internal/xmltree"

// SignInPlace is signer's SignEnveloped for a document the caller built
// for the call, of type
//
//	func(c *signer.Certificate, doc []byte, id string, verified []xmltree.Span) ([]byte, error)
//
// The result may share doc's storage (doc is then overwritten), so a
// caller that leaves room in doc's capacity saves a copy of the document.
// verified lists spans already checked by xmltree.ScanRoot (an envelope of
// pasted DTEs), which the fast canonical path steps over instead of
// scanning them again (see xmltree.Options.Verified; the caller vouches
// for them); nil when there are none.
var SignInPlace any

// NewVerifier returns the checker of the Signature elements of one
// document read by xmltree, of type
//
//	func(d *xmltree.Document) Checker[signer.VerifiedSignature]
//
// The Checker verifies each sig as signer.Verify does, within the
// bounds Verify sets for a whole document: at most signer.MaxSignatures
// calls (its error is not nil, and nothing is checked, after that), and
// canonical forms totalling a small multiple of the input. It is for
// readers that keep only part of a document in memory (xmltree's
// Options.Keep and Options.Close): each Signature element it is given
// must be kept with its SignedInfo, KeyInfo and their contents, and so
// must the element its Reference names, with that element's ancestors;
// canonical forms are written from the input's bytes. Unlike Verify, it
// does not refuse duplicate IDs: the caller checks d.DuplicateID once the
// whole document has been read.
var NewVerifier any

// A Checker checks Signature elements of one document, one at a time; V is
// signer.VerifiedSignature, which this package cannot name.
type Checker[V any] interface {
	Check(sig *xmltree.Element) (V, error)
}
