package xmltree

import (
	"bytes"
	"crypto/sha1"
	"reflect"
	"sync"
	"testing"
)

// An envelope digested with pasted documents stepped over (ScanRoot's
// spans) has the canonical form of the ordinary path, byte for byte:
// superfluous declarations of the pasted roots and of their content (in
// the envelope's scope, not their own) are left out, others kept, and
// ISO-8859-1 text is decoded.
func TestScanRootVerified(t *testing.T) {
	const decl = `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n"
	outer := []NSDecl{{Prefix: "", URI: "urn:a"}, {Prefix: "xsi", URI: "urn:x"}}
	docs := []string{
		`<D xmlns="urn:a" v="1"><e>x &amp; &lt;&gt; caf` + "\xe9" + `</e><f xmlns="urn:a" a="&quot;&#xA;"><g xmlns:xsi="urn:x">t</g><h xmlns:xsi="urn:y"></h></f><Signature xmlns="urn:s"><k xmlns="urn:a"></k></Signature></D>`,
		`<D xmlns="urn:b" xmlns:xsi="urn:x"><e xmlns="urn:a">` + "\n\t" + `</e></D>`,
		`<D xmlns:p="urn:p"><e xmlns="">z</e></D>`,
	}
	env := []byte(decl + `<R xmlns="urn:a" xmlns:xsi="urn:x"><S ID="set"><c>1</c>`)
	var spans []Span
	for _, d := range docs {
		src := []byte(decl + d)
		_, span, ok := ScanRoot(src, Options{}, outer, "set", 0, nil)
		if !ok {
			t.Fatalf("ScanRoot refused %q", d)
		}
		env = append(env, '\n')
		spans = append(spans, span.Moved(len(env)))
		env = append(env, src[span.Start:span.End]...)
	}
	env = append(env, "\n</S></R>"...)

	d, err := Parse(env)
	if err != nil {
		t.Fatal(err)
	}
	el, err := d.ByID("set", nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := CanonicalElement(d, el, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// WriteCanonical takes the strict shape's fast path here.
	var fast bytes.Buffer
	if err := d.WriteCanonical(&fast, el, nil, nil); err != nil || !bytes.Equal(fast.Bytes(), want) {
		t.Fatalf("WriteCanonical: %v\n got %q\nwant %q", err, fast.Bytes(), want)
	}
	for _, v := range [][]Span{nil, spans} {
		var got bytes.Buffer
		if _, ok := FastCanonical(env, "set", Options{Verified: v}, &got); !ok {
			t.Fatalf("FastCanonical with %d spans did not apply", len(v))
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("with %d spans:\n got %q\nwant %q", len(v), got.Bytes(), want)
		}
	}
	if bytes.Contains(want, []byte(`<D xmlns="urn:a"`)) || !bytes.Contains(want, []byte(`<D xmlns="urn:b">`)) ||
		!bytes.Contains(want, []byte(`<h xmlns:xsi="urn:y">`)) || !bytes.Contains(want, []byte("caf\u00e9")) {
		t.Fatalf("the canonical form misses a case this test is about: %q", want)
	}

	// The spans are really stepped over: bytes changed after the scan
	// are taken as vouched for (which is why only the caller that ran
	// ScanRoot on exactly those bytes may pass them).
	tampered := bytes.Replace(env, []byte("<k xmlns"), []byte("<k  xmlns"), 1)
	for i := range spans[1:] {
		spans[i+1] = spans[i+1].Moved(spans[i+1].Start + 1)
	}
	spans[0].End++
	var got bytes.Buffer
	if _, ok := FastCanonical(tampered, "set", Options{Verified: spans}, &got); !ok || sha1.Sum(got.Bytes()) == sha1.Sum(want) {
		t.Fatalf("the spans were scanned again (ok %v)", ok)
	}
}

// ScanRoot refuses, for the ordinary path to decide, whatever is not a
// well-formed document in the strict shape, or holds the ID to refuse.
func TestScanRootRefuses(t *testing.T) {
	outer := []NSDecl{{Prefix: "", URI: "urn:a"}}
	for _, doc := range []string{
		`<D/>`,
		`<D b="1" a="2"></D>`,
		`<D a='1'></D>`,
		`<D  a="1"></D>`,
		`<D><e ID="set"></e></D>`,
		`<D ID="set"></D>`,
		`<D><e></f></D>`,
		`<D><e><!-- c --></e></D>`,
		`<D><e/></D>`,
		`<D>a</D>b`,
		`<p:D xmlns:p="urn:p"></p:D>`,
		`<D a="caf` + "\xe9" + `"></D>`,
	} {
		if _, _, ok := ScanRoot([]byte(doc), Options{}, outer, "set", 0, nil); ok {
			t.Errorf("ScanRoot accepted %q", doc)
		}
	}
	var marks []string
	d, span, ok := ScanRoot([]byte(`<D xmlns="urn:a" a="1"><e><f>1</f></e><g></g></D>`), Options{}, outer, "set", 9, func(m Mark) {
		marks = append(marks, string(m.Name))
	})
	if !ok || d.Root.Local != "D" || len(span.Skip) != 1 || span.Elements != 4 || len(marks) != 3 || marks[0] != "f" || marks[2] != "g" {
		t.Fatalf("ScanRoot: ok %v span %+v marks %v", ok, span, marks)
	}
}

// sharedScanner reads every input of FuzzScanRoot in turn.
var sharedScanner struct {
	sync.Mutex
	RootScanner
}

// Whatever ScanRoot accepts the ordinary parser accepts, and pasted into an
// envelope and stepped over it canonicalizes as the ordinary path does.
func FuzzScanRoot(f *testing.F) {
	for _, s := range []string{
		`<D xmlns="urn:a" v="1"><e>x &amp; caf` + "\xe9" + `</e><f xmlns="urn:a"><g xmlns:xsi="urn:x">t</g></f></D>`,
		`<D xmlns="urn:b"><e xmlns="">z</e><s ID="set"></s></D>`,
		`<D><e a="&quot;&#xA;" b="2">` + "\n\t" + `</e></D>`,
		`<D xmlns:p="urn:p"><e xmlns:p="urn:p"></e></D>`,
		`<D><a k="x>y"><b>1</b></a><a k="2">t</a><c z="&quot;>">u</c></D>`,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	outer := []NSDecl{{Prefix: "", URI: "urn:a"}, {Prefix: "xsi", URI: "urn:x"}}
	f.Fuzz(func(t *testing.T, body []byte, latin1 bool) {
		decl := `<?xml version="1.0"?>` + "\n"
		if latin1 {
			decl = `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n"
		}
		src := append([]byte(decl), body...)
		_, span, ok := ScanRoot(src, Options{}, outer, "set", 0, nil)
		// A RootScanner that has read other documents answers the same.
		sharedScanner.Lock()
		_, again, okAgain := sharedScanner.Scan(src, Options{}, outer, "set", 0, nil)
		sharedScanner.Unlock()
		if okAgain != ok || (ok && !reflect.DeepEqual(again, span)) {
			t.Fatalf("a reused RootScanner: %v %+v, a new one: %v %+v", okAgain, again, ok, span)
		}
		if !ok {
			return
		}
		if _, err := Parse(src); err != nil {
			t.Fatalf("ScanRoot accepted what Parse refuses: %v", err)
		}
		env := []byte(decl + `<R xmlns="urn:a" xmlns:xsi="urn:x"><S ID="set"><c>1</c>` + "\n")
		moved := span.Moved(len(env))
		env = append(env, src[span.Start:span.End]...)
		env = append(env, "\n</S></R>"...)
		d, err := Parse(env)
		if err != nil {
			t.Fatalf("the envelope does not parse: %v", err)
		}
		el, err := d.ByID("set", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, ok := FastCanonical(env, "set", Options{Verified: []Span{moved}}, &got); !ok {
			t.Fatal("FastCanonical refused the envelope")
		}
		want, err := CanonicalElement(d, el, nil, nil)
		if err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("stepped over:\n got %q\nwant %q", got.Bytes(), want)
		}
		var fast bytes.Buffer
		if err := d.WriteCanonical(&fast, el, nil, nil); err != nil || !bytes.Equal(fast.Bytes(), want) {
			t.Fatalf("WriteCanonical: %v\n got %q\nwant %q", err, fast.Bytes(), want)
		}
		// Child and Text find what the tree holds.
		sd, _ := Parse(src)
		root := Mark{Inner: sd.Root.Inner}
		for _, k := range sd.Root.Elements() {
			if k.Prefix != "" {
				continue
			}
			var first *Element
			for _, e := range sd.Root.Elements() {
				if e.Prefix == "" && e.Local == k.Local {
					first = e
					break
				}
			}
			m, ok := root.Child(src, k.Local)
			if !ok || m.Start != first.Start || m.Inner != first.Inner || string(m.Name) != first.Local {
				t.Fatalf("Child(%q): %+v %v, want the element at %d", k.Local, m, ok, first.Start)
			}
			text, ok := m.Text(src)
			if leaf := len(first.Elements()) == 0; ok != leaf || (leaf && string(text) != string(src[first.Inner:first.InnerEnd])) {
				t.Fatalf("Text of <%s>: %q %v", k.Local, text, ok)
			}
		}
		if _, ok := root.Child(src, "absent"); ok {
			t.Fatal("Child found an absent element")
		}
	})
}
