// Package xmlflat gives the caf and ted packages a small view of an XML
// document read by internal/xmltree (dtekit's one XML reader, with its
// encoding rule, DOCTYPE refusal and limits): elements with local names,
// attributes, child elements or text, and each element's source text; and
// it writes an element back in the flat form the SII signs: no whitespace
// between tags, no namespace declarations, attributes sorted, minimal
// escaping — the canonical XML (C14N) text of the element.
//
// It is deliberately narrow: no mixed content, no namespace resolution
// (prefixes are dropped from element names), nesting bounded by MaxDepth.
// Nothing in it panics on bad input; every failure is an error naming what
// was wrong.
package xmlflat

import (
	"fmt"
	"strings"

	"github.com/dtekit/dtekit/internal/xmltree"
)

// MaxDepth bounds element nesting: a CAF is four levels deep, a TED six, a
// whole DTE a few more.
const MaxDepth = 32

// MaxBytes bounds the documents ParseDocument reads: a CAF or a TED is a
// few kilobytes.
const MaxBytes = 1 << 20

// Node is one element of a parsed document, reduced to what CAFs and TEDs
// use: a local name, attributes (namespace declarations dropped), child
// elements or text, and the element's source text with whitespace-only
// text between tags removed.
type Node struct {
	// Name is the local name, prefix dropped.
	Name string
	// QName is the name as written (prefix:local), used in error messages.
	QName string
	// Attrs are the attributes with qualified names, in canonical order;
	// xmlns and xmlns:* declarations are left out.
	Attrs []Attr
	// Kids are the child elements in document order.
	Kids []*Node
	// Text is the character data of an element without child elements,
	// entities resolved; empty when that data is only whitespace.
	Text string
	// Raw is the element's source as written (decoded to UTF-8), minus
	// whitespace-only text between tags, comments and processing
	// instructions.
	Raw string
}

// Attr is one attribute of a Node.
type Attr struct {
	// Name is the attribute's name as written (prefix:local when prefixed).
	Name string
	// Value is the attribute's value, entities resolved.
	Value string
}

// isSpace reports whether s is empty or only XML whitespace.
func isSpace(s string) bool {
	return strings.Trim(s, " \t\r\n") == ""
}

// Parse reads a UTF-8 document into a tree of nodes and returns its root
// element (see ParseDocument).
func Parse(doc string) (*Node, error) { return ParseDocument([]byte(doc)) }

// ParseDocument reads an XML document with xmltree (UTF-8, or ISO-8859-1
// when declared, or when undeclared and not valid UTF-8, as the SII's CAF
// files are) and returns its root element. Comments and processing
// instructions are skipped; a DOCTYPE, mixed content (text beside child
// elements) and more than MaxDepth levels are rejected.
func ParseDocument(data []byte) (*Node, error) {
	d, err := xmltree.ParseWith(data, xmltree.Options{MaxBytes: MaxBytes, MaxDepth: MaxDepth, Latin1Fallback: true})
	if err != nil {
		return nil, err
	}
	decode := func(b []byte) string { return string(b) }
	if d.Encoding == xmltree.Latin1 {
		decode = func(b []byte) string { return Latin1ToString(b) }
	}
	return node(d.Root, data, decode)
}

// node converts one element and its subtree.
func node(e *xmltree.Element, src []byte, decode func([]byte) string) (*Node, error) {
	n := &Node{Name: e.Local, QName: e.QName()}
	for _, a := range e.Attrs {
		n.Attrs = append(n.Attrs, Attr{Name: a.QName(), Value: a.Value})
	}
	var raw strings.Builder
	text := ""
	for _, c := range e.Children {
		switch c.Kind {
		case xmltree.KindText:
			text += c.Text
		case xmltree.KindElement:
			k, err := node(c.El, src, decode)
			if err != nil {
				return nil, err
			}
			n.Kids = append(n.Kids, k)
			raw.WriteString(k.Raw)
		}
	}
	switch {
	case len(n.Kids) > 0 && !isSpace(text):
		return nil, fmt.Errorf("mixed content: <%s> holds both text and elements", n.QName)
	case len(n.Kids) == 0 && !isSpace(text):
		n.Text = text
		raw.Reset()
		raw.WriteString(decode(src[e.Inner:e.InnerEnd]))
	}
	if e.Inner == e.End { // <a/>
		n.Raw = decode(src[e.Start:e.End])
		return n, nil
	}
	n.Raw = decode(src[e.Start:e.Inner]) + raw.String() + decode(src[e.InnerEnd:e.End])
	return n, nil
}

// Children returns the child elements whose local name is name, in
// document order.
func (n *Node) Children(name string) []*Node {
	var out []*Node
	for _, k := range n.Kids {
		if k.Name == name {
			out = append(out, k)
		}
	}
	return out
}

// Attr returns the value of the attribute name (as written, prefix
// included) and whether it is present.
func (n *Node) Attr(name string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}
