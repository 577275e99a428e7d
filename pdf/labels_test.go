package pdf

import (
	"testing"

	"github.com/dtekit/dtekit/aduana"
)

// TestCustomsNames: the rules for printing a customs code, with names
// written by hand from ../shared/sii/aduana (puertos 906 SAN ANTONIO;
// unidades 6 KN KILOGRAMO NETO, 17 PAR PAR; formas de pago 50 ANT/COB
// ANTICIPO Y COBRANZA; clausulas 7 FCA (disputed)).
func TestCustomsNames(t *testing.T) {
	puerto := func(n int) (string, bool) {
		if n == 906 {
			return "SAN ANTONIO", true
		}
		return "", false
	}
	for _, c := range []struct{ in, want string }{
		{"906", "SAN ANTONIO (906)"},
		{" 0906 ", "SAN ANTONIO (906)"},                  // leading zeros and spaces read as the number
		{"9999", "código 9999 (no listado)"},             // not listed: the number, never a guess
		{"MUELLE PRAT", "MUELLE PRAT"},                   // a port's free identification, as written
		{"12345678901234567890", "12345678901234567890"}, // too long for a code: as written
		{"", ""},
	} {
		if got := customsName(c.in, puerto); got != c.want {
			t.Errorf("customsName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	unit := func(n int) *int { return &n }
	for _, c := range []struct {
		in   *int
		want string
	}{
		{unit(6), " KN (KILOGRAMO NETO)"},
		{unit(17), " PAR"},
		{unit(0), " (unidad código 0, no listada)"},
		{nil, ""},
	} {
		if got := unidadName(c.in); got != c.want {
			t.Errorf("unidadName(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got, want := formaPagoName(50), "ANTICIPO Y COBRANZA (ANT/COB, código 50)"; got != want {
		t.Errorf("formaPagoName(50) = %q, want %q", got, want)
	}
	if got, want := formaPagoName(3), "código 3 (no listado)"; got != want {
		t.Errorf("formaPagoName(3) = %q, want %q", got, want)
	}
	if got, want := customsName("7", aduana.ClausulaVenta), "FCA (7)"; got != want {
		t.Errorf("clause 7 = %q, want %q", got, want)
	}
}
