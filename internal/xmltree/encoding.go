package xmltree

import (
	"bytes"
	"fmt"
	"strings"
)

// Encodings a document can be read in.
const (
	UTF8    = "UTF-8"
	Latin1  = "ISO-8859-1"
	USASCII = "US-ASCII"
)

// EncodingOf maps an encoding label, as written in an XML declaration, to
// the encoding this package reads it in: UTF8, Latin1 or USASCII. The
// labels are the IANA names and aliases of those three charsets, compared
// without regard to case; anything else is an error. It is the one place
// where dtekit decides which spellings of ISO-8859-1 it accepts.
func EncodingOf(label string) (string, error) {
	switch label { // the spellings seen nearly always, without a copy
	case "ISO-8859-1":
		return Latin1, nil
	case "UTF-8":
		return UTF8, nil
	}
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "csutf8":
		return UTF8, nil
	case "us-ascii", "ascii", "iso646-us", "csascii":
		return USASCII, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "latin-1", "l1",
		"iso-ir-100", "cp819", "ibm819", "csisolatin1":
		return Latin1, nil
	}
	return "", fmt.Errorf("unsupported encoding %q (want UTF-8 or ISO-8859-1)", label)
}

// Declaration is what an XML declaration says.
type Declaration struct {
	// Present is false when the document has no XML declaration.
	Present bool
	// Version is the version pseudo-attribute ("1.0").
	Version string
	// Encoding is the encoding pseudo-attribute as written ("" when absent).
	Encoding string
	// Standalone is the standalone pseudo-attribute ("", "yes" or "no").
	Standalone string
	// Len is the length in bytes of the declaration, from "<?xml" to "?>".
	Len int
}

// ParseDeclaration reads the XML declaration at the very start of src (after
// a byte order mark, which the caller strips) as XML 1.0 writes it:
// version, then optionally encoding, then optionally standalone, each
// separated by whitespace, quoted with either quote, and nothing else. A
// document without a declaration gives a zero Declaration and no error; a
// malformed one (unknown or misspelled pseudo-attributes such as
// "xencoding", wrong order, missing quotes) is an error.
func ParseDeclaration(src []byte) (Declaration, error) {
	// The declarations dtekit writes, read without a copy.
	for _, w := range [...]struct{ decl, enc string }{
		{`<?xml version="1.0" encoding="ISO-8859-1"?>`, "ISO-8859-1"},
		{`<?xml version="1.0" encoding="UTF-8"?>`, "UTF-8"},
	} {
		if len(src) >= len(w.decl) && string(src[:len(w.decl)]) == w.decl {
			return Declaration{Present: true, Version: "1.0", Encoding: w.enc, Len: len(w.decl)}, nil
		}
	}
	var d Declaration
	if !bytes.HasPrefix(src, []byte("<?xml")) || len(src) < 6 || !isSpace(src[5]) {
		return d, nil
	}
	end := bytes.Index(src, []byte("?>"))
	if end < 0 {
		return d, fmt.Errorf("%w: unterminated XML declaration", ErrInvalidXML)
	}
	d.Present, d.Len = true, end+2
	rest := string(src[5:end])
	names := []string{"version", "encoding", "standalone"}
	next := 0
	for {
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		if trimmed == "" {
			break
		}
		if len(trimmed) == len(rest) {
			return d, fmt.Errorf("%w: XML declaration: missing whitespace before %.20q", ErrInvalidXML, trimmed)
		}
		rest = trimmed
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			return d, fmt.Errorf("%w: XML declaration: malformed at %.20q", ErrInvalidXML, rest)
		}
		name := strings.TrimRight(rest[:eq], " \t\r\n")
		i := next
		for i < len(names) && names[i] != name {
			i++
		}
		if i == len(names) || (next == 0 && i != 0) {
			return d, fmt.Errorf("%w: XML declaration: unexpected pseudo-attribute %q", ErrInvalidXML, name)
		}
		next = i + 1
		rest = strings.TrimLeft(rest[eq+1:], " \t\r\n")
		if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
			return d, fmt.Errorf("%w: XML declaration: %s value is not quoted", ErrInvalidXML, name)
		}
		q := strings.IndexByte(rest[1:], rest[0])
		if q < 0 {
			return d, fmt.Errorf("%w: XML declaration: unterminated %s value", ErrInvalidXML, name)
		}
		value := rest[1 : 1+q]
		rest = rest[q+2:]
		switch name {
		case "version":
			if value != "1.0" {
				return d, fmt.Errorf("%w: XML declaration: version %q is not 1.0", ErrInvalidXML, value)
			}
			d.Version = value
		case "encoding":
			if value == "" {
				return d, fmt.Errorf("%w: XML declaration: empty encoding", ErrInvalidXML)
			}
			d.Encoding = value
		case "standalone":
			if value != "yes" && value != "no" {
				return d, fmt.Errorf("%w: XML declaration: standalone %q is not yes or no", ErrInvalidXML, value)
			}
			d.Standalone = value
		}
	}
	if d.Version == "" {
		return d, fmt.Errorf("%w: XML declaration without a version", ErrInvalidXML)
	}
	return d, nil
}
