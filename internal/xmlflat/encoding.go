package xmlflat

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// DecodeDocument converts an XML document to UTF-8 text. A UTF-8 byte order
// mark or an encoding declaration decides; without either, valid UTF-8 is
// read as UTF-8 and anything else as ISO-8859-1 (the encoding of SII files,
// whose CAFs often carry no declaration while holding accented bytes).
func DecodeDocument(data []byte) (string, error) {
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
	label := DeclaredEncoding(data)
	switch strings.ToLower(label) {
	case "":
		if utf8.Valid(data) {
			return string(data), nil
		}
		return Latin1ToString(data), nil
	case "utf-8", "utf8":
		if !utf8.Valid(data) {
			return "", fmt.Errorf("document declares encoding %q but is not valid UTF-8", label)
		}
		return string(data), nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "iso-ir-100", "cp819", "ibm819", "csisolatin1", "us-ascii", "ascii":
		return Latin1ToString(data), nil
	default:
		return "", fmt.Errorf("unsupported encoding %q (expected ISO-8859-1 or UTF-8)", label)
	}
}

// DeclaredEncoding returns the encoding named by the XML declaration at the
// very start of data (either quote style), or "" when there is none or it
// names no encoding.
func DeclaredEncoding(data []byte) string {
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

// Latin1ToString decodes ISO-8859-1 bytes: each byte becomes the code point
// of the same value. It cannot fail.
func Latin1ToString(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// ToLatin1 encodes UTF-8 text as ISO-8859-1. It fails, naming the first
// offending character, when the text holds a character outside Latin-1.
func ToLatin1(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff || r == utf8.RuneError {
			return nil, fmt.Errorf("character %q (U+%04X) is outside ISO-8859-1", r, r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// DecodeBase64 decodes the text of an xs:base64Binary element (standard
// alphabet, padded), ignoring the spaces, tabs and line breaks the schema
// allows inside it. Empty text decodes to no bytes without error.
func DecodeBase64(s string) ([]byte, error) {
	compact := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	b, err := base64.StdEncoding.DecodeString(compact)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %v", err)
	}
	return b, nil
}
