package dte

import (
	"fmt"
	"github.com/dtekit/dtekit/internal/chile"
	"strconv"
	"strings"
)

// RUT is a Chilean tax identifier: a body number and its módulo-11 check
// digit ('0'–'9' or 'K').
type RUT struct {
	Number int
	DV     byte
}

// RUTSinReceptor returns the RUT the SII asks for when a boleta has no identified
// receptor.
func RUTSinReceptor() RUT { return RUT{Number: 66666666, DV: '6'} }

// RUTSII returns the SII's own RUT, the RutReceptor of envelopes sent to it.
func RUTSII() RUT { return RUT{Number: 60803000, DV: 'K'} }

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
// "123456785" or with a lowercase k, and checks its check digit.
func ParseRUT(s string) (RUT, error) {
	clean := strings.Map(func(r rune) rune {
		switch r {
		case '.', ' ', '\t':
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	clean = strings.ToUpper(clean)
	body, dv, ok := strings.Cut(clean, "-")
	if !ok {
		if len(clean) < 2 {
			return RUT{}, &RUTError{Input: s, Reason: "too short"}
		}
		body, dv = clean[:len(clean)-1], clean[len(clean)-1:]
	}
	if len(dv) != 1 || !(dv[0] == 'K' || dv[0] >= '0' && dv[0] <= '9') {
		return RUT{}, &RUTError{Input: s, Reason: "check digit must be 0-9 or K"}
	}
	if body == "" || len(body) > 8 || !allDigits(body) {
		return RUT{}, &RUTError{Input: s, Reason: "body must be 1 to 8 digits"}
	}
	n, _ := strconv.Atoi(body)
	if n == 0 {
		return RUT{}, &RUTError{Input: s, Reason: "body must not be zero"}
	}
	r := RUT{Number: n, DV: dv[0]}
	if want := CheckDigit(n); want != r.DV {
		return RUT{}, &RUTError{Input: s, Reason: fmt.Sprintf("check digit %c does not match (expected %c)", r.DV, want), BadCheckDigit: true}
	}
	return r, nil
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
func (r RUT) String() string { return fmt.Sprintf("%d-%c", r.Number, r.DV) }

// Format returns the printed form with thousands dots: "12.345.678-5".
func (r RUT) Format() string {
	s := strconv.Itoa(r.Number)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%s-%c", b.String(), r.DV)
}

// IsZero reports whether r is the zero RUT.
func (r RUT) IsZero() bool { return r.Number == 0 }
