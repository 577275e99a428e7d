package dte

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dtekit/dtekit/internal/chile"
)

// RUT is a Chilean tax identifier: a body number and its módulo-11 check
// digit ('0'–'9' or 'K').
type RUT struct {
	Number int
	DV     byte
}

// RUTSinReceptor returns the RUT the SII asks for when a boleta has no identified
// receptor.
func RUTSinReceptor() RUT { return MustParseRUT(chile.RUTSinReceptor) }

// RUTSII returns the SII's own RUT, the RutReceptor of envelopes sent to it.
func RUTSII() RUT { return MustParseRUT(chile.RUTSII) }

// RUTError describes why a text is not a valid RUT.
type RUTError struct {
	Input  string
	Reason string
	// BadCheckDigit is true when the text is well formed but its check
	// digit does not match the body (the contract's INVALID_RUT).
	BadCheckDigit bool
}

func (e *RUTError) Error() string { return fmt.Sprintf("dte: RUT %q: %s", e.Input, e.Reason) }

// ParseRUT reads a RUT written as "12345678-5", "12.345.678-5", "12 345 678-5",
// "123456785" or with a lowercase k, and checks its check digit. The body
// has at most 8 significant digits (the SII's RUTType).
func ParseRUT(s string) (RUT, error) {
	n, dv, err := chile.ParseRUT(s)
	if err != nil {
		var re *chile.RUTError
		if errors.As(err, &re) {
			return RUT{}, &RUTError{Input: s, Reason: re.Reason, BadCheckDigit: re.BadCheckDigit}
		}
		return RUT{}, &RUTError{Input: s, Reason: err.Error()}
	}
	return RUT{Number: n, DV: dv}, nil
}

// MustParseRUT is ParseRUT for constants known to be valid; it panics on error.
func MustParseRUT(s string) RUT {
	r, err := ParseRUT(s)
	if err != nil {
		panic(err)
	}
	return r
}

// CheckDigit returns the módulo-11 check digit of a RUT body: '0' to '9'
// or 'K'.
func CheckDigit(n int) byte { return chile.CheckDigit(n) }

// String returns the canonical form used in XML and the API: "12345678-5".
func (r RUT) String() string {
	b := make([]byte, 0, 24)
	b = strconv.AppendInt(b, int64(r.Number), 10)
	b = append(b, '-')
	return string(utf8.AppendRune(b, rune(r.DV)))
}

// Format returns the printed form with thousands dots: "12.345.678-5".
func (r RUT) Format() string {
	b := chile.AppendThousands(make([]byte, 0, 16), strconv.Itoa(r.Number))
	b = append(b, '-')
	return string(utf8.AppendRune(b, rune(r.DV)))
}

// IsZero reports whether r is the zero RUT.
func (r RUT) IsZero() bool { return r.Number == 0 }
