package signer

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
	top     *element
	exclude *element
}

// canonicalElement renders e as the apex of a document subset.
func canonicalElement(e, top, exclude *element, sizeHint int) []byte {
	c := canonicalizer{out: make([]byte, 0, sizeHint), top: top, exclude: exclude}
	c.apex(e)
	return c.out
}

// canonicalDocument renders the whole document (or, when top is not the
// root, the subtree of top as if it were a document of its own).
func canonicalDocument(d *document, top, exclude *element, sizeHint int) []byte {
	c := canonicalizer{out: make([]byte, 0, sizeHint), top: top, exclude: exclude}
	if top != nil && top != d.root {
		c.apex(top)
		return c.out
	}
	for _, pi := range d.prolog {
		c.out = append(c.out, pi...)
		c.out = append(c.out, '\n')
	}
	c.apex(d.root)
	for _, pi := range d.epilog {
		c.out = append(c.out, '\n')
		c.out = append(c.out, pi...)
	}
	return c.out
}

// scopeAt returns the non-empty namespace bindings in scope at e, one per
// prefix, ordered by prefix, looking no higher than top.
func scopeAt(e, top *element) []nsDecl {
	var decls []nsDecl
	seen := map[string]bool{}
	for ; e != nil; e = e.parent {
		for _, d := range e.ns {
			if !seen[d.prefix] {
				seen[d.prefix] = true
				if d.uri != "" {
					decls = append(decls, d)
				}
			}
		}
		if e == top {
			break
		}
	}
	slices.SortFunc(decls, func(a, b nsDecl) int { return strings.Compare(a.prefix, b.prefix) })
	return decls
}

// inheritedXMLAttrs returns the xml:* attributes (xml:lang, xml:space, ...)
// that e's ancestors, up to top, pass on to e because e doesn't set them.
// C14N 1.0 copies them onto the apex of a document subset.
func inheritedXMLAttrs(e, top *element) []attribute {
	if e == top {
		return nil
	}
	var out []attribute
	for a := e.parent; a != nil; a = a.parent {
		for _, at := range a.attrs {
			if at.uri != nsXML {
				continue
			}
			taken := false
			for _, o := range e.attrs {
				taken = taken || (o.uri == nsXML && o.local == at.local)
			}
			for _, o := range out {
				taken = taken || o.local == at.local
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

func (c *canonicalizer) apex(e *element) {
	decls, attrs := c.apexContext(e)
	c.element(e, decls, attrs)
}

// apexContext returns what the start tag of e renders as the apex of a
// document subset: every namespace in scope, and its attributes with the
// xml:* ones it inherits, in canonical order.
func (c *canonicalizer) apexContext(e *element) ([]nsDecl, []attribute) {
	attrs := e.attrs
	if extra := inheritedXMLAttrs(e, c.top); len(extra) > 0 {
		attrs = append(slices.Clone(e.attrs), extra...)
		slices.SortFunc(attrs, compareAttrs)
	}
	return scopeAt(e, c.top), attrs
}

// element renders e with the given namespace declarations and attributes,
// then its content.
func (c *canonicalizer) element(e *element, decls []nsDecl, attrs []attribute) {
	c.startTag(e, decls, attrs)
	for _, ch := range e.children {
		switch ch.kind {
		case kindText:
			c.out = appendEscapedText(c.out, ch.text)
		case kindPI:
			c.out = append(c.out, ch.text...)
		case kindElement:
			if ch.el != c.exclude {
				c.element(ch.el, c.changedDecls(ch.el), ch.el.attrs)
			}
		}
	}
	c.out = append(c.out, "</"...)
	c.out = appendQName(c.out, e.prefix, e.local)
	c.out = append(c.out, '>')
}

// startTag renders the start tag of e with the given namespace
// declarations and attributes.
func (c *canonicalizer) startTag(e *element, decls []nsDecl, attrs []attribute) {
	c.out = append(c.out, '<')
	c.out = appendQName(c.out, e.prefix, e.local)
	for _, d := range decls {
		c.out = append(c.out, " xmlns"...)
		if d.prefix != "" {
			c.out = append(c.out, ':')
			c.out = append(c.out, d.prefix...)
		}
		c.out = append(c.out, `="`...)
		c.out = appendEscapedAttr(c.out, d.uri)
		c.out = append(c.out, '"')
	}
	for _, a := range attrs {
		c.out = append(c.out, ' ')
		c.out = appendQName(c.out, a.prefix, a.local)
		c.out = append(c.out, `="`...)
		c.out = appendEscapedAttr(c.out, a.value)
		c.out = append(c.out, '"')
	}
	c.out = append(c.out, '>')
}

// changedDecls returns the declarations of e that change the binding its
// parent has in scope; the others are superfluous and not rendered.
func (c *canonicalizer) changedDecls(e *element) []nsDecl {
	if len(e.ns) == 0 {
		return nil
	}
	n := 0
	for _, d := range e.ns {
		if v, _ := lookupNS(e.parent, d.prefix, c.top); v != d.uri {
			n++
		}
	}
	if n == len(e.ns) {
		return e.ns
	}
	out := make([]nsDecl, 0, n)
	for _, d := range e.ns {
		if v, _ := lookupNS(e.parent, d.prefix, c.top); v != d.uri {
			out = append(out, d)
		}
	}
	return out
}

func appendQName(dst []byte, prefix, local string) []byte {
	if prefix != "" {
		dst = append(dst, prefix...)
		dst = append(dst, ':')
	}
	return append(dst, local...)
}

// appendEscapedText escapes character data as C14N does: & < > and CR only.
func appendEscapedText(dst []byte, s string) []byte {
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
func appendEscapedAttr(dst []byte, s string) []byte {
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
