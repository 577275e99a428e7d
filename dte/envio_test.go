package dte_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
)

// Every document dtekit emits takes BuildEnvio's fast path (one strict scan,
// stepped over when the SetDTE is digested), and the digest it signs is
// SHA-1 over the SetDTE as the signer's full canonicalization renders it.
// TestOracleEnvelopes has xmlsec1 verify the same envelopes.
func TestEnvioFastPathDigest(t *testing.T) {
	docs, _ := emitAll(t)
	c := creds(t)
	var facturas [][]byte
	for _, tipo := range dte.Tipos() {
		if !dte.EnvioFastPath(docs[tipo].XML) {
			t.Errorf("tipo %d: BuildEnvio does not take the fast path", tipo)
		}
		if !tipo.IsBoleta() {
			facturas = append(facturas, docs[tipo].XML)
		}
	}
	// A document that is not in canonical form takes the ordinary path,
	// and its neighbours still the fast one.
	odd := bytes.Replace(facturas[0], []byte("<Encabezado>"), []byte("<Encabezado >"), 1)
	if dte.EnvioFastPath(odd) {
		t.Fatal("a DTE not written in canonical form took the fast path")
	}
	mixed := append([][]byte{odd}, facturas[1:]...)
	for _, set := range [][][]byte{facturas, mixed} {
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor, At: time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())}, c.Cert, set...)
		if err != nil {
			t.Fatal(err)
		}
		checkSetDigest(t, env, dte.DefaultSetID)
	}
}

// checkSetDigest fails t unless the digest of the envelope's signature is
// SHA-1 over the canonical form of its element with ID id as the signer's
// full canonicalization renders it (the whole envelope's tree).
func checkSetDigest(t *testing.T, env []byte, id string) {
	t.Helper()
	canon, err := signer.Canonicalize(env, id)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(canon)
	want := "<DigestValue>" + base64.StdEncoding.EncodeToString(sum[:]) + "</DigestValue>"
	last := bytes.LastIndex(env, []byte("<Signature "))
	if last < 0 || !bytes.Contains(env[last:], []byte(want)) {
		t.Fatalf("the SetDTE digest is not SHA-1 of its full canonical form %s", want)
	}
}

// On varied documents the SetDTE digest BuildEnvio signs, with the DTEs in
// canonical form stepped over (one strict scan each, never a tree), must be
// SHA-1 over what the general canonicalizer renders (signer.Canonicalize,
// which builds the whole envelope's tree), and xmlsec1 must verify the
// SetDTE signature: so the fast path cannot drift from C14N. A DTE not in
// canonical form takes the ordinary path, its neighbours still the fast
// one. The variants change the DTEs' bytes (their own signatures no longer
// hold; BuildEnvio does not check them).
func TestEnvioFastPathVaried(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmlsec1")
	docs, _ := emitAll(t)
	c := creds(t)
	f33 := docs[33].XML
	var facturas, boletas [][]byte
	for _, tipo := range dte.Tipos() {
		if tipo.IsBoleta() {
			boletas = append(boletas, docs[tipo].XML)
		} else {
			facturas = append(facturas, docs[tipo].XML)
		}
	}
	// edit replaces the first old in a copy of doc, which must hold it.
	edit := func(doc []byte, old, new string) []byte {
		if !bytes.Contains(doc, []byte(old)) {
			t.Fatalf("the document has no %q", old)
		}
		return bytes.Replace(doc, []byte(old), []byte(new), 1)
	}
	ascii := bytes.Map(func(r rune) rune {
		if r >= 0x80 {
			return 'x'
		}
		return r
	}, edit(f33, `encoding="ISO-8859-1"`, `encoding="UTF-8"`))
	for _, tc := range []struct {
		name string
		dtes [][]byte
		fast []bool // whether each DTE takes the fast path
	}{
		// Every type dtekit emits: guía with Transporte, export
		// documents, notes, and the boletas in an EnvioBOLETA.
		{"all-types", facturas, []bool{true, true, true, true, true, true, true, true, true, true}},
		{"boletas", boletas, []bool{true, true}},
		// Text with C14N's escapes and ISO-8859-1 letters.
		{"entities", [][]byte{edit(f33, "<GiroRecep>", "<GiroRecep>&lt;a&gt; &amp; b&#xD; ñ°")}, []bool{true}},
		// Attributes in canonical order, their values with escapes, a
		// '>' and a Latin-1 letter.
		{"attributes", [][]byte{edit(f33, "<Detalle>", `<Detalle a="ñ&quot;&#x9;&#xA;&#xD;&lt;>" b="">`)}, []bool{true}},
		// A declaration that repeats the scope (left out by C14N), a
		// new prefix, and a default namespace that changes.
		{"namespaces", [][]byte{edit(edit(edit(f33,
			"<Detalle>", `<Detalle xmlns="http://www.sii.cl/SiiDte" xmlns:x="urn:x">`),
			"<Receptor>", `<Receptor xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`),
			"<TED ", `<TED xmlns="urn:other" `)}, []bool{true}},
		// Line breaks and tabs between elements.
		{"whitespace", [][]byte{edit(f33, "</Detalle><Detalle>", "</Detalle>\n\t<Detalle>")}, []bool{true}},
		// Pure ASCII, declared UTF-8.
		{"ascii-utf8", [][]byte{ascii}, []bool{true}},
		// A TipoDTE outside IdDoc, ahead of it: the Carátula counts
		// IdDoc's.
		{"tipo-elsewhere", [][]byte{edit(f33, "<Encabezado>", "<Extra><TipoDTE>39</TipoDTE></Extra><Encabezado>")}, []bool{true}},
		// Not in canonical form: the ordinary path reads them.
		{"carriage-return", [][]byte{edit(f33, "</Detalle><Detalle>", "</Detalle>\r\n<Detalle>"), docs[34].XML}, []bool{false, true}},
		{"attribute-order", [][]byte{docs[34].XML, edit(f33, "<Detalle>", `<Detalle b="1" a="2">`)}, []bool{true, false}},
		{"empty-element", [][]byte{edit(f33, "</Detalle>", "<Extra/></Detalle>")}, []bool{false}},
		{"single-quotes", [][]byte{edit(f33, `<Documento ID="`, `<Documento x='1' ID="`)}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for i, d := range tc.dtes {
				if got := dte.EnvioFastPath(d); got != tc.fast[i] {
					t.Errorf("DTE %d: fast path %v, want %v", i+1, got, tc.fast[i])
				}
			}
			opts := dte.EnvioOptions{Emisor: c.Emisor, At: time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())}
			env, err := dte.BuildEnvio(opts, c.Cert, tc.dtes...)
			if err != nil {
				t.Fatal(err)
			}
			checkSetDigest(t, env, dte.DefaultSetID)
			if tc.name == "tipo-elsewhere" && !bytes.Contains(env, []byte("<TpoDTE>33</TpoDTE><NroDTE>1</NroDTE>")) {
				t.Error("the Carátula does not count the factura by IdDoc's TipoDTE")
			}
			file := filepath.Join(t.TempDir(), "envio.xml")
			if err := os.WriteFile(file, env, 0o600); err != nil {
				t.Fatal(err)
			}
			if msg, ok := xmlsecVerify(t, file, `/*/*[local-name()='Signature']`, keyValueArgs()...); !ok {
				t.Errorf("xmlsec1 SetDTE: %s", msg)
			}
		})
	}
}
