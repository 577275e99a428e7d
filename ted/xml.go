package ted

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// This file mirrors caf/xml.go: the same small reader and flattener, kept
// private to each package so neither exports XML plumbing.

// maxDepth bounds element nesting; a TED is six levels deep, a whole DTE a
// few more.
const maxDepth = 32

// node is one element of a parsed document, reduced to what CAFs and TEDs
// use: a local name, attributes (namespace declarations dropped), child
// elements or text, and the element's source text with whitespace-only
// text between tags removed.
type node struct {
	name  string // local name, prefix dropped
	qname string // name as written, for end-tag matching
	attrs []attr
	kids  []*node
	text  string // character data of an element without child elements
	raw   string // source as written, minus whitespace-only text and comments
}

type attr struct{ name, value string }

// decodeDocument converts an XML document to UTF-8 text. A UTF-8 byte order
// mark or an encoding declaration decides; without either, valid UTF-8 is
// read as UTF-8 and anything else as ISO-8859-1 (the encoding of SII files,
// whose CAFs often carry no declaration while holding accented bytes).
func decodeDocument(data []byte) (string, error) {
	if bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}) {
		data = data[3:]
		if !utf8.Valid(data) {
			return "", fmt.Errorf("document starts with a UTF-8 byte order mark but is not valid UTF-8")
		}
		return string(data), nil
	}
	if bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) {
		return "", errors.New("UTF-16 documents are not supported (SII files are ISO-8859-1)")
	}
	label := declaredEncoding(data)
	switch strings.ToLower(label) {
	case "":
		if utf8.Valid(data) {
			return string(data), nil
		}
		return latin1ToString(data), nil
	case "utf-8", "utf8":
		if !utf8.Valid(data) {
			return "", fmt.Errorf("document declares encoding %q but is not valid UTF-8", label)
		}
		return string(data), nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-ir-100", "cp819", "ibm819", "csisolatin1", "us-ascii", "ascii":
		return latin1ToString(data), nil
	default:
		return "", fmt.Errorf("unsupported encoding %q (expected ISO-8859-1 or UTF-8)", label)
	}
}

// declaredEncoding returns the encoding named by the XML declaration at the
// start of data, or "" when there is none.
func declaredEncoding(data []byte) string {
	if !bytes.HasPrefix(data, []byte("<?xml")) {
		return ""
	}
	end := bytes.Index(data, []byte("?>"))
	if end < 0 {
		return ""
	}
	decl := string(data[:end])
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	q := rest[0]
	j := strings.IndexByte(rest[1:], q)
	if j < 0 {
		return ""
	}
	return rest[1 : 1+j]
}

// latin1ToString maps each ISO-8859-1 byte to the code point of the same
// value.
func latin1ToString(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// toLatin1 encodes UTF-8 text as ISO-8859-1. It fails, naming the first
// offending character, when the text holds a character outside Latin-1.
func toLatin1(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff || r == utf8.RuneError {
			return nil, fmt.Errorf("character %q (U+%04X) is outside ISO-8859-1", r, r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

func isSpace(s string) bool {
	return strings.Trim(s, " \t\r\n") == ""
}

// parseTree reads a UTF-8 document into a tree of nodes. Comments and
// processing instructions are skipped; a DOCTYPE, mixed content (text beside
// child elements) and more than maxDepth levels are rejected.
func parseTree(doc string) (*node, error) {
	d := xml.NewDecoder(strings.NewReader(doc))
	d.Strict = true
	// The text is already UTF-8, whatever the declaration says.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	type open struct {
		n       *node
		text    strings.Builder
		rawText strings.Builder
		rawKids strings.Builder
		start   string
	}
	var stack []*open
	var root *node
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
			if len(stack) >= maxDepth {
				return nil, fmt.Errorf("XML nesting deeper than %d levels", maxDepth)
			}
			n := &node{name: t.Name.Local, qname: qualified(t.Name)}
			seen := map[string]bool{}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					continue
				}
				name := qualified(a.Name)
				if seen[name] {
					return nil, fmt.Errorf("XML syntax: attribute %s repeated on <%s>", name, n.qname)
				}
				seen[name] = true
				n.attrs = append(n.attrs, attr{name: name, value: a.Value})
			}
			if len(stack) > 0 {
				parent := stack[len(stack)-1]
				if !isSpace(parent.text.String()) {
					return nil, fmt.Errorf("mixed content: <%s> holds both text and the element <%s>", parent.n.qname, n.qname)
				}
				parent.n.kids = append(parent.n.kids, n)
			}
			stack = append(stack, &open{n: n, start: src})
		case xml.EndElement:
			if len(stack) == 0 {
				return nil, fmt.Errorf("XML syntax: unexpected end tag </%s>", qualified(t.Name))
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if qualified(t.Name) != top.n.qname {
				return nil, fmt.Errorf("XML syntax: element <%s> closed by </%s>", top.n.qname, qualified(t.Name))
			}
			n := top.n
			body := top.rawKids.String()
			if len(n.kids) == 0 {
				if text := top.text.String(); !isSpace(text) {
					n.text = text
					body = top.rawText.String()
				}
			} else if !isSpace(top.text.String()) {
				return nil, fmt.Errorf("mixed content: <%s> holds both text and elements", n.qname)
			}
			n.raw = top.start + body + src
			if len(stack) == 0 {
				root = n
			} else {
				stack[len(stack)-1].rawKids.WriteString(n.raw)
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
			if len(top.n.kids) > 0 && !isSpace(string(t)) {
				return nil, fmt.Errorf("mixed content: <%s> holds both text and elements", top.n.qname)
			}
		case xml.Directive:
			return nil, errors.New("a DOCTYPE or other <!...> declaration is not allowed")
		case xml.Comment, xml.ProcInst:
			// Skipped, as canonical XML without comments does.
		}
	}
	if len(stack) > 0 {
		return nil, fmt.Errorf("XML syntax: unexpected end of document inside <%s>", stack[len(stack)-1].n.qname)
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

func qualified(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// flat serializes the element in the form the SII signs: no whitespace
// between tags, no namespace declarations, attributes sorted by name, text
// escaping only &, < and > (and CR), attribute values escaping &, <, " and
// whitespace characters — the canonical XML (C14N) text of the element.
func (n *node) flat() string {
	var b strings.Builder
	n.writeFlat(&b)
	return b.String()
}

func (n *node) writeFlat(b *strings.Builder) {
	b.WriteByte('<')
	b.WriteString(n.name)
	attrs := append([]attr(nil), n.attrs...)
	sort.SliceStable(attrs, func(i, j int) bool { return attrs[i].name < attrs[j].name })
	for _, a := range attrs {
		b.WriteByte(' ')
		b.WriteString(a.name)
		b.WriteString(`="`)
		escapeAttr(b, a.value)
		b.WriteByte('"')
	}
	b.WriteByte('>')
	if len(n.kids) > 0 {
		for _, k := range n.kids {
			k.writeFlat(b)
		}
	} else {
		escapeText(b, n.text)
	}
	b.WriteString("</")
	b.WriteString(n.name)
	b.WriteByte('>')
}

func escapeText(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			b.WriteRune(r)
		}
	}
}

func escapeAttr(b *strings.Builder, s string) {
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '"':
			b.WriteString("&quot;")
		case '\t':
			b.WriteString("&#x9;")
		case '\n':
			b.WriteString("&#xA;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			b.WriteRune(r)
		}
	}
}

// children returns the child elements named name.
func (n *node) children(name string) []*node {
	var out []*node
	for _, k := range n.kids {
		if k.name == name {
			out = append(out, k)
		}
	}
	return out
}

// attr returns the value of the attribute name and whether it is present.
func (n *node) attr(name string) (string, bool) {
	for _, a := range n.attrs {
		if a.name == name {
			return a.value, true
		}
	}
	return "", false
}
