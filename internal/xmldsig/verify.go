package xmldsig

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/dtekit/dtekit/internal/xmltree"
	"hash"
	"math/big"
	"strings"
)

// Errors that VerifiedSignature.Err and Verify wrap; test with errors.Is.
var (
	// ErrNoSignature means the document holds no xmldsig Signature element.
	ErrNoSignature = errors.New("signer: no Signature element in the document")
	// ErrDigestMismatch means the referenced content changed after signing.
	ErrDigestMismatch = errors.New("signer: reference digest does not match the content")
	// ErrBadSignature means SignatureValue is not a valid signature of
	// SignedInfo under the KeyValue key.
	ErrBadSignature = errors.New("signer: SignatureValue does not verify")
	// ErrKeyMismatch means KeyValue and the X509Certificate carry different
	// public keys.
	ErrKeyMismatch = errors.New("signer: KeyValue does not match the certificate's public key")
)

// maxVerifyModulusBits bounds the RSAKeyValue modulus Verify accepts. The
// key comes from the document itself, and crypto/rsa sets no upper limit:
// a 256-kbit modulus costs seconds per verification, so without a bound a
// small crafted document could keep a CPU busy for minutes. Certificates
// for the SII are 2048-bit; 8192 is the bound crypto/tls applies.
const maxVerifyModulusBits = 8192

// VerifiedSignature is the outcome of checking one Signature element;
// signer.VerifiedSignature, which documents its fields, has the same ones
// and converts from it.
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

// MaxSignatures bounds the Signature elements Verify checks in one document:
// an EnvioDTE holds at most 2000 signed DTEs plus its own signature. Each
// check costs an RSA operation (two when a nested DTE is re-checked on its
// own), so the bound keeps a crafted document from stalling a verifier.
const MaxSignatures = 2001

// ErrDuplicateID means two elements of the document carry the same ID
// attribute: a reference to it would be ambiguous, which is how signature
// wrapping attacks hide edited content beside the signed one.
var ErrDuplicateID = errors.New("signer: an ID appears on more than one element")

// ErrTooCostly means the references of the document would canonicalize
// far more bytes than the document holds (many signatures over the same
// large element): Verify refuses rather than spend the time.
var ErrTooCostly = errors.New("signer: the references cover too much content")

// canonicalBudget returns how many bytes of elements Verify may
// canonicalize for a document of n bytes: every element a few times over
// (an envelope's SetDTE once, each DTE in it once in context and once on
// its own), plus room for small documents. An element's canonical form is
// at most about twice its bytes (<a/> becomes <a></a>), so the work stays
// within a small multiple of the input.
func canonicalBudget(n int) int { return 4*n + 1<<16 }

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
	d, err := xmltree.ParseWith(doc, xmltree.Options{Keep: keepForVerify})
	if err != nil {
		return nil, fmt.Errorf("signer: verifying: %w", err)
	}
	if id := d.DuplicateID(); id != "" {
		return nil, fmt.Errorf("%w: %q", ErrDuplicateID, id)
	}
	var sigs []*xmltree.Element
	xmltree.Walk(d.Root, func(e *xmltree.Element) {
		if e.Is(NSDSig, "Signature") {
			sigs = append(sigs, e)
		}
	})
	if len(sigs) == 0 {
		return nil, ErrNoSignature
	}
	if len(sigs) > MaxSignatures {
		return nil, fmt.Errorf("signer: verifying: the document has %d Signature elements, more than the %d an envelope can hold", len(sigs), MaxSignatures)
	}
	results := make([]VerifiedSignature, len(sigs))
	var errs []error
	v := NewVerifier(d)
	for i, s := range sigs {
		results[i], _ = v.Check(s)
		if results[i].Err != nil {
			errs = append(errs, fmt.Errorf("signature %d (Reference %q): %w", i+1, results[i].URI, results[i].Err))
		}
	}
	return results, errors.Join(errs...)
}

// keepForVerify keeps what Verify reads: xmldsig elements, and elements
// with an ID attribute.
func keepForVerify(el *xmltree.Element) (bool, error) {
	if el.URI == NSDSig {
		return true, nil
	}
	_, id := el.Attr("ID")
	return id, nil
}

// A Verifier checks Signature elements of one document read by xmltree,
// one at a time, within the bounds Verify sets for a whole document: at
// most MaxSignatures calls (its error is not nil, and nothing is checked,
// after that), and canonical forms totalling a small multiple of the
// input. Verify uses one for the whole document. It also serves readers
// that keep only part of a document in memory (xmltree's Options.Keep and
// Options.Close): each Signature element it is given must be kept with
// its SignedInfo, KeyInfo and their contents, and so must the element its
// Reference names, with that element's ancestors; canonical forms are
// written from the input's bytes. Unlike Verify, it does not refuse
// duplicate IDs: the caller checks d.DuplicateID once the whole document
// has been read.
type Verifier struct {
	d      *xmltree.Document
	budget int
	n      int
}

// NewVerifier returns a Verifier for the signatures of d.
func NewVerifier(d *xmltree.Document) *Verifier {
	return &Verifier{d: d, budget: canonicalBudget(d.Len())}
}

// Check verifies the Signature element sig as Verify does. The error is
// not nil, and nothing is checked, once more than MaxSignatures have been
// given.
func (v *Verifier) Check(sig *xmltree.Element) (VerifiedSignature, error) {
	if v.n++; v.n > MaxSignatures {
		return VerifiedSignature{Offset: sig.Start}, fmt.Errorf("signer: verifying: the document has more than the %d Signature elements an envelope can hold", MaxSignatures)
	}
	return verifyOne(v.d, sig, &v.budget, v.d.Len()), nil
}

// parsedSignature holds what verifyOne reads from a Signature element.
type parsedSignature struct {
	signedInfo *xmltree.Element
	uri        string
	enveloped  bool
	digestHash func() hash.Hash
	digest     []byte
	sigHash    crypto.Hash
	value      []byte
	key        *rsa.PublicKey
	certs      []*x509.Certificate
}

func verifyOne(d *xmltree.Document, sig *xmltree.Element, budget *int, size int) VerifiedSignature {
	res := VerifiedSignature{Offset: sig.Start}
	ps, err := readSignature(sig)
	if ps != nil {
		res.URI = ps.uri
		res.ID = strings.TrimPrefix(ps.uri, "#")
		if len(ps.certs) > 0 {
			res.Certificate = ps.certs[0]
		}
	}
	if err != nil {
		res.Err = err
		return res
	}
	// Prefer the certificate that matches KeyValue when several are given.
	for _, c := range ps.certs {
		if pub, ok := c.PublicKey.(*rsa.PublicKey); ok && pub.Equal(ps.key) {
			res.Certificate = c
			break
		}
	}
	if res.Certificate != nil {
		res.Subject = res.Certificate.Subject.String()
		res.RUT, _ = CertRUT(res.Certificate)
	}

	if ps.uri == "" {
		res.RefStart, res.RefEnd = 0, size
	} else if target, err := d.ByID(ps.uri[1:], nil); err == nil {
		res.RefStart, res.RefEnd = target.Start, target.End
	}
	err = checkCrypto(d, sig, ps, nil, budget)
	if err != nil && !errors.Is(err, ErrTooCostly) && sig.Parent != nil && sig.Parent != d.Root {
		if checkCrypto(d, sig, ps, sig.Parent, budget) == nil {
			err = nil
			res.Standalone = true
		}
	}
	if err != nil {
		res.Err = err
		return res
	}
	if res.Certificate == nil {
		res.Err = fmt.Errorf("%w: no X509Certificate carries the KeyValue key", ErrKeyMismatch)
	} else if pub, ok := res.Certificate.PublicKey.(*rsa.PublicKey); !ok || !pub.Equal(ps.key) {
		res.Err = fmt.Errorf("%w (certificate %q)", ErrKeyMismatch, res.Subject)
	}
	return res
}

// checkCrypto recomputes the reference digest and verifies SignatureValue,
// with namespace context bounded by top (nil: the whole document).
func checkCrypto(d *xmltree.Document, sig *xmltree.Element, ps *parsedSignature, top *xmltree.Element, budget *int) error {
	h := ps.digestHash()
	if ps.uri == "" {
		if *budget -= d.Root.End - d.Root.Start; *budget < 0 {
			return ErrTooCostly
		}
		exclude := (*xmltree.Element)(nil)
		if ps.enveloped {
			exclude = sig
		}
		if err := d.WriteCanonical(h, nil, top, exclude); err != nil {
			return err
		}
	} else {
		target, err := d.ByID(ps.uri[1:], top)
		if err != nil {
			return fmt.Errorf("resolving Reference %q: %w", ps.uri, err)
		}
		// The canonical form is about as long as the element's bytes
		// (escapes and decoding change it by a small factor).
		if *budget -= target.End - target.Start; *budget < 0 {
			return ErrTooCostly
		}
		exclude := (*xmltree.Element)(nil)
		if ps.enveloped && xmltree.Within(sig, target) {
			exclude = sig
		}
		if err := d.WriteCanonical(h, target, top, exclude); err != nil {
			return err
		}
	}
	if !bytes.Equal(h.Sum(nil), ps.digest) {
		return ErrDigestMismatch
	}
	if *budget -= ps.signedInfo.End - ps.signedInfo.Start; *budget < 0 {
		return ErrTooCostly
	}
	sh := ps.sigHash.New()
	if err := d.WriteCanonical(sh, ps.signedInfo, top, nil); err != nil {
		return err
	}
	if err := rsa.VerifyPKCS1v15(ps.key, ps.sigHash, sh.Sum(nil), ps.value); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return nil
}

// readSignature extracts and checks the structure of a Signature element.
// It returns a partially filled value with the error so callers can report
// the reference.
func readSignature(sig *xmltree.Element) (*parsedSignature, error) {
	ps := &parsedSignature{}
	si := dsigChild(sig, "SignedInfo")
	if si == nil {
		return ps, errors.New("the Signature has no SignedInfo")
	}
	ps.signedInfo = si
	refs := dsigChildren(si, "Reference")
	if len(refs) != 1 {
		return ps, fmt.Errorf("the SignedInfo has %d Reference elements; the SII profile uses exactly one", len(refs))
	}
	ref := refs[0]
	uri, ok := ref.Attr("URI")
	if !ok {
		return ps, errors.New("the Reference has no URI attribute")
	}
	ps.uri = uri
	if uri != "" && (!strings.HasPrefix(uri, "#") || len(uri) == 1) {
		return ps, fmt.Errorf("unsupported Reference URI %q (want \"#id\" or \"\")", uri)
	}
	switch alg := algorithm(dsigChild(si, "CanonicalizationMethod")); alg {
	case AlgC14N10, algC14N10Cmts:
		// Comments never occur in the parsed tree, and the SignedInfo of
		// this profile holds none anyway.
	default:
		return ps, fmt.Errorf("unsupported CanonicalizationMethod %q", alg)
	}
	switch alg := algorithm(dsigChild(si, "SignatureMethod")); alg {
	case AlgRSASHA1:
		ps.sigHash = crypto.SHA1
	case "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256":
		ps.sigHash = crypto.SHA256
	default:
		return ps, fmt.Errorf("unsupported SignatureMethod %q", alg)
	}
	if tr := dsigChild(ref, "Transforms"); tr != nil {
		for _, t := range dsigChildren(tr, "Transform") {
			switch alg := algorithm(t); alg {
			case AlgC14N10, algC14N10Cmts:
			case AlgEnveloped:
				ps.enveloped = true
			default:
				return ps, fmt.Errorf("unsupported Transform %q", alg)
			}
		}
	}
	if uri == "" && !ps.enveloped {
		return ps, errors.New(`a Reference URI "" without the enveloped-signature transform can't verify (the signature would cover itself)`)
	}
	switch alg := algorithm(dsigChild(ref, "DigestMethod")); alg {
	case AlgSHA1:
		ps.digestHash = sha1.New
	case "http://www.w3.org/2001/04/xmlenc#sha256":
		ps.digestHash = sha256.New
	default:
		return ps, fmt.Errorf("unsupported DigestMethod %q", alg)
	}
	var err error
	if ps.digest, err = base64Text(dsigChild(ref, "DigestValue"), "DigestValue"); err != nil {
		return ps, err
	}
	if ps.value, err = base64Text(dsigChild(sig, "SignatureValue"), "SignatureValue"); err != nil {
		return ps, err
	}
	ki := dsigChild(sig, "KeyInfo")
	if ki == nil {
		return ps, errors.New("the Signature has no KeyInfo")
	}
	if xd := dsigChild(ki, "X509Data"); xd != nil {
		for _, xc := range dsigChildren(xd, "X509Certificate") {
			der, err := base64Text(xc, "X509Certificate")
			if err != nil {
				return ps, err
			}
			cert, err := x509.ParseCertificate(der)
			if err != nil {
				return ps, fmt.Errorf("X509Certificate: %w", err)
			}
			ps.certs = append(ps.certs, cert)
		}
	}
	kv := dsigChild(dsigChild(ki, "KeyValue"), "RSAKeyValue")
	if kv == nil {
		return ps, errors.New("KeyInfo has no KeyValue/RSAKeyValue")
	}
	mod, err := base64Text(dsigChild(kv, "Modulus"), "Modulus")
	if err != nil {
		return ps, err
	}
	exp, err := base64Text(dsigChild(kv, "Exponent"), "Exponent")
	if err != nil {
		return ps, err
	}
	e := new(big.Int).SetBytes(exp)
	if len(mod) == 0 || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
		return ps, errors.New("RSAKeyValue has an unusable modulus or exponent")
	}
	if bits := new(big.Int).SetBytes(mod).BitLen(); bits > maxVerifyModulusBits {
		return ps, fmt.Errorf("RSAKeyValue modulus is %d bits, at most %d accepted", bits, maxVerifyModulusBits)
	}
	ps.key = &rsa.PublicKey{N: new(big.Int).SetBytes(mod), E: int(e.Int64())}
	return ps, nil
}

// dsigChild returns the first child of e named {xmldsig}local, or nil.
func dsigChild(e *xmltree.Element, local string) *xmltree.Element {
	if e == nil {
		return nil
	}
	for _, ch := range e.Children {
		if ch.Kind == xmltree.KindElement && ch.El.Is(NSDSig, local) {
			return ch.El
		}
	}
	return nil
}

func dsigChildren(e *xmltree.Element, local string) []*xmltree.Element {
	var out []*xmltree.Element
	for _, ch := range e.Children {
		if ch.Kind == xmltree.KindElement && ch.El.Is(NSDSig, local) {
			out = append(out, ch.El)
		}
	}
	return out
}

func algorithm(e *xmltree.Element) string {
	if e == nil {
		return ""
	}
	v, _ := e.Attr("Algorithm")
	return v
}

// base64Text decodes the base64 text content of e, ignoring whitespace.
func base64Text(e *xmltree.Element, what string) ([]byte, error) {
	if e == nil {
		return nil, fmt.Errorf("missing %s", what)
	}
	var b strings.Builder
	for _, ch := range e.Children {
		if ch.Kind == xmltree.KindElement {
			return nil, fmt.Errorf("%s contains an element", what)
		}
		if ch.Kind == xmltree.KindText {
			for _, r := range ch.Text {
				if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
					b.WriteRune(r)
				}
			}
		}
	}
	out, err := base64.StdEncoding.DecodeString(b.String())
	if err != nil {
		return nil, fmt.Errorf("%s is not valid base64: %w", what, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s is empty", what)
	}
	return out, nil
}

// NSDSig is the XML-DSig namespace.
const NSDSig = "http://www.w3.org/2000/09/xmldsig#"
