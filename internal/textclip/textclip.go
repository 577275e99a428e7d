// Package textclip cuts text from outside to a bound without breaking it:
// the one place the service makes a string valid UTF-8 and at most n bytes
// before storing or showing it (PostgreSQL's text refuses invalid UTF-8,
// and a cut in the middle of a character makes some).
package textclip

import (
	"strings"
	"unicode/utf8"
)

// Clip returns s as valid UTF-8 (each invalid byte sequence dropped) cut to
// at most n bytes on a character boundary.
func Clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ClipMark is Clip with "…" after a text that was cut.
func ClipMark(s string, n int) string {
	c := Clip(s, n)
	if len(c) < len(strings.ToValidUTF8(s, "")) {
		return c + "…"
	}
	return c
}
