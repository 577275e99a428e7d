package dte

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// Decimal is an exact decimal number kept as its text, such as "3", "1.5" or
// "-1200.0001". It carries quantities, prices, percentages, exchange rates and
// the amounts of export documents, which may have decimals; no money is ever
// held in a float.
//
// The zero value "" means "absent": optional numeric fields of the contract
// use Decimal with omitempty, so an omitted field and an explicit 0 stay
// distinguishable. In JSON a Decimal is written as a bare number and read
// from a number (or a numeric string); its text is kept exactly as sent, and
// Validate reports malformed values against the field that holds them.
type Decimal string

// DecimalFromInt returns the Decimal for the integer n.
func DecimalFromInt(n int64) Decimal { return Decimal(fmt.Sprint(n)) }

// ParseDecimal checks that s is a plain decimal number (optional sign,
// digits, optional fraction; no exponent) and returns it as a Decimal.
func ParseDecimal(s string) (Decimal, error) {
	d := Decimal(s)
	if !d.valid() {
		return "", fmt.Errorf("dte: %q is not a decimal number", s)
	}
	return d, nil
}

// IsSet reports whether d holds a value (is not the absent zero value).
func (d Decimal) IsSet() bool { return d != "" }

// valid reports whether d is a well-formed decimal number.
func (d Decimal) valid() bool {
	s := string(d)
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || !allDigits(intPart) {
		return false
	}
	if hasDot && (frac == "" || !allDigits(frac)) {
		return false
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// Valid reports whether d is set and well formed.
func (d Decimal) Valid() bool { return d.valid() }

// Places returns the number of digits after the decimal point.
func (d Decimal) Places() int {
	_, frac, ok := strings.Cut(string(d), ".")
	if !ok {
		return 0
	}
	return len(frac)
}

// Rat returns d as an exact rational number. It returns nil when d is absent
// or malformed.
func (d Decimal) Rat() *big.Rat {
	if !d.valid() {
		return nil
	}
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(string(d), "+"))
	if !ok {
		return nil
	}
	return r
}

// Int64 returns d as an integer when it is well formed, has no fractional
// part (trailing zeros allowed) and fits in an int64.
func (d Decimal) Int64() (int64, bool) {
	r := d.Rat()
	if r == nil || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// Sign returns -1, 0 or +1 for a negative, zero or positive d, and 0 when d is
// absent or malformed.
func (d Decimal) Sign() int {
	r := d.Rat()
	if r == nil {
		return 0
	}
	return r.Sign()
}

// DecimalFromRat rounds r half away from zero to the given number of places
// and returns it without trailing fractional zeros.
func DecimalFromRat(r *big.Rat, places int) Decimal {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	num := new(big.Int).Mul(r.Num(), scale)
	den := r.Denom()
	neg := num.Sign() < 0
	num.Abs(num)
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	if m.Lsh(m, 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	s := q.String()
	if places > 0 {
		if len(s) <= places {
			s = strings.Repeat("0", places-len(s)+1) + s
		}
		s = s[:len(s)-places] + "." + s[len(s)-places:]
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if neg && s != "0" {
		s = "-" + s
	}
	return Decimal(s)
}

// MarshalJSON writes d as a JSON number (null when absent).
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("null"), nil
	}
	if !d.valid() {
		return nil, fmt.Errorf("dte: cannot write %q as a JSON number", string(d))
	}
	return []byte(d), nil
}

// UnmarshalJSON reads a JSON number, a string holding a number, or null. The
// text is kept as sent; validation reports malformed numbers with their field.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		*d = ""
		return nil
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		*d = Decimal(str)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("dte: %s is not a number", s)
	}
	*d = Decimal(n.String())
	return nil
}
