package xmlflat

import (
	"sort"
	"strings"
)

// Flat serializes the element in the form the SII signs: no whitespace
// between tags, no namespace declarations, attributes sorted by name, text
// escaping only &, < and > (and CR), attribute values escaping &, <, " and
// whitespace characters — the canonical XML (C14N) text of the element.
func (n *Node) Flat() string {
	var b strings.Builder
	n.writeFlat(&b)
	return b.String()
}

func (n *Node) writeFlat(b *strings.Builder) {
	b.WriteByte('<')
	b.WriteString(n.Name)
	attrs := append([]Attr(nil), n.Attrs...)
	sort.SliceStable(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	for _, a := range attrs {
		b.WriteByte(' ')
		b.WriteString(a.Name)
		b.WriteString(`="`)
		EscapeAttr(b, a.Value)
		b.WriteByte('"')
	}
	b.WriteByte('>')
	if len(n.Kids) > 0 {
		for _, k := range n.Kids {
			k.writeFlat(b)
		}
	} else {
		EscapeText(b, n.Text)
	}
	b.WriteString("</")
	b.WriteString(n.Name)
	b.WriteByte('>')
}

// EscapeText writes s to b as canonical XML character data: &, <, > and CR
// become references, everything else is written as is.
func EscapeText(b *strings.Builder, s string) { escape(b, s, false) }

// EscapeAttr writes s to b as a canonical XML attribute value (to go between
// double quotes): &, <, ", tab, LF and CR become references.
func EscapeAttr(b *strings.Builder, s string) { escape(b, s, true) }

// escape writes s with the references canonical XML requires in character
// data (attr false) or in a double-quoted attribute value (attr true).
func escape(b *strings.Builder, s string, attr bool) {
	for _, r := range s {
		var ref string
		switch r {
		case '&':
			ref = "&amp;"
		case '<':
			ref = "&lt;"
		case '\r':
			ref = "&#xD;"
		case '>':
			if !attr {
				ref = "&gt;"
			}
		case '"':
			if attr {
				ref = "&quot;"
			}
		case '\t':
			if attr {
				ref = "&#x9;"
			}
		case '\n':
			if attr {
				ref = "&#xA;"
			}
		}
		if ref == "" {
			b.WriteRune(r)
		} else {
			b.WriteString(ref)
		}
	}
}
