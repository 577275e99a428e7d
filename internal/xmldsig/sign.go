// Package xmldsig is the XML signature of dtekit in the restricted
// XML-DSig profile of the SII (xmldsignature_v10.xsd): inclusive C14N 1.0,
// RSA-SHA1, one Reference, KeyInfo with KeyValue then X509Data. It signs
// with any crypto.Signer whose public key is the certificate's (a key in
// memory, an HSM, a cloud KMS) and verifies over xmltree's documents.
//
// Package signer is its public face: signer.Certificate is the credential,
// and signer.SignEnveloped, SignSeed and Verify call in here. dte imports
// this package too, for what speaks in xmltree's types (signing a document
// built for the call into its own storage, stepping over spans already
// checked; checking the signatures of a document read in part), which
// signer's API does not name. Errors keep the "signer:" prefix: they reach
// callers through signer.
package xmldsig

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// Algorithm identifiers of the SII XML-DSig profile (xmldsignature_v10.xsd).
const (
	AlgC14N10     = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
	AlgRSASHA1    = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	AlgSHA1       = "http://www.w3.org/2000/09/xmldsig#sha1"
	AlgEnveloped  = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
	algC14N10Cmts = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
)

// Key is what signs: the certificate, the crypto.Signer that holds its
// private key, and the certificate's <KeyInfo> element when the caller
// keeps it (it is built per signature otherwise).
type Key struct {
	Leaf    *x509.Certificate
	Signer  crypto.Signer
	KeyInfo string
}

// Check reports whether k can sign: a certificate with an RSA public key,
// and a Signer whose public key is that one.
func (k Key) Check() error {
	switch {
	case k.Leaf == nil:
		return errors.New("signer: no certificate")
	case k.Signer == nil:
		return errors.New("signer: certificate has no private key")
	}
	if rk, ok := k.Signer.(*rsa.PrivateKey); ok && rk == nil {
		return errors.New("signer: certificate has no private key")
	}
	pub, ok := k.Leaf.PublicKey.(*rsa.PublicKey)
	if !ok || !pub.Equal(k.Signer.Public()) {
		return fmt.Errorf("signer: the private key does not belong to certificate %q", k.Leaf.Subject.String())
	}
	return nil
}

// keyInfoXML returns k's <KeyInfo> element; k has passed Check.
func (k Key) keyInfoXML() string {
	if k.KeyInfo != "" {
		return k.KeyInfo
	}
	return BuildKeyInfo(k.Leaf)
}

// BuildKeyInfo returns the <KeyInfo> element of the SII profile for leaf,
// whose public key is RSA: KeyValue/RSAKeyValue then
// X509Data/X509Certificate.
func BuildKeyInfo(leaf *x509.Certificate) string {
	pub := leaf.PublicKey.(*rsa.PublicKey)
	var b strings.Builder
	b.WriteString("<KeyInfo><KeyValue><RSAKeyValue><Modulus>")
	b.WriteString(base64.StdEncoding.EncodeToString(pub.N.Bytes()))
	b.WriteString("</Modulus><Exponent>")
	b.WriteString(base64.StdEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()))
	b.WriteString("</Exponent></RSAKeyValue></KeyValue><X509Data><X509Certificate>")
	b.WriteString(base64.StdEncoding.EncodeToString(leaf.Raw))
	b.WriteString("</X509Certificate></X509Data></KeyInfo>")
	return b.String()
}

// SignEnveloped signs the element of doc with ID id and inserts the
// Signature right after it, as signer.Certificate.SignEnveloped documents.
// When inPlace, doc is a document its caller built for this call: the
// result may share doc's storage (doc is then overwritten), so a caller
// that leaves room in doc's capacity saves a copy of the document.
// verified lists spans already checked by xmltree.ScanRoot (an envelope of
// pasted DTEs), which the fast canonical path steps over instead of
// scanning them again (see xmltree.Options.Verified; the caller vouches
// for them); nil when there are none.
func SignEnveloped(k Key, doc []byte, id string, verified []xmltree.Span, inPlace bool) ([]byte, error) {
	out, _, err := SignEnvelopedStrict(k, doc, id, verified, inPlace)
	return out, err
}

// SignEnvelopedStrict is SignEnveloped that also reports whether the
// signed element was read in the strict canonical shape of
// xmltree.FastCanonical (its content checked byte by byte and its digest
// taken from its bytes as written) rather than parsed the ordinary way.
// The Signature it inserts is in that shape by construction (fixed
// markup, base64 and the certificate's KeyInfo), so a writer that knows
// the rest of its document can tell that the whole is.
func SignEnvelopedStrict(k Key, doc []byte, id string, verified []xmltree.Span, inPlace bool) (out []byte, strict bool, err error) {
	if err := k.Check(); err != nil {
		return nil, false, err
	}
	if !IsNCName(id) {
		return nil, false, fmt.Errorf("signer: %q is not a valid XML ID to sign", id)
	}
	el, digest, strict, err := digestSignedElement(doc, id, verified)
	if err != nil {
		return nil, false, err
	}
	sig, err := Signature(k, el.Parent, "#"+id, AlgC14N10, digest[:])
	if err != nil {
		return nil, false, err
	}
	if inPlace {
		return slices.Insert(doc, el.End, sig...), strict, nil
	}
	out = make([]byte, 0, len(doc)+len(sig))
	out = append(out, doc[:el.End]...)
	out = append(out, sig...)
	return append(out, doc[el.End:]...), strict, nil
}

// digestSignedElement finds the element of doc whose ID attribute equals
// id, checks that it can take an enveloped Signature, and returns it with
// the SHA-1 digest of its canonical form; verified are spans the fast path
// need not scan again. It takes the fast path (xmltree.FastCanonical, and
// strict is then true) when the element is written in canonical form, and
// parses and canonicalizes the whole document otherwise.
func digestSignedElement(doc []byte, id string, verified []xmltree.Span) (_ *xmltree.Element, _ [sha1.Size]byte, strict bool, _ error) {
	var digest [sha1.Size]byte
	h := sha1.New()
	if el, ok := xmltree.FastCanonical(doc, id, xmltree.Options{Verified: verified}, h); ok {
		if next := xmltree.NextElement(el); next == nil || !next.Is(NSDSig, "Signature") {
			h.Sum(digest[:0])
			return el, digest, true, nil
		}
	}
	el, canon, err := FullCanonical(doc, id)
	if err != nil {
		return nil, digest, false, err
	}
	return el, sha1.Sum(canon), false, nil
}

// FullCanonical is the ordinary path: it parses the whole document, finds
// the element to sign, checks that it can take an enveloped Signature and
// returns its canonical form.
func FullCanonical(doc []byte, id string) (*xmltree.Element, []byte, error) {
	d, err := xmltree.Parse(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("signer: signing %q: %w", id, err)
	}
	el, err := d.ByID(id, nil)
	if err != nil {
		return nil, nil, err
	}
	if el.Parent == nil {
		return nil, nil, fmt.Errorf("signer: <%s ID=%q> is the document root; its Signature needs a parent element to go in", el.QName(), id)
	}
	if next := xmltree.NextElement(el); next != nil && next.Is(NSDSig, "Signature") {
		return nil, nil, fmt.Errorf("signer: <%s ID=%q> is already followed by a Signature", el.QName(), id)
	}
	canon, err := xmltree.CanonicalElement(d, el, nil, nil)
	return el, canon, err
}

// SignSeed builds, with k, the signed getToken request for a seed obtained from the
// SII (getSeed): <getToken><item><Semilla>seed</Semilla></item><Signature>
// </getToken>, signed over the whole document (Reference URI "" with the
// enveloped-signature transform). The result is UTF-8 with an XML
// declaration.
func SignSeed(k Key, seed string) ([]byte, error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if seed == "" {
		return nil, fmt.Errorf("signer: empty seed")
	}
	const decl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	body := "<getToken><item><Semilla>" + string(xmltree.AppendEscapedText(nil, seed)) + "</Semilla></item></getToken>"
	d, err := xmltree.Parse([]byte(body))
	if err != nil {
		return nil, fmt.Errorf("signer: seed %q: %w", seed, err)
	}
	canon, err := xmltree.CanonicalDocument(d, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("signer: seed %q: %w", seed, err)
	}
	digest := sha1.Sum(canon)
	sig, err := Signature(k, d.Root, "", AlgEnveloped, digest[:])
	if err != nil {
		return nil, err
	}
	cut := len(body) - len("</getToken>")
	return []byte(decl + body[:cut] + string(sig) + body[cut:]), nil
}

// Canonicalize returns the inclusive C14N 1.0 form (without comments) of
// the element of doc whose ID attribute equals id, in its document context,
// or of the whole document when id is "". It is what SignEnveloped digests.
func Canonicalize(doc []byte, id string) ([]byte, error) {
	d, err := xmltree.Parse(doc)
	if err != nil {
		return nil, err
	}
	if id == "" {
		return xmltree.CanonicalDocument(d, nil, nil)
	}
	el, err := d.ByID(id, nil)
	if err != nil {
		return nil, err
	}
	return xmltree.CanonicalElement(d, el, nil, nil)
}

// Signature builds a <Signature> element that will be placed as a child of
// parent, with one Reference (uri, one Transform, SHA-1 digest), signed by
// k's Signer (PKCS#1 v1.5 over SHA-1; k has passed Check).
func Signature(k Key, parent *xmltree.Element, uri, transform string, digest []byte) ([]byte, error) {
	// SignedInfo as written in the document. It is already in canonical
	// form (attributes in order, explicit end tags, no whitespace); only
	// the namespace context differs, and that is rendered on its start tag
	// for hashing.
	var si []byte
	si = append(si, `<SignedInfo><CanonicalizationMethod Algorithm="`+AlgC14N10+`"></CanonicalizationMethod>`...)
	si = append(si, `<SignatureMethod Algorithm="`+AlgRSASHA1+`"></SignatureMethod>`...)
	si = append(si, `<Reference URI="`...)
	si = append(si, uri...)
	si = append(si, `"><Transforms><Transform Algorithm="`...)
	si = append(si, transform...)
	si = append(si, `"></Transform></Transforms><DigestMethod Algorithm="`+AlgSHA1+`"></DigestMethod><DigestValue>`...)
	si = base64.StdEncoding.AppendEncode(si, digest)
	si = append(si, "</DigestValue></Reference></SignedInfo>"...)

	h := sha1.New()
	h.Write(SignedInfoStartTag(parent))
	h.Write(si[len("<SignedInfo>"):])
	// An *rsa.PrivateKey signs through OpenSSL in the build with the tag
	// openssl (smallrsa.Signer); any other Signer, and every key in the
	// default build, signs itself.
	value, err := smallrsa.Signer(k.Signer).Sign(rand.Reader, h.Sum(nil), crypto.SHA1)
	if err != nil {
		return nil, fmt.Errorf("signer: RSA signature for %q: %w", uri, err)
	}

	keyInfo := k.keyInfoXML()
	out := make([]byte, 0, len(si)+len(keyInfo)+base64.StdEncoding.EncodedLen(len(value))+128)
	out = append(out, `<Signature xmlns="`+NSDSig+`">`...)
	out = append(out, si...)
	out = append(out, "<SignatureValue>"...)
	out = base64.StdEncoding.AppendEncode(out, value)
	out = append(out, "</SignatureValue>"...)
	out = append(out, keyInfo...)
	return append(out, "</Signature>"...), nil
}

// SignedInfoStartTag renders the canonical start tag of a SignedInfo inside
// a Signature placed as a child of parent: the xmldsig default namespace
// (declared on Signature), every prefixed namespace in scope at parent, and
// the xml:* attributes in scope there.
func SignedInfoStartTag(parent *xmltree.Element) []byte {
	b := []byte(`<SignedInfo xmlns="` + NSDSig + `"`)
	for _, d := range xmltree.ScopeAt(parent, nil) {
		if d.Prefix == "" {
			continue
		}
		b = append(b, " xmlns:"...)
		b = append(b, d.Prefix...)
		b = append(b, `="`...)
		b = xmltree.AppendEscapedAttr(b, d.URI)
		b = append(b, '"')
	}
	// A SignedInfo has no attributes of its own; it inherits every xml:*
	// attribute in scope at parent (all in one namespace, so ordered by
	// local name).
	for _, a := range xmlAttrsInScope(parent) {
		b = append(b, ' ')
		b = xmltree.AppendQName(b, a.Prefix, a.Local)
		b = append(b, `="`...)
		b = xmltree.AppendEscapedAttr(b, a.Value)
		b = append(b, '"')
	}
	return append(b, '>')
}

// xmlAttrsInScope returns the xml:* attributes in force at e (set on e or
// inherited from an ancestor, the nearest winning), ordered by local name.
func xmlAttrsInScope(e *xmltree.Element) []xmltree.Attr {
	var out []xmltree.Attr
	for ; e != nil; e = e.Parent {
		for _, a := range e.Attrs {
			if a.URI == xmltree.NSXML && !slices.ContainsFunc(out, func(o xmltree.Attr) bool { return o.Local == a.Local }) {
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(a, b xmltree.Attr) int { return strings.Compare(a.Local, b.Local) })
	return out
}

// IsNCName reports whether s is a non-colonized XML name (what an ID
// attribute value must be).
func IsNCName(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || unicode.IsLetter(r):
		case i > 0 && (r == '-' || r == '.' || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)):
		default:
			return false
		}
	}
	return true
}
