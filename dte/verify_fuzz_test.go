package dte_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/dtekit/dtekit/dte"
)

// FuzzVerifyParse asserts the property signature wrapping breaks: whenever
// Verify says a DTE is OK, the document ParseDTE returns is the one read
// from the exact bytes whose digest was checked (the signed element, in
// its DTE's start tag, with nothing else). Mutations that keep a document
// verifying touch only what the signature does not cover (the declaration,
// whitespace, comments and elements around the signed one), which is where
// a wrapping attack puts its content.
func FuzzVerifyParse(f *testing.F) {
	docs, _ := emitAll(f)
	keys := creds(f).Keys
	for _, tipo := range []dte.TipoDTE{33, 39, 61, 110} {
		g := docs[tipo].XML
		f.Add(g)
		k := bytes.Index(g, []byte("<Documento"))
		if k < 0 {
			k = bytes.Index(g, []byte("<Exportaciones"))
		}
		// Room before and after the signed element.
		f.Add(append(append(append([]byte{}, g[:k]...), "<!-- x -->\n"...), g[k:]...))
		s := bytes.LastIndex(g, []byte("<Signature"))
		f.Add(append(append(append([]byte{}, g[:s]...), "\n"...), g[s:]...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := dte.Verify(data, keys)
		if err != nil || !rep.OK() || rep.Kind != "DTE" {
			return
		}
		if len(rep.Documents) != 1 {
			t.Fatalf("a verified DTE reports %d documents", len(rep.Documents))
		}
		got, err := dte.ParseDTE(data)
		if err != nil {
			t.Fatalf("Verify accepted what ParseDTE refuses: %v", err)
		}
		r := rep.Documents[0]
		if r.SignedStart <= 0 || r.SignedEnd > len(data) || r.SignedStart >= r.SignedEnd {
			t.Fatalf("signed range %d-%d of %d bytes", r.SignedStart, r.SignedEnd, len(data))
		}
		// The DTE's start tag (and what precedes it: the declaration,
		// comments, whitespace), the signed bytes, the DTE's end tag.
		signedOnly := append(append([]byte{}, data[:r.SignedStart]...), data[r.SignedStart:r.SignedEnd]...)
		signedOnly = append(signedOnly, "</DTE>"...)
		if !bytes.Contains(data[:r.SignedStart], []byte("<DTE")) {
			return // a prefixed DTE element: its end tag is not </DTE>
		}
		want, err := dte.ParseDTE(signedOnly)
		if err != nil {
			t.Fatalf("the signed bytes alone do not parse: %v\n%s", err, signedOnly)
		}
		if got.SignatureValue == "" {
			t.Fatal("a verified DTE parses without its SignatureValue")
		}
		// The DTE's own signature lies outside the bytes it signs.
		got.Raw, want.Raw = nil, nil
		got.SignatureValue, want.SignatureValue = "", ""
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseDTE differs from the document of the signed bytes:\n got %+v\nwant %+v", got, want)
		}
		if got.ID != r.ID || got.Folio != r.Folio || got.Tipo != r.Tipo {
			t.Fatalf("report %s/%d/%d, document %s/%d/%d", r.ID, r.Tipo, r.Folio, got.ID, got.Tipo, got.Folio)
		}
	})
}
