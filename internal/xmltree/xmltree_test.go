package xmltree

import (
	"bytes"
	"errors"
	"math/bits"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

func TestParseDeclaration(t *testing.T) {
	for _, tc := range []struct {
		in       string
		enc      string
		wantErr  bool
		noDecl   bool
		standalo string
	}{
		{in: `<?xml version="1.0" encoding="ISO-8859-1"?><a/>`, enc: "ISO-8859-1"},
		{in: `<?xml version='1.0' encoding='utf-8'?><a/>`, enc: "utf-8"},
		{in: "<?xml version=\"1.0\"\n  encoding = \"latin1\" standalone='yes' ?>", enc: "latin1", standalo: "yes"},
		{in: `<?xml version="1.0"?><a/>`},
		{in: `<a encoding="UTF-8"/>`, noDecl: true},
		{in: ` <?xml version="1.0"?>`, noDecl: true},
		// A pseudo-attribute that merely ends in "encoding" is not one.
		{in: `<?xml version="1.0" xencoding="UTF-16"?>`, wantErr: true},
		{in: `<?xml version="1.0" encodingx="UTF-16"?>`, wantErr: true},
		{in: `<?xml encoding="UTF-8" version="1.0"?>`, wantErr: true},
		{in: `<?xml version="1.0" standalone="yes" encoding="UTF-8"?>`, wantErr: true},
		{in: `<?xml version="1.0" encoding="UTF-8" encoding="ISO-8859-1"?>`, wantErr: true},
		{in: `<?xml version="1.0"encoding="UTF-8"?>`, wantErr: true},
		{in: `<?xml version="1.0" encoding=UTF-8?>`, wantErr: true},
		{in: `<?xml version="1.0" encoding=""?>`, wantErr: true},
		{in: `<?xml version="1.1"?>`, wantErr: true},
		{in: `<?xml encoding="UTF-8"?>`, wantErr: true},
		{in: `<?xml version="1.0" encoding="UTF-8"`, wantErr: true},
	} {
		d, err := ParseDeclaration([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseDeclaration(%q): error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && (d.Present == tc.noDecl || d.Encoding != tc.enc || d.Standalone != tc.standalo) {
			t.Errorf("ParseDeclaration(%q) = %+v", tc.in, d)
		}
	}
	// The declarations dtekit writes, read without a copy, read as the
	// same declaration written with a space more (which takes the
	// general reading).
	for _, decl := range []string{`<?xml version="1.0" encoding="ISO-8859-1"?>`, `<?xml version="1.0" encoding="UTF-8"?>`} {
		fast, err1 := ParseDeclaration([]byte(decl + "\n<a/>"))
		slow, err2 := ParseDeclaration([]byte(strings.Replace(decl, "?>", " ?>", 1) + "\n<a/>"))
		slow.Len--
		if err1 != nil || err2 != nil || fast != slow || fast.Len != len(decl) {
			t.Errorf("%s: %+v %v, want %+v %v", decl, fast, err1, slow, err2)
		}
	}
}

func TestEncodingRule(t *testing.T) {
	for label, want := range map[string]string{
		"ISO-8859-1": Latin1, "iso8859-1": Latin1, "Latin1": Latin1, "latin-1": Latin1, "ISO_8859-1": Latin1,
		"l1": Latin1, "IBM819": Latin1, "utf-8": UTF8, "UTF8": UTF8, "US-ASCII": USASCII,
	} {
		if got, err := EncodingOf(label); err != nil || got != want {
			t.Errorf("EncodingOf(%q) = %q, %v; want %q", label, got, err, want)
		}
	}
	for _, label := range []string{"windows-1252", "ISO-8859-15", "UTF-16", "latin 1", "iso-8859-1 ", ""} {
		if got, err := EncodingOf(label); err == nil {
			t.Errorf("EncodingOf(%q) = %q, want an error", label, got)
		}
	}
	// The parser applies the same rule.
	for _, doc := range []string{
		"<?xml version=\"1.0\" encoding=\"windows-1252\"?><a/>",
		"<?xml version=\"1.0\" xencoding=\"ISO-8859-1\"?><a>\xd1</a>",
		"\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a/>",
		"<?xml version=\"1.0\" encoding=\"US-ASCII\"?><a>\xd1</a>",
		"<a>\xd1</a>",
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("Parse(%q) accepted it", doc)
		}
	}
	d, err := Parse([]byte("<?xml version=\"1.0\" encoding=\"latin1\"?><a>\xd1</a>"))
	if err != nil || d.Encoding != Latin1 || d.Root.Text() != "Ñ" {
		t.Fatalf("latin1 document: %+v, %v", d, err)
	}
	d, err = ParseWith([]byte("<a>\xd1</a>"), Options{Latin1Fallback: true})
	if err != nil || d.Root.Text() != "Ñ" {
		t.Fatalf("undeclared latin1 with the fallback: %v", err)
	}
}

func TestDoctypeRejected(t *testing.T) {
	for _, doc := range []string{
		`<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>`,
		`<?xml version="1.0"?><!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>`,
		`<a><!DOCTYPE a></a>`,
	} {
		if _, err := Parse([]byte(doc)); err == nil || !errors.Is(err, ErrInvalidXML) {
			t.Errorf("Parse(%q): %v, want an invalid-XML error", doc, err)
		}
	}
}

func TestLimits(t *testing.T) {
	deep := strings.Repeat("<a>", 40) + strings.Repeat("</a>", 40)
	if _, err := ParseWith([]byte(deep), Options{MaxDepth: 32}); !errors.Is(err, ErrLimit) {
		t.Errorf("40 levels under MaxDepth 32: %v", err)
	}
	if _, err := ParseWith([]byte(deep), Options{MaxDepth: 40}); err != nil {
		t.Errorf("40 levels under MaxDepth 40: %v", err)
	}
	many := "<r>" + strings.Repeat("<a></a>", 100) + "</r>"
	if _, err := ParseWith([]byte(many), Options{MaxElements: 100}); !errors.Is(err, ErrLimit) {
		t.Errorf("101 elements under MaxElements 100: %v", err)
	}
	if _, err := ParseWith([]byte(many), Options{MaxBytes: len(many) - 1}); !errors.Is(err, ErrLimit) {
		t.Errorf("input over MaxBytes: %v", err)
	}
}

func TestSkim(t *testing.T) {
	doc := []byte(`<r><keep><x>1</x></keep><skip b="2"><y>3</y></skip><skip><z a='1'/></skip></r>`)
	d, err := ParseWith(doc, Options{Skim: func(e *Element) bool { return e.Local == "skip" }})
	if err != nil {
		t.Fatal(err)
	}
	kids := d.Root.Elements()
	if len(kids) != 3 || len(kids[0].Elements()) != 1 || len(kids[1].Children) != 0 || len(kids[2].Elements()) != 1 {
		t.Fatalf("skimmed tree: %+v", kids)
	}
	if got := string(doc[kids[1].Start:kids[1].End]); got != `<skip b="2"><y>3</y></skip>` {
		t.Fatalf("skimmed element's bytes %q", got)
	}
	// A skimmed subtree must still be well formed.
	if _, err := ParseWith([]byte(`<r><skip><y>3</z></skip></r>`), Options{Skim: func(*Element) bool { return true }}); err == nil {
		t.Fatal("a malformed skimmed subtree was accepted")
	}
}

// The word-at-a-time check never misses a byte the byte table marks, in
// any position, and flags no other byte but tab and line feed (which the
// byte loop then steps over).
func TestSWARSpecialText(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 8; pos++ {
			var w [8]byte
			for i := range w {
				w[i] = 'a'
			}
			w[pos] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			for _, high := range []bool{false, true} {
				plain := byte(plainASCII)
				if high {
					plain |= plainHigh
				}
				want := plainText[c]&plain == 0
				if got := swarSpecialText(x, high) != 0; got != want && !(got && (c == '\t' || c == '\n')) {
					t.Fatalf("byte 0x%02X at %d (high plain %v): special %v, want %v", c, pos, high, got, want)
				}
			}
		}
	}
}

// The mask's lowest set bit points at the first byte that needs a look,
// whatever bytes follow it (a borrow may flag those wrongly, never one
// before): the scan jumps straight to that byte.
func TestSWARSpecialFirst(t *testing.T) {
	rng := uint64(0x9E3779B97F4A7C15)
	next := func() byte {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return byte(rng)
	}
	for _, high := range []bool{false, true} {
		plain := byte(plainASCII)
		if high {
			plain |= plainHigh
		}
		for c := 0; c < 256; c++ {
			if plainText[c]&plain != 0 && c != '\t' && c != '\n' {
				continue // not a byte the scan must look at
			}
			for pos := 0; pos < 8; pos++ {
				for round := 0; round < 64; round++ {
					var w [8]byte
					for i := range w {
						switch {
						case i < pos:
							// A plain byte other than tab and line
							// feed: printable ASCII, or any byte above
							// 0x7F when those are plain.
							for w[i] = next(); plainText[w[i]]&plain == 0 || w[i] < 0x20; w[i] = next() {
							}
						case i == pos:
							w[i] = byte(c)
						default:
							w[i] = next()
						}
					}
					x := uint64(0)
					for i := 7; i >= 0; i-- {
						x = x<<8 | uint64(w[i])
					}
					m := swarSpecialText(x, high)
					if m == 0 || bits.TrailingZeros64(m)>>3 != pos {
						t.Fatalf("word % X (high plain %v): mask %016X, want the first flag on byte %d", w, high, m, pos)
					}
				}
			}
		}
	}
}

func TestKeep(t *testing.T) {
	doc := []byte(`<?pi a?><r xmlns="urn:r" xmlns:p="urn:p" xml:lang="es"><k ID="k1"><u a="1"><!-- c --><p:v ID="v1">t&amp;<![CDATA[<x>]]></p:v><?q d?></u>` +
		"<w xmlns=\"urn:w\">\r\n</w><n/></k><u2><k>lost</k></u2></r>")
	keep := func(e *Element) (bool, error) { return e.Local == "k" || e.Local == "n", nil }
	d, err := ParseWith(doc, Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	// u2 is kept for the k inside it, without its earlier content.
	kids := d.Root.Elements()
	if len(kids) != 2 || kids[0].Local != "k" || len(kids[0].Elements()) != 1 || kids[0].Elements()[0].Local != "n" ||
		kids[1].Local != "u2" || len(kids[1].Elements()) != 1 || kids[1].Elements()[0].Text() != "lost" {
		t.Fatalf("kept tree: %+v", kids)
	}
	if d.Elements != 8 {
		t.Fatalf("counted %d elements, want 8", d.Elements)
	}
	k, err := d.ByID("k1", nil)
	if err != nil || k != kids[0] {
		t.Fatalf("ByID(k1) = %v, %v", k, err)
	}
	if _, err := d.ByID("v1", nil); err == nil {
		t.Fatal("ByID found an element that is not kept")
	}
	// Written by hand from the C14N 1.0 rules: the apex carries every
	// namespace in scope and the inherited xml:lang; comments go, the
	// CDATA section becomes escaped text, CR LF becomes LF.
	want := `<k xmlns="urn:r" xmlns:p="urn:p" ID="k1" xml:lang="es"><u a="1"><p:v ID="v1">t&amp;&lt;x&gt;</p:v><?q d?></u>` +
		"<w xmlns=\"urn:w\">\n</w><n></n></k>"
	got, err := CanonicalElement(d, k, nil, nil)
	if err != nil || string(got) != want {
		t.Fatalf("canonical form from the bytes:\n got %q, %v\nwant %q", got, err, want)
	}
	var buf strings.Builder
	if err := d.WriteCanonical(&buf, nil, nil, kids[0]); err != nil {
		t.Fatal(err)
	}
	if want := `<?pi a?>` + "\n" + `<r xmlns="urn:r" xmlns:p="urn:p" xml:lang="es"><u2><k>lost</k></u2></r>`; buf.String() != want {
		t.Fatalf("document minus k:\n got %q\nwant %q", buf.String(), want)
	}
	full, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if fk, _ := CanonicalElement(full, full.Root.Elements()[0], nil, nil); !bytes.Equal(fk, got) {
		t.Fatalf("canonical form from the full tree: %q", fk)
	}

	for name, tc := range map[string]struct {
		doc  string
		want error
	}{
		"duplicate ID in dropped elements": {`<r><a ID="x"/><b><c ID="x"/></b></r>`, nil},
		"malformed dropped element":        {`<r><b><c></d></b></r>`, ErrInvalidXML},
		"too many dropped elements":        {`<r>` + strings.Repeat(`<b/>`, 20) + `</r>`, ErrLimit},
	} {
		d, err := ParseWith([]byte(tc.doc), Options{MaxElements: 10, Keep: func(e *Element) (bool, error) { return e.Local == "a", nil }})
		switch {
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		case tc.want == nil && (err != nil || d.DuplicateID() != "x"):
			t.Errorf("%s: %v, duplicate %q", name, err, d.DuplicateID())
		}
	}
	// An ancestor kept for a descendant takes its ID in ByID.
	d, err = ParseWith([]byte(`<r><u ID="p"><x/><k/></u></r>`), Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := d.ByID("p", nil); err != nil || u.Local != "u" || len(u.Elements()) != 1 || u.Parent != d.Root {
		t.Fatalf("ByID(p) = %+v, %v", u, err)
	}
	stop := errors.New("stop")
	if _, err := ParseWith([]byte(`<r><a><b/></a></r>`), Options{Keep: func(e *Element) (bool, error) {
		if e.Local == "b" && e.Parent.Local == "a" {
			return false, stop
		}
		return false, nil
	}}); err != stop {
		t.Fatalf("Keep's error: %v", err)
	}
}

func TestCloseDrop(t *testing.T) {
	doc := []byte(`<r><d ID="a"><x ID="b">1</x></d><d ID="c"><x>2</x></d><y ID="b"/></r>`)
	var closed []string
	d, err := ParseWith(doc, Options{
		Keep: func(*Element) (bool, error) { return true, nil },
		Close: func(d *Document, el *Element) error {
			closed = append(closed, el.Local)
			if el.Local == "d" {
				// The subtree is complete and canonicalizes when closed.
				if got, err := CanonicalElement(d, el, nil, nil); err != nil || !bytes.Equal(got, doc[el.Start:el.End]) {
					t.Errorf("canonical form at Close: %q, %v", got, err)
				}
				d.Drop(el)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(closed, ","); got != "x,d,x,d,y" {
		t.Fatalf("closed %s", got)
	}
	kids := d.Root.Elements()
	if len(kids) != 3 || len(kids[0].Children) != 0 || len(kids[1].Children) != 0 {
		t.Fatalf("dropped subtrees still in the tree: %+v", kids)
	}
	if e, err := d.ByID("a", nil); err != nil || e != kids[0] {
		t.Fatalf("ByID(a) = %v, %v", e, err)
	}
	if d.DuplicateID() != "b" {
		t.Fatalf("a dropped element's ID no longer counts: DuplicateID %q", d.DuplicateID())
	}
	want := bytes.Replace(doc, []byte(`<y ID="b"/>`), []byte(`<y ID="b"></y>`), 1)
	if got, err := CanonicalDocument(d, nil, nil); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("canonical document after drops: %q, %v", got, err)
	}
}

// TestByIDPartialTree: in a tree read with Keep, an ID whose other copy
// was left out is refused even when the search is confined to the kept
// copy's subtree; in a full tree only copies inside top count.
func TestByIDPartialTree(t *testing.T) {
	doc := []byte(`<r><a><k ID="x"/></a><junk><k ID="x"/></junk></r>`)
	keepA := func(e *Element) (bool, error) { return e.Local == "a" || e.Local == "k", nil }
	d, err := ParseWith(doc, Options{Keep: func(e *Element) (bool, error) {
		if e.Parent != nil && e.Parent.Local == "junk" {
			return false, nil
		}
		return keepA(e)
	}})
	if err != nil {
		t.Fatal(err)
	}
	a := d.Root.Elements()[0]
	if e, err := d.ByID("x", a); err == nil {
		t.Fatalf("ByID in a partial tree found %v despite a copy left out", e)
	}
	full, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	fa := full.Root.Elements()[0]
	if e, err := full.ByID("x", fa); err != nil || e != fa.Elements()[0] {
		t.Fatalf("ByID within top in a full tree = %v, %v", e, err)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteCanonicalReportsWriteErrors: both the fast path and the
// general canonicalizer report a writer's failure.
func TestWriteCanonicalReportsWriteErrors(t *testing.T) {
	d, err := Parse([]byte(`<r><a ID="x">t</a><!-- c --><b/></r>`))
	if err != nil {
		t.Fatal(err)
	}
	a := d.Root.Elements()[0]
	for name, e := range map[string]*Element{"element": a, "document": nil} {
		if err := d.WriteCanonical(failWriter{}, e, nil, nil); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s: WriteCanonical = %v, want the writer's error", name, err)
		}
	}
}

// The ISO-8859-1 decoder of the fast path agrees with the charmap's on
// every byte, in every position of runs of every length up to 40.
func TestAppendLatin1(t *testing.T) {
	for c := 0; c < 256; c++ {
		for n := 1; n <= 40; n++ {
			for pos := 0; pos < n; pos++ {
				raw := bytes.Repeat([]byte{'a'}, n)
				raw[pos] = byte(c)
				raw[n-1-pos] = byte(255 - c)
				var want []byte
				for _, b := range raw {
					want = utf8.AppendRune(want, charmap.ISO8859_1.DecodeByte(b))
				}
				if got := appendLatin1([]byte("x"), raw); string(got) != "x"+string(want) {
					t.Fatalf("% X: got % X, want % X", raw, got, want)
				}
			}
		}
	}
}
