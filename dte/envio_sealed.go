package dte

import (
	"bytes"

	"github.com/dtekit/dtekit/internal/xmltree"
)

// sealedDTE is what Stamp knows of a DTE it has just written and signed,
// kept so that an envelope can paste it without proving its shape again:
// a private copy of its bytes (which no caller can reach), the span an
// envelope's digest steps over, and its identity.
//
// The proof is by construction. Stamp writes the declaration and the
// <DTE> start tag itself; the signing step read the whole Documento in
// the strict canonical shape (xmldsig.SignEnvelopedStrict reports it, and
// no DTE is sealed otherwise); the Signature it inserted is fixed markup,
// base64 and the certificate's KeyInfo. sealDTE checks the few things the
// envelope's span relies on that the writer does not fix (see there), and
// TestSealedSpanIsScanned holds every sealed span to the one
// xmltree.RootScanner finds in the same bytes.
type sealedDTE struct {
	xml  []byte
	span xmltree.Span
	doc  envDoc
	skip [2][2]int // span.Skip's storage
}

// sealedRoot is how Stamp opens every DTE, after xmlDeclaration.
const sealedRoot = `<DTE` + xmlnsDTE + ` version="1.0">`

// sealDTE returns the seal of signed, a DTE that Stamp wrote with the
// Documento ID id and signed on the strict path, or nil when something in
// it makes the span below unsafe to vouch for: then the envelope scans it
// as any other.
//
// In the strict shape every element has a start and an end tag and no
// '<' appears in text or attribute values, so the DTE element holds half
// as many elements as '<'. Its two namespace declarations are the
// envelope's (envScope) and the canonical form in the envelope leaves
// them out; the Signature declares its own, which stays. Any other
// "xmlns" (a declaration the canonical form might leave out, or only the
// word in a text) or any other ` ID="` (an ID the envelope's SetDTE might
// repeat) leaves the document unsealed.
func sealDTE(signed []byte, id string, tipo TipoDTE, folio int64, rut string) *sealedDTE {
	r0 := len(xmlDeclaration)
	if len(signed) > MaxDTEBytes || !bytes.HasPrefix(signed, []byte(xmlDeclaration+sealedRoot)) || !bytes.HasSuffix(signed, []byte("</DTE>")) {
		return nil
	}
	body := signed[r0:]
	lt := bytes.Count(body, []byte("<"))
	if lt%2 != 0 || bytes.Count(body, []byte("xmlns")) != 3 || bytes.Count(body, []byte(` ID="`)) != 1 {
		return nil
	}
	if lt/2 > xmlLimits(len(signed), nil).MaxElements {
		return nil
	}
	xml := bytes.Clone(signed)
	a := r0 + len("<DTE")
	b := a + len(` xmlns="`+NamespaceSiiDte+`"`)
	c := a + len(xmlnsDTE)
	s := &sealedDTE{xml: xml, doc: envDoc{ID: id, Tipo: tipo, Folio: folio, Rut: rut}, skip: [2][2]int{{a, b}, {b, c}}}
	s.span = xmltree.Span{Start: r0, End: len(xml), Skip: s.skip[:], Elements: lt / 2}
	return s
}

// sealedFor returns e's seal when the envelope with SetDTE ID setID may
// paste e.XML on it: e was sealed by Stamp and e.XML still holds exactly
// the sealed bytes (a caller may have changed them in place or replaced
// them; then the envelope scans e.XML like any document).
func sealedFor(e *Emitted, setID string) *sealedDTE {
	if e == nil || e.sealed == nil {
		return nil
	}
	s := e.sealed
	if s.doc.ID == setID || !bytes.Equal(e.XML, s.xml) {
		return nil
	}
	return s
}
