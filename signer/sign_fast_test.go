package signer

import (
	"bytes"
	"crypto/sha1"
	"github.com/dtekit/dtekit/internal/xmltree"
	"strconv"
	"strings"
	"testing"
)

// canonDteDoc returns a DTE-like document in ISO-8859-1 whose Documento is
// written in canonical form (what dtekit's own writer produces): no CR, no
// empty-element tags, attributes in order, only C14N's escapes. The root
// declares a second namespace and an xml:lang that the Documento inherits.
func canonDteDoc(t testing.TB, id string) []byte {
	t.Helper()
	s := `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" +
		`<DTE xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0" xml:lang="es">` +
		`<Documento ID="` + id + `"><Encabezado><IdDoc><TipoDTE>33</TipoDTE><Folio>7</Folio></IdDoc>` +
		`<Emisor><RznSoc>Compañía Ñandú &amp; Cía. &lt;Ltda&gt; 'x' "y"</RznSoc><GiroEmis>tab	and` + "\n" + `line &#xD; end</GiroEmis></Emisor></Encabezado>` +
		`<Detalle><NroLinDet>1</NroLinDet><NmbItem>Café ÿ ° ×</NmbItem><DscItem></DscItem></Detalle>` +
		`<TED version="1.0"><DD a="x>y" b="&quot;q&quot; &amp; &lt; &#x9;&#xA;&#xD; > 'é'" c="">FRMA</DD></TED>` +
		`<TmstFirma>2024-05-06T10:11:12</TmstFirma></Documento></DTE>` + "\n"
	return latin1(t, s)
}

// fastCases are documents around the fast path's strict shape: fast says
// whether the fast path must take the document (false: it must leave it to
// the full parser, which then signs it or reports its error).
func fastCases(t testing.TB) []struct {
	name string
	doc  []byte
	id   string
	fast bool
} {
	base := string(mustDecodeLatin1Bytes(t, canonDteDoc(t, "T33F1")))
	mod := func(old, new string) []byte {
		if !strings.Contains(base, old) {
			t.Fatalf("canonDteDoc has no %q", old)
		}
		return latin1(t, strings.Replace(base, old, new, 1))
	}
	utf8Doc := []byte(strings.Replace(base, "ISO-8859-1", "UTF-8", 1))
	return []struct {
		name string
		doc  []byte
		id   string
		fast bool
	}{
		{"canonical-latin1", canonDteDoc(t, "T33F1"), "T33F1", true},
		{"canonical-utf8", utf8Doc, "T33F1", true},
		{"no-declaration-ascii", []byte(`<r><a ID="x"><b c="1" d="2">t</b></a></r>`), "x", true},
		{"empty-apex", []byte(`<r xmlns:p="urn:p"><a ID="x" p:k="v"/></r>`), "x", true},
		{"apex-start-tag-free-form", []byte("<r>\r\n<a\tz='1' ID=\"x\"   >t</a>\r\n</r>"), "x", true},
		{"apex-end-tag-space", []byte("<r><a ID=\"x\">t</a >\r\n</r>"), "x", false},
		{"id-deep", []byte(`<r><s><t><a ID="x">1</a></t></s></r>`), "x", true},
		{"other-ids-inside", []byte(`<r><a ID="x"><b ID="y"></b></a></r>`), "x", true},
		{"signature-elsewhere", []byte(`<r><a ID="x"></a><z></z><Signature xmlns="http://www.w3.org/2000/09/xmldsig#"></Signature></r>`), "x", true},
		{"signature-other-namespace", []byte(`<r><a ID="x"></a><Signature></Signature></r>`), "x", true},

		{"crlf", mod("</GiroEmis>", "\r\n</GiroEmis>"), "T33F1", false},
		{"cr-reference-lowercase", mod("&#xD;", "&#xd;"), "T33F1", false},
		{"empty-element", mod("<DscItem></DscItem>", "<DscItem/>"), "T33F1", false},
		{"comment", mod("<Detalle>", "<Detalle><!-- c -->"), "T33F1", false},
		{"pi", mod("<Detalle>", "<Detalle><?p d?>"), "T33F1", false},
		{"cdata", mod("<Detalle>", "<Detalle><![CDATA[x]]>"), "T33F1", false},
		{"char-reference", mod("Café", "Caf&#233;"), "T33F1", false},
		{"gt-literal", mod("&lt;Ltda&gt;", "&lt;Ltda>"), "T33F1", false},
		{"quot-reference-in-text", mod(`"y"`, `&quot;y&quot;`), "T33F1", false},
		{"apos-reference-in-text", mod(`'x'`, `&apos;x&apos;`), "T33F1", false},
		{"attr-order", mod(`c="">`, `c="" aa="1">`), "T33F1", false},
		{"attr-duplicate", mod(`c="">`, `c="" c="">`), "T33F1", false},
		{"attr-single-quote", mod(`a="x>y"`, `a='x>y'`), "T33F1", false},
		{"attr-gt-reference", mod(`> 'é'`, `&gt; 'é'`), "T33F1", false},
		{"attr-literal-tab", mod("&#x9;", "\t"), "T33F1", false},
		{"attr-apos-reference", mod("'é'", "&apos;é'"), "T33F1", false},
		{"attr-two-spaces", mod(`<TED version`, `<TED  version`), "T33F1", false},
		{"attr-space-before-gt", mod(`<TED version="1.0">`, `<TED version="1.0" >`), "T33F1", false},
		{"attr-space-around-eq", mod(`<TED version="1.0">`, `<TED version ="1.0">`), "T33F1", false},
		{"attr-prefixed", mod(`<TED version="1.0">`, `<TED version="1.0" xsi:type="x">`), "T33F1", false},
		// A repeated default namespace is left out of the canonical form;
		// one that changes it is kept; a prefixed one is not in the
		// strict shape.
		{"namespace-declaration-superfluous", mod(`<TED version="1.0">`, `<TED xmlns="http://www.sii.cl/SiiDte" version="1.0">`), "T33F1", true},
		{"namespace-declaration-changed", mod(`<TED version="1.0">`, `<TED xmlns="urn:other" version="1.0">`), "T33F1", true},
		{"namespace-declaration-undeclared", mod(`<TED version="1.0">`, `<TED xmlns="" version="1.0">`), "T33F1", true},
		{"namespace-declaration-nested", mod(`<TED version="1.0"><DD a=`, `<TED xmlns="urn:other" version="1.0"><DD xmlns="http://www.sii.cl/SiiDte" a=`), "T33F1", true},
		{"namespace-declaration-after-attr", mod(`<TED version="1.0">`, `<TED version="1.0" xmlns="urn:other">`), "T33F1", false},
		{"namespace-prefix-declaration", mod(`<TED version="1.0">`, `<TED xmlns:q="urn:q" version="1.0">`), "T33F1", true},
		{"namespace-prefix-superfluous", mod(`<TED version="1.0">`, `<TED xmlns="http://www.sii.cl/SiiDte" xmlns:q="urn:q" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0">`), "T33F1", true},
		{"namespace-prefix-order", mod(`<TED version="1.0">`, `<TED xmlns:r="urn:r" xmlns:q="urn:q" version="1.0">`), "T33F1", false},
		{"namespace-prefix-before-default", mod(`<TED version="1.0">`, `<TED xmlns:r="urn:r" xmlns="urn:q" version="1.0">`), "T33F1", false},
		{"namespace-prefix-used", mod(`<TED version="1.0">`, `<TED xmlns:q="urn:q" q:a="1" version="1.0">`), "T33F1", false},
		{"prefixed-element", mod(`<TED version="1.0">`, `<xsi:TED version="1.0">`), "T33F1", false},
		{"end-tag-space", mod("</Detalle>", "</Detalle >"), "T33F1", false},
		{"nonascii-name", mod("<NroLinDet>1</NroLinDet>", "<Año>1</Año>"), "T33F1", false},
		{"control-character", mod("Café", "Caf\x01"), "T33F1", false},

		{"nested-duplicate-id", []byte(`<r><a ID="x"><b ID="x"></b></a></r>`), "x", false},
		{"later-duplicate-id", []byte(`<r><a ID="x"></a><b ID="x"></b></r>`), "x", false},
		{"earlier-duplicate-id", []byte(`<r><b ID="x"></b><a ID="x"></a></r>`), "x", false},
		{"already-signed", []byte(`<r><a ID="x"></a> <Signature xmlns="http://www.w3.org/2000/09/xmldsig#"></Signature></r>`), "x", false},
		{"root", []byte(`<a ID="x">t</a>`), "x", false},
		{"mismatched-inside", []byte(`<r><a ID="x"><b></c></a></r>`), "x", false},
		{"mismatched-after", []byte(`<r><a ID="x"></a></q>`), "x", false},
		{"truncated", []byte(`<r><a ID="x"><b>text`), "x", false},
		{"undefined-entity-after", []byte(`<r><a ID="x"></a>&nbsp;</r>`), "x", false},
		{"bad-utf8", []byte("<r><a ID=\"x\">\xff</a></r>"), "x", false},
		{"utf8-nonchar", []byte("<r><a ID=\"x\">\xef\xbf\xbe</a></r>"), "x", false},
		{"ascii-declared", []byte("<?xml version=\"1.0\" encoding=\"US-ASCII\"?><r><a ID=\"x\">\xe9</a></r>"), "x", false},
		{"windows-1252-undefined", []byte("<?xml version=\"1.0\" encoding=\"windows-1252\"?><r><a ID=\"x\">\x81</a></r>"), "x", false},
		{"missing-id", []byte(`<r><a ID="y"></a></r>`), "x", false},
	}
}

// mustDecodeLatin1Bytes decodes ISO-8859-1 bytes to UTF-8.
func mustDecodeLatin1Bytes(t testing.TB, b []byte) []byte {
	t.Helper()
	out := make([]byte, 0, len(b)*2)
	for _, c := range b {
		out = append(out, string(rune(c))...)
	}
	return out
}

// checkFastAgainstFull compares the fast path with the full parse on one
// document: whenever the fast path takes it, the full parse must accept it
// too and agree on the element, its context and the digest.
func checkFastAgainstFull(t *testing.T, doc []byte, id string) (fast bool) {
	t.Helper()
	el, digest, ok := fastDigest(doc, id)
	fullEl, canon, err := fullCanonical(doc, id)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("the fast path took a document the full parse rejects (%v):\n%q", err, doc)
	}
	if want := sha1.Sum(canon); digest != want {
		t.Fatalf("fast digest differs from the canonical form's:\n%q\nfull canonical form:\n%q", doc, canon)
	}
	if el.Start != fullEl.Start || el.End != fullEl.End {
		t.Fatalf("fast element at %d-%d, full parse at %d-%d:\n%q", el.Start, el.End, fullEl.Start, fullEl.End, doc)
	}
	if a, b := signedInfoStartTag(el.Parent), signedInfoStartTag(fullEl.Parent); !bytes.Equal(a, b) {
		t.Fatalf("SignedInfo context differs:\nfast %q\nfull %q", a, b)
	}
	return true
}

func TestFastPathAgreesWithFullParse(t *testing.T) {
	for _, tc := range fastCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkFastAgainstFull(t, tc.doc, tc.id); got != tc.fast {
				t.Fatalf("fast path taken = %v, want %v", got, tc.fast)
			}
		})
	}
}

// SignEnveloped gives the same bytes whichever path it takes; documents
// the fast path leaves alone still sign (or fail) as before.
func TestSignFastEqualsFull(t *testing.T) {
	c := testCert(t)
	for _, tc := range fastCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.SignEnveloped(tc.doc, tc.id)
			el, canon, ferr := fullCanonical(tc.doc, tc.id)
			if (err == nil) != (ferr == nil) {
				t.Fatalf("SignEnveloped error %v, full path error %v", err, ferr)
			}
			if err != nil {
				if err.Error() != ferr.Error() {
					t.Fatalf("SignEnveloped error %q, full path error %q", err, ferr)
				}
				return
			}
			digest := sha1.Sum(canon)
			sig, err := c.signature(el.Parent, "#"+tc.id, AlgC14N10, digest[:])
			if err != nil {
				t.Fatal(err)
			}
			want := append(append(append([]byte{}, tc.doc[:el.End]...), sig...), tc.doc[el.End:]...)
			if !bytes.Equal(got, want) {
				t.Fatalf("SignEnveloped output differs from the full path's:\n%s\n%s", got, want)
			}
			if bytes.Count(tc.doc, []byte("<Signature")) > 0 {
				return // the case's own dummy Signature doesn't verify
			}
			if _, err := Verify(got); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

// A canonical-form document signed through the fast path verifies with
// xmlsec1, in ISO-8859-1 and in UTF-8, with the same digest.
func TestSignFastVerifiedByXmlsec(t *testing.T) {
	c := testCert(t)
	dir := t.TempDir()
	iso := canonDteDoc(t, "T33F1")
	utf := []byte(strings.Replace(string(mustDecodeLatin1Bytes(t, iso)), "ISO-8859-1", "UTF-8", 1))
	var digests []string
	for name, doc := range map[string][]byte{"iso": iso, "utf8": utf} {
		if _, _, ok := fastDigest(doc, "T33F1"); !ok {
			t.Fatalf("%s: the fast path did not take the canonical document", name)
		}
		signed, err := c.SignEnveloped(doc, "T33F1")
		if err != nil {
			t.Fatal(err)
		}
		file := writeFile(t, dir, name+".xml", signed)
		if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
			t.Fatalf("%s: xmlsec1 rejected the fast-path signature:\n%s", name, out)
		}
		i := bytes.Index(signed, []byte("<DigestValue>"))
		j := bytes.Index(signed, []byte("</DigestValue>"))
		digests = append(digests, string(signed[i:j]))
	}
	if digests[0] != digests[1] {
		t.Fatalf("digest depends on the encoding: %v", digests)
	}
}

// FuzzSignFastPath checks the fast path against the full parse on
// arbitrary documents: it may only take documents the full parse accepts,
// and must then find the same element and digest the same canonical form.
func FuzzSignFastPath(f *testing.F) {
	for _, tc := range fastCases(f) {
		f.Add(tc.doc, tc.id)
	}
	for _, doc := range c14nCorpus(f) {
		f.Add(doc, "T33F1")
	}
	f.Fuzz(func(t *testing.T, doc []byte, id string) {
		if !isNCName(id) {
			return
		}
		checkFastAgainstFull(t, doc, id)
	})
}

// benchCanonDoc is canonDteDoc grown to the size of a 10-line factura
// (about 4 KB), with ten more detail lines and a TED-sized block.
func benchCanonDoc(b *testing.B) []byte {
	doc := string(mustDecodeLatin1Bytes(b, canonDteDoc(b, "T33F1")))
	var lines strings.Builder
	for i := 2; i <= 11; i++ {
		lines.WriteString("<Detalle><NroLinDet>" + strconv.Itoa(i) + "</NroLinDet><NmbItem>Artículo Ñandú n° " + strconv.Itoa(i) +
			"</NmbItem><QtyItem>" + strconv.Itoa(i) + "</QtyItem><UnmdItem>UN</UnmdItem><PrcItem>1990</PrcItem>" +
			"<DescuentoPct>5</DescuentoPct><DescuentoMonto>100</DescuentoMonto><MontoItem>1890</MontoItem></Detalle>")
	}
	lines.WriteString("<Frmt>" + strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=", 20) + "</Frmt>")
	doc = strings.Replace(doc, "<TED ", lines.String()+"<TED ", 1)
	return latin1(b, doc)
}

// BenchmarkSignEnvelopedCanonical signs a DTE written in canonical form,
// as dtekit's writer produces it (the fast path).
func BenchmarkSignEnvelopedCanonical(b *testing.B) {
	c := testCert(b)
	doc := benchCanonDoc(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.SignEnveloped(doc, "T33F1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDigestCanonical isolates the XML work of the fast path (scan,
// start tag, decoding, SHA-1); compare with BenchmarkDigestFull.
func BenchmarkDigestCanonical(b *testing.B) {
	doc := benchCanonDoc(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := fastDigest(doc, "T33F1"); !ok {
			b.Fatal("fast path not taken")
		}
	}
}

// BenchmarkDigestFull is the same digest through the full parse.
func BenchmarkDigestFull(b *testing.B) {
	doc := benchCanonDoc(b)
	b.ReportAllocs()
	for b.Loop() {
		_, canon, err := fullCanonical(doc, "T33F1")
		if err != nil {
			b.Fatal(err)
		}
		sha1.Sum(canon)
	}
}

// fastDigest runs the fast path alone, as SignEnveloped does first.
func fastDigest(doc []byte, id string) (*xmltree.Element, [sha1.Size]byte, bool) {
	var digest [sha1.Size]byte
	h := sha1.New()
	el, ok := xmltree.FastCanonical(doc, id, xmltree.Options{}, h)
	if !ok {
		return nil, digest, false
	}
	if next := xmltree.NextElement(el); next != nil && next.Is(nsDSig, "Signature") {
		return nil, digest, false
	}
	h.Sum(digest[:0])
	return el, digest, true
}
