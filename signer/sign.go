package signer

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"github.com/dtekit/dtekit/internal/xmltree"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Algorithm identifiers of the SII XML-DSig profile (xmldsignature_v10.xsd).
const (
	AlgC14N10     = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
	AlgRSASHA1    = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
	AlgSHA1       = "http://www.w3.org/2000/09/xmldsig#sha1"
	AlgEnveloped  = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
	algC14N10Cmts = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments"
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
func (c *Certificate) SignEnveloped(doc []byte, id string) ([]byte, error) {
	return c.signEnveloped(doc, id, nil, false)
}

// signInPlace is SignEnveloped for a document its caller built for this
// call: the result may share doc's storage, and verified lists spans the
// fast canonical path need not scan again. dtekit's packages reach it as
// signerlink.SignInPlace (link.go).
func (c *Certificate) signInPlace(doc []byte, id string, verified []xmltree.Span) ([]byte, error) {
	return c.signEnveloped(doc, id, verified, true)
}

// signEnveloped signs the element of doc with ID id and inserts the
// Signature after it, into doc's own storage when inPlace.
func (c *Certificate) signEnveloped(doc []byte, id string, verified []xmltree.Span, inPlace bool) ([]byte, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if !isNCName(id) {
		return nil, fmt.Errorf("signer: %q is not a valid XML ID to sign", id)
	}
	el, digest, err := digestSignedElement(doc, id, verified)
	if err != nil {
		return nil, err
	}
	sig, err := c.signature(el.Parent, "#"+id, AlgC14N10, digest[:])
	if err != nil {
		return nil, err
	}
	if inPlace {
		return slices.Insert(doc, el.End, sig...), nil
	}
	out := make([]byte, 0, len(doc)+len(sig))
	out = append(out, doc[:el.End]...)
	out = append(out, sig...)
	return append(out, doc[el.End:]...), nil
}

// digestSignedElement finds the element of doc whose ID attribute equals
// id, checks that it can take an enveloped Signature, and returns it with
// the SHA-1 digest of its canonical form; verified are spans the fast path
// need not scan again. It takes the fast path of
// sign_fast.go when the element is written in canonical form, and parses
// and canonicalizes the whole document otherwise.
func digestSignedElement(doc []byte, id string, verified []xmltree.Span) (*xmltree.Element, [sha1.Size]byte, error) {
	var digest [sha1.Size]byte
	h := sha1.New()
	if el, ok := xmltree.FastCanonical(doc, id, xmltree.Options{Verified: verified}, h); ok {
		if next := xmltree.NextElement(el); next == nil || !next.Is(nsDSig, "Signature") {
			h.Sum(digest[:0])
			return el, digest, nil
		}
	}
	el, canon, err := fullCanonical(doc, id)
	if err != nil {
		return nil, digest, err
	}
	return el, sha1.Sum(canon), nil
}

// fullCanonical is the ordinary path: it parses the whole document, finds
// the element to sign, checks that it can take an enveloped Signature and
// returns its canonical form.
func fullCanonical(doc []byte, id string) (*xmltree.Element, []byte, error) {
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
	if next := xmltree.NextElement(el); next != nil && next.Is(nsDSig, "Signature") {
		return nil, nil, fmt.Errorf("signer: <%s ID=%q> is already followed by a Signature", el.QName(), id)
	}
	canon, err := xmltree.CanonicalElement(d, el, nil, nil)
	return el, canon, err
}

// SignSeed builds the signed getToken request for a seed obtained from the
// SII (getSeed): <getToken><item><Semilla>seed</Semilla></item><Signature>
// </getToken>, signed over the whole document (Reference URI "" with the
// enveloped-signature transform). The result is UTF-8 with an XML
// declaration.
func (c *Certificate) SignSeed(seed string) ([]byte, error) {
	if err := c.check(); err != nil {
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
	sig, err := c.signature(d.Root, "", AlgEnveloped, digest[:])
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

// signature builds and signs a <Signature> element that will be placed as a
// child of parent, with one Reference (uri, one Transform, SHA-1 digest).
func (c *Certificate) signature(parent *xmltree.Element, uri, transform string, digest []byte) ([]byte, error) {
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
	h.Write(signedInfoStartTag(parent))
	h.Write(si[len("<SignedInfo>"):])
	value, err := rsa.SignPKCS1v15(nil, c.Key, crypto.SHA1, h.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("signer: RSA signature for %q: %w", uri, err)
	}

	keyInfo := c.keyInfoXML()
	out := make([]byte, 0, len(si)+len(keyInfo)+base64.StdEncoding.EncodedLen(len(value))+128)
	out = append(out, `<Signature xmlns="`+nsDSig+`">`...)
	out = append(out, si...)
	out = append(out, "<SignatureValue>"...)
	out = base64.StdEncoding.AppendEncode(out, value)
	out = append(out, "</SignatureValue>"...)
	out = append(out, keyInfo...)
	return append(out, "</Signature>"...), nil
}

// signedInfoStartTag renders the canonical start tag of a SignedInfo inside
// a Signature placed as a child of parent: the xmldsig default namespace
// (declared on Signature), every prefixed namespace in scope at parent, and
// the xml:* attributes in scope there.
func signedInfoStartTag(parent *xmltree.Element) []byte {
	b := []byte(`<SignedInfo xmlns="` + nsDSig + `"`)
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

// isNCName reports whether s is a non-colonized XML name (what an ID
// attribute value must be).
func isNCName(s string) bool {
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
