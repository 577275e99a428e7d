package xmlflat

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"
)

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
