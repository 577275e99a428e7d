package xmltree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
	"slices"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// The canonical fast path.
//
// Writers such as dtekit's own DTE and envelope builders emit the element
// they sign already in canonical form: no comments, CDATA sections or
// processing instructions, explicit end tags, attributes in canonical order
// written with double quotes and C14N's escapes, and only C14N's escapes in
// character data. For such an element the canonical form is its bytes as
// written (decoded to UTF-8), with the start tag of the element itself
// re-rendered to carry the namespaces and xml:* attributes it inherits, and
// with default-namespace declarations that repeat the one in scope left out
// (a signed DTE pasted into an envelope repeats the SII namespace). Building
// the element's tree just to print it again would be most of the cost of a
// signature besides RSA, and of an envelope's signature nearly all of it.
//
// So FastCanonical parses the document as usual, except that the subtree of
// the element with the given ID is not built: scanCanonicalSubtree walks it
// and checks, byte by byte, that it is in that strict canonical shape. When
// it is, the canonical form is written out from the raw bytes. When
// anything is outside that shape (or the document has an error), the scan
// gives up and the caller parses the whole document the ordinary way; the
// result of either path is the same, byte for byte.
//
// Everything outside the scanned subtree goes through the ordinary parser,
// and the strict shape is a subset of well-formed XML (only ASCII names
// without prefixes, no whitespace variants, no references other than the
// canonical escapes, characters checked as the parser checks them), so a
// document the fast path accepts is one the ordinary parser accepts.

// errNotCanonical stops the fast scan: the element is not written in the
// strict canonical shape, and the ordinary path must handle it.
var errNotCanonical = errors.New("the element is not written in canonical form")

// fastTarget is the fast path's state inside a parser.
type fastTarget struct {
	id   string
	apex *Element
	// root makes the root element the one to scan (ScanRoot); outer is
	// the namespace scope it is to be pasted into, and visit is told of
	// every element below it.
	root       bool
	outer      []NSDecl
	visit      func(Mark)
	visitDepth int
	// skip lists the source ranges inside the content that the canonical
	// form leaves out: superfluous default-namespace declarations.
	skip [][2]int
}

// isTarget reports whether e is the element to canonicalize.
func (t *fastTarget) isTarget(e *Element) bool {
	v, ok := e.Attr(idAttrName)
	return ok && v == t.id
}

// FastCanonical tries the fast path: it parses doc under opts with the
// subtree of the element whose ID is id scanned instead of built, and when
// that subtree is written in canonical form it writes the element's
// canonical form (in its document context) to w and returns the element
// (with its ancestors and everything outside it parsed). ok is false when
// the fast path does not apply; the caller then takes the ordinary path
// (Parse and CanonicalElement), which decides and reports any error. The
// returned element has no children.
func FastCanonical(doc []byte, id string, opts Options, w io.Writer) (el *Element, ok bool) {
	for i := 0; i < len(id); i++ {
		if id[i] >= utf8.RuneSelf {
			return nil, false
		}
	}
	p, err := newParser(doc, opts)
	if err != nil {
		return nil, false
	}
	t := &fastTarget{id: id}
	p.fast = t
	if err := p.document(); err != nil || t.apex == nil {
		return nil, false
	}
	el = t.apex
	if p.doc.dupIDs[id] || p.doc.ids[id] != el {
		return nil, false
	}
	p.writeScanned(w, el, t.skip)
	return el, true
}

// writeScanned writes the canonical form of el, whose content
// scanCanonical accepted, from its bytes: its start tag rendered in its
// context, the content as written minus the skip ranges (decoded to
// UTF-8), and its end tag.
func (p *parser) writeScanned(w io.Writer, el *Element, skip [][2]int) {
	c := canonicalizer{out: make([]byte, 0, 512)}
	decls, attrs := c.apexContext(el)
	c.startTag(el, decls, attrs)
	out := c.out
	if p.charset != nil {
		// Decoded into a buffer of an eighth of the content, from 1 KB
		// (a document being signed) to 32 KB (an envelope), so that a
		// hash sees few, large writes however many skip ranges and
		// characters above 0x7F the content holds.
		chunk := min(max((el.InnerEnd-el.Inner)/8, 1<<10), 32<<10)
		out = append(make([]byte, 0, len(out)+chunk), out...)
	}
	pos := el.Inner
	for k := 0; k <= len(skip); k++ {
		end := el.InnerEnd
		if k < len(skip) {
			end = skip[k][0]
		}
		for seg := p.src[pos:end]; len(seg) > 0; {
			if p.charset == nil {
				// UTF-8 is its own canonical encoding.
				if len(out) > 0 {
					w.Write(out)
					out = out[:0]
				}
				w.Write(seg)
				break
			}
			// A character above 0x7F takes two bytes in UTF-8: half the
			// free room is what may be decoded before a write.
			n := min(len(seg), (cap(out)-len(out))/2)
			if n == 0 {
				w.Write(out)
				out = out[:0]
				n = min(len(seg), cap(out)/2)
			}
			out = p.appendDecoded(out, seg[:n])
			seg = seg[n:]
		}
		if k < len(skip) {
			pos = skip[k][1]
		}
	}
	out = append(out, "</"...)
	out = AppendQName(out, el.Prefix, el.Local)
	w.Write(append(out, '>'))
}

// appendDecoded appends raw source bytes, already checked by the scan,
// decoded to UTF-8.
func (p *parser) appendDecoded(dst, raw []byte) []byte {
	switch p.charset {
	case nil:
		return append(dst, raw...)
	case charmap.ISO8859_1:
		return appendLatin1(dst, raw)
	}
	last := 0
	for i := 0; i < len(raw); i++ {
		// Step over ASCII eight bytes at a time.
		for i+8 <= len(raw) && binary.LittleEndian.Uint64(raw[i:])&0x8080808080808080 == 0 {
			i += 8
		}
		if i >= len(raw) {
			break
		}
		b := raw[i]
		if b < utf8.RuneSelf {
			continue
		}
		dst = append(dst, raw[last:i]...)
		dst = utf8.AppendRune(dst, p.charset.DecodeByte(b))
		last = i + 1
	}
	return append(dst, raw[last:]...)
}

// appendLatin1 appends ISO-8859-1 bytes decoded to UTF-8: ASCII is copied
// in runs found a word or two at a time, and a byte above 0x7F (U+0080 to
// U+00FF) takes two bytes.
func appendLatin1(dst, raw []byte) []byte {
	const hi = 0x8080808080808080
	i, last := 0, 0
	for i < len(raw) {
		if i+8 <= len(raw) {
			m := binary.LittleEndian.Uint64(raw[i:]) & hi
			if m == 0 {
				i += 8
				for i+16 <= len(raw) && (binary.LittleEndian.Uint64(raw[i:])|binary.LittleEndian.Uint64(raw[i+8:]))&hi == 0 {
					i += 16
				}
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else if raw[i] < utf8.RuneSelf {
			i++
			continue
		}
		b := raw[i]
		dst = append(append(dst, raw[last:i]...), 0xC0|b>>6, 0x80|b&0x3F)
		i++
		last = i
	}
	return append(dst, raw[last:]...)
}

// fastOpen is an element open inside the scanned subtree: where its name
// lies in the source and where its content starts. It holds no pointer,
// so that pushing one costs a plain store.
type fastOpen struct {
	name0, name1 int
	inner        int // offset just after the start tag
}

// fastNS is a namespace declaration that changes the scope, made by the
// element open at index level of the scan's stack.
type fastNS struct {
	level int
	NSDecl
}

// fastScope returns the namespace bound to prefix inside the innermost
// open element of the scan, whose declarations are ns, below apex.
func (p *parser) fastScope(apex *Element, ns []fastNS, prefix string) string {
	for i := len(ns) - 1; i >= 0; i-- {
		if ns[i].Prefix == prefix {
			return ns[i].URI
		}
	}
	for e := apex; e != nil; e = e.Parent {
		for _, d := range e.NS {
			if d.Prefix == prefix {
				return d.URI
			}
		}
	}
	if p.fast != nil && p.fast.apex == apex {
		for _, d := range p.fast.outer {
			if d.Prefix == prefix {
				return d.URI
			}
		}
	}
	if prefix == "xml" {
		return NSXML
	}
	return ""
}

// scanCanonical is called by content() right after the start tag of apex
// (at nesting depth depth). It checks that the element's content and end
// tag are in the strict canonical shape, sets the element's offsets, and
// leaves p.pos after the end tag; it appends to skip (when not nil) the
// superfluous namespace declarations the canonical form leaves out. A
// descendant whose ID is id (when id is not "") fails the scan. It returns
// errNotCanonical when the shape is not met.
//
// The loop is the hot path of signing and of packing envelopes: what it
// needs per element lives in locals, and a start tag with attributes is
// read by scanAttrs, so that the common tag (<Name> and </Name>) costs a
// name scan and a comparison.
func (p *parser) scanCanonical(apex *Element, empty bool, depth int, id string, skip *[][2]int) error {
	if empty {
		return nil
	}
	qname := apex.QName()
	for i := 0; i < len(qname); i++ {
		if qname[i] >= utf8.RuneSelf {
			return errNotCanonical
		}
	}
	src := p.src
	// In ISO-8859-1 every byte above 0x7F is a character XML allows.
	plain := byte(plainASCII)
	if p.charset == charmap.ISO8859_1 {
		plain |= plainHigh
	}
	highPlain := plain&plainHigh != 0
	// What the scan of the fast target (FastCanonical, ScanRoot) does
	// beyond checking: report elements, step over verified spans.
	var visit func(Mark)
	visitDepth, target := 0, false
	if t := p.fast; t != nil && t.apex == apex {
		visit, visitDepth, target = t.visit, t.visitDepth, true
	}
	maxOpen := p.opts.MaxDepth - depth - 1 // open descendants allowed
	elements, maxElements := p.doc.Elements, p.opts.MaxElements
	// Open descendants, and the declarations they make (in the parser's
	// scratch space, which a RootScanner keeps from one document to the
	// next).
	var stackArr [32]fastOpen
	stack := stackArr[:0]
	ns := p.fastNS[:0]
	defer func() { p.fastNS = ns[:0] }()
	i := p.pos
	for {
		// Character data up to the next tag, a word at a time: the mask
		// of a word points at its first byte that needs a closer look.
		for i < len(src) && src[i] != '<' {
			if i+8 > len(src) {
				for i < len(src) && plainText[src[i]]&plain != 0 {
					i++
				}
				if i >= len(src) || src[i] == '<' {
					break
				}
			} else if m := swarSpecialText(binary.LittleEndian.Uint64(src[i:]), highPlain); m == 0 {
				// Long text (a certificate, a signature value) goes
				// sixteen bytes at a time.
				i += 8
				for i+16 <= len(src) && swarSpecialText(binary.LittleEndian.Uint64(src[i:]), highPlain)|
					swarSpecialText(binary.LittleEndian.Uint64(src[i+8:]), highPlain) == 0 {
					i += 16
				}
				continue
			} else if i += bits.TrailingZeros64(m) >> 3; src[i] == '<' {
				break
			}
			switch c := src[i]; {
			case c == '\n' || c == '\t':
				i++
			case c == '&':
				n := canonicalTextRef(src[i:])
				if n == 0 {
					return errNotCanonical
				}
				i += n
			case c >= utf8.RuneSelf:
				n := p.charLen(i)
				if n == 0 {
					return errNotCanonical
				}
				i += n
			default: // '>', CR, control characters
				return errNotCanonical
			}
		}
		if i+1 >= len(src) {
			return errNotCanonical
		}
		if src[i+1] == '/' {
			// End tag: exactly </name>.
			if len(stack) == 0 {
				j := i + 2 + len(qname)
				if j >= len(src) || string(src[i+2:j]) != qname || src[j] != '>' {
					return errNotCanonical
				}
				apex.Inner, apex.InnerEnd = p.pos, i
				p.pos = j + 1
				apex.End = p.pos
				p.doc.Elements = elements
				return nil
			}
			top := stack[len(stack)-1]
			n := top.name1 - top.name0
			j := i + 2 + n
			if j >= len(src) || !sameName(src, i+2, top.name0, n) || src[j] != '>' {
				return errNotCanonical
			}
			stack = stack[:len(stack)-1]
			for len(ns) > 0 && ns[len(ns)-1].level == len(stack) {
				ns = ns[:len(ns)-1]
			}
			i = j + 1
			if len(stack) < visitDepth && visit != nil {
				visit(Mark{Depth: len(stack) + 1, Name: src[top.name0:top.name1], Start: top.name0 - 1, Inner: top.inner, InnerEnd: i - n - 3, End: i})
			}
			continue
		}
		if len(stack) == 0 && target {
			// A verified span (FastCanonical's Options.Verified) is
			// stepped over without a second scan.
			v := p.opts.Verified
			for p.span < len(v) && v[p.span].Start < i {
				p.span++
			}
			if p.span < len(v) && v[p.span].Start == i && v[p.span].End <= len(src) {
				sp := v[p.span]
				p.span++
				if elements += sp.Elements; elements > maxElements {
					return errNotCanonical
				}
				if skip != nil {
					*skip = append(*skip, sp.Skip...)
				}
				i = sp.End
				continue
			}
		}
		// Start tag: <name( xmlns="uri")?( attr="value")*> with an
		// unprefixed ASCII name and unprefixed attributes in ascending
		// order.
		if len(stack) >= maxOpen {
			return errNotCanonical
		}
		if elements++; elements > maxElements {
			return errNotCanonical
		}
		nameStart := i + 1
		j := scanNCName(src, nameStart)
		if j == nameStart || j >= len(src) {
			return errNotCanonical
		}
		open := fastOpen{name0: nameStart, name1: j}
		if src[j] == '>' {
			j++
		} else {
			var ok bool
			if j, ns, ok = p.scanAttrs(apex, j, len(stack), ns, id, skip); !ok {
				return errNotCanonical
			}
		}
		open.inner = j
		stack = append(stack, open)
		i = j
	}
}

// scanAttrs reads the attributes of a start tag in the strict canonical
// shape from src[j], just after the element's name, to just after the
// closing '>', which it returns. The element is the one open at index
// level of the scan below apex: the declarations it makes that change the
// scope are appended to ns, and those that repeat the scope to skip (when
// not nil). ok is false when the tag is not in that shape, or carries the
// ID id (when id is not "").
func (p *parser) scanAttrs(apex *Element, j, level int, ns []fastNS, id string, skip *[][2]int) (int, []fastNS, bool) {
	src := p.src
	plain := byte(plainASCII)
	if p.charset == charmap.ISO8859_1 {
		plain |= plainHigh
	}
	var prev []byte
	lastNS := ""
	for n := 0; ; n++ {
		if j >= len(src) {
			return j, ns, false
		}
		if src[j] == '>' {
			return j + 1, ns, true
		}
		if src[j] != ' ' || n >= maxAttrs {
			return j, ns, false
		}
		attrStart := j
		an := j + 1
		j = scanNCName(src, an)
		aname := src[an:j]
		isNS, prefix := string(aname) == "xmlns", ""
		if isNS && j < len(src) && src[j] == ':' {
			k := scanNCName(src, j+1)
			if k == j+1 {
				return j, ns, false
			}
			prefix = string(src[j+1 : k])
			j = k
		}
		switch {
		case j == an:
			return j, ns, false
		case isNS:
			// Declarations come first, the default one before the
			// prefixed ones in ascending order.
			if prev != nil || (n > 0 && (prefix == "" || prefix <= lastNS)) {
				return j, ns, false
			}
			lastNS = prefix
		case prev != nil && string(aname) <= string(prev):
			return j, ns, false
		default:
			prev = aname
		}
		if j+1 >= len(src) || src[j] != '=' || src[j+1] != '"' {
			return j, ns, false
		}
		j += 2
		vs := j
		for j < len(src) && src[j] != '"' {
			for j < len(src) && plainAttr[src[j]]&plain != 0 {
				j++
			}
			if j >= len(src) || src[j] == '"' {
				break
			}
			c := src[j]
			switch {
			case c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '<':
				j++
			case c == '&' && !isNS:
				n := canonicalAttrRef(src[j:])
				if n == 0 {
					return j, ns, false
				}
				j += n
			case c >= utf8.RuneSelf && !isNS:
				n := p.charLen(j)
				if n == 0 {
					return j, ns, false
				}
				j += n
			default: // '<', literal whitespace other than space, controls
				return j, ns, false
			}
		}
		if j >= len(src) {
			return j, ns, false
		}
		value := src[vs:j]
		j++ // closing quote
		switch {
		case isNS:
			v := string(value) // compared without a copy
			if v == NSXML || v == nsXMLNS || prefix == "xml" || prefix == "xmlns" || (prefix != "" && v == "") {
				return j, ns, false
			}
			if p.fastScope(apex, ns, prefix) == v {
				// Superfluous: C14N leaves it out.
				if skip != nil {
					*skip = append(*skip, [2]int{attrStart, j})
				}
			} else {
				ns = append(ns, fastNS{level: level, NSDecl: NSDecl{Prefix: prefix, URI: p.internValue(value)}})
			}
		case string(aname) == idAttrName && id != "" && string(value) == id:
			return j, ns, false // a second element with the ID
		}
	}
}

// Byte classes of the strict shape's scan: plainASCII marks ASCII bytes
// that stand for themselves in canonical character data (plainText) or in
// a double-quoted canonical attribute value (plainAttr); plainHigh marks
// the bytes above 0x7F, which stand for themselves in ISO-8859-1.
const (
	plainASCII = 1 << iota
	plainHigh
)

var plainText, plainAttr = func() (t, a [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 0x80:
			t[c], a[c] = plainHigh, plainHigh
		case c >= 0x20 && c != '&' && c != '<':
			if c != '>' {
				t[c] = plainASCII
			}
			if c != '"' {
				a[c] = plainASCII
			}
		case c == '\n' || c == '\t':
			t[c] = plainASCII
		}
	}
	return t, a
}()

// swarSpecialText returns a mask of the eight bytes in x (little-endian)
// that the character-data scan must look at: '<', '&', '>', a byte below
// 0x20 (tab and line feed included, which the scan then steps over), or,
// unless highPlain, a byte above 0x7F. The mask is zero exactly when no
// byte is one of those, and its lowest set bit is the high bit of the
// first such byte (later bytes may be flagged wrongly, by a borrow).
func swarSpecialText(x uint64, highPlain bool) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	// A byte of y is zero where x has '<' or '>' (they differ in bit 1
	// only), of z where x has '&'; (v-lo)&^v sets the high bit of the
	// first zero byte of v, and (x-0x20…)&^x that of the first byte below
	// 0x20; a borrow only runs upwards.
	y := (x | lo*0x02) ^ (lo * '>')
	z := x ^ (lo * '&')
	special := (y-lo)&^y | (z-lo)&^z | (x-lo*0x20)&^x
	if !highPlain {
		special |= x
	}
	return special & hi
}

// charLen returns the length in bytes of the non-ASCII character at src[i]
// in the document's encoding, or 0 when the parser would reject it.
func (p *parser) charLen(i int) int {
	switch {
	case p.ascii:
		return 0
	case p.charset != nil:
		if p.charset.DecodeByte(p.src[i]) == utf8.RuneError {
			return 0
		}
		return 1
	}
	r, n := utf8.DecodeRune(p.src[i:])
	if (r == utf8.RuneError && n <= 1) || r == 0xFFFE || r == 0xFFFF {
		return 0
	}
	return n
}

// scanNCName returns the end of the unprefixed ASCII name starting at
// src[i] ([A-Za-z_][A-Za-z0-9._-]*), or i when there is none.
func scanNCName(src []byte, i int) int {
	if i >= len(src) || asciiName[src[i]] != nameStart {
		return i
	}
	j := i + 1
	for j < len(src) && asciiName[src[j]] != 0 {
		j++
	}
	return j
}

// sameName reports whether the n bytes at src[a] equal those at src[b],
// where b < a and a+n <= len(src): the name of an end tag against its
// start tag's. A name of up to eight bytes is compared as one word.
func sameName(src []byte, a, b, n int) bool {
	if n <= 8 && a+8 <= len(src) {
		return (binary.LittleEndian.Uint64(src[a:])^binary.LittleEndian.Uint64(src[b:]))<<(64-8*uint(n)) == 0
	}
	return string(src[a:a+n]) == string(src[b:b+n])
}

// asciiName classes the bytes of scanNCName's names: nameStart for those
// that may begin one, nameRest for those that may only follow.
const (
	nameStart = 1 + iota
	nameRest
)

var asciiName = func() (t [256]byte) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			t[c] = nameStart
		case c == '-' || c == '.' || (c >= '0' && c <= '9'):
			t[c] = nameRest
		}
	}
	return t
}()

// canonicalTextRef returns the length of the reference at the start of s
// when it is one C14N writes in character data (&amp; &lt; &gt; &#xD;), or 0.
func canonicalTextRef(s []byte) int {
	for _, r := range [...]string{"&amp;", "&lt;", "&gt;", "&#xD;"} {
		if len(s) >= len(r) && string(s[:len(r)]) == r {
			return len(r)
		}
	}
	return 0
}

// canonicalAttrRef returns the length of the reference at the start of s
// when it is one C14N writes in attribute values (&amp; &lt; &quot; &#x9;
// &#xA; &#xD;), or 0.
func canonicalAttrRef(s []byte) int {
	for _, r := range [...]string{"&amp;", "&lt;", "&quot;", "&#x9;", "&#xA;", "&#xD;"} {
		if len(s) >= len(r) && string(s[:len(r)]) == r {
			return len(r)
		}
	}
	return 0
}

// Span is a range of a document holding one complete element that ScanRoot
// found in the strict canonical shape: Skip lists the superfluous namespace
// declarations inside it (which the canonical form leaves out) and Elements
// counts its elements. See Options.Verified.
type Span struct {
	Start, End int
	Skip       [][2]int
	Elements   int
}

// Moved returns s as it stands once its bytes are copied to offset to of
// another document.
func (s Span) Moved(to int) Span {
	d := to - s.Start
	out := Span{Start: to, End: s.End + d, Elements: s.Elements, Skip: make([][2]int, len(s.Skip))}
	for i, r := range s.Skip {
		out.Skip[i] = [2]int{r[0] + d, r[1] + d}
	}
	return out
}

// Mark is an element below the root met by ScanRoot: its depth (1 for a
// child of the root), its name as written (a slice of the document) and its
// offsets, as in Element.
type Mark struct {
	Depth                       int
	Name                        []byte
	Start, Inner, InnerEnd, End int
}

// Child returns the first child element of m named name (written without
// a prefix), in a document ScanRoot accepted with m among its marks: it
// steps from tag to tag without checking anything again, which only that
// document's strict shape allows (every '<' opens a tag, every element
// has an end tag, attribute values hold no '"'). The child's InnerEnd and
// End are left zero: Text reads a leaf's content.
func (m Mark) Child(doc []byte, name string) (Mark, bool) {
	i, depth := m.Inner, 0
	for {
		k := bytes.IndexByte(doc[i:], '<')
		if k < 0 {
			return Mark{}, false
		}
		i += k
		if doc[i+1] == '/' {
			if depth--; depth < 0 {
				return Mark{}, false // m's end tag
			}
			i += 2
			continue
		}
		j := i + 1
		for doc[j] != ' ' && doc[j] != '>' {
			j++
		}
		if depth == 0 && string(doc[i+1:j]) == name {
			return Mark{Depth: m.Depth + 1, Name: doc[i+1 : j], Start: i, Inner: tagEnd(doc, j)}, true
		}
		depth++
		i = tagEnd(doc, j)
	}
}

// Text returns the content of m, a mark Child returned, when it holds no
// element: the bytes up to its end tag. ok is false when an element
// comes first.
func (m Mark) Text(doc []byte) ([]byte, bool) {
	k := bytes.IndexByte(doc[m.Inner:], '<')
	if k < 0 || doc[m.Inner+k+1] != '/' {
		return nil, false
	}
	return doc[m.Inner : m.Inner+k], true
}

// tagEnd returns the offset just after the start tag that is open at j
// (after its name), in the strict shape: the first '>' outside an
// attribute value.
func tagEnd(doc []byte, j int) int {
	for doc[j] != '>' {
		if doc[j] == '"' {
			j += 1 + bytes.IndexByte(doc[j+1:], '"')
		}
		j++
	}
	return j + 1
}

// ScanRoot reads doc under opts, checking that it is a well-formed document
// whose root element is written, start tag included, in the strict
// canonical shape of FastCanonical, for pasting into a document where the
// namespace declarations outer are in scope. It calls visit (when not nil)
// at the end tag of every element below the root down to depth levels
// (1: the root's children), and refuses a document
// with an element whose ID attribute is id (when id is not ""). It returns
// the document (the root has its attributes and offsets but no children)
// and the root's Span, whose Skip lists the declarations that are
// superfluous in the scope of outer. ok is false when doc is not in that
// shape or not well formed: the caller then reads it the ordinary way,
// which reports any error.
func ScanRoot(doc []byte, opts Options, outer []NSDecl, id string, depth int, visit func(Mark)) (d *Document, span Span, ok bool) {
	return new(RootScanner).Scan(doc, opts, outer, id, depth, visit)
}

// A RootScanner runs ScanRoot over many documents in turn (the DTEs of an
// envelope), reusing its memory: the Document a call returns, and its
// root element, are valid until the next call; the Span is the caller's.
// The zero value is ready to use.
type RootScanner struct {
	p      parser
	doc    Document
	root   [1]Element
	t      fastTarget
	tag    []byte
	values [16]string
}

// Scan is ScanRoot with s's memory.
func (s *RootScanner) Scan(doc []byte, opts Options, outer []NSDecl, id string, depth int, visit func(Mark)) (d *Document, span Span, ok bool) {
	s.doc = Document{src: doc}
	s.root[0] = Element{NS: s.root[0].NS[:0], Attrs: s.root[0].Attrs[:0]}
	p := &s.p
	if p.reset(doc, opts, &s.doc) != nil {
		return nil, span, false
	}
	p.values = &s.values
	s.t = fastTarget{id: id, root: true, outer: outer, visit: visit, visitDepth: depth, skip: s.t.skip[:0]}
	t := &s.t
	p.fast = t
	p.slab = s.root[:] // the root is the only element built
	if err := p.document(); err != nil || t.apex == nil {
		return nil, span, false
	}
	el := t.apex
	if el.Inner == el.End || el.Prefix != "" || p.doc.dupIDs[id] {
		return nil, span, false // an empty-element tag, or a prefixed name
	}
	if v, has := el.Attr(idAttrName); has && id != "" && v == id {
		return nil, span, false
	}
	// The start tag must read as C14N writes it; the declarations that
	// repeat the scope of outer are left out in that scope.
	var skipArr [4][2]int
	skip := skipArr[:0]
	b := append(s.tag[:0], '<')
	b = append(b, el.Local...)
	for _, dcl := range el.NS {
		from := len(b)
		b = append(b, " xmlns"...)
		if dcl.Prefix != "" {
			b = append(b, ':')
			b = append(b, dcl.Prefix...)
		}
		b = append(b, `="`...)
		b = AppendEscapedAttr(b, dcl.URI)
		b = append(b, '"')
		inScope := dcl.Prefix == "" // an undeclared default namespace is ""
		for _, o := range outer {
			if o.Prefix == dcl.Prefix {
				inScope = o.URI == dcl.URI
			}
		}
		if dcl.Prefix == "" && dcl.URI != "" && !slices.ContainsFunc(outer, func(o NSDecl) bool { return o.Prefix == "" }) {
			inScope = false
		}
		if inScope {
			skip = append(skip, [2]int{el.Start + from, el.Start + len(b)})
		}
	}
	for _, a := range el.Attrs {
		if a.Prefix != "" {
			return nil, span, false
		}
		b = append(b, ' ')
		b = append(b, a.Local...)
		b = append(b, `="`...)
		b = AppendEscapedAttr(b, a.Value)
		b = append(b, '"')
	}
	b = append(b, '>')
	s.tag = b
	if !bytes.Equal(b, doc[el.Start:el.Inner]) {
		return nil, span, false
	}
	all := make([][2]int, 0, len(skip)+len(t.skip))
	span = Span{Start: el.Start, End: el.End, Skip: append(append(all, skip...), t.skip...), Elements: p.doc.Elements}
	return p.doc, span, true
}
