package pdf

import (
	"github.com/dtekit/dtekit/internal/chile"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/dtekit/dtekit/dte"
)

// cp1252 converts UTF-8 text to the Windows-1252 bytes the core fonts are
// set in (fpdf declares them with WinAnsiEncoding, so text extractors map
// the bytes back to the same letters). Line feeds are kept when keepLF is
// true; other control characters become spaces; characters outside the code
// page become '?'. ASCII text without controls is returned as it is.
func cp1252(s string, keepLF bool) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c < 0x20 || c == 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r == '\n' && keepLF:
			b = append(b, '\n')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b = append(b, ' ')
		case r < 0x80:
			b = append(b, byte(r))
		case r == utf8.RuneError:
			b = append(b, '?')
		default:
			if c, ok := charmap.Windows1252.EncodeRune(r); ok {
				b = append(b, c)
			} else {
				b = append(b, '?')
			}
		}
	}
	return string(b)
}

// text is Windows-1252 text ready for the core fonts (see cp1252).
type text string

// encode converts a one-line UTF-8 field for printing: controls and line
// feeds become spaces, runs of spaces collapse.
func encode(s string) text { return text(cp1252(oneLine(s), false)) }

// encodeML converts a multi-line UTF-8 field for printing, keeping line
// feeds.
func encodeML(s string) text { return text(cp1252(strings.TrimSpace(s), true)) }

// oneLine cleans a UTF-8 field for one-line printing: control characters
// and line feeds become spaces, runs of spaces collapse.
func oneLine(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return ' '
			}
			return r
		}, s)
	}
	return collapse(s)
}

// collapse trims s and collapses runs of spaces into one.
func collapse(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// fmtNumber prints a decimal the Chilean way: thousands dots and a decimal
// comma, the fraction's digits as written ("1234.50" → "1.234,50"). Text
// that is not a plain decimal is returned cleaned but unchanged.
func fmtNumber(d dte.Decimal) string {
	s := strings.TrimSpace(string(d))
	if !dte.Decimal(s).Valid() {
		return oneLine(s)
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	ip, frac, _ := strings.Cut(s, ".")
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	b := make([]byte, 0, len(s)+len(s)/3+2)
	if neg && (ip != "0" || strings.Trim(frac, "0") != "") {
		b = append(b, '-')
	}
	b = chile.AppendThousands(b, ip)
	if frac != "" {
		b = append(b, ',')
		b = append(b, frac...)
	}
	return string(b)
}

// fmtInt prints an integer with thousands dots.
func fmtInt(n int64) string { return fmtNumber(dte.DecimalFromInt(n)) }

// currencySymbol returns the symbol printed before amounts in the SII
// currency name cur (TpoMoneda): "$" for pesos and documents without a
// currency, "US$", "€", "£" and "¥" for the usual ones, and the SII's name
// for the others ("DOLAR CAN").
func currencySymbol(cur string) string {
	switch strings.ToUpper(strings.TrimSpace(cur)) {
	case "", "PESO CL", "CLP":
		return "$"
	case "DOLAR USA":
		return "US$"
	case "EURO":
		return "€"
	case "LIBRA EST":
		return "£"
	case "YEN":
		return "¥"
	}
	return collapse(cur)
}

// fmtMoney prints an amount with its currency symbol: "$ 1.234.567",
// "US$ 18.338,8", "-$ 500".
func fmtMoney(d dte.Decimal, symbol string) string {
	n := fmtNumber(d)
	if strings.HasPrefix(n, "-") {
		return "-" + symbol + " " + n[1:]
	}
	return symbol + " " + n
}

// fmtPct prints a percentage: "10%", "2,5%".
func fmtPct(d dte.Decimal) string { return fmtNumber(d) + "%" }

var meses = [...]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio",
	"agosto", "septiembre", "octubre", "noviembre", "diciembre"}

// fmtFecha prints a YYYY-MM-DD date as "14 de mayo de 2025"; anything else
// is returned cleaned but unchanged.
func fmtFecha(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return oneLine(s)
	}
	m := int(s[5]-'0')*10 + int(s[6]-'0')
	d := int(s[8]-'0')*10 + int(s[9]-'0')
	if !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:]) || m < 1 || m > 12 || d < 1 || d > 31 {
		return oneLine(s)
	}
	return itoa(d) + " de " + meses[m-1] + " de " + s[:4]
}

// fmtFechaCorta prints a YYYY-MM-DD date as "14-05-2025".
func fmtFechaCorta(s string) string {
	s = strings.TrimSpace(s)
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:]) {
		return oneLine(s)
	}
	return s[8:] + "-" + s[5:7] + "-" + s[:4]
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func itoa(n int) string { return fmtIntPlain(int64(n)) }

func fmtIntPlain(n int64) string { return string(dte.DecimalFromInt(n)) }

// fmtRUT prints a RUT with thousands dots ("12.345.678-5"); text that is
// not a valid RUT is printed cleaned but unchanged.
func fmtRUT(s string) string {
	r, err := dte.ParseRUT(s)
	if err != nil {
		return oneLine(s)
	}
	return r.Format()
}

// oficina returns the office line under the red box.
func oficina(s string) string {
	s = collapse(s)
	if s == "" {
		return OficinaNoInformada
	}
	u := strings.ToUpper(s)
	if strings.HasPrefix(u, "S.I.I.") || strings.HasPrefix(u, "SII ") || u == "SII" {
		return u
	}
	return "S.I.I. - " + u
}
