package signer

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// This file holds a small XML parser built for canonicalization. Unlike
// encoding/xml or etree it keeps the byte offsets of every element in the
// original input (so a Signature can be spliced in without re-serializing
// anything), it reads ISO-8859-1 directly, and it keeps exactly what inclusive
// C14N 1.0 needs: namespace declarations as written, attribute values after
// XML normalization, character data with line ends normalized, and processing
// instructions. Comments are dropped because every reference the SII profile
// allows ("#id" or "") is canonicalized without comments. Documents with a
// DOCTYPE are refused: entity and attribute-default declarations would change
// the canonical form, and the SII never uses them.

const (
	nsDSig     = "http://www.w3.org/2000/09/xmldsig#"
	nsXML      = "http://www.w3.org/XML/1998/namespace"
	maxDepth   = 256  // element nesting accepted by the parser
	maxAttrs   = 1024 // attributes (including namespace declarations) per element
	idAttrName = "ID" // the attribute that "#id" references resolve against
)

// ErrInvalidXML is wrapped by every error about input that is not a
// well-formed XML document this package can canonicalize.
var ErrInvalidXML = errors.New("signer: invalid XML")

type nodeKind uint8

const (
	kindElement nodeKind = iota
	kindText
	kindPI
)

// node is one child of an element: an element, character data (decoded to
// UTF-8, line ends normalized, CDATA sections included) or a processing
// instruction already in canonical form.
type node struct {
	kind nodeKind
	el   *element
	text string
}

// nsDecl is a namespace declaration as written on an element; prefix "" is
// the default namespace, and uri "" undeclares it (xmlns="").
type nsDecl struct{ prefix, uri string }

// attribute is an ordinary attribute (not a namespace declaration).
type attribute struct {
	prefix, local string
	uri           string // namespace of the attribute; "" when unprefixed
	value         string // normalized value, UTF-8
}

func (a attribute) qname() string {
	if a.prefix == "" {
		return a.local
	}
	return a.prefix + ":" + a.local
}

// element is a parsed element with the offsets of its first byte ('<' of the
// start tag) and of the byte just after its end tag (or empty-element tag).
type element struct {
	parent        *element
	prefix, local string
	uri           string
	ns            []nsDecl
	attrs         []attribute
	children      []node
	start, end    int
}

func (e *element) qname() string {
	if e.prefix == "" {
		return e.local
	}
	return e.prefix + ":" + e.local
}

// is reports whether e is the element {uri}local.
func (e *element) is(uri, local string) bool { return e.uri == uri && e.local == local }

// attr returns the value of the unprefixed attribute name.
func (e *element) attr(name string) (string, bool) {
	for _, a := range e.attrs {
		if a.prefix == "" && a.local == name {
			return a.value, true
		}
	}
	return "", false
}

// document is a parsed XML document.
type document struct {
	root   *element
	prolog []string // processing instructions before the root, canonical form
	epilog []string // processing instructions after the root, canonical form
	ids    map[string]*element
	dupIDs map[string]bool
}

// byID returns the unique element whose ID attribute equals id, searching
// only inside top when top is not nil.
func (d *document) byID(id string, top *element) (*element, error) {
	if d.dupIDs[id] {
		if top == nil {
			return nil, fmt.Errorf("signer: ID %q appears on more than one element", id)
		}
		// A duplicate elsewhere in the document does not matter when the
		// search is confined to top; count the matches inside it.
		var found *element
		n := 0
		walk(top, func(e *element) {
			if v, ok := e.attr(idAttrName); ok && v == id {
				found = e
				n++
			}
		})
		if n > 1 {
			return nil, fmt.Errorf("signer: ID %q appears on more than one element", id)
		}
		if n == 0 {
			return nil, fmt.Errorf("signer: no element with ID %q", id)
		}
		return found, nil
	}
	e := d.ids[id]
	if e == nil || (top != nil && !within(e, top)) {
		return nil, fmt.Errorf("signer: no element with ID %q", id)
	}
	return e, nil
}

// within reports whether e is top or a descendant of top.
func within(e, top *element) bool {
	for ; e != nil; e = e.parent {
		if e == top {
			return true
		}
	}
	return false
}

// walk calls f for e and every descendant element, in document order.
func walk(e *element, f func(*element)) {
	f(e)
	for _, c := range e.children {
		if c.kind == kindElement {
			walk(c.el, f)
		}
	}
}

// parser state. charset is nil for UTF-8 input and the single-byte table
// otherwise; ascii rejects bytes above 0x7F.
type parser struct {
	src     []byte
	pos     int
	charset *charmap.Charmap
	ascii   bool
	doc     *document
	buf     []byte
	// fast, when set, makes content() hand the subtree of the element
	// whose ID is fast.id to the canonical-form scanner of sign_fast.go
	// instead of building it.
	fast *fastTarget
}

// parseXML parses src into a document.
func parseXML(src []byte) (*document, error) {
	p := &parser{src: src, doc: &document{ids: map[string]*element{}}}
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.doc, nil
}

// errorf reports a syntax error at the current position with its line and
// column (1-based, counted in bytes).
func (p *parser) errorf(format string, args ...any) error {
	pos := min(p.pos, len(p.src))
	line := 1 + bytes.Count(p.src[:pos], []byte{'\n'})
	col := pos - bytes.LastIndexByte(p.src[:pos], '\n')
	return fmt.Errorf("%w: line %d column %d: %s", ErrInvalidXML, line, col, fmt.Sprintf(format, args...))
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) has(s string) bool {
	return len(p.src)-p.pos >= len(s) && string(p.src[p.pos:p.pos+len(s)]) == s
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func (p *parser) skipSpace() bool {
	start := p.pos
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
	return p.pos > start
}

func (p *parser) document() error {
	switch {
	case bytes.HasPrefix(p.src, []byte{0xEF, 0xBB, 0xBF}):
		p.pos = 3
	case bytes.HasPrefix(p.src, []byte{0xFE, 0xFF}), bytes.HasPrefix(p.src, []byte{0xFF, 0xFE}):
		return p.errorf("UTF-16 documents are not supported")
	}
	if p.has("<?xml") && len(p.src) > p.pos+5 && isSpace(p.src[p.pos+5]) {
		if err := p.xmlDecl(); err != nil {
			return err
		}
	}
	if err := p.misc(&p.doc.prolog); err != nil {
		return err
	}
	if p.eof() {
		return p.errorf("no root element")
	}
	if err := p.content(); err != nil {
		return err
	}
	if err := p.misc(&p.doc.epilog); err != nil {
		return err
	}
	if !p.eof() {
		return p.errorf("content after the root element")
	}
	return nil
}

// misc skips whitespace and comments outside the root element and collects
// processing instructions; it stops at the root's start tag or at the end.
func (p *parser) misc(pis *[]string) error {
	for {
		p.skipSpace()
		switch {
		case p.eof():
			return nil
		case p.has("<!--"):
			if err := p.comment(); err != nil {
				return err
			}
		case p.has("<?"):
			pi, err := p.pi()
			if err != nil {
				return err
			}
			*pis = append(*pis, pi)
		case p.has("<!DOCTYPE"):
			return p.errorf("documents with a DOCTYPE are not supported")
		case p.has("<") && p.doc.root == nil:
			return nil
		default:
			if p.doc.root == nil {
				return p.errorf("text before the root element")
			}
			return p.errorf("content after the root element")
		}
	}
}

// xmlDecl reads the XML declaration and selects the input encoding.
func (p *parser) xmlDecl() error {
	end := bytes.Index(p.src[p.pos:], []byte("?>"))
	if end < 0 {
		return p.errorf("unterminated XML declaration")
	}
	decl := string(p.src[p.pos+5 : p.pos+end])
	p.pos += end + 2
	enc := ""
	rest := decl
	for {
		rest = strings.TrimLeft(rest, " \t\r\n")
		if rest == "" {
			break
		}
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return p.errorf("malformed XML declaration")
		}
		name := strings.TrimRight(rest[:eq], " \t\r\n")
		rest = strings.TrimLeft(rest[eq+1:], " \t\r\n")
		if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
			return p.errorf("malformed XML declaration")
		}
		q := strings.IndexByte(rest[1:], rest[0])
		if q < 0 {
			return p.errorf("malformed XML declaration")
		}
		if name == "encoding" {
			enc = rest[1 : 1+q]
		}
		rest = rest[q+2:]
	}
	switch strings.ToLower(enc) {
	case "", "utf-8", "utf8":
	case "us-ascii", "ascii":
		p.ascii = true
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-ir-100", "cp819", "ibm819":
		p.charset = charmap.ISO8859_1
	case "iso-8859-15", "iso8859-15", "latin-9", "latin9":
		p.charset = charmap.ISO8859_15
	case "windows-1252", "cp1252":
		p.charset = charmap.Windows1252
	default:
		return p.errorf("unsupported encoding %q (want UTF-8 or ISO-8859-1)", enc)
	}
	return nil
}

func (p *parser) comment() error {
	end := bytes.Index(p.src[p.pos+4:], []byte("-->"))
	if end < 0 {
		return p.errorf("unterminated comment")
	}
	p.pos += 4 + end + 3
	return nil
}

// pi reads a processing instruction and returns its canonical form.
func (p *parser) pi() (string, error) {
	p.pos += 2
	target, err := p.name()
	if err != nil {
		return "", err
	}
	if strings.EqualFold(target, "xml") {
		return "", p.errorf("XML declaration not at the start of the document")
	}
	if strings.Contains(target, ":") {
		return "", p.errorf("processing instruction target %q contains a colon", target)
	}
	if p.has("?>") {
		p.pos += 2
		return "<?" + target + "?>", nil
	}
	if !p.skipSpace() {
		return "", p.errorf("malformed processing instruction %q", target)
	}
	end := bytes.Index(p.src[p.pos:], []byte("?>"))
	if end < 0 {
		return "", p.errorf("unterminated processing instruction %q", target)
	}
	dataStart := p.pos
	data, err := p.decodeRaw(dataStart, dataStart+end)
	if err != nil {
		return "", err
	}
	p.pos = dataStart + end + 2
	if data == "" {
		return "<?" + target + "?>", nil
	}
	return "<?" + target + " " + data + "?>", nil
}

func isNameStart(b byte) bool {
	return b == '_' || b == ':' || (b|0x20 >= 'a' && b|0x20 <= 'z') || b >= 0x80
}

func isNameByte(b byte) bool {
	return isNameStart(b) || b == '-' || b == '.' || (b >= '0' && b <= '9')
}

// name reads an XML name and returns it in UTF-8.
func (p *parser) name() (string, error) {
	start := p.pos
	if p.eof() || !isNameStart(p.src[p.pos]) {
		return "", p.errorf("expected a name")
	}
	ascii := true
	for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
		ascii = ascii && p.src[p.pos] < 0x80
		p.pos++
	}
	if ascii {
		return string(p.src[start:p.pos]), nil
	}
	return p.decodeRaw(start, p.pos)
}

// endTagName reads the name of an end tag and checks it against the open
// element's qualified name, without allocating in the common ASCII case.
func (p *parser) endTagName(open string) error {
	start := p.pos
	for p.pos < len(p.src) && isNameByte(p.src[p.pos]) && p.src[p.pos] < 0x80 {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] < 0x80 {
		if string(p.src[start:p.pos]) != open {
			return p.errorf("end tag </%s> does not match <%s>", p.src[start:p.pos], open)
		}
		return nil
	}
	p.pos = start
	name, err := p.name()
	if err != nil {
		return err
	}
	if name != open {
		return p.errorf("end tag </%s> does not match <%s>", name, open)
	}
	return nil
}

// splitQName splits a qualified name into prefix and local part.
func (p *parser) splitQName(q string) (string, string, error) {
	i := strings.IndexByte(q, ':')
	if i < 0 {
		return "", q, nil
	}
	if i == 0 || i == len(q)-1 || strings.IndexByte(q[i+1:], ':') >= 0 {
		return "", "", p.errorf("malformed qualified name %q", q)
	}
	return q[:i], q[i+1:], nil
}

// appendChar decodes one character of the input at p.pos, appends its UTF-8
// form to dst and advances. It rejects characters XML 1.0 forbids.
func (p *parser) appendChar(dst []byte) ([]byte, error) {
	b := p.src[p.pos]
	if b < 0x80 {
		if b < 0x20 && b != '\t' && b != '\n' && b != '\r' {
			return dst, p.errorf("control character 0x%02X is not allowed in XML", b)
		}
		p.pos++
		return append(dst, b), nil
	}
	if p.ascii {
		return dst, p.errorf("byte 0x%02X in a document declared US-ASCII", b)
	}
	if p.charset != nil {
		r := p.charset.DecodeByte(b)
		if r == utf8.RuneError {
			return dst, p.errorf("byte 0x%02X is not defined in the declared encoding", b)
		}
		p.pos++
		return utf8.AppendRune(dst, r), nil
	}
	r, n := utf8.DecodeRune(p.src[p.pos:])
	if r == utf8.RuneError && n <= 1 {
		return dst, p.errorf("invalid UTF-8 (add an encoding declaration if the file is ISO-8859-1)")
	}
	if r == 0xFFFE || r == 0xFFFF {
		return dst, p.errorf("character U+%04X is not allowed in XML", r)
	}
	p.pos += n
	return append(dst, p.src[p.pos-n:p.pos]...), nil
}

// decodeRaw decodes src[start:end] (no references) with line ends
// normalized, leaving p.pos at end.
func (p *parser) decodeRaw(start, end int) (string, error) {
	p.pos = start
	buf := p.buf[:0]
	var err error
	for p.pos < end {
		if p.src[p.pos] == '\r' {
			p.pos++
			if p.pos < end && p.src[p.pos] == '\n' {
				p.pos++
			}
			buf = append(buf, '\n')
			continue
		}
		if buf, err = p.appendChar(buf); err != nil {
			return "", err
		}
	}
	if p.pos != end {
		return "", p.errorf("character crosses a markup boundary")
	}
	p.buf = buf
	return string(buf), nil
}

// reference reads an entity or character reference at p.pos ('&') and
// appends the character it stands for.
func (p *parser) reference(dst []byte) ([]byte, error) {
	// Character references may carry any number of leading zeros; 256
	// bytes is far beyond anything real and keeps the scan bounded.
	end := bytes.IndexByte(p.src[p.pos:min(len(p.src), p.pos+256)], ';')
	if end < 0 {
		return dst, p.errorf("malformed reference")
	}
	ref := string(p.src[p.pos+1 : p.pos+end])
	switch ref {
	case "lt":
		dst = append(dst, '<')
	case "gt":
		dst = append(dst, '>')
	case "amp":
		dst = append(dst, '&')
	case "apos":
		dst = append(dst, '\'')
	case "quot":
		dst = append(dst, '"')
	default:
		if len(ref) < 2 || ref[0] != '#' {
			return dst, p.errorf("undefined entity &%s;", ref)
		}
		digits, base := ref[1:], 10
		if digits[0] == 'x' {
			digits, base = digits[1:], 16
		}
		if digits == "" {
			return dst, p.errorf("malformed character reference &%s;", ref)
		}
		r := 0
		for i := 0; i < len(digits); i++ {
			c := digits[i]
			var v int
			switch {
			case c >= '0' && c <= '9':
				v = int(c - '0')
			case base == 16 && c|0x20 >= 'a' && c|0x20 <= 'f':
				v = int(c|0x20-'a') + 10
			default:
				return dst, p.errorf("malformed character reference &%s;", ref)
			}
			r = r*base + v
			if r > utf8.MaxRune {
				return dst, p.errorf("character reference &%s; out of range", ref)
			}
		}
		if !isXMLChar(rune(r)) {
			return dst, p.errorf("character reference &%s; is not an XML character", ref)
		}
		dst = utf8.AppendRune(dst, rune(r))
	}
	p.pos += end + 1
	return dst, nil
}

func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= utf8.MaxRune)
}

// attrValue reads a quoted attribute value and returns it normalized as XML
// 1.0 requires for CDATA attributes: references replaced, and each literal
// tab, line feed, carriage return or CR LF pair turned into one space.
func (p *parser) attrValue() (string, error) {
	if p.eof() || (p.src[p.pos] != '"' && p.src[p.pos] != '\'') {
		return "", p.errorf("expected a quoted attribute value")
	}
	quote := p.src[p.pos]
	p.pos++
	buf := p.buf[:0]
	var err error
	for {
		if p.eof() {
			return "", p.errorf("unterminated attribute value")
		}
		switch c := p.src[p.pos]; c {
		case quote:
			p.pos++
			p.buf = buf
			return string(buf), nil
		case '<':
			return "", p.errorf("'<' in an attribute value")
		case '&':
			buf, err = p.reference(buf)
		case '\r':
			p.pos++
			if !p.eof() && p.src[p.pos] == '\n' {
				p.pos++
			}
			buf = append(buf, ' ')
		case '\n', '\t':
			p.pos++
			buf = append(buf, ' ')
		default:
			buf, err = p.appendChar(buf)
		}
		if err != nil {
			return "", err
		}
	}
}

// text reads character data up to the next '<'.
func (p *parser) text() (string, error) {
	buf := p.buf[:0]
	var err error
	for !p.eof() {
		switch c := p.src[p.pos]; c {
		case '<':
			p.buf = buf
			return string(buf), nil
		case '&':
			buf, err = p.reference(buf)
		case '\r':
			p.pos++
			if !p.eof() && p.src[p.pos] == '\n' {
				p.pos++
			}
			buf = append(buf, '\n')
		case ']':
			if p.has("]]>") {
				return "", p.errorf("']]>' is not allowed in character data")
			}
			p.pos++
			buf = append(buf, c)
		default:
			buf, err = p.appendChar(buf)
		}
		if err != nil {
			return "", err
		}
	}
	p.buf = buf
	return string(buf), nil
}

// lookupNS resolves prefix in the scope of e, looking no higher than top
// (the whole ancestry when top is nil). The xml prefix is always bound.
func lookupNS(e *element, prefix string, top *element) (string, bool) {
	if prefix == "xml" {
		return nsXML, true
	}
	for ; e != nil; e = e.parent {
		for _, d := range e.ns {
			if d.prefix == prefix {
				return d.uri, true
			}
		}
		if e == top {
			break
		}
	}
	return "", prefix == ""
}

// content parses the root element and everything inside it.
func (p *parser) content() error {
	var cur *element
	depth := 0
	for {
		if p.eof() {
			if cur == nil {
				return p.errorf("no root element")
			}
			return p.errorf("unexpected end of document inside <%s>", cur.qname())
		}
		if p.src[p.pos] != '<' {
			if cur == nil {
				return p.errorf("text before the root element")
			}
			t, err := p.text()
			if err != nil {
				return err
			}
			cur.children = append(cur.children, node{kind: kindText, text: t})
			continue
		}
		switch {
		case p.has("</"):
			if cur == nil {
				return p.errorf("end tag without a start tag")
			}
			p.pos += 2
			if err := p.endTagName(cur.qname()); err != nil {
				return err
			}
			p.skipSpace()
			if !p.has(">") {
				return p.errorf("malformed end tag </%s>", cur.qname())
			}
			p.pos++
			cur.end = p.pos
			cur = cur.parent
			depth--
			if cur == nil {
				return nil
			}
		case p.has("<!--"):
			if cur == nil {
				return p.errorf("expected the root element")
			}
			if err := p.comment(); err != nil {
				return err
			}
		case p.has("<![CDATA["):
			if cur == nil {
				return p.errorf("CDATA section outside the root element")
			}
			start := p.pos + 9
			end := bytes.Index(p.src[start:], []byte("]]>"))
			if end < 0 {
				return p.errorf("unterminated CDATA section")
			}
			t, err := p.decodeRaw(start, start+end)
			if err != nil {
				return err
			}
			p.pos = start + end + 3
			cur.children = append(cur.children, node{kind: kindText, text: t})
		case p.has("<?"):
			if cur == nil {
				return p.errorf("expected the root element")
			}
			pi, err := p.pi()
			if err != nil {
				return err
			}
			cur.children = append(cur.children, node{kind: kindPI, text: pi})
		case p.has("<!"):
			return p.errorf("unexpected markup declaration")
		default:
			if cur != nil && depth >= maxDepth {
				return p.errorf("elements nested deeper than %d levels", maxDepth)
			}
			el, empty, err := p.startTag(cur)
			if err != nil {
				return err
			}
			if cur == nil {
				p.doc.root = el
			} else {
				cur.children = append(cur.children, node{kind: kindElement, el: el})
				if p.fast != nil && p.fast.apex == nil && p.fast.isTarget(el) {
					// The element to sign: its subtree is checked and
					// digested in place, never built.
					if err := p.scanCanonicalSubtree(el, empty, depth); err != nil {
						return err
					}
					continue
				}
			}
			if empty {
				if cur == nil {
					return nil
				}
				continue
			}
			cur = el
			depth++
		}
	}
}

// startTag parses a start tag or empty-element tag at p.pos.
func (p *parser) startTag(parent *element) (*element, bool, error) {
	el := &element{parent: parent, start: p.pos}
	p.pos++
	qname, err := p.name()
	if err != nil {
		return nil, false, err
	}
	if el.prefix, el.local, err = p.splitQName(qname); err != nil {
		return nil, false, err
	}
	empty := false
	seen := 0
	for {
		space := p.skipSpace()
		if p.has(">") {
			p.pos++
			break
		}
		if p.has("/>") {
			p.pos += 2
			el.end = p.pos
			empty = true
			break
		}
		if p.eof() {
			return nil, false, p.errorf("unterminated start tag <%s>", qname)
		}
		if !space {
			return nil, false, p.errorf("expected whitespace before an attribute in <%s>", qname)
		}
		if seen++; seen > maxAttrs {
			return nil, false, p.errorf("more than %d attributes in <%s>", maxAttrs, qname)
		}
		aname, err := p.name()
		if err != nil {
			return nil, false, err
		}
		p.skipSpace()
		if !p.has("=") {
			return nil, false, p.errorf("attribute %s in <%s> has no value", aname, qname)
		}
		p.pos++
		p.skipSpace()
		value, err := p.attrValue()
		if err != nil {
			return nil, false, err
		}
		if err := p.addAttr(el, aname, value); err != nil {
			return nil, false, err
		}
	}
	// Resolve the element and attribute namespaces now that all of this
	// element's declarations are known.
	var ok bool
	if el.uri, ok = lookupNS(el, el.prefix, nil); !ok {
		return nil, false, p.errorf("undeclared namespace prefix %q on <%s>", el.prefix, qname)
	}
	for i := range el.attrs {
		a := &el.attrs[i]
		if a.prefix == "" {
			continue
		}
		if a.uri, ok = lookupNS(el, a.prefix, nil); !ok {
			return nil, false, p.errorf("undeclared namespace prefix %q on attribute %s of <%s>", a.prefix, a.qname(), qname)
		}
		for _, b := range el.attrs[:i] {
			if b.prefix != "" && b.uri == a.uri && b.local == a.local {
				return nil, false, p.errorf("attributes %s and %s of <%s> are the same attribute", b.qname(), a.qname(), qname)
			}
		}
	}
	// Keep declarations and attributes in canonical order so that the
	// canonicalizer never has to sort.
	slices.SortFunc(el.ns, func(a, b nsDecl) int { return strings.Compare(a.prefix, b.prefix) })
	slices.SortFunc(el.attrs, compareAttrs)
	if id, ok := el.attr(idAttrName); ok {
		if _, dup := p.doc.ids[id]; dup {
			if p.doc.dupIDs == nil {
				p.doc.dupIDs = map[string]bool{}
			}
			p.doc.dupIDs[id] = true
		} else {
			p.doc.ids[id] = el
		}
	}
	return el, empty, nil
}

// addAttr records one attribute or namespace declaration of el.
func (p *parser) addAttr(el *element, qname, value string) error {
	if qname == "xmlns" || strings.HasPrefix(qname, "xmlns:") {
		prefix := ""
		if qname != "xmlns" {
			prefix = qname[len("xmlns:"):]
			if prefix == "" || strings.IndexByte(prefix, ':') >= 0 {
				return p.errorf("malformed namespace declaration %s", qname)
			}
			switch {
			case prefix == "xmlns":
				return p.errorf("the xmlns prefix cannot be declared")
			case prefix == "xml" && value != nsXML, prefix != "xml" && value == nsXML:
				return p.errorf("the xml prefix and namespace cannot be rebound")
			case value == "":
				return p.errorf("namespace prefix %s cannot be undeclared in XML 1.0", prefix)
			}
		}
		for _, d := range el.ns {
			if d.prefix == prefix {
				return p.errorf("namespace %s declared twice on <%s>", qname, el.qname())
			}
		}
		if prefix != "xml" { // a declaration of xml is redundant and never rendered
			el.ns = append(el.ns, nsDecl{prefix: prefix, uri: value})
		}
		return nil
	}
	prefix, local, err := p.splitQName(qname)
	if err != nil {
		return err
	}
	if prefix == "xmlns" {
		return p.errorf("malformed namespace declaration %s", qname)
	}
	for _, a := range el.attrs {
		if a.prefix == prefix && a.local == local {
			return p.errorf("attribute %s appears twice in <%s>", qname, el.qname())
		}
	}
	el.attrs = append(el.attrs, attribute{prefix: prefix, local: local, value: value})
	return nil
}

// compareAttrs orders attributes as C14N requires: by namespace URI (none
// first), then by local name.
func compareAttrs(a, b attribute) int {
	if c := strings.Compare(a.uri, b.uri); c != 0 {
		return c
	}
	return strings.Compare(a.local, b.local)
}
