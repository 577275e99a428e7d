package signer

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"unicode/utf8"
)

// The fast path of SignEnveloped.
//
// Writers such as dtekit's own DTE builder emit the element they sign
// already in canonical form: no comments, CDATA sections or processing
// instructions, explicit end tags, attributes in canonical order written
// with double quotes and C14N's escapes, no namespace declarations below the
// element, and only C14N's escapes in character data. For such an element
// the canonical form is its bytes as written (decoded to UTF-8), with only
// the start tag of the element itself re-rendered to carry the namespaces
// and xml:* attributes it inherits. Building the element's tree just to
// print it again is then most of the cost of a signature besides RSA.
//
// So SignEnveloped first parses the document as usual, except that the
// subtree of the element to sign is not built: scanCanonicalSubtree walks
// it and checks, byte by byte, that it is in that strict canonical shape.
// When it is, the digest input is the re-rendered start tag, the raw
// content decoded to UTF-8 and the end tag. When anything is outside that
// shape (or the document has an error), the scan gives up with
// errNotCanonical and SignEnveloped parses the whole document the ordinary
// way; the result of either path is the same, byte for byte.
//
// Everything outside the signed subtree goes through the ordinary parser,
// so a document the fast path accepts is one the ordinary parser accepts:
// the strict shape is a subset of well-formed XML (only ASCII names without
// prefixes, no whitespace variants, no references other than the canonical
// escapes, characters checked as the parser checks them).

// errNotCanonical stops the fast scan: the element to sign is not written
// in the strict canonical shape, and the ordinary path must handle it.
var errNotCanonical = errors.New("signer: the signed element is not written in canonical form")

// fastTarget is the fast path's state inside a parser.
type fastTarget struct {
	id   string
	apex *element
	// start and end delimit the apex's content in the source (from after
	// its start tag to the '<' of its end tag).
	start, end int
}

// isTarget reports whether e is the element to sign.
func (t *fastTarget) isTarget(e *element) bool {
	v, ok := e.attr(idAttrName)
	return ok && v == t.id
}

// fastDigest tries the fast path: it parses doc with the subtree of the
// element whose ID is id scanned instead of built, and returns that element
// (with its ancestors parsed) and the SHA-1 digest of its canonical form.
// ok is false when the fast path does not apply; the ordinary path then
// decides, and reports any error.
func fastDigest(doc []byte, id string) (el *element, digest [sha1.Size]byte, ok bool) {
	for i := 0; i < len(id); i++ {
		if id[i] >= utf8.RuneSelf {
			return nil, digest, false
		}
	}
	t := &fastTarget{id: id}
	p := &parser{src: doc, doc: &document{ids: map[string]*element{}}, fast: t}
	if err := p.document(); err != nil || t.apex == nil {
		return nil, digest, false
	}
	el = t.apex
	if p.doc.dupIDs[id] || p.doc.ids[id] != el {
		return nil, digest, false
	}
	if next := nextElement(el); next != nil && next.is(nsDSig, "Signature") {
		return nil, digest, false
	}
	raw := doc[t.start:t.end]
	c := canonicalizer{out: make([]byte, 0, 256+len(raw)+len(raw)/4)}
	decls, attrs := c.apexContext(el)
	c.startTag(el, decls, attrs)
	c.out = p.appendDecoded(c.out, raw)
	c.out = append(c.out, "</"...)
	c.out = appendQName(c.out, el.prefix, el.local)
	c.out = append(c.out, '>')
	return el, sha1.Sum(c.out), true
}

// appendDecoded appends raw source bytes, already checked by the scan,
// decoded to UTF-8.
func (p *parser) appendDecoded(dst, raw []byte) []byte {
	if p.charset == nil {
		return append(dst, raw...)
	}
	last := 0
	for i, b := range raw {
		if b < utf8.RuneSelf {
			continue
		}
		dst = append(dst, raw[last:i]...)
		dst = utf8.AppendRune(dst, p.charset.DecodeByte(b))
		last = i + 1
	}
	return append(dst, raw[last:]...)
}

// scanCanonicalSubtree is called by content() right after the start tag of
// the element to sign (apex, at nesting depth depth). It checks that the
// element's content and end tag are in the strict canonical shape, records
// where the content lies, and leaves p.pos after the end tag. It returns
// errNotCanonical when the shape is not met.
func (p *parser) scanCanonicalSubtree(apex *element, empty bool, depth int) error {
	t := p.fast
	t.apex = apex
	if empty {
		t.start, t.end = p.pos, p.pos
		return nil
	}
	qname := apex.qname()
	for i := 0; i < len(qname); i++ {
		if qname[i] >= utf8.RuneSelf {
			return errNotCanonical
		}
	}
	src := p.src
	// Open descendants, as offsets of their names in src.
	var stackArr [32][2]int
	stack := stackArr[:0]
	i := p.pos
	for {
		// Character data up to the next tag.
		for i < len(src) && src[i] != '<' {
			c := src[i]
			switch {
			case c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '>':
				i++
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
				t.start, t.end = p.pos, i
				p.pos = j + 1
				apex.end = p.pos
				return nil
			}
			top := stack[len(stack)-1]
			j := i + 2 + top[1] - top[0]
			if j >= len(src) || !bytes.Equal(src[i+2:j], src[top[0]:top[1]]) || src[j] != '>' {
				return errNotCanonical
			}
			stack = stack[:len(stack)-1]
			i = j + 1
			continue
		}
		// Start tag: <name( attr="value")*> with an unprefixed ASCII name,
		// unprefixed attributes in ascending order, no namespace
		// declarations.
		if depth+len(stack)+1 >= maxDepth {
			return errNotCanonical
		}
		nameStart := i + 1
		j := scanNCName(src, nameStart)
		if j == nameStart {
			return errNotCanonical
		}
		stack = append(stack, [2]int{nameStart, j})
		var prev []byte
		for n := 0; ; n++ {
			if j >= len(src) {
				return errNotCanonical
			}
			if src[j] == '>' {
				j++
				break
			}
			if src[j] != ' ' || n >= maxAttrs {
				return errNotCanonical
			}
			an := j + 1
			j = scanNCName(src, an)
			aname := src[an:j]
			if j == an || string(aname) == "xmlns" || (n > 0 && string(aname) <= string(prev)) {
				return errNotCanonical
			}
			prev = aname
			if j+1 >= len(src) || src[j] != '=' || src[j+1] != '"' {
				return errNotCanonical
			}
			j += 2
			vs := j
			for j < len(src) && src[j] != '"' {
				c := src[j]
				switch {
				case c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '<':
					j++
				case c == '&':
					n := canonicalAttrRef(src[j:])
					if n == 0 {
						return errNotCanonical
					}
					j += n
				case c >= utf8.RuneSelf:
					n := p.charLen(j)
					if n == 0 {
						return errNotCanonical
					}
					j += n
				default: // '<', literal whitespace other than space, controls
					return errNotCanonical
				}
			}
			if j >= len(src) {
				return errNotCanonical
			}
			if string(aname) == idAttrName && string(src[vs:j]) == t.id {
				return errNotCanonical // a second element with the ID
			}
			j++ // closing quote
		}
		i = j
	}
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
	if i >= len(src) {
		return i
	}
	if c := src[i]; !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
		return i
	}
	j := i + 1
	for j < len(src) {
		c := src[j]
		if c == '_' || c == '-' || c == '.' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') {
			j++
			continue
		}
		break
	}
	return j
}

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
