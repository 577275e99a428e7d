// Package xmlflat is the small XML reader shared by the caf and ted
// packages. It decodes documents in ISO-8859-1 or UTF-8 (deciding by byte
// order mark, encoding declaration or content), reads them into a tree of
// elements that keeps each element's source text, and writes an element back
// in the flat form the SII signs: no whitespace between tags, no namespace
// declarations, attributes sorted, minimal escaping — the canonical XML
// (C14N) text of the element.
//
// It is deliberately narrow: no DOCTYPE, no mixed content, no namespace
// resolution (prefixes are dropped from element names), bounded nesting.
// Nothing in it panics on bad input; every failure is an error naming what
// was wrong.
package xmlflat

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxDepth bounds element nesting: a CAF is four levels deep, a TED six, a
// whole DTE a few more.
const MaxDepth = 32

// Node is one element of a parsed document, reduced to what CAFs and TEDs
// use: a local name, attributes (namespace declarations dropped), child
// elements or text, and the element's source text with whitespace-only
// text between tags removed.
type Node struct {
	// Name is the local name, prefix dropped.
	Name string
	// QName is the name as written (prefix:local), used to match end tags
	// and in error messages.
	QName string
	// Attrs are the attributes in document order, with qualified names;
	// xmlns and xmlns:* declarations are left out.
	Attrs []Attr
	// Kids are the child elements in document order.
	Kids []*Node
	// Text is the character data of an element without child elements,
	// entities resolved; empty when that data is only whitespace.
	Text string
	// Raw is the element's source as written, minus whitespace-only text
	// between tags, comments and processing instructions.
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

// Parse reads a UTF-8 document (see DecodeDocument) into a tree of nodes and
// returns its root element. Comments and processing instructions are
// skipped; a DOCTYPE, mixed content (text beside child elements), repeated
// attributes and more than MaxDepth levels are rejected.
func Parse(doc string) (*Node, error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	// The text is already UTF-8, whatever the declaration says.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	type open struct {
		n       *Node
		text    strings.Builder
		rawText strings.Builder
		rawKids strings.Builder
		start   string
	}
	var stack []*open
	var root *Node
	var prev int64
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("XML syntax: %v", err)
		}
		end := d.InputOffset()
		if end < prev || end > int64(len(doc)) {
			return nil, errors.New("XML syntax: inconsistent decoder offset")
		}
		src := doc[prev:end]
		prev = end
		switch t := tok.(type) {
		case xml.StartElement:
			if root != nil && len(stack) == 0 {
				return nil, fmt.Errorf("XML syntax: element <%s> after the root element", t.Name.Local)
			}
			if len(stack) >= MaxDepth {
				return nil, fmt.Errorf("XML nesting deeper than %d levels", MaxDepth)
			}
			n := &Node{Name: t.Name.Local, QName: qualified(t.Name)}
			seen := map[string]bool{}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					continue
				}
				name := qualified(a.Name)
				if seen[name] {
					return nil, fmt.Errorf("XML syntax: attribute %s repeated on <%s>", name, n.QName)
				}
				seen[name] = true
				n.Attrs = append(n.Attrs, Attr{Name: name, Value: a.Value})
			}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				if !isSpace(parent.text.String()) {
					return nil, fmt.Errorf("mixed content: <%s> holds both text and the element <%s>", parent.n.QName, n.QName)
				}
				parent.n.Kids = append(parent.n.Kids, n)
			}
			stack = append(stack, &open{n: n, start: src})
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, fmt.Errorf("XML syntax: unexpected end tag </%s>", qualified(t.Name))
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if qualified(t.Name) != top.n.QName {
				return nil, fmt.Errorf("XML syntax: element <%s> closed by </%s>", top.n.QName, qualified(t.Name))
			}
			n := top.n
			body := top.rawKids.String()
			if len(n.Kids) == 0 {
				if text := top.text.String(); !isSpace(text) {
					n.Text = text
					body = top.rawText.String()
				}
			} else if !isSpace(top.text.String()) {
				return nil, fmt.Errorf("mixed content: <%s> holds both text and elements", n.QName)
			}
			n.Raw = top.start + body + src
			if len(stack) == 0 {
				root = n
			} else {
				stack[len(stack)-1].rawKids.WriteString(n.Raw)
			}
		case xml.CharData:
			if len(stack) == 0 {
				if !isSpace(string(t)) {
					return nil, errors.New("XML syntax: text outside the root element")
				}
				continue
			}
			top := stack[len(stack)-1]
			top.text.Write(t)
			top.rawText.WriteString(src)
			if len(top.n.Kids) > 0 && !isSpace(string(t)) {
				return nil, fmt.Errorf("mixed content: <%s> holds both text and elements", top.n.QName)
			}
		case xml.Directive:
			return nil, errors.New("a DOCTYPE or other <!...> declaration is not allowed")
		case xml.Comment, xml.ProcInst:
			// Skipped, as canonical XML without comments does.
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("XML syntax: unexpected end of document inside <%s>", stack[len(stack)-1].n.QName)
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// qualified returns a name as written: prefix:local, or local alone.
func qualified(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// ParseDocument decodes an XML document with DecodeDocument and reads it
// with Parse, returning the root element.
func ParseDocument(data []byte) (*Node, error) {
	doc, err := DecodeDocument(data)
	if err != nil {
		return nil, err
	}
	return Parse(doc)
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
