package signer

import (
	"bytes"
	"github.com/dtekit/dtekit/internal/xmltree"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// c14nCorpus holds comment-free documents that stress canonicalization
// (xmllint --c14n keeps comments, we never do).
func c14nCorpus(t testing.TB) map[string][]byte {
	return map[string][]byte{
		"latin1-text-and-attrs": latin1(t, "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\r\n"+
			"<?pre-root data  here ?>\r\n"+
			"<DTE xmlns=\"http://www.sii.cl/SiiDte\" version='1.0'>\r\n"+
			"<Documento ID=\"T33F1\" b=\"tab\there\" a=\"line\r\nbreak\" c=\"ref&#9;&#10;&#13;x\" d='q\"uo&apos;te &lt; &gt; &amp;'>\r\n"+
			"\t<RznSoc>Compañía Ñandú &amp; Cía. &lt;Ltda&gt; 'x' \"y\" &#233; &#xF1;</RznSoc>\r\n"+
			"\t<Cr>a&#13;b\rc\r\nd &#x000000000000000000041;</Cr><Empty/><Empty2 ></Empty2 >\r\n"+
			"\t<Cdata><![CDATA[ <b> & ]]> ]></Cdata>\r\n"+
			"\t<?in-doc  x?><?bare?>\r\n"+
			"</Documento></DTE>\r\n<?post-root?>\r\n"),
		"namespaces": []byte(`<r:root xmlns:r="urn:r" xmlns="urn:d" xmlns:b="urn:b" xmlns:a="urn:a">
  <child xmlns:r="urn:r" xmlns:a="urn:a2" b:z="1" a:z="2" z="3" r:y="4">
    <inner xmlns=""><deeper xmlns="urn:d"/><keep xmlns="urn:other"/></inner>
    <x:e xmlns:x="urn:x" x:attr="v"/>
  </child>
</r:root>`),
		"utf8-bom-astral": append([]byte{0xEF, 0xBB, 0xBF}, []byte("<?xml version=\"1.0\" encoding=\"UTF-8\"?><a xml:lang=\"es\">€ 😀 &#x1F600; &#8364;<b xml:space=\"preserve\"> </b></a>")...),
		"no-declaration":  []byte(`<getToken><item><Semilla>000012345678</Semilla></item></getToken>`),
	}
}

// Whole-document canonical forms must equal what libxml2 produces.
func TestCanonicalizeMatchesXmllint(t *testing.T) {
	bin := oracle.Tool(t, "xmllint")
	dir := t.TempDir()
	corpus := map[string]func(t *testing.T) []byte{"sii-sample": readSample}
	for name, doc := range c14nCorpus(t) {
		corpus[name] = func(*testing.T) []byte { return doc }
	}
	for name, load := range corpus {
		t.Run(name, func(t *testing.T) {
			doc := load(t)
			want, err := runCmd(bin, "--c14n", writeFile(t, dir, name+".xml", doc))
			if err != nil {
				t.Fatalf("xmllint: %v\n%s", err, want)
			}
			got, err := Canonicalize(doc, "")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("canonical form differs from xmllint --c14n\n got: %q\nwant: %q", got, want)
			}
			again, err := Canonicalize(got, "")
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("canonicalizing the canonical form changed it: %v\n%q", err, again)
			}
		})
	}
}

// Hand-derived canonical forms of an element subset, following the C14N
// 1.0 rules: the apex carries every namespace in scope, superfluous
// redeclarations vanish, xml:* attributes are inherited by the apex, and an
// xmlns="" is emitted only where a default namespace was in force.
func TestCanonicalizeSubset(t *testing.T) {
	doc := []byte(`<?xml version="1.0"?>
<Root xmlns="urn:d" xmlns:p="urn:p" xml:lang="es" p:a="1">
  <Mid xmlns:p="urn:p" xmlns:q="urn:q">
    <Doc ID="A" z="2" a="1"><!-- dropped --><In xmlns="urn:d">t&amp;x</In><Out xmlns=""><Back xmlns="urn:d"/></Out></Doc>
  </Mid>
</Root>`)
	got, err := Canonicalize(doc, "A")
	if err != nil {
		t.Fatal(err)
	}
	want := `<Doc xmlns="urn:d" xmlns:p="urn:p" xmlns:q="urn:q" ID="A" a="1" z="2" xml:lang="es"><In>t&amp;x</In><Out xmlns=""><Back xmlns="urn:d"></Back></Out></Doc>`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestParserRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":              "",
		"text-only":          "hello",
		"two-roots":          "<a/><b/>",
		"unclosed":           "<a><b></b>",
		"bad-attr":           `<a x=1/>`,
		"dup-attr":           `<a x="1" x="2"/>`,
		"dup-attr-ns":        `<a xmlns:p="urn:x" xmlns:q="urn:x" p:x="1" q:x="2"/>`,
		"undeclared-prefix":  `<p:a/>`,
		"lt-in-attr":         `<a x="<"/>`,
		"control-char":       "<a>\x01</a>",
		"bad-char-ref":       `<a>&#0;</a>`,
		"huge-char-ref":      `<a>&#x110000;</a>`,
		"xml-decl-late":      `<a><?xml version="1.0"?></a>`,
		"undeclare-prefix":   `<a xmlns:p=""/>`,
		"utf16-bom":          "\xff\xfe<\x00a\x00/\x00>\x00",
		"ascii-high-byte":    "<?xml version=\"1.0\" encoding=\"US-ASCII\"?><a>\xe9</a>",
		"cp1252-undefined":   "<?xml version=\"1.0\" encoding=\"windows-1252\"?><a>\x81</a>",
		"unterminated-cdata": "<a><![CDATA[x</a>",
		"cdata-end-in-text":  "<a>x]]>y</a>",
	} {
		if _, err := Canonicalize([]byte(doc), ""); err == nil {
			t.Errorf("%s: parsed %q without error", name, doc)
		}
	}
	deep := bytes.Repeat([]byte("<a>"), xmltree.DefaultMaxDepth+1)
	if _, err := Canonicalize(deep, ""); err == nil {
		t.Error("accepted nesting deeper than maxDepth")
	}
}
