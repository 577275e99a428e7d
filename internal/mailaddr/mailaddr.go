// Package mailaddr holds the one rule for an e-mail address a form field
// of dtekit takes. It stands apart from internal/chile because it needs
// net/mail, which the API's models (reaching chile through dte) must not
// link.
package mailaddr

import (
	"fmt"
	"net/mail"
	"strings"
)

// CheckEmail reports why s is not an e-mail address the SII takes: the
// registry of credit transfers (RTCAnotEnvio's emailNotif) and the AEC's
// eMail refuse what a mail client would accept but a form field cannot
// carry, so the rule is the strictest of both: a bare address as
// net/mail reads it (no display name, no angle brackets), printable
// ASCII only, none of `"<>(),;:\[]` (no quoted local part, no address
// literal), one '@' with text before it and a domain holding a '.' that
// neither starts nor ends it. Lengths are the caller's: each field has
// its own bound. It returns nil for a good address; the error's text is
// a reason without the value.
func CheckEmail(s string) error {
	at := strings.IndexByte(s, '@')
	switch {
	case s == "":
		return fmt.Errorf("is empty")
	case strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"<>(),;:\[]`, r) }):
		return fmt.Errorf("holds a character an e-mail address for the SII cannot have (a blank, a non-ASCII letter or one of \"<>(),;:\\[])")
	case at <= 0 || at != strings.LastIndexByte(s, '@'):
		return fmt.Errorf("is not of the form local@domain")
	}
	dom := s[at+1:]
	if !strings.Contains(dom, ".") || strings.HasPrefix(dom, ".") || strings.HasSuffix(dom, ".") {
		return fmt.Errorf("has a domain without a dot inside it (as in empresa.cl)")
	}
	if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
		return fmt.Errorf("is not an e-mail address")
	}
	return nil
}
