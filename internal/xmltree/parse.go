// Package xmltree is dtekit's one XML reader. It parses a document into a
// tree that keeps the byte offsets of every element in the original input,
// reads UTF-8 and ISO-8859-1 directly under one encoding-label rule, refuses
// DOCTYPE declarations, bounds nesting, attributes and element counts, and
// renders elements and documents in inclusive Canonical XML 1.0 (without
// comments), with a fast path for elements whose bytes are already in
// canonical form.
//
// Every package that reads XML (signer, dte, caf, ted) goes through it, so
// they all accept and refuse the same inputs, and an element found by one
// of them can be named by its offsets to the others.
//
// The tree holds namespace declarations as written, attribute values after
// XML normalization, character data with line ends normalized, and
// processing instructions; comments are dropped. A reader may keep only the
// elements it needs (Options.Keep) and let go of finished parts
// (Options.Close, Document.Drop): the others are still checked and
// counted, and canonical forms are written from the input's bytes, read a
// second time, so they never depend on what the tree holds. Every
// reference the SII profile allows ("#id" or "") is canonicalized without
// comments. Documents with a DOCTYPE are refused: entity and
// attribute-default declarations would change the canonical form (and cost
// unbounded work), and the SII never uses them.
package xmltree

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

const (
	// NSXML is the namespace bound to the xml prefix.
	NSXML      = "http://www.w3.org/XML/1998/namespace"
	nsXMLNS    = "http://www.w3.org/2000/xmlns/"
	maxAttrs   = 1024 // attributes (including namespace declarations) per element
	idAttrName = "ID" // the attribute that "#id" references resolve against
)

// Default limits of Parse; ParseWith takes others.
const (
	// DefaultMaxDepth is the element nesting accepted by default.
	DefaultMaxDepth = 256
	// DefaultMaxElements is the element count accepted by default: an
	// EnvioDTE of 2000 large documents holds well under a million.
	DefaultMaxElements = 4 << 20
	// DefaultMaxBytes is the input size accepted by default.
	DefaultMaxBytes = 256 << 20
)

// ErrInvalidXML is wrapped by every error about input that is not a
// well-formed XML document this package reads.
var ErrInvalidXML = errors.New("invalid XML")

// ErrLimit is wrapped by every error about input that exceeds a limit of
// Options (size, depth, element count).
var ErrLimit = errors.New("XML input over a limit")

// Kind tells what a Node is.
type Kind uint8

// The kinds of Node.
const (
	KindElement Kind = iota // an element (Node.El)
	KindText                // character data (Node.Text)
	KindPI                  // a processing instruction in canonical form (Node.Text)
)

// Node is one child of an element: an element, character data (decoded to
// UTF-8, line ends normalized, CDATA sections included) or a processing
// instruction already in canonical form.
type Node struct {
	Kind Kind
	El   *Element
	Text string
}

// NSDecl is a namespace declaration as written on an element; Prefix "" is
// the default namespace, and URI "" undeclares it (xmlns="").
type NSDecl struct{ Prefix, URI string }

// Attr is an ordinary attribute (not a namespace declaration).
type Attr struct {
	Prefix, Local string
	URI           string // namespace of the attribute; "" when unprefixed
	Value         string // normalized value, UTF-8
}

// QName returns the attribute's name as written.
func (a Attr) QName() string {
	if a.Prefix == "" {
		return a.Local
	}
	return a.Prefix + ":" + a.Local
}

// Element is a parsed element. Start is the offset of its first byte ('<'
// of the start tag) and End the offset just after its end tag (or
// empty-element tag); Inner and InnerEnd delimit its content (equal for an
// empty element). NS and Attrs are in canonical order.
type Element struct {
	Parent          *Element
	Prefix, Local   string
	URI             string
	NS              []NSDecl
	Attrs           []Attr
	Children        []Node
	Start, End      int
	Inner, InnerEnd int
	// temp marks an element read but not kept in the tree (see
	// Options.Keep): it lives until its end tag and is then reused.
	temp bool
}

// QName returns the element's name as written.
func (e *Element) QName() string {
	if e.Prefix == "" {
		return e.Local
	}
	return e.Prefix + ":" + e.Local
}

// Kept reports whether e is part of the document's tree: false for an
// element Options.Keep left out, as seen by Keep itself.
func (e *Element) Kept() bool { return !e.temp }

// Is reports whether e is the element {uri}local.
func (e *Element) Is(uri, local string) bool { return e.URI == uri && e.Local == local }

// Attr returns the value of the unprefixed attribute name.
func (e *Element) Attr(name string) (string, bool) {
	for _, a := range e.Attrs {
		if a.Prefix == "" && a.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

// Text returns the character data directly inside e (its text children
// concatenated; child elements are skipped).
func (e *Element) Text() string {
	switch {
	case e == nil:
		return ""
	case len(e.Children) == 1 && e.Children[0].Kind == KindText:
		return e.Children[0].Text
	}
	var b strings.Builder
	for _, c := range e.Children {
		if c.Kind == KindText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// Elements returns the child elements of e, in order.
func (e *Element) Elements() []*Element {
	if e == nil {
		return nil
	}
	out := make([]*Element, 0, len(e.Children))
	for _, c := range e.Children {
		if c.Kind == KindElement {
			out = append(out, c.El)
		}
	}
	return out
}

// Child returns the first child element named {uri}local, or nil.
func (e *Element) Child(uri, local string) *Element {
	if e == nil {
		return nil
	}
	for _, c := range e.Children {
		if c.Kind == KindElement && c.El.Is(uri, local) {
			return c.El
		}
	}
	return nil
}

// Document is a parsed XML document.
type Document struct {
	Root   *Element
	prolog []string // processing instructions before the root, canonical form
	epilog []string // processing instructions after the root, canonical form
	// ids maps each ID to its element, or to nil when the element is not
	// kept in the tree (Options.Keep).
	ids    map[string]*Element
	dupIDs map[string]bool
	// partial is set when the tree may lack elements of the input
	// (Options.Keep, Drop): a duplicated ID is then refused by ByID even
	// within top, since a copy outside the tree cannot be counted.
	partial bool
	// src, charset and ascii are the input and how it is decoded: the
	// canonicalizer reads elements again from their bytes.
	src     []byte
	charset *charmap.Charmap
	ascii   bool
	// Encoding is the encoding the document was read in: "UTF-8",
	// "ISO-8859-1", "US-ASCII" or another single-byte table's name.
	Encoding string
	// Elements counts the elements of the document.
	Elements int
}

// Drop removes the descendants of el from the tree, and their IDs from
// ByID (DuplicateID still counts them), keeping el itself with its
// attributes and offsets: a reader that has handled a complete part of a
// large document (see Options.Close) lets its memory go.
func (d *Document) Drop(el *Element) {
	d.partial = true
	for _, c := range el.Children {
		if c.Kind != KindElement {
			continue
		}
		Walk(c.El, func(e *Element) {
			if id, ok := e.Attr(idAttrName); ok && d.ids[id] == e {
				d.ids[id] = nil
			}
		})
	}
	el.Children = nil
}

// Len returns the size of the input the document was read from.
func (d *Document) Len() int { return len(d.src) }

// DuplicateID returns an ID attribute value that appears on more than one
// element of the document, or "" when every ID is unique.
func (d *Document) DuplicateID() string {
	for id := range d.dupIDs {
		return id
	}
	return ""
}

// ByID returns the unique element whose ID attribute equals id, searching
// only inside top when top is not nil. An ID that appears more than once
// in the document is refused; inside top only a duplicate within top
// counts, unless the tree is partial (Options.Keep, Drop), where a copy
// left out of the tree could not be counted.
func (d *Document) ByID(id string, top *Element) (*Element, error) {
	if d.dupIDs[id] {
		if top == nil || d.partial {
			return nil, fmt.Errorf("ID %q appears on more than one element", id)
		}
		// A duplicate elsewhere in the document does not matter when the
		// search is confined to top; count the matches inside it.
		var found *Element
		n := 0
		Walk(top, func(e *Element) {
			if v, ok := e.Attr(idAttrName); ok && v == id {
				found = e
				n++
			}
		})
		if n > 1 {
			return nil, fmt.Errorf("ID %q appears on more than one element", id)
		}
		if n == 0 {
			return nil, fmt.Errorf("no element with ID %q", id)
		}
		return found, nil
	}
	e := d.ids[id]
	if e == nil || (top != nil && !Within(e, top)) {
		return nil, fmt.Errorf("no element with ID %q", id)
	}
	return e, nil
}

// NextElement returns the element sibling that follows e, skipping
// whitespace and processing instructions, or nil (also when non-blank text
// comes first, or e is the root).
func NextElement(e *Element) *Element {
	if e.Parent == nil {
		return nil
	}
	sib := e.Parent.Children
	for i, ch := range sib {
		if ch.Kind != KindElement || ch.El != e {
			continue
		}
		for _, n := range sib[i+1:] {
			switch {
			case n.Kind == KindElement:
				return n.El
			case n.Kind == KindText && strings.TrimSpace(n.Text) != "":
				return nil
			}
		}
		return nil
	}
	return nil
}

// Within reports whether e is top or a descendant of top.
func Within(e, top *Element) bool {
	for ; e != nil; e = e.Parent {
		if e == top {
			return true
		}
	}
	return false
}

// Walk calls f for e and every descendant element, in document order.
func Walk(e *Element, f func(*Element)) {
	f(e)
	for _, c := range e.Children {
		if c.Kind == KindElement {
			Walk(c.El, f)
		}
	}
}

// parser state. charset is nil for UTF-8 input and the single-byte table
// otherwise; ascii rejects bytes above 0x7F. reset must set every field
// that is not scratch space.
type parser struct {
	src     []byte
	pos     int
	charset *charmap.Charmap
	ascii   bool
	doc     *Document
	buf     []byte
	opts    Options
	names   [64]string  // recently read names, by a hash
	values  *[16]string // when set, recently read short attribute values
	slab    []Element   // elements allocated in batches
	slabN   int         // size of the last batch
	free    []*Element  // temporary elements ready for reuse
	span    int         // next of opts.Verified the fast scan may meet
	fastNS  []fastNS    // scratch: the declarations open in the fast scan
	// fast, when set, makes content() hand the subtree of the element
	// whose ID is fast.id to the canonical-form scanner of fast.go
	// instead of building it.
	fast *fastTarget
}

// Options bounds what Parse accepts. A zero field takes the default.
type Options struct {
	// MaxBytes bounds the input size (DefaultMaxBytes).
	MaxBytes int
	// MaxDepth bounds element nesting (DefaultMaxDepth).
	MaxDepth int
	// MaxElements bounds the number of elements (DefaultMaxElements).
	MaxElements int
	// Skim, when set, is asked about each element below the root right
	// after its start tag. When it returns true and the element's content
	// is written in the strict canonical shape of FastCanonical, the
	// content is checked but not built: the element keeps its attributes
	// and offsets and has no children. Otherwise it is parsed as usual.
	Skim func(*Element) bool
	// Verified lists ranges of the document, in ascending order, that
	// FastCanonical steps over without scanning them again when it meets
	// one as a child of the element it canonicalizes. The caller vouches
	// for each: it must hold exactly the bytes of a root element that
	// ScanRoot accepted (with the same ID to refuse), given the namespace
	// scope in force where the span now sits. The ordinary parser ignores
	// it.
	Verified []Span
	// Keep, when set, is asked about every element below the root right
	// after its start tag (el.Parent is set; el and its ancestors are
	// valid only during the call, and el.Parent.Kept tells whether the
	// parent is in the tree). An element is built into the tree when Keep
	// returns true, and so are its ancestors that were not, from then on
	// (their earlier children and text stay out). The others are read and
	// checked like the rest (well-formedness, limits, IDs for
	// DuplicateID), then forgotten with their text at their end tag; the
	// canonical form of a kept element still covers them, since it is
	// written from the input's bytes. An error from Keep stops the parse
	// and is returned as it is.
	Keep func(el *Element) (bool, error)
	// Close, when set, is called with the document read so far after the
	// end tag of every kept element below the root, so that a reader can
	// handle a part of a large document as soon as it is complete and
	// then Drop it. An error stops the parse and is returned as it is.
	Close func(d *Document, el *Element) error
	// Latin1Fallback reads a document that has neither a byte order mark
	// nor an encoding declaration, and is not valid UTF-8, as ISO-8859-1.
	// The SII hands out CAF files written that way.
	Latin1Fallback bool
}

// Parse parses src into a document with the default limits.
func Parse(src []byte) (*Document, error) { return ParseWith(src, Options{}) }

// ParseWith parses src into a document under opts.
func ParseWith(src []byte, opts Options) (*Document, error) {
	p, err := newParser(src, opts)
	if err != nil {
		return nil, err
	}
	if err := p.document(); err != nil {
		return nil, err
	}
	return p.doc, nil
}

func newParser(src []byte, opts Options) (*parser, error) {
	p := new(parser)
	if err := p.reset(src, opts, &Document{src: src, partial: opts.Keep != nil}); err != nil {
		return nil, err
	}
	return p, nil
}

// reset readies p to parse src into doc under opts, as a new parser would,
// keeping only its scratch space (the name cache, the value buffer and
// the list of free elements) from an earlier parse.
func (p *parser) reset(src []byte, opts Options, doc *Document) error {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MaxElements <= 0 {
		opts.MaxElements = DefaultMaxElements
	}
	if len(src) > opts.MaxBytes {
		return fmt.Errorf("%w: the document is %d bytes, more than the %d accepted", ErrLimit, len(src), opts.MaxBytes)
	}
	p.src, p.pos, p.charset, p.ascii = src, 0, nil, false
	p.doc, p.buf, p.opts = doc, p.buf[:0], opts
	p.slab, p.slabN, p.span, p.fast = nil, 0, 0, nil
	clear(p.free)
	p.free = p.free[:0]
	return nil
}

// errorf reports a syntax error at the current position with its line and
// column (1-based, counted in bytes).
func (p *parser) errorf(format string, args ...any) error {
	pos := min(p.pos, len(p.src))
	col := pos - bytes.LastIndexByte(p.src[:pos], '\n')
	return fmt.Errorf("%w: line %d column %d: %s", ErrInvalidXML, p.line(), col, fmt.Sprintf(format, args...))
}

// line returns the 1-based line of the current position.
func (p *parser) line() int {
	return 1 + bytes.Count(p.src[:min(p.pos, len(p.src))], []byte{'\n'})
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
	bom := false
	switch {
	case bytes.HasPrefix(p.src, []byte{0xEF, 0xBB, 0xBF}):
		p.pos, bom = 3, true
	case bytes.HasPrefix(p.src, []byte{0xFE, 0xFF}), bytes.HasPrefix(p.src, []byte{0xFF, 0xFE}):
		return p.errorf("UTF-16 documents are not supported")
	}
	decl, err := ParseDeclaration(p.src[p.pos:])
	if err != nil {
		return err
	}
	p.pos += decl.Len
	p.doc.Encoding = UTF8
	switch {
	case decl.Encoding != "":
		enc, err := EncodingOf(decl.Encoding)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidXML, err)
		}
		if bom && enc != UTF8 {
			return p.errorf("a UTF-8 byte order mark contradicts the declared encoding %q", decl.Encoding)
		}
		p.doc.Encoding = enc
	case !bom && p.opts.Latin1Fallback && !utf8.Valid(p.src):
		p.doc.Encoding = Latin1
	}
	switch p.doc.Encoding {
	case USASCII:
		p.ascii = true
	case Latin1:
		p.charset = charmap.ISO8859_1
	}
	p.doc.charset, p.doc.ascii = p.charset, p.ascii
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
		case p.has("<") && p.doc.Root == nil:
			return nil
		default:
			if p.doc.Root == nil {
				return p.errorf("text before the root element")
			}
			return p.errorf("content after the root element")
		}
	}
}

func (p *parser) comment() error {
	end := bytes.Index(p.src[p.pos+4:], []byte("-->"))
	if end < 0 {
		return p.errorf("unterminated comment")
	}
	p.pos += 4 + end + 3
	return nil
}

// cdata reads a CDATA section at p.pos ("<![CDATA[") and returns its
// characters with line ends normalized, in the parser's scratch buffer,
// which the next read overwrites. It leaves p.pos after the closing "]]>".
func (p *parser) cdata() ([]byte, error) {
	start := p.pos + len("<![CDATA[")
	end := bytes.Index(p.src[start:], []byte("]]>"))
	if end < 0 {
		return nil, p.errorf("unterminated CDATA section")
	}
	t, err := p.decodeRawBytes(start, start+end)
	if err != nil {
		return nil, err
	}
	p.pos = start + end + len("]]>")
	return t, nil
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
		return p.intern(p.src[start:p.pos]), nil
	}
	return p.decodeRaw(start, p.pos)
}

// intern returns b as a string, reusing the string of an earlier equal
// name when the small cache still holds it (documents repeat a few dozen
// names thousands of times).
func (p *parser) intern(b []byte) string { return internIn(p.names[:], b) }

// internValue is intern for short attribute values, in a cache of their
// own that only a RootScanner keeps: a namespace URI or a version repeats
// in every document it reads, an ID never does, and neither must push
// names out.
func (p *parser) internValue(b []byte) string {
	if p.values == nil || len(b) > 64 {
		return string(b)
	}
	return internIn(p.values[:], b)
}

// internIn returns b as a string, reusing the one in its slot of cache
// when it is equal.
func internIn(cache []string, b []byte) string {
	h := len(b)
	if h > 0 {
		h = h*31 + int(b[0])*7 + int(b[len(b)-1])
	}
	slot := &cache[h%len(cache)]
	if *slot == string(b) {
		return *slot
	}
	*slot = string(b)
	return *slot
}

// tempElement returns a zeroed element for one that is not kept, reusing
// one whose end tag was read (with its attribute storage).
func (p *parser) tempElement() *Element {
	if n := len(p.free); n > 0 {
		el := p.free[n-1]
		p.free = p.free[:n-1]
		*el = Element{NS: el.NS[:0], Attrs: el.Attrs[:0], temp: true}
		return el
	}
	return &Element{temp: true}
}

// release hands a temporary element back for reuse.
func (p *parser) release(el *Element) {
	if el.temp {
		p.free = append(p.free, el)
	}
}

// promote makes the open element e, and its ancestors, part of the tree
// if they are not: each goes into its parent's children after those
// already kept, and takes its ID in ByID unless that ID is duplicated.
func (p *parser) promote(e *Element) {
	if !e.temp {
		return
	}
	p.promote(e.Parent) // the root is always kept
	e.temp = false
	e.Parent.Children = append(e.Parent.Children, Node{Kind: KindElement, El: e})
	if id, ok := e.Attr(idAttrName); ok && p.doc.ids[id] == nil && !p.doc.dupIDs[id] {
		p.doc.ids[id] = e
	}
}

// closed tells Options.Close that the kept element el is complete.
func (p *parser) closed(el *Element) error {
	if p.opts.Close == nil || el.temp {
		return nil
	}
	return p.opts.Close(p.doc, el)
}

// registerID records the ID attribute of el, if any.
func (p *parser) registerID(el *Element) {
	id, ok := el.Attr(idAttrName)
	if !ok {
		return
	}
	if _, dup := p.doc.ids[id]; dup {
		if p.doc.dupIDs == nil {
			p.doc.dupIDs = map[string]bool{}
		}
		p.doc.dupIDs[id] = true
		return
	}
	if p.doc.ids == nil {
		p.doc.ids = make(map[string]*Element, 4)
	}
	if el.temp {
		el = nil
	}
	p.doc.ids[id] = el
}

// newElement returns a zeroed element from the parser's current slab.
func (p *parser) newElement() *Element {
	if len(p.slab) == 0 {
		p.slabN = min(max(2*p.slabN, 8), 256)
		p.slab = make([]Element, p.slabN)
	}
	el := &p.slab[0]
	p.slab = p.slab[1:]
	return el
}

// endTag reads an end tag at p.pos ("</"), checks its name against the
// open element's qualified name, and leaves p.pos after its '>'.
func (p *parser) endTag(open string) error {
	p.pos += len("</")
	if err := p.endTagName(open); err != nil {
		return err
	}
	p.skipSpace()
	if !p.has(">") {
		return p.errorf("malformed end tag </%s>", open)
	}
	p.pos++
	return nil
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
	b, err := p.decodeRawBytes(start, end)
	return string(b), err
}

// decodeRawBytes is decodeRaw into the parser's scratch buffer, which the
// next read overwrites.
func (p *parser) decodeRawBytes(start, end int) ([]byte, error) {
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
			return nil, err
		}
	}
	if p.pos != end {
		return nil, p.errorf("character crosses a markup boundary")
	}
	p.buf = buf
	return buf, nil
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
			return p.internValue(buf), nil
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
			// A run of printable ASCII goes in as it is.
			j := p.pos
			for j < len(p.src) && plainAttr[p.src[j]]&plainASCII != 0 && p.src[j] != quote {
				j++
			}
			if j > p.pos {
				buf = append(buf, p.src[p.pos:j]...)
				p.pos = j
				continue
			}
			buf, err = p.appendChar(buf)
		}
		if err != nil {
			return "", err
		}
	}
}

// text reads character data up to the next '<'.
func (p *parser) text() (string, error) {
	b, err := p.textBytes()
	return string(b), err
}

// textBytes is text into the parser's scratch buffer, which the next read
// overwrites.
func (p *parser) textBytes() ([]byte, error) {
	buf := p.buf[:0]
	var err error
	for !p.eof() {
		switch c := p.src[p.pos]; c {
		case '<':
			p.buf = buf
			return buf, nil
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
				return nil, p.errorf("']]>' is not allowed in character data")
			}
			p.pos++
			buf = append(buf, c)
		default:
			buf, err = p.appendChar(buf)
		}
		if err != nil {
			return nil, err
		}
	}
	p.buf = buf
	return buf, nil
}

// lookupNS resolves prefix in the scope of e, looking no higher than top
// (the whole ancestry when top is nil). The xml prefix is always bound.
func lookupNS(e *Element, prefix string, top *Element) (string, bool) {
	if prefix == "xml" {
		return NSXML, true
	}
	for ; e != nil; e = e.Parent {
		for _, d := range e.NS {
			if d.Prefix == prefix {
				return d.URI, true
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
	var cur *Element
	depth := 0
	for {
		if p.eof() {
			if cur == nil {
				return p.errorf("no root element")
			}
			return p.errorf("unexpected end of document inside <%s>", cur.QName())
		}
		if p.src[p.pos] != '<' {
			if cur == nil {
				return p.errorf("text before the root element")
			}
			if cur.temp {
				if _, err := p.textBytes(); err != nil {
					return err
				}
				continue
			}
			t, err := p.text()
			if err != nil {
				return err
			}
			cur.Children = append(cur.Children, Node{Kind: KindText, Text: t})
			continue
		}
		switch {
		case p.has("</"):
			if cur == nil {
				return p.errorf("end tag without a start tag")
			}
			cur.InnerEnd = p.pos
			if err := p.endTag(cur.QName()); err != nil {
				return err
			}
			cur.End = p.pos
			done := cur
			cur = cur.Parent
			if cur == nil {
				return nil
			}
			if err := p.closed(done); err != nil {
				return err
			}
			p.release(done)
			depth--
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
			t, err := p.cdata()
			if err != nil {
				return err
			}
			if !cur.temp {
				cur.Children = append(cur.Children, Node{Kind: KindText, Text: string(t)})
			}
		case p.has("<?"):
			if cur == nil {
				return p.errorf("expected the root element")
			}
			pi, err := p.pi()
			if err != nil {
				return err
			}
			if !cur.temp {
				cur.Children = append(cur.Children, Node{Kind: KindPI, Text: pi})
			}
		case p.has("<!"):
			return p.errorf("unexpected markup declaration")
		default:
			if cur != nil && depth >= p.opts.MaxDepth {
				return fmt.Errorf("%w: line %d: elements nested deeper than %d levels", ErrLimit, p.line(), p.opts.MaxDepth)
			}
			if p.doc.Elements++; p.doc.Elements > p.opts.MaxElements {
				return fmt.Errorf("%w: more than %d elements", ErrLimit, p.opts.MaxElements)
			}
			el, empty, err := p.element(cur)
			if err != nil {
				return err
			}
			if el.temp {
				if empty {
					p.release(el)
					continue
				}
				cur = el
				depth++
				continue
			}
			if cur == nil {
				p.doc.Root = el
				if p.fast != nil && p.fast.root {
					p.fast.apex = el
					return p.scanCanonical(el, empty, 0, p.fast.id, &p.fast.skip)
				}
			} else {
				cur.Children = append(cur.Children, Node{Kind: KindElement, El: el})
				if p.fast != nil && p.fast.apex == nil && p.fast.isTarget(el) {
					// The element to canonicalize: its subtree is
					// checked and written out in place, never built.
					p.fast.apex = el
					if err := p.scanCanonical(el, empty, depth, p.fast.id, &p.fast.skip); err != nil {
						return err
					}
					continue
				}
				if !empty && p.opts.Skim != nil && p.opts.Skim(el) {
					// A subtree the caller does not need: when it is in
					// the strict canonical shape (and so well formed) it
					// is stepped over without being built.
					pos, n := p.pos, p.doc.Elements
					if p.scanCanonical(el, false, depth, "", nil) == nil {
						if err := p.closed(el); err != nil {
							return err
						}
						continue
					}
					p.pos, p.doc.Elements = pos, n
				}
			}
			if empty {
				if cur == nil {
					return nil
				}
				if err := p.closed(el); err != nil {
					return err
				}
				continue
			}
			cur = el
			depth++
		}
	}
}

// element reads the start tag at p.pos of a child of parent (nil for the
// root), decides with Options.Keep whether it is kept, and records its ID.
func (p *parser) element(parent *Element) (*Element, bool, error) {
	if p.opts.Keep == nil || parent == nil {
		el := p.newElement()
		empty, err := p.startTag(parent, el)
		if err != nil {
			return nil, false, err
		}
		p.registerID(el)
		return el, empty, nil
	}
	el := p.tempElement()
	empty, err := p.startTag(parent, el)
	if err != nil {
		return nil, false, err
	}
	keep, err := p.opts.Keep(el)
	if err != nil {
		return nil, false, err
	}
	if keep {
		p.promote(parent)
		// One allocation per kept element, not a shared batch: a reader
		// that drops parts of the tree (Close, Drop) lets them go.
		k := new(Element)
		*k = *el
		k.temp = false
		el.NS, el.Attrs = nil, nil // now k's
		p.release(el)
		el = k
	}
	p.registerID(el)
	return el, empty, nil
}

// startTag parses a start tag or empty-element tag at p.pos into el, a
// child of parent.
func (p *parser) startTag(parent, el *Element) (bool, error) {
	el.Parent, el.Start = parent, p.pos
	p.pos++
	qname, err := p.name()
	if err != nil {
		return false, err
	}
	if el.Prefix, el.Local, err = p.splitQName(qname); err != nil {
		return false, err
	}
	empty := false
	seen := 0
	for {
		space := p.skipSpace()
		if p.has(">") {
			p.pos++
			el.Inner = p.pos
			break
		}
		if p.has("/>") {
			p.pos += 2
			el.End, el.Inner, el.InnerEnd = p.pos, p.pos, p.pos
			empty = true
			break
		}
		if p.eof() {
			return false, p.errorf("unterminated start tag <%s>", qname)
		}
		if !space {
			return false, p.errorf("expected whitespace before an attribute in <%s>", qname)
		}
		if seen++; seen > maxAttrs {
			return false, p.errorf("more than %d attributes in <%s>", maxAttrs, qname)
		}
		aname, err := p.name()
		if err != nil {
			return false, err
		}
		p.skipSpace()
		if !p.has("=") {
			return false, p.errorf("attribute %s in <%s> has no value", aname, qname)
		}
		p.pos++
		p.skipSpace()
		value, err := p.attrValue()
		if err != nil {
			return false, err
		}
		if err := p.addAttr(el, aname, value); err != nil {
			return false, err
		}
	}
	// Resolve the element and attribute namespaces now that all of this
	// element's declarations are known.
	var ok bool
	if el.URI, ok = lookupNS(el, el.Prefix, nil); !ok {
		return false, p.errorf("undeclared namespace prefix %q on <%s>", el.Prefix, qname)
	}
	for i := range el.Attrs {
		a := &el.Attrs[i]
		if a.Prefix == "" {
			continue
		}
		if a.URI, ok = lookupNS(el, a.Prefix, nil); !ok {
			return false, p.errorf("undeclared namespace prefix %q on attribute %s of <%s>", a.Prefix, a.QName(), qname)
		}
		for _, b := range el.Attrs[:i] {
			if b.Prefix != "" && b.URI == a.URI && b.Local == a.Local {
				return false, p.errorf("attributes %s and %s of <%s> are the same attribute", b.QName(), a.QName(), qname)
			}
		}
	}
	// Keep declarations and attributes in canonical order so that the
	// canonicalizer never has to sort.
	slices.SortFunc(el.NS, func(a, b NSDecl) int { return strings.Compare(a.Prefix, b.Prefix) })
	slices.SortFunc(el.Attrs, compareAttrs)
	return empty, nil
}

// addAttr records one attribute or namespace declaration of el.
func (p *parser) addAttr(el *Element, qname, value string) error {
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
			case prefix == "xml" && value != NSXML, prefix != "xml" && value == NSXML:
				return p.errorf("the xml prefix and namespace cannot be rebound")
			case value == "":
				return p.errorf("namespace prefix %s cannot be undeclared in XML 1.0", prefix)
			}
		}
		for _, d := range el.NS {
			if d.Prefix == prefix {
				return p.errorf("namespace %s declared twice on <%s>", qname, el.QName())
			}
		}
		if prefix != "xml" { // a declaration of xml is redundant and never rendered
			el.NS = append(el.NS, NSDecl{Prefix: prefix, URI: value})
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
	for _, a := range el.Attrs {
		if a.Prefix == prefix && a.Local == local {
			return p.errorf("attribute %s appears twice in <%s>", qname, el.QName())
		}
	}
	el.Attrs = append(el.Attrs, Attr{Prefix: prefix, Local: local, Value: value})
	return nil
}

// compareAttrs orders attributes as C14N requires: by namespace URI (none
// first), then by local name.
func compareAttrs(a, b Attr) int {
	if c := strings.Compare(a.URI, b.URI); c != 0 {
		return c
	}
	return strings.Compare(a.Local, b.Local)
}
