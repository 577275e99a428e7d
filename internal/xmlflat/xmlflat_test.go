package xmlflat

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

const (
	latin1Decl = `<?xml version="1.0" encoding="ISO-8859-1"?>`
	utf8Decl   = `<?xml version="1.0" encoding="UTF-8"?>`
	bom        = "\xef\xbb\xbf"
)

func TestLatin1(t *testing.T) {
	raw := []byte{'A', 0xd1, 0xe9, 0x80, 0xff, 0x00}
	if got, want := Latin1ToString(raw), "AÑé\u0080ÿ\x00"; got != want {
		t.Fatalf("Latin1ToString(% x) = %q, want %q", raw, got, want)
	}
	if got := Latin1ToString(nil); got != "" {
		t.Fatalf("Latin1ToString(nil) = %q", got)
	}
	enc, err := ToLatin1("Ñandú & Cía ÿ")
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("\xd1and\xfa & C\xeda \xff"); !bytes.Equal(enc, want) {
		t.Fatalf("ToLatin1 = % x, want % x", enc, want)
	}
	for _, tc := range []struct{ in, wantErr string }{
		{"precio 10 €", "U+20AC"},
		{"“quoted”", "U+201C"},
		{"bad \xff byte", "outside ISO-8859-1"},
		{"replacement \ufffd char", "U+FFFD"},
	} {
		if b, err := ToLatin1(tc.in); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("ToLatin1(%q) = % x, %v; want error containing %q", tc.in, b, err, tc.wantErr)
		}
	}
}

func TestDecodeBase64(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SGVsbG8=", "Hello"},
		{" SGVs\r\n\tbG8= \n", "Hello"},
		{"", ""},
		{" \n", ""},
	} {
		got, err := DecodeBase64(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("DecodeBase64(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"SGVsbG8", "SGVs*bG8=", "SGVsbG8=\v", "=SGVsbG8"} {
		if got, err := DecodeBase64(in); err == nil || !strings.Contains(err.Error(), "invalid base64") {
			t.Errorf("DecodeBase64(%q) = %q, %v; want an invalid base64 error", in, got, err)
		}
	}
}

func TestParseTree(t *testing.T) {
	doc := "<x:R xmlns=\"urn:a\" xmlns:x=\"urn:x\" b=\"2\" a=\"1\" x:c=\"3\">\n" +
		"  <C>t&amp;u &#233;</C>\n" +
		"  <!-- a comment -->\n" +
		"  <?pi data?>\n" +
		"  <D/>\n" +
		"  <y:C xmlns:y=\"urn:y\"> </y:C>\n" +
		"</x:R>\n"
	root, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if root.Name != "R" || root.QName != "x:R" {
		t.Fatalf("root Name %q QName %q, want R and x:R", root.Name, root.QName)
	}
	wantAttrs := []Attr{{"a", "1"}, {"b", "2"}, {"x:c", "3"}} // canonical order
	if len(root.Attrs) != len(wantAttrs) {
		t.Fatalf("root attributes %v, want %v", root.Attrs, wantAttrs)
	}
	for i, a := range wantAttrs {
		if root.Attrs[i] != a {
			t.Fatalf("root attribute %d is %v, want %v", i, root.Attrs[i], a)
		}
	}
	if v, ok := root.Attr("a"); !ok || v != "1" {
		t.Errorf(`Attr("a") = %q, %v`, v, ok)
	}
	if v, ok := root.Attr("x:c"); !ok || v != "3" {
		t.Errorf(`Attr("x:c") = %q, %v`, v, ok)
	}
	if _, ok := root.Attr("xmlns"); ok {
		t.Error("the default namespace declaration is kept as an attribute")
	}
	if _, ok := root.Attr("c"); ok {
		t.Error(`Attr("c") found x:c`)
	}
	if len(root.Kids) != 3 {
		t.Fatalf("root has %d children, want 3 (C, D, y:C)", len(root.Kids))
	}
	c, d, yc := root.Kids[0], root.Kids[1], root.Kids[2]
	if c.Text != "t&u é" || c.Raw != "<C>t&amp;u &#233;</C>" {
		t.Errorf("C: Text %q Raw %q", c.Text, c.Raw)
	}
	if d.Name != "D" || d.Text != "" || d.Raw != "<D/>" || len(d.Kids) != 0 {
		t.Errorf("D: %+v", d)
	}
	if yc.Name != "C" || yc.QName != "y:C" || yc.Text != "" || yc.Raw != `<y:C xmlns:y="urn:y"></y:C>` || len(yc.Attrs) != 0 {
		t.Errorf("y:C: %+v", yc)
	}
	if got := root.Children("C"); len(got) != 2 || got[0] != c || got[1] != yc {
		t.Errorf(`Children("C") = %v, want C and y:C`, got)
	}
	if got := root.Children("E"); len(got) != 0 {
		t.Errorf(`Children("E") = %v`, got)
	}
	wantRaw := `<x:R xmlns="urn:a" xmlns:x="urn:x" b="2" a="1" x:c="3"><C>t&amp;u &#233;</C><D/><y:C xmlns:y="urn:y"></y:C></x:R>`
	if root.Raw != wantRaw {
		t.Errorf("root Raw\n got %s\nwant %s", root.Raw, wantRaw)
	}
	wantFlat := `<R a="1" b="2" x:c="3"><C>t&amp;u é</C><D></D><C></C></R>`
	if got := root.Flat(); got != wantFlat {
		t.Errorf("Flat\n got %s\nwant %s", got, wantFlat)
	}
}

func TestFlatEscaping(t *testing.T) {
	doc := `<a z="" q='say "hi" &amp; &lt;go&gt; &apos;x&apos;' t="&#9;x&#10;y&#13;">1 &gt; 0 &amp;&amp; "q" 'a' &#13;&lt;</a>`
	root, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := `<a q="say &quot;hi&quot; &amp; &lt;go> 'x'" t="&#x9;x&#xA;y&#xD;" z="">1 &gt; 0 &amp;&amp; "q" 'a' &#xD;&lt;</a>`
	if got := root.Flat(); got != want {
		t.Fatalf("Flat\n got %s\nwant %s", got, want)
	}
	var b strings.Builder
	EscapeText(&b, "<&>\"'\r\n\t")
	if got, want := b.String(), "&lt;&amp;&gt;\"'&#xD;\n\t"; got != want {
		t.Errorf("EscapeText = %q, want %q", got, want)
	}
	b.Reset()
	EscapeText(&b, "a\xffb")
	if got, want := b.String(), "a\ufffdb"; got != want {
		t.Errorf("EscapeText of invalid UTF-8 = %q, want %q", got, want)
	}
	b.Reset()
	EscapeAttr(&b, "<&>\"'\r\n\t")
	if got, want := b.String(), "&lt;&amp;>&quot;'&#xD;&#xA;&#x9;"; got != want {
		t.Errorf("EscapeAttr = %q, want %q", got, want)
	}
}

// TestFlatMatchesC14N checks Flat against xmllint's canonical XML for
// documents without namespace declarations or whitespace between tags
// (which Flat drops and C14N keeps).
func TestFlatMatchesC14N(t *testing.T) {
	xmllint := oracle.Tool(t, "xmllint")
	docs := []string{
		`<DA><RE>97975000-5</RE><RS>RUT DE PRUEBA &amp; CÍA</RS><TD>33</TD><RNG><D>1</D><H>200</H></RNG><FA>2003-09-04</FA><IDK>100</IDK></DA>`,
		`<a z="3" b="&lt;&amp;&quot;" a='x "y" &apos;z&apos;'><e/><t>1 &gt; 0 &#13; "q" 'a'</t><u k="&#9;&#10;&#13;">Ñandú</u></a>`,
		`<FRMA algoritmo="SHA1withRSA">g1AQX0sy8NJugX52k2hTJEZAE9Cuul6pqYBdFxj1N17umW7zG/hAavCALKByHzdYAfZ3LhGTXCai5zNxOo4lDQ==</FRMA>`,
		`<r><x>&#x20AC;</x><y>&lt;![CDATA[ not ]]&gt;</y><z><![CDATA[<b> & ]]></z></r>`,
	}
	dir := t.TempDir()
	for i, doc := range docs {
		root, err := Parse(doc)
		if err != nil {
			t.Fatalf("doc %d: %v", i, err)
		}
		path := filepath.Join(dir, "doc.xml")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		want := oracle.Run(t, xmllint, "--c14n", path)
		if got := root.Flat(); got != string(want) {
			t.Errorf("doc %d: Flat differs from xmllint --c14n\n got %s\nwant %s", i, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("<a>", MaxDepth+1) + strings.Repeat("</a>", MaxDepth+1)
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "", "no root element"},
		{"only whitespace", " \n\t", "no root element"},
		{"only a comment", "<!-- c -->", "no root element"},
		{"DOCTYPE", `<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>`, "DOCTYPE"},
		{"text beside an element", "<a>x<b/></a>", "mixed content: <a> holds both text and elements"},
		{"text after an element", "<a><b/>x</a>", "mixed content: <a> holds both text and elements"},
		{"repeated attribute", `<a x="1" x="2"/>`, "attribute x appears twice in <a>"},
		{"second root", "<a/><b/>", "content after the root element"},
		{"text after the root", "<a/>x", "content after the root element"},
		{"end tag mismatch", "<a><b></a></b>", "invalid XML"},
		{"prefix mismatch", "<p:a></q:a>", "invalid XML"},
		{"stray end tag", "</a>", "invalid XML"},
		{"unclosed", "<a><b>", "invalid XML"},
		{"truncated tag", "<a", "invalid XML"},
		{"unquoted attribute", "<a x=1/>", "invalid XML"},
		{"undefined entity", "<a>&nbsp;</a>", "invalid XML"},
		{"control character", "<a>\x01</a>", "invalid XML"},
		{"too deep", deep, "nested deeper than 32 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tc.in, root)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Parse(%q) error %q, want it to contain %q", tc.in, err, tc.wantErr)
			}
		})
	}
}

func TestParseDepthLimit(t *testing.T) {
	doc := strings.Repeat("<a>", MaxDepth) + "x" + strings.Repeat("</a>", MaxDepth)
	n, err := Parse(doc)
	if err != nil {
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	depth := 1
	for ; len(n.Kids) == 1; n = n.Kids[0] {
		depth++
	}
	if depth != MaxDepth || n.Text != "x" {
		t.Fatalf("depth %d, innermost text %q; want %d and x", depth, n.Text, MaxDepth)
	}
}

func TestParseDocument(t *testing.T) {
	tests := []struct {
		name, in, wantText string
	}{
		{"latin1, single-quoted declaration", "<?xml version='1.0' encoding='ISO-8859-1'?>\n<RS>\xd1and\xfa</RS>", "Ñandú"},
		{"latin1, double-quoted declaration", latin1Decl + "\r\n<RS>CAF\xc9</RS>", "CAFÉ"},
		{"latin1 without declaration", "<RS>\xd1</RS>", "Ñ"},
		{"UTF-8 with BOM", bom + utf8Decl + "<RS>\xc3\x91</RS>", "Ñ"},
		{"UTF-8 without declaration", "<RS>\xc3\x91</RS>", "Ñ"},
		{"character reference beyond Latin-1", latin1Decl + "<RS>&#x20AC;</RS>", "€"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, err := ParseDocument([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if root.Name != "RS" || root.Text != tc.wantText {
				t.Fatalf("got <%s> %q, want <RS> %q", root.Name, root.Text, tc.wantText)
			}
		})
	}
	for _, in := range []string{utf8Decl + "<a>\xd1</a>", "\xfe\xff", latin1Decl + "<a>", "not xml"} {
		if root, err := ParseDocument([]byte(in)); err == nil {
			t.Errorf("ParseDocument(%q) = %+v, want an error", in, root)
		}
	}
}

// FuzzParseDocument feeds arbitrary bytes to the reader. Besides never
// panicking, a parsed element's flat form must parse again to the same flat
// form, and Latin-1 decoding must round-trip through ToLatin1.
func FuzzParseDocument(f *testing.F) {
	f.Add([]byte(latin1Decl + "<a b='1' xmlns='urn:x'>\n <c>\xd1&amp;</c><!--x--><d/></a>"))
	f.Add([]byte(bom + "<p:a p:x=\"&#9;\"><b>&#13;&gt;</b></p:a>"))
	f.Add([]byte("<?xml version='1.0' encoding='UTF-8'?><a>\xc3\x91</a>"))
	f.Add([]byte(`<!DOCTYPE a><a/>`))
	f.Add([]byte("<a>x<b/></a>"))
	f.Add([]byte(`<?xml version="1.0" encoding="windows-1252"?><a/>`))
	f.Add([]byte(strings.Repeat("<a>", 40)))
	f.Add([]byte("<r><![CDATA[<&>]]><?pi?></r>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := DecodeBase64(string(data)); err != nil && !strings.Contains(err.Error(), "invalid base64") {
			t.Fatalf("DecodeBase64 error %q", err)
		}
		if back, err := ToLatin1(Latin1ToString(data)); err != nil || !bytes.Equal(back, data) {
			t.Fatalf("Latin-1 round trip of % x: % x, %v", data, back, err)
		}
		root, err := ParseDocument(data)
		if err != nil {
			return
		}
		flat := root.Flat()
		again, err := Parse(flat)
		if err != nil {
			t.Fatalf("flat form %q of %q does not parse: %v", flat, data, err)
		}
		if got := again.Flat(); got != flat {
			t.Fatalf("flat form is not stable:\n first %q\nsecond %q", flat, got)
		}
		if _, err := Parse(root.Raw); err != nil {
			t.Fatalf("Raw %q of %q does not parse: %v", root.Raw, data, err)
		}
	})
}
