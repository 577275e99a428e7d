package dte

import (
	"cmp"
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

// decParts is what the package's one decimal parser, Decimal.parse, reads
// from a Decimal's text. Validation, totals and verification all start from
// it, so they agree on what a number is and on its value.
type decParts struct {
	// fx is the exact value, when fits.
	fx fxNum
	// fits reports at most 18 significant digits (counted from the first
	// non-zero digit, trailing fractional zeros excluded): the value then
	// lives in fx. Every limit of the contract and the SII's schemas keeps a
	// valid number within that.
	fits bool
	// neg reports a leading minus sign (also on a zero).
	neg bool
	// intDigits counts the integer digits without leading zeros; places the
	// decimal places without trailing zeros ("0012.3400": 2 and 2), and
	// rawPlaces the decimal places as written (4).
	intDigits, places, rawPlaces int
}

// parse reads d in one pass without allocating. ok is false unless d is a
// plain decimal number: an optional sign, at least one digit, and an
// optional point followed by at least one digit. A number of any length is
// measured; only one of at most 18 significant digits gets a value.
func (d Decimal) parse() (p decParts, ok bool) {
	s := string(d)
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		p.neg = s[0] == '-'
		s = s[1:]
	}
	var v uint64
	digits, pendingZeros, intLen := 0, 0, 0
	seenDot := false
	p.fits = true
	push := func(c byte) {
		if v == 0 && c == '0' {
			return // not significant: the scale alone records it
		}
		digits++
		if digits > fxMaxDigits {
			p.fits = false
			return
		}
		if p.fits {
			v = v*10 + uint64(c-'0')
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if seenDot {
				return decParts{}, false
			}
			seenDot = true
			continue
		case c < '0' || c > '9':
			return decParts{}, false
		}
		if !seenDot {
			intLen++
			if p.intDigits == 0 && c == '0' {
				continue // leading zero
			}
			p.intDigits++
			push(c)
			continue
		}
		p.rawPlaces++
		if c == '0' {
			pendingZeros++ // significant only if a non-zero digit follows
			continue
		}
		for ; pendingZeros > 0; pendingZeros-- {
			push('0')
		}
		push(c)
		p.places = p.rawPlaces
	}
	if intLen == 0 || (seenDot && p.rawPlaces == 0) {
		return decParts{}, false
	}
	if p.fits {
		p.fx = fxNum{v: int64(v), scale: p.places}
		if p.neg {
			p.fx.v = -p.fx.v
		}
	}
	return p, true
}

// valid reports whether d is a well-formed decimal number.
func (d Decimal) valid() bool {
	_, ok := d.parse()
	return ok
}

// allDigits reports whether s is a non-empty run of ASCII digits.
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

// Places returns the number of digits after the decimal point, as written
// ("1.50" has 2), or 0 when d is absent or malformed.
func (d Decimal) Places() int {
	p, _ := d.parse()
	return p.rawPlaces
}

// Rat returns d as an exact rational number. It returns nil when d is absent
// or malformed.
func (d Decimal) Rat() *big.Rat {
	p, ok := d.parse()
	switch {
	case !ok:
		return nil
	case p.fits:
		return p.fx.rat()
	}
	r, _ := new(big.Rat).SetString(strings.TrimPrefix(string(d), "+")) // well formed: always parses
	return r
}

// Int64 returns d as an integer when it is well formed, has no fractional
// part (trailing zeros allowed) and fits in an int64.
func (d Decimal) Int64() (int64, bool) {
	p, ok := d.parse()
	switch {
	case !ok || p.places > 0:
		return 0, false
	case p.fits:
		return p.fx.v, true
	case p.intDigits > 19:
		return 0, false
	}
	// 19 digits: may still fit an int64.
	r := d.Rat()
	if !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}

// Sign returns -1, 0 or +1 for a negative, zero or positive d, and 0 when d is
// absent or malformed.
func (d Decimal) Sign() int {
	p, ok := d.parse()
	switch {
	case !ok:
		return 0
	case p.fits:
		return cmp.Compare(p.fx.v, 0)
	case p.neg:
		return -1 // more than 18 significant digits: not zero
	}
	return 1
}

// decimalEqual reports whether a and b hold the same value ("1350" equals
// "1350.0"); an absent or malformed value counts as zero.
func decimalEqual(a, b Decimal) bool {
	pa, okA := a.parse()
	pb, okB := b.parse()
	if !okA {
		pa = decParts{fits: true}
	}
	if !okB {
		pb = decParts{fits: true}
	}
	if pa.fits && pb.fits {
		return fxCompare(pa.fx, pb.fx) == 0
	}
	if pa.fits != pb.fits {
		return false // only one has more than 18 significant digits
	}
	return a.Rat().Cmp(b.Rat()) == 0
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
