package signer

import (
	"crypto/x509"

	"github.com/dtekit/dtekit/internal/xmldsig"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// VerifiedSignature is the outcome of checking one Signature element.
// (xmldsig.VerifiedSignature has the same fields and converts to it.)
type VerifiedSignature struct {
	// URI is the Reference URI as written ("#F60T33", or "" for the whole
	// document); ID is the referenced ID without '#' ("" for the document).
	URI, ID string
	// Subject is the subject DN of the embedded certificate, and RUT the
	// holder's RUT when the certificate carries one ("" otherwise).
	Subject, RUT string
	// Certificate is the embedded X509Certificate (nil when missing or
	// unreadable).
	Certificate *x509.Certificate
	// Standalone is true when the signature verified only with its parent
	// element taken as a document of its own. That is how a DTE signed on
	// its own and then pasted into an envelope verifies: in the envelope its
	// Documento inherits the envelope's namespace declarations (xmlns:xsi),
	// which were not there when it was signed, and the SII checks it as it
	// was signed.
	Standalone bool
	// Offset is the byte offset of the Signature element in the document.
	Offset int
	// RefStart and RefEnd are the byte offsets of the element the
	// Reference covers (its first byte and the byte after its end tag),
	// or 0 and the document's length for URI "". A caller that acts on
	// the signed content takes it by these offsets, never by looking the
	// ID up again.
	RefStart, RefEnd int
	// Err is nil when the signature is valid; otherwise it says why not.
	Err error
}

// Errors that VerifiedSignature.Err and Verify wrap; test with errors.Is.
var (
	// ErrNoSignature means the document holds no xmldsig Signature element.
	ErrNoSignature = xmldsig.ErrNoSignature
	// ErrDigestMismatch means the referenced content changed after signing.
	ErrDigestMismatch = xmldsig.ErrDigestMismatch
	// ErrBadSignature means SignatureValue is not a valid signature of
	// SignedInfo under the KeyValue key.
	ErrBadSignature = xmldsig.ErrBadSignature
	// ErrKeyMismatch means KeyValue and the X509Certificate carry different
	// public keys.
	ErrKeyMismatch = xmldsig.ErrKeyMismatch
	// ErrDuplicateID means two elements of the document carry the same ID
	// attribute: a reference to it would be ambiguous, which is how
	// signature wrapping attacks hide edited content beside the signed one.
	ErrDuplicateID = xmldsig.ErrDuplicateID
	// ErrTooCostly means the references of the document would
	// canonicalize far more bytes than the document holds (many
	// signatures over the same large element): Verify refuses rather than
	// spend the time.
	ErrTooCostly = xmldsig.ErrTooCostly
)

// MaxSignatures bounds the Signature elements Verify checks in one document:
// an EnvioDTE holds at most 2000 signed DTEs plus its own signature. Each
// check costs an RSA operation (two when a nested DTE is re-checked on its
// own), so the bound keeps a crafted document from stalling a verifier.
const MaxSignatures = 2001

// Verify checks every xmldsig Signature element of doc, including those of
// DTEs nested in an envelope, in document order. For each it resolves the
// Reference ("#id" by the ID attribute, or "" for the whole document with
// the enveloped-signature transform), recomputes the digest, verifies
// SignatureValue over the canonical SignedInfo with the KeyValue key, and
// checks that KeyValue matches the X509Certificate. The error is non-nil
// when the document can't be parsed, has no Signature, has more than
// MaxSignatures, or any signature fails; the slice still reports each one.
//
// Verify proves that each signed element is intact and was signed by the key
// of the certificate embedded beside it. It does not decide whether that
// certificate is to be trusted: a self-signed certificate passes. Callers
// check VerifiedSignature.Certificate (or RUT) against their own policy, for
// example that the signer's RUT is the one they expect.
//
// Of the document only the Signature elements and the elements that carry
// an ID attribute (a Reference's possible targets) are kept in memory,
// with their ancestors; the rest is read, checked and counted under the
// XML reader's default limits, and canonicalized from the input's bytes.
func Verify(doc []byte) ([]VerifiedSignature, error) {
	res, err := xmldsig.Verify(doc)
	if res == nil {
		return nil, err
	}
	out := make([]VerifiedSignature, len(res))
	for i, r := range res {
		out[i] = VerifiedSignature(r)
	}
	return out, err
}

// ErrInvalidXML is wrapped by every error about input that is not a
// well-formed XML document this package can canonicalize.
var ErrInvalidXML error = errInvalidXML

// errInvalidXML is the XML reader's sentinel, which every error of its
// wraps; ErrInvalidXML names it without naming the internal package.
var errInvalidXML = xmltree.ErrInvalidXML
