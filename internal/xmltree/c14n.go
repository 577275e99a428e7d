package xmltree

import (
	"slices"
	"strings"
)

// Inclusive Canonical XML 1.0 (http://www.w3.org/TR/2001/REC-xml-c14n-20010315),
// without comments, over the parsed tree of xmlparse.go. Declarations and
// attributes are already in canonical order, so rendering is one walk.
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

type canonicalizer struct {
	out     []byte
	top     *Element
	exclude *Element
}

// canonicalElement renders e as the apex of a document subset.
func CanonicalElement(e, top, exclude *Element, sizeHint int) []byte {
	c := canonicalizer{out: make([]byte, 0, sizeHint), top: top, exclude: exclude}
	c.apex(e)
	return c.out
}

// canonicalDocument renders the whole document (or, when top is not the
// root, the subtree of top as if it were a document of its own).
func CanonicalDocument(d *Document, top, exclude *Element, sizeHint int) []byte {
	c := canonicalizer{out: make([]byte, 0, sizeHint), top: top, exclude: exclude}
	if top != nil && top != d.Root {
		c.apex(top)
		return c.out
	}
	for _, pi := range d.prolog {
		c.out = append(c.out, pi...)
		c.out = append(c.out, '\n')
	}
	c.apex(d.Root)
	for _, pi := range d.epilog {
		c.out = append(c.out, '\n')
		c.out = append(c.out, pi...)
	}
	return c.out
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

func (c *canonicalizer) apex(e *Element) {
	decls, attrs := c.apexContext(e)
	c.element(e, decls, attrs)
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

// element renders e with the given namespace declarations and attributes,
// then its content.
func (c *canonicalizer) element(e *Element, decls []NSDecl, attrs []Attr) {
	c.startTag(e, decls, attrs)
	for _, ch := range e.Children {
		switch ch.Kind {
		case KindText:
			c.out = AppendEscapedText(c.out, ch.Text)
		case KindPI:
			c.out = append(c.out, ch.Text...)
		case KindElement:
			if ch.El != c.exclude {
				c.element(ch.El, c.changedDecls(ch.El), ch.El.Attrs)
			}
		}
	}
	c.out = append(c.out, "</"...)
	c.out = AppendQName(c.out, e.Prefix, e.Local)
	c.out = append(c.out, '>')
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

// appendEscapedText escapes character data as C14N does: & < > and CR only.
func AppendEscapedText(dst []byte, s string) []byte {
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
