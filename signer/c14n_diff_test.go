package signer

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// The differential tests of this file generate documents from a fixed seed
// (so every run, and every failure, is reproducible) and compare our
// canonical forms with libxml2's (xmllint --c14n) and our single-element
// digests with xmlsec1's.

// c14nDiffSeed seeds the generator; change it to explore other documents.
const c14nDiffSeed = 20260315

// docGen writes random XML documents that stay within what both sides
// accept: no comments (xmllint --c14n keeps them, the SII profile drops
// them), no DOCTYPE, namespace-well-formed.
type docGen struct {
	r      *rand.Rand
	latin1 bool
	ids    []string // ID values written, in document order
	b      strings.Builder
}

var (
	genNames = []string{"a", "B", "doc", "Item", "x-y", "z.1", "_u", "Ñandú"}
	// No "&" in namespace names: libxml2 writes them unescaped in its
	// canonical form, where C14N 1.0 escapes them as attribute values.
	genURIs   = []string{"urn:a", "urn:b", "http://www.sii.cl/SiiDte", "urn:c?x=1;y=2"}
	genTexts  = []string{"plain", " lead", "trail ", "a&amp;b", "&lt;tag&gt;", "x > y", "]]&gt;", "q\"uote'", "tab\there", "cr\rlf\r\nlf\n", "&#13;&#xD;", "&#233;&#xF1;", "Compañía", "€", "\t\n ", ""}
	genValues = []string{"v", "a b", "&lt;&amp;&gt;", "&quot;q&quot;", "'", "tab\t", "nl\nx", "cr\r\nx", "&#9;&#10;&#13;", "ñ", "€", ""}
)

func (g *docGen) pick(s []string) string {
	v := s[g.r.IntN(len(s))]
	if g.latin1 {
		v = strings.ReplaceAll(v, "€", "&#8364;")
	}
	return v
}

// element writes one element with depth levels below it; prefixes are the
// prefixes in scope.
func (g *docGen) element(depth int, prefixes []string) {
	name := g.pick(genNames)
	var decls []string
	if g.r.IntN(4) == 0 {
		decls = append(decls, fmt.Sprintf(` xmlns="%s"`, g.pick(genURIs)))
	} else if g.r.IntN(8) == 0 {
		decls = append(decls, ` xmlns=""`)
	}
	if g.r.IntN(4) == 0 {
		p := []string{"p", "q", "r"}[g.r.IntN(3)]
		decls = append(decls, fmt.Sprintf(" xmlns:%s='%s'", p, g.pick(genURIs)))
		prefixes = append(prefixes[:len(prefixes):len(prefixes)], p)
	}
	if len(prefixes) > 0 && g.r.IntN(3) == 0 {
		name = prefixes[g.r.IntN(len(prefixes))] + ":" + name
	}
	g.b.WriteString("<" + name)
	for _, d := range decls {
		g.b.WriteString(d)
	}
	used := map[string]bool{}
	for n := g.r.IntN(4); n > 0; n-- {
		an := []string{"k", "a", "Z", "id2", "xml:lang", "xml:space"}[g.r.IntN(6)]
		if len(prefixes) > 0 && g.r.IntN(4) == 0 {
			an = prefixes[g.r.IntN(len(prefixes))] + ":" + []string{"k", "m"}[g.r.IntN(2)]
		}
		if used[an] || strings.Contains(an, ":") && used[an[strings.IndexByte(an, ':'):]] {
			continue
		}
		used[an] = true
		q := []string{`"`, `'`}[g.r.IntN(2)]
		v := g.pick(genValues)
		if an == "xml:space" {
			v = []string{"preserve", "default"}[g.r.IntN(2)]
		}
		v = strings.ReplaceAll(v, q, map[string]string{`"`: "&quot;", `'`: "&apos;"}[q])
		g.b.WriteString(fmt.Sprintf("%s%s=%s%s%s", []string{" ", "\n  ", "\t"}[g.r.IntN(3)], an, q, v, q))
	}
	if g.r.IntN(3) == 0 {
		id := fmt.Sprintf("id%d", len(g.ids)+1)
		g.ids = append(g.ids, id)
		g.b.WriteString(` ID="` + id + `"`)
	}
	if depth == 0 && g.r.IntN(3) == 0 {
		g.b.WriteString([]string{"/>", " />"}[g.r.IntN(2)])
		return
	}
	g.b.WriteString(">")
	for n := g.r.IntN(4); n > 0; n-- {
		switch k := g.r.IntN(10); {
		case depth > 0 && k < 5:
			g.element(depth-1, prefixes)
		case k < 8:
			g.b.WriteString(g.pick(genTexts))
		case k < 9:
			g.b.WriteString("<![CDATA[" + []string{"<b>&amp;", " ]] > ", "\r\n"}[g.r.IntN(3)] + "]]>")
		default:
			g.b.WriteString([]string{"<?pi data?>", "<?bare?>", "<?pi  spaced  ?>"}[g.r.IntN(3)])
		}
	}
	g.b.WriteString("</" + name + ">")
}

// document returns one generated document in ISO-8859-1 or UTF-8.
func (g *docGen) document(t testing.TB) []byte {
	g.b.Reset()
	g.ids = nil
	g.latin1 = g.r.IntN(2) == 0
	decl := `<?xml version="1.0" encoding="UTF-8"?>`
	if g.latin1 {
		decl = `<?xml version="1.0" encoding="ISO-8859-1"?>`
	}
	if g.r.IntN(5) > 0 {
		g.b.WriteString(decl + []string{"\n", "\r\n", ""}[g.r.IntN(3)])
	}
	if g.r.IntN(4) == 0 {
		g.b.WriteString("<?before root?>\n")
	}
	g.b.WriteString("<root>")
	g.element(3, nil)
	g.element(2, nil)
	g.b.WriteString("</root>")
	if g.r.IntN(4) == 0 {
		g.b.WriteString("\n<?after?>")
	}
	if g.latin1 {
		return latin1(t, g.b.String())
	}
	return []byte(g.b.String())
}

// TestC14NDifferentialXmllint compares whole-document canonical forms of
// generated documents with xmllint --c14n.
func TestC14NDifferentialXmllint(t *testing.T) {
	if testing.Short() {
		t.Skip("oracle-heavy: runs xmllint a few hundred times")
	}
	bin := oracle.Tool(t, "xmllint")
	dir := t.TempDir()
	g := &docGen{r: rand.New(rand.NewPCG(c14nDiffSeed, 1))}
	compared := 0
	for i := range 300 {
		doc := g.document(t)
		got, err := Canonicalize(doc, "")
		file := writeFile(t, dir, fmt.Sprintf("doc%d.xml", i), doc)
		want, xerr := runCmd(bin, "--nonet", "--c14n", file)
		if (err == nil) != (xerr == nil) {
			t.Fatalf("document %d: we say %v, xmllint says %v\n%s\n%q", i, err, xerr, want, doc)
		}
		if err != nil {
			continue
		}
		compared++
		if string(got) != want {
			t.Fatalf("document %d: canonical form differs from xmllint --c14n\n doc: %q\n got: %q\nwant: %q", i, doc, got, want)
		}
	}
	if compared < 250 {
		t.Fatalf("only %d of 300 generated documents were well formed for both", compared)
	}
}

// TestC14NDifferentialXmlsec signs one element of generated documents (an
// element with an ID, as the SII profile signs) and has xmlsec1 check the
// digest of that element in its context and the signature.
func TestC14NDifferentialXmlsec(t *testing.T) {
	if testing.Short() {
		t.Skip("oracle-heavy: runs xmlsec1 a hundred times")
	}
	oracle.Tool(t, "xmlsec1")
	c := testCert(t)
	dir := t.TempDir()
	g := &docGen{r: rand.New(rand.NewPCG(c14nDiffSeed, 2))}
	checked := 0
	for i := 0; checked < 100 && i < 1000; i++ {
		doc := g.document(t)
		if len(g.ids) == 0 {
			continue
		}
		id := g.ids[g.r.IntN(len(g.ids))]
		signed, err := c.SignEnveloped(doc, id)
		if err != nil {
			continue // e.g. the element is the last child of an element that already holds a Signature
		}
		checked++
		file := writeFile(t, dir, fmt.Sprintf("signed%d.xml", i), signed)
		bin := oracle.Tool(t, "xmlsec1")
		out, err := runCmd(bin, "--verify", "--id-attr:ID", idElementName(t, signed, id),
			"--enabled-key-data", "key-value", "--enabled-key-data", "rsa", file)
		if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "OK") {
			t.Fatalf("document %d, element %s: xmlsec1 rejects our signature:\n%s\n%q", i, id, out, signed)
		}
		if _, err := Verify(signed); err != nil {
			t.Fatalf("document %d: our Verify: %v", i, err)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d documents could be signed", checked)
	}
}

// idElementName returns the element name, with its namespace when it has
// one, in the form xmlsec1's --id-attr takes (namespace:local).
func idElementName(t *testing.T, doc []byte, id string) string {
	t.Helper()
	d, err := xmltreeParse(doc)
	if err != nil {
		t.Fatal(err)
	}
	el, err := d.ByID(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if el.URI == "" {
		return el.Local
	}
	return el.URI + ":" + el.Local
}

func xmltreeParse(doc []byte) (*xmltree.Document, error) { return xmltree.Parse(doc) }
