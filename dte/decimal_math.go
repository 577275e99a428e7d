package dte

import (
	"cmp"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// This file holds the exact fixed-point arithmetic behind ComputeTotals.
// Money never passes through a float: every value is an int64 count of units
// of 10^-scale, products are formed in 128 bits, and every division rounds
// half away from zero (half-up on the magnitude), which is how the SII rounds.

// fxNum is the exact decimal v × 10^-scale.
type fxNum struct {
	v     int64
	scale int
}

// fxMaxDigits is the most significant digits a parsed number may carry; 18
// digits always fit in an int64.
const fxMaxDigits = 18

// fxMaxAmount is the largest magnitude an amount may reach in its document's
// units: the SII's amount types allow at most 18 digits (CLP integers, or
// export amounts with 14 integer and 4 fractional digits).
const fxMaxAmount = 999_999_999_999_999_999

// fxPow10 holds 10^0 … 10^19; 10^19 is the largest power of ten in a uint64.
var fxPow10 = [...]uint64{
	1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
	1_000_000_000, 10_000_000_000, 100_000_000_000, 1_000_000_000_000,
	10_000_000_000_000, 100_000_000_000_000, 1_000_000_000_000_000,
	10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000,
	10_000_000_000_000_000_000,
}

// fxParse returns the exact value of d, or false when d is malformed or
// has more than 18 significant digits (see Decimal.parse). Trailing
// fractional zeros are dropped, so "2.50" has scale 1.
func fxParse(d Decimal) (fxNum, bool) {
	p, ok := d.parse()
	return p.fx, ok && p.fits
}

// fxCompare compares a and b exactly: -1, 0 or +1.
func fxCompare(a, b fxNum) int {
	if c, ok := fxCmp(a, b); ok {
		return c
	}
	return a.rat().Cmp(b.rat()) // scales 20 or more apart: rare, exact anyway
}

// fxCmp compares two fixed-point numbers exactly in 128 bits; ok is false
// when their scales are too far apart for that.
func fxCmp(a, b fxNum) (c int, ok bool) {
	flip := 1
	if a.scale > b.scale {
		a, b, flip = b, a, -1
	}
	d := b.scale - a.scale
	if d >= len(fxPow10) {
		return 0, false
	}
	sa, sb := cmp.Compare(a.v, 0), cmp.Compare(b.v, 0)
	if sa != sb || sa == 0 {
		return flip * cmp.Compare(sa, sb), true
	}
	// Same sign, both non-zero: compare |a| × 10^d with |b|.
	hi, lo := bits.Mul64(fxAbs(a.v), fxPow10[d])
	mb := fxAbs(b.v)
	switch {
	case hi > 0 || lo > mb:
		c = 1
	case lo < mb:
		c = -1
	}
	return flip * sa * c, true
}

// rat returns n as a big.Rat.
func (n fxNum) rat() *big.Rat {
	den := new(big.Int)
	if n.scale < len(fxPow10) {
		den.SetUint64(fxPow10[n.scale])
	} else {
		den.Exp(big.NewInt(10), big.NewInt(int64(n.scale)), nil)
	}
	return new(big.Rat).SetFrac(big.NewInt(n.v), den)
}

// fxMulDiv returns a × b / d rounded half away from zero, and false when the
// result does not fit in an int64 or d is zero. The product is exact (128 bits).
func fxMulDiv(a, b int64, d uint64) (int64, bool) {
	if d == 0 {
		return 0, false
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(fxAbs(a), fxAbs(b))
	if hi >= d {
		return 0, false // quotient needs more than 64 bits
	}
	q, r := bits.Div64(hi, lo, d)
	if r >= d-r { // r ≥ d/2 without overflow: round the half away from zero
		q++
		if q == 0 {
			return 0, false
		}
	}
	if q > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(q), true
	}
	return int64(q), true
}

// fxAbs returns |a| as a uint64 (correct for math.MinInt64 too).
func fxAbs(a int64) uint64 {
	if a < 0 {
		return uint64(-(a + 1)) + 1
	}
	return uint64(a)
}

// fxMulShift returns a × b × 10^shift, rounded half away from zero when shift
// is negative, and false on overflow or an unrepresentable shift.
func fxMulShift(a, b int64, shift int) (int64, bool) {
	if shift <= 0 {
		if -shift >= len(fxPow10) {
			// Only a zero product survives a shift this large exactly;
			// anything else has more precision than the SII can carry.
			if a == 0 || b == 0 {
				return 0, true
			}
			return 0, false
		}
		return fxMulDiv(a, b, fxPow10[-shift])
	}
	p, ok := fxMulDiv(a, b, 1)
	if !ok || shift >= len(fxPow10) || fxPow10[shift] > math.MaxInt64 {
		return 0, p == 0 && ok
	}
	return fxMulDiv(p, int64(fxPow10[shift]), 1)
}

// fxAdd returns a + b and false on overflow.
func fxAdd(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// fxSub returns a − b and false on overflow.
func fxSub(a, b int64) (int64, bool) {
	s := a - b
	if (b < 0 && s < a) || (b > 0 && s > a) {
		return 0, false
	}
	return s, true
}

// fxToPlaces converts n to units of 10^-places without rounding; it reports
// false when n has more decimals than places or the result overflows.
func fxToPlaces(n fxNum, places int) (int64, bool) {
	if n.scale > places {
		return 0, false
	}
	return fxMulShift(n.v, 1, places-n.scale)
}

// fxFormat writes v units of 10^-places as a plain decimal without trailing
// fractional zeros: 12345 at 2 places is "123.45", 1200 at 2 places is "12".
func fxFormat(v int64, places int) Decimal {
	if places == 0 {
		return Decimal(strconv.FormatInt(v, 10))
	}
	var buf [32]byte
	b := buf[:0]
	if v < 0 {
		b = append(b, '-')
	}
	u := fxAbs(v)
	p := fxPow10[places]
	b = strconv.AppendUint(b, u/p, 10)
	frac := u % p
	if frac != 0 {
		width := places
		for frac%10 == 0 {
			frac /= 10
			width--
		}
		b = append(b, '.')
		for n := fxDigits(frac); n < width; n++ {
			b = append(b, '0')
		}
		b = strconv.AppendUint(b, frac, 10)
	}
	return Decimal(b)
}

// fxString writes n canonically (no trailing fractional zeros).
func (n fxNum) fxString() Decimal { return fxFormat(n.v, n.scale) }

// fxDigits returns the number of decimal digits of u (1 for 0).
func fxDigits(u uint64) int {
	n := 1
	for u >= 10 {
		u /= 10
		n++
	}
	return n
}
