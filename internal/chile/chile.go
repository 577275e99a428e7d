// Package chile holds the small Chilean facts that several dtekit packages
// need and none may export: the America/Santiago time zone (with its data
// compiled in), the RUT's spelling and módulo-11 check digit, the RUTs the
// SII reserves and the six-month validity of CAFs. (The rule of an
// e-mail address the SII takes is internal/mailaddr's: it needs net/mail,
// which the API's models, reaching this package through dte, must not link.)
package chile

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // America/Santiago must load on machines without a zone database
)

// Zone is the IANA name of the zone in which the SII's dates and times
// (FchEmis, FA, TSTED, TmstFirma) are written, without an offset.
const Zone = "America/Santiago"

// santiago loads the zone once from the database compiled into the binary.
var santiago = sync.OnceValue(func() *time.Location {
	loc, err := time.LoadLocation(Zone)
	if err != nil {
		// time/tzdata is linked in, so this is a broken build, not bad
		// input. Substituting UTC or a fixed UTC−4 would silently shift
		// dates by a day around midnight and across daylight saving, so
		// refuse to run instead.
		panic(fmt.Sprintf("dtekit: the embedded time zone database cannot load %s: %v", Zone, err))
	}
	return loc
})

// Location returns the America/Santiago location, loaded once from the
// zone database embedded in the binary (time/tzdata), so it is the same on
// every machine. It is the only loader of the zone in dtekit: no package
// falls back to UTC or to a fixed offset.
func Location() *time.Location { return santiago() }

// RUTError says why a text is not a RUT.
type RUTError struct {
	// Input is the text as given.
	Input string
	// Reason says what is wrong, e.g. "body must be 1 to 8 digits".
	Reason string
	// BadCheckDigit is true when the text is well formed but its check
	// digit does not match the body.
	BadCheckDigit bool
}

func (e *RUTError) Error() string { return fmt.Sprintf("RUT %q: %s", e.Input, e.Reason) }

// MaxRUTDigits is the longest RUT body, in digits, after leading zeros are
// removed: the SII's RUTType allows 1 to 8.
const MaxRUTDigits = 8

// ParseRUT reads a RUT as people and certificates write it: "12345678-5",
// "12.345.678-5", "12 345 678-5", "123456785", "07.880.442-4" or with a
// lower-case k. It returns the body and the upper-case check digit, or a
// *RUTError when the form is wrong, the body is zero or longer than
// MaxRUTDigits significant digits, or the check digit does not match.
func ParseRUT(s string) (number int, dv byte, err error) {
	clean := strings.ToUpper(strings.Map(func(r rune) rune {
		switch r {
		case '.', ' ', '\t':
			return -1
		}
		return r
	}, strings.TrimSpace(s)))
	body, d, ok := strings.Cut(clean, "-")
	if !ok {
		if len(clean) < 2 {
			return 0, 0, &RUTError{Input: s, Reason: "too short"}
		}
		body, d = clean[:len(clean)-1], clean[len(clean)-1:]
	}
	return checkParts(s, body, d)
}

// CheckRUT validates a RUT in the strict form of the SII's XML (RUTType):
// 1 to 8 digits, '-', check digit, no dots or spaces. It returns the text
// as written but with an upper-case K (leading zeros are kept: signed XML
// must not change). Errors are *RUTError values quoting s.
func CheckRUT(s string) (string, error) {
	body, d, ok := strings.Cut(s, "-")
	if !ok || len(body) == 0 || len(body) > MaxRUTDigits || len(d) != 1 {
		return "", &RUTError{Input: s, Reason: "is not a RUT like 12345678-5"}
	}
	if _, _, err := checkParts(s, body, d); err != nil {
		return "", err
	}
	return body + "-" + strings.ToUpper(d), nil
}

// checkParts checks a RUT split into body and check digit; input is the
// original text for errors.
func checkParts(input, body, d string) (int, byte, error) {
	if len(d) != 1 || !(d[0] == 'K' || d[0] == 'k' || d[0] >= '0' && d[0] <= '9') {
		return 0, 0, &RUTError{Input: input, Reason: "check digit must be 0-9 or K"}
	}
	n := 0
	for _, r := range body {
		if r < '0' || r > '9' {
			return 0, 0, &RUTError{Input: input, Reason: "body must be 1 to 8 digits"}
		}
		n = n*10 + int(r-'0')
		if n >= 100_000_000 {
			return 0, 0, &RUTError{Input: input, Reason: "body must be 1 to 8 digits"}
		}
	}
	if body == "" {
		return 0, 0, &RUTError{Input: input, Reason: "body must be 1 to 8 digits"}
	}
	if n == 0 {
		return 0, 0, &RUTError{Input: input, Reason: "body must not be zero"}
	}
	got := d[0]
	if got == 'k' {
		got = 'K'
	}
	if want := CheckDigit(n); got != want {
		return 0, 0, &RUTError{Input: input, Reason: fmt.Sprintf("check digit %c does not match (expected %c)", got, want), BadCheckDigit: true}
	}
	return n, got, nil
}

// FormatRUT writes a RUT in its canonical form, "12345678-5".
func FormatRUT(number int, dv byte) string { return strconv.Itoa(number) + "-" + string(dv) }

// CanonRUT returns the canonical form of a RUT (FormatRUT of what ParseRUT
// reads: "76.192.083-9" and "76192083-9" alike give "76192083-9"), or s
// itself when it is not a RUT, so that a comparison of two RUTs as the
// SII writes them still reports one that is not.
func CanonRUT(s string) string {
	n, dv, err := ParseRUT(s)
	if err != nil {
		return s
	}
	return FormatRUT(n, dv)
}

// SameRUT reports whether a and b are one RUT however written (dots,
// blanks, a lower-case k). A RUT written as digits alone may lack its
// check digit (the registry of credit transfers writes RUT_TENEDOR so at
// times), so such a text matches a RUT whose number it is, as well as
// the RUT it spells with its last digit as the check digit. Text that is
// not a RUT matches nothing, not even itself.
func SameRUT(a, b string) bool {
	na := rutNumbers(a)
	for _, x := range rutNumbers(b) {
		for _, y := range na {
			if x == y {
				return true
			}
		}
	}
	return false
}

// rutNumbers returns the numbers s may name: the one of a full RUT (its
// check digit verified), and for digits alone also those digits read as
// a number without a check digit.
func rutNumbers(s string) []int {
	var out []int
	if n, _, err := ParseRUT(s); err == nil {
		out = append(out, n)
	}
	t := strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if t == "" || strings.TrimLeft(t, "0123456789") != "" {
		return out
	}
	n := 0
	for _, r := range t {
		n = n*10 + int(r-'0')
		if n >= 100_000_000 {
			return out
		}
	}
	if n > 0 {
		out = append(out, n)
	}
	return out
}

// RUTSinReceptor is the RUT a boleta carries when its buyer is not
// identified (the SII's "consumidor final", 66666666-6).
const RUTSinReceptor = "66666666-6"

// RUTSII is the SII's own RUT, the receiver of envelopes sent to it.
const RUTSII = "60803000-K"

// CheckDigit computes the módulo-11 check digit of a RUT body: '0' to '9'
// or 'K'. A body of zero or less yields '0'.
func CheckDigit(n int) byte {
	sum, mul := 0, 2
	for ; n > 0; n /= 10 {
		sum += (n % 10) * mul
		if mul++; mul > 7 {
			mul = 2
		}
	}
	switch r := 11 - sum%11; r {
	case 11:
		return '0'
	case 10:
		return 'K'
	default:
		return byte('0' + r)
	}
}

// CAFValidMonths is how long a CAF for a type that expires stays usable,
// counted in calendar months from its authorization date (FA).
const CAFValidMonths = 6

// CAFExpires reports whether CAFs for document type tipo are usable only
// for CAFValidMonths months from their authorization: facturas (33),
// liquidaciones-factura (43), facturas de compra (46), notas de débito (56)
// and notas de crédito (61). Other types' CAFs do not expire.
func CAFExpires(tipo int) bool {
	switch tipo {
	case 33, 43, 46, 56, 61:
		return true
	}
	return false
}

// CAFExpiry returns the first calendar day on which a CAF authorized on the
// day y-m-d can no longer be used: CAFValidMonths later, and when the target
// month lacks that day, its last day (FA 2024-08-31 expires on 2025-02-28).
func CAFExpiry(y int, m time.Month, d int) (int, time.Month, int) {
	t := time.Date(y, m+CAFValidMonths, 1, 0, 0, 0, 0, time.UTC)
	last := time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return t.Year(), t.Month(), min(d, last)
}

// AppendThousands appends digits to dst with a dot between each group of
// three from the right, as Chile writes amounts and RUTs ("1234567" →
// "1.234.567"). digits holds ASCII digits only.
func AppendThousands(dst []byte, digits string) []byte {
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			dst = append(dst, '.')
		}
		dst = append(dst, digits[i])
	}
	return dst
}
