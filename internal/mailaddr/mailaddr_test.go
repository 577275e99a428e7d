package mailaddr

import "testing"

func TestCheckEmail(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a@b.cl", "finanzas@empresa.cl", "dte.recepcion+x@sub.empresa.com", "o'neil@x.io"} {
		if err := CheckEmail(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	// Each of these net/mail.ParseAddress accepts as a bare address, or
	// the SII's registry refuses: no dot in the domain, an address
	// literal, a quoted local part, non-ASCII, a display name.
	for _, bad := range []string{"", "finanzas@empresa", "a@[10.0.0.1]", `"a b"@x.cl`, "dte@ñandu.cl",
		"Ana <a@b.cl>", "a@b.cl\r\nBcc: x@y.cl", "a b@c.cl", "a@@b.cl", "@b.cl", "a@.cl", "a@b.", "a@b..cl", "sin-arroba.cl"} {
		if CheckEmail(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
