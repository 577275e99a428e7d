package xmltree

import (
	"io"
	"math"
	"slices"
	"strings"
)

// Inclusive Canonical XML 1.0 (http://www.w3.org/TR/2001/REC-xml-c14n-20010315),
// without comments. The canonical form is written from the input's bytes,
// read a second time with the parser, rather than from the tree: the tree
// may hold only the elements a reader asked for (Options.Keep), and the
// output goes straight to a hash in small pieces instead of being held
// whole. Declarations and attributes of each element are sorted as they
// are read, so rendering is one pass.
//
// The node sets it renders are the ones the SII profile produces: a whole
// element subtree (a "#id" reference), or the whole document (URI ""),
// optionally minus one enveloped Signature subtree. Such a set never has
// holes above an output element, which keeps the namespace rule simple: the
// apex renders every namespace in scope, and a descendant renders a
// declaration only when it changes the value its parent had in scope.
//
// top bounds the context: namespace declarations and xml:* attributes are
// inherited only from ancestors up to and including top (nil: the document
// root). Verify uses it to check a DTE pasted into an envelope as the
// standalone document it was when it was signed.

// flushAt is the size at which a streaming canonicalizer hands its buffer
// to the writer.
const flushAt = 32 << 10

type canonicalizer struct {
	out     []byte
	w       io.Writer // nil: out collects the whole form
	top     *Element
	exclude *Element
}

// flush hands the buffered output to the writer once it is large enough
// (always when force is set).
func (c *canonicalizer) flush(force bool) {
	if c.w != nil && (force || len(c.out) >= flushAt) {
		c.w.Write(c.out)
		c.out = c.out[:0]
	}
}

// WriteCanonical writes to w the canonical form of e, an element of d, as
// the apex of a document subset; when e is nil, that of the whole document
// (or, when top is not the root, of the subtree of top as if it were a
// document of its own). exclude, when not nil, is an element left out with
// its subtree (an enveloped signature). e, top and exclude must be elements
// kept in d's tree; their descendants need not be.
func (d *Document) WriteCanonical(w io.Writer, e, top, exclude *Element) error {
	sw := &stickyWriter{w: w}
	if e != nil && top == nil && exclude == nil && d.writeFast(sw, e) {
		return sw.err
	}
	c := canonicalizer{out: make([]byte, 0, 4<<10), w: sw, top: top, exclude: exclude}
	err := c.render(d, e)
	c.flush(true)
	if err == nil {
		err = sw.err
	}
	return err
}

// stickyWriter keeps the first error of its writer and writes nothing
// after it, so that WriteCanonical reports a failed write.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	s.err = err
	return n, err
}

// writeFast writes the canonical form of e, in its whole document
// context, straight from its bytes when its content is written in the
// strict canonical shape of FastCanonical (as dtekit writes the elements
// it signs), and reports whether it did; it writes nothing otherwise.
func (d *Document) writeFast(w io.Writer, e *Element) bool {
	if e.Inner == e.InnerEnd {
		return false
	}
	p := &parser{src: d.src, charset: d.charset, ascii: d.ascii, doc: &Document{}, pos: e.Inner,
		opts: Options{MaxDepth: math.MaxInt, MaxElements: math.MaxInt}}
	var skip [][2]int
	if p.scanCanonical(e, false, 0, "", &skip) != nil {
		return false
	}
	p.writeScanned(w, e, skip)
	return true
}

// CanonicalElement returns the canonical form of e, an element of d, as
// the apex of a document subset (see WriteCanonical).
func CanonicalElement(d *Document, e, top, exclude *Element) ([]byte, error) {
	c := canonicalizer{out: make([]byte, 0, e.End-e.Start+512), top: top, exclude: exclude}
	err := c.render(d, e)
	return c.out, err
}

// CanonicalDocument returns the canonical form of the whole document (see
// WriteCanonical).
func CanonicalDocument(d *Document, top, exclude *Element) ([]byte, error) {
	c := canonicalizer{out: make([]byte, 0, len(d.src)+512), top: top, exclude: exclude}
	err := c.render(d, nil)
	return c.out, err
}

func (c *canonicalizer) render(d *Document, e *Element) error {
	if e != nil {
		return c.apex(d, e)
	}
	if c.top != nil && c.top != d.Root {
		return c.apex(d, c.top)
	}
	for _, pi := range d.prolog {
		c.out = append(c.out, pi...)
		c.out = append(c.out, '\n')
	}
	if err := c.apex(d, d.Root); err != nil {
		return err
	}
	for _, pi := range d.epilog {
		c.out = append(c.out, '\n')
		c.out = append(c.out, pi...)
	}
	return nil
}

// apex renders e and its content, read again from the document's bytes.
func (c *canonicalizer) apex(d *Document, e *Element) error {
	decls, attrs := c.apexContext(e)
	c.startTag(e, decls, attrs)
	if e.Inner < e.InnerEnd {
		p := &parser{src: d.src, charset: d.charset, ascii: d.ascii, doc: &Document{}, pos: e.Inner}
		if err := c.content(p, e); err != nil {
			return err
		}
	}
	c.endTag(e)
	return nil
}

// content renders what lies between the start and end tags of apex,
// reading it with p (positioned after the start tag). Every element read
// is temporary and reused once its end tag is written.
func (c *canonicalizer) content(p *parser, apex *Element) error {
	cur := apex
	skip := -1
	if c.exclude != nil {
		skip = c.exclude.Start
	}
	for p.pos < apex.InnerEnd {
		c.flush(false)
		if p.src[p.pos] != '<' {
			t, err := p.textBytes()
			if err != nil {
				return err
			}
			c.out = appendEscapedText(c.out, t)
			continue
		}
		switch {
		case p.has("</"):
			if cur == apex {
				return p.errorf("end tag before the end of <%s>", apex.QName())
			}
			if err := p.endTag(cur.QName()); err != nil {
				return err
			}
			c.endTag(cur)
			done := cur
			cur = cur.Parent
			p.release(done)
		case p.has("<!--"):
			if err := p.comment(); err != nil {
				return err
			}
		case p.has("<![CDATA["):
			t, err := p.cdata()
			if err != nil {
				return err
			}
			c.out = appendEscapedText(c.out, t)
		case p.has("<?"):
			pi, err := p.pi()
			if err != nil {
				return err
			}
			c.out = append(c.out, pi...)
		case p.has("<!"):
			return p.errorf("unexpected markup declaration")
		default:
			if p.pos == skip {
				p.pos = c.exclude.End
				continue
			}
			el := p.tempElement()
			empty, err := p.startTag(cur, el)
			if err != nil {
				return err
			}
			c.startTag(el, c.changedDecls(el), el.Attrs)
			if empty {
				c.endTag(el)
				p.release(el)
				continue
			}
			cur = el
		}
	}
	if cur != apex || p.pos != apex.InnerEnd {
		return p.errorf("the content of <%s> does not end where its end tag was read", apex.QName())
	}
	return nil
}

// endTag renders the end tag of e.
func (c *canonicalizer) endTag(e *Element) {
	c.out = append(c.out, "</"...)
	c.out = AppendQName(c.out, e.Prefix, e.Local)
	c.out = append(c.out, '>')
}

// scopeAt returns the non-empty namespace bindings in scope at e, one per
// prefix, ordered by prefix, looking no higher than top.
func ScopeAt(e, top *Element) []NSDecl {
	var decls []NSDecl
	seen := map[string]bool{}
	for ; e != nil; e = e.Parent {
		for _, d := range e.NS {
			if !seen[d.Prefix] {
				seen[d.Prefix] = true
				if d.URI != "" {
					decls = append(decls, d)
				}
			}
		}
		if e == top {
			break
		}
	}
	slices.SortFunc(decls, func(a, b NSDecl) int { return strings.Compare(a.Prefix, b.Prefix) })
	return decls
}

// inheritedXMLAttrs returns the xml:* attributes (xml:lang, xml:space, ...)
// that e's ancestors, up to top, pass on to e because e doesn't set them.
// C14N 1.0 copies them onto the apex of a document subset.
func inheritedXMLAttrs(e, top *Element) []Attr {
	if e == top {
		return nil
	}
	var out []Attr
	for a := e.Parent; a != nil; a = a.Parent {
		for _, at := range a.Attrs {
			if at.URI != NSXML {
				continue
			}
			taken := false
			for _, o := range e.Attrs {
				taken = taken || (o.URI == NSXML && o.Local == at.Local)
			}
			for _, o := range out {
				taken = taken || o.Local == at.Local
			}
			if !taken {
				out = append(out, at)
			}
		}
		if a == top {
			break
		}
	}
	return out
}

// apexContext returns what the start tag of e renders as the apex of a
// document subset: every namespace in scope, and its attributes with the
// xml:* ones it inherits, in canonical order.
func (c *canonicalizer) apexContext(e *Element) ([]NSDecl, []Attr) {
	attrs := e.Attrs
	if extra := inheritedXMLAttrs(e, c.top); len(extra) > 0 {
		attrs = append(slices.Clone(e.Attrs), extra...)
		slices.SortFunc(attrs, compareAttrs)
	}
	return ScopeAt(e, c.top), attrs
}

// startTag renders the start tag of e with the given namespace
// declarations and attributes.
func (c *canonicalizer) startTag(e *Element, decls []NSDecl, attrs []Attr) {
	c.out = append(c.out, '<')
	c.out = AppendQName(c.out, e.Prefix, e.Local)
	for _, d := range decls {
		c.out = append(c.out, " xmlns"...)
		if d.Prefix != "" {
			c.out = append(c.out, ':')
			c.out = append(c.out, d.Prefix...)
		}
		c.out = append(c.out, `="`...)
		c.out = AppendEscapedAttr(c.out, d.URI)
		c.out = append(c.out, '"')
	}
	for _, a := range attrs {
		c.out = append(c.out, ' ')
		c.out = AppendQName(c.out, a.Prefix, a.Local)
		c.out = append(c.out, `="`...)
		c.out = AppendEscapedAttr(c.out, a.Value)
		c.out = append(c.out, '"')
	}
	c.out = append(c.out, '>')
}

// changedDecls returns the declarations of e that change the binding its
// parent has in scope; the others are superfluous and not rendered.
func (c *canonicalizer) changedDecls(e *Element) []NSDecl {
	if len(e.NS) == 0 {
		return nil
	}
	n := 0
	for _, d := range e.NS {
		if v, _ := lookupNS(e.Parent, d.Prefix, c.top); v != d.URI {
			n++
		}
	}
	if n == len(e.NS) {
		return e.NS
	}
	out := make([]NSDecl, 0, n)
	for _, d := range e.NS {
		if v, _ := lookupNS(e.Parent, d.Prefix, c.top); v != d.URI {
			out = append(out, d)
		}
	}
	return out
}

func AppendQName(dst []byte, prefix, local string) []byte {
	if prefix != "" {
		dst = append(dst, prefix...)
		dst = append(dst, ':')
	}
	return append(dst, local...)
}

// AppendEscapedText escapes character data as C14N does: & < > and CR only.
func AppendEscapedText(dst []byte, s string) []byte { return appendEscapedText(dst, s) }

func appendEscapedText[S ~string | ~[]byte](dst []byte, s S) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}

// appendEscapedAttr escapes an attribute value as C14N does: & < " and the
// whitespace characters tab, LF and CR.
func AppendEscapedAttr(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '"':
			esc = "&quot;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}
