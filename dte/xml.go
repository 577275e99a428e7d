package dte

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/internal/xmlflat"
)

// This file holds the low-level XML writer shared by the DTE and envelope
// builders. XML is written directly as text, in schema order, into one byte
// slice already encoded in ISO-8859-1: no tree is built and nothing is
// re-serialized, so the output is deterministic and cheap to produce.
//
// Element text escapes only '&', '<' and '>' (and CR as "&#xD;"): quotes are
// written literally, so the file form of every signed element equals its
// canonical (C14N) form. Characters outside ISO-8859-1, C0/C1 control
// characters other than tab and newline, and invalid UTF-8 are refused with
// a *ValidationError naming the field (codes CodeNotLatin1 and
// CodeInvalidCharacter); Validate refuses the same texts up front.

// Namespaces and fixed texts of the SII's XML.
const (
	// NamespaceSiiDte is the SII's target namespace of DTEs and envelopes.
	NamespaceSiiDte = "http://www.sii.cl/SiiDte"
	// namespaceXSI is the XML Schema instance namespace.
	namespaceXSI = "http://www.w3.org/2001/XMLSchema-instance"
	// xmlDeclaration starts every file dtekit writes.
	xmlDeclaration = `<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n"
	// xwTimestampLayout is the layout of TmstFirma, TSTED and TmstFirmaEnv
	// (Chile local time, no offset).
	xwTimestampLayout = "2006-01-02T15:04:05"
)

// xw appends XML markup and ISO-8859-1 text to buf. The first encoding
// problem is kept in err and later writes still run (their output is
// discarded by the caller), which keeps the builders free of error plumbing.
type xw struct {
	buf []byte
	err error
}

// open writes a start tag without attributes.
func (w *xw) open(name string) {
	w.buf = append(w.buf, '<')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

// close writes an end tag.
func (w *xw) close(name string) {
	w.buf = append(w.buf, '<', '/')
	w.buf = append(w.buf, name...)
	w.buf = append(w.buf, '>')
}

// raw writes markup as is (ASCII only by construction).
func (w *xw) raw(s string) { w.buf = append(w.buf, s...) }

// plain writes <name>value</name> for a value known to be plain ASCII with
// nothing to escape: numbers, RUTs, dates, codes produced by dtekit itself.
func (w *xw) plain(name, value string) {
	w.open(name)
	w.buf = append(w.buf, value...)
	w.close(name)
}

// int writes <name>n</name>.
func (w *xw) int(name string, n int64) {
	w.open(name)
	w.buf = strconv.AppendInt(w.buf, n, 10)
	w.close(name)
}

// intPtr writes <name>*p</name> when p is not nil.
func (w *xw) intPtr(name string, p *int) {
	if p != nil {
		w.int(name, int64(*p))
	}
}

// text writes <name>value</name> with value trimmed, cut to max characters
// (0 means no limit), escaped and encoded; an empty value writes nothing.
// field names the request field for errors.
func (w *xw) text(name, field, value string, max int) {
	value = xwClip(value, max)
	if value == "" {
		return
	}
	w.open(name)
	w.escape(field, value)
	w.close(name)
}

// textReq is text for an element the schema requires: an empty value is an
// error naming field.
func (w *xw) textReq(name, field, value string, max int) {
	if strings.TrimSpace(value) == "" {
		w.fail(&ValidationError{Details: []FieldError{{Field: field, Code: CodeRequired,
			Message: fmt.Sprintf("the SII schema requires %s for this document type", name)}}})
		return
	}
	w.text(name, field, value, max)
}

// dec writes <name>d</name> for a set Decimal, normalized (no '+', no
// superfluous zeros). Absent values write nothing.
func (w *xw) dec(name string, d Decimal) {
	if !d.IsSet() {
		return
	}
	w.open(name)
	w.buf = append(w.buf, xwNormDec(d)...)
	w.close(name)
}

// decPos writes <name>d</name> only when d is set and greater than zero, for
// the schema's positive-only types (prices, quantities, percentages,
// MntImpType amounts).
func (w *xw) decPos(name string, d Decimal) {
	if d.IsSet() && xwSign(d) > 0 {
		w.dec(name, d)
	}
}

// fail keeps the first error.
func (w *xw) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// escape appends s as ISO-8859-1 element text.
func (w *xw) escape(field, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '&':
				w.buf = append(w.buf, "&amp;"...)
			case '<':
				w.buf = append(w.buf, "&lt;"...)
			case '>':
				w.buf = append(w.buf, "&gt;"...)
			case '\r':
				w.buf = append(w.buf, "&#xD;"...)
			case '\t', '\n':
				w.buf = append(w.buf, c)
			default:
				if c < 0x20 || c == 0x7f {
					w.fail(xwCharError(field, rune(c)))
					return
				}
				w.buf = append(w.buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			w.fail(&ValidationError{Details: []FieldError{{Field: field, Code: CodeNotLatin1,
				Message: "the text is not valid UTF-8"}}})
			return
		}
		if r < 0xA0 || r > 0xFF {
			w.fail(xwCharError(field, r))
			return
		}
		w.buf = append(w.buf, byte(r))
		i += size
	}
}

// xwCharError reports a character the ISO-8859-1 XML cannot carry.
func xwCharError(field string, r rune) error {
	if r < 0x20 || (r >= 0x7f && r < 0xA0) {
		return &ValidationError{Details: []FieldError{{Field: field, Code: CodeInvalidCharacter,
			Message: fmt.Sprintf("control character U+%04X is not allowed in the document's text", r)}}}
	}
	return &ValidationError{Details: []FieldError{{Field: field, Code: CodeNotLatin1,
		Message: fmt.Sprintf("character %q (U+%04X) cannot be written in an ISO-8859-1 document", r, r),
		Action:  "replace it with a character of the Latin-1 set (plain quotes, no emoji)"}}}
}

// xwClip trims s and cuts it to at most max characters (0: no limit).
func xwClip(s string, max int) string {
	s = strings.TrimSpace(s)
	if max <= 0 || len(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return strings.TrimSpace(s[:i])
		}
		n++
	}
	return s
}

// xwNormDec writes a decimal in the plain form the schemas accept: no sign
// for positives, no leading zeros, no trailing fractional zeros ("+1.50" is
// "1.5", "-0.0" is "0"). Malformed input is returned as is (the schema
// validation downstream then names it).
func xwNormDec(d Decimal) string {
	s := string(d)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if !allDigits(intPart) || (frac != "" && !allDigits(frac)) {
		return string(d)
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	frac = strings.TrimRight(frac, "0")
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg && out != "0" {
		out = "-" + out
	}
	return out
}

// xwSign returns the sign of a well-formed decimal without allocating: -1,
// 0 or +1 (0 also for malformed text).
func xwSign(d Decimal) int {
	s := string(d)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= '1' && s[i] <= '9' {
			if neg {
				return -1
			}
			return 1
		}
		if s[i] != '0' && s[i] != '.' {
			return 0
		}
	}
	return 0
}

// xwTimestamp formats an instant as the SII's local timestamp in Chile.
func xwTimestamp(t time.Time) string { return ChileTime(t).Format(xwTimestampLayout) }

// utf8Declaration is the XML declaration of the text XMLText returns.
const utf8Declaration = `<?xml version="1.0" encoding="UTF-8"?>`

// XMLText returns an XML file dtekit wrote (a signed DTE or envelope: ISO-8859-1
// bytes, usually with a declaration saying so) as UTF-8 text whose
// declaration says UTF-8. Saved as UTF-8, the text is the same XML
// document: the same characters, so the same canonical form, and its
// signatures still verify. It is the form to put in JSON, whose strings
// are Unicode; the ISO-8859-1 bytes remain the form to send to the SII.
func XMLText(latin1 []byte) string {
	body := latin1
	if bytes.HasPrefix(body, []byte("<?xml")) {
		if end := bytes.Index(body, []byte("?>")); end > 0 {
			body = body[end+len("?>"):]
		}
	}
	return utf8Declaration + xmlflat.Latin1ToString(body)
}
