package dte

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The validator computes with 18-digit fixed point (num) where it used
// big.Rat. These tests hold the fixed-point code to the exact rational
// arithmetic of math/big, which stays the reference.

// validatorRules are the numeric rules Validate applies (validate.go).
var validatorRules = []numRule{
	{places: 6, intDigits: 12, min: "0.000001"},                                     // cantidad
	{places: 0, intDigits: 12, min: "0", placesHint: "precio is an integer"},        // precio CLP
	{places: 6, intDigits: 12, min: "0"},                                            // precio export
	{places: 0, intDigits: 18, min: "0", placesHint: "monto_item is an integer"},    // monto_item CLP
	{places: 4, intDigits: 14, min: "0"},                                            // monto_item export
	{places: 0, intDigits: 18},                                                      // monto_item 43
	{places: 4, intDigits: 14},                                                      // monto_item, unknown type
	{places: 2, intDigits: 3, min: "0", max: "100"},                                 // descuento_pct
	{places: 2, intDigits: 3, min: "0", minExclusive: true, max: "100"},             // tasa_imp
	{places: 2, intDigits: 16, min: "0", minExclusive: true},                        // valor_dr
	{places: 4, intDigits: 6, min: "0", minExclusive: true},                         // tpo_cambio
	{places: 2, intDigits: 8, min: "0"},                                             // peso_bruto
	{places: 20, intDigits: 20, min: "-0.5", max: "123456789012345678901.00000001"}, // beyond 18 digits: big.Rat
}

// refNumber is number() as it was written with big.Rat: the outcome and the
// value it must agree with.
func refNumber(d Decimal, rule numRule) (*big.Rat, bool) {
	intDigits, places, canon, ok := decimalShape(d)
	if !ok || places > rule.places || intDigits > rule.intDigits {
		return nil, false
	}
	x, good := new(big.Rat).SetString(canon)
	if !good {
		return nil, false
	}
	if rule.min != "" {
		m, _ := new(big.Rat).SetString(rule.min)
		if c := x.Cmp(m); c < 0 || (c == 0 && rule.minExclusive) {
			return nil, false
		}
	}
	if rule.max != "" {
		m, _ := new(big.Rat).SetString(rule.max)
		if x.Cmp(m) > 0 {
			return nil, false
		}
	}
	return x, true
}

// checkNumber compares numberAt with refNumber on one input, and the
// reported problem with the one number() reports for the same field name.
func checkNumber(t *testing.T, d Decimal, rule numRule) {
	t.Helper()
	v := &validator{}
	got, ok := v.numberAt("detalle[3]", ".cantidad", d, rule)
	want, wantOK := refNumber(d, rule)
	if ok != wantOK {
		t.Fatalf("numberAt(%q, %+v) ok = %v, want %v (%v)", d, rule, ok, wantOK, v.errs)
	}
	if ok != (len(v.errs) == 0) {
		t.Fatalf("numberAt(%q) ok = %v with problems %v", d, ok, v.errs)
	}
	if ok && got.rat().Cmp(want) != 0 {
		t.Fatalf("numberAt(%q) = %v, want %v", d, got.rat(), want)
	}
	w := &validator{}
	w.number("detalle[3].cantidad", d, rule)
	if !slices.Equal(v.errs, w.errs) {
		t.Fatalf("numberAt and number report differently: %v / %v", v.errs, w.errs)
	}
	for _, e := range v.errs {
		if e.Field != "detalle[3].cantidad" {
			t.Fatalf("problem on field %q", e.Field)
		}
	}
}

// refLineAmount is lineAmount as written with big.Rat.
func refLineAmount(q, p *big.Rat, export bool) *big.Rat {
	places := 0
	if export {
		places = 4
	}
	return DecimalFromRat(new(big.Rat).Mul(q, p), places).Rat()
}

// randDecimal returns a decimal text with up to maxInt integer and maxFrac
// fractional digits, sometimes signed, padded with zeros or all nines.
func randDecimal(r *rand.Rand, maxInt, maxFrac int) Decimal {
	var b strings.Builder
	switch r.IntN(6) {
	case 0:
		b.WriteByte('-')
	case 1:
		b.WriteByte('+')
	}
	if r.IntN(5) == 0 {
		b.WriteString("00")
	}
	digit := func() byte {
		if r.IntN(4) == 0 {
			return '9'
		}
		return byte('0' + r.IntN(10))
	}
	n := 1 + r.IntN(maxInt)
	for i := 0; i < n; i++ {
		b.WriteByte(digit())
	}
	if f := r.IntN(maxFrac + 1); f > 0 {
		b.WriteByte('.')
		for i := 0; i < f; i++ {
			b.WriteByte(digit())
		}
		if r.IntN(5) == 0 {
			b.WriteString("000")
		}
	}
	return Decimal(b.String())
}

func TestNumberMatchesBigRat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fixed := []Decimal{"0", "-0", "0.000001", "0.0000009", "0.0000010", "100", "100.00", "100.01", "-0.01",
		"999999999999", "1000000000000", "999999999999999999", "1000000000000000000",
		"99999999999999.9999", "000000000000000000000000001.5", "1.000000000000000000000000", "1e3", "", ".5", "5.", "--1"}
	for _, rule := range validatorRules {
		for _, d := range fixed {
			checkNumber(t, d, rule)
		}
		for i := 0; i < 3000; i++ {
			checkNumber(t, randDecimal(r, 22, 8), rule)
		}
	}
}

func TestLineAmountMatchesBigRat(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	qtyRule := numRule{places: 6, intDigits: 12, min: "0.000001"}
	for i := 0; i < 20000; i++ {
		export := r.IntN(2) == 0
		priceRule := numRule{places: 0, intDigits: 12, min: "0"}
		if export {
			priceRule.places = 6
		}
		v := &validator{}
		qd, pd := randDecimal(r, 12, 6), randDecimal(r, 12, 6)
		if i%7 == 0 {
			qd, pd = "0.5", "1" // exact halves round away from zero
		}
		q, okQ := v.number("q", qd, qtyRule)
		p, okP := v.number("p", pd, priceRule)
		if !okQ || !okP {
			continue
		}
		got := lineAmount(q, p, export)
		want := refLineAmount(q.rat(), p.rat(), export)
		if got.rat().Cmp(want) != 0 {
			t.Fatalf("lineAmount(%s, %s, %v) = %v, want %v", qd, pd, export, got.rat(), want)
		}
		limit := (&validator{tipoOK: true, tipo: FacturaElectronica}).amountLimit()
		if export {
			limit = (&validator{}).amountLimit()
		}
		wantLimit, _ := new(big.Rat).SetString(maxAmount18)
		if export {
			wantLimit, _ = new(big.Rat).SetString(maxExportAmount)
		}
		if numCmp(got, limit) != want.Cmp(wantLimit) {
			t.Fatalf("%v compared with the limit: %d, want %d", want, numCmp(got, limit), want.Cmp(wantLimit))
		}
	}
}

func TestNumCmpAndSum(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	values := []num{{}, {fx: fxNum{v: fxMaxAmount}}, {fx: fxNum{v: fxMaxAmount, scale: 4}},
		{fx: fxNum{v: -1, scale: 19}}, {fx: fxNum{v: 7, scale: 30}}, numOf("-123456789012345678901234.5")}
	for i := 0; i < 2000; i++ {
		values = append(values, numOf(string(randDecimal(r, 18, 18))))
	}
	for i := 0; i < 20000; i++ {
		a, b := values[r.IntN(len(values))], values[r.IntN(len(values))]
		if got, want := numCmp(a, b), a.rat().Cmp(b.rat()); got != want {
			t.Fatalf("numCmp(%v, %v) = %d, want %d", a.rat(), b.rat(), got, want)
		}
	}
	// A sum of many large lines leaves fixed point without losing a unit.
	var sum num
	want := new(big.Rat)
	for i := 0; i < 1000; i++ {
		a := values[r.IntN(len(values))]
		sum = numAddAbs(sum, a)
		want.Add(want, new(big.Rat).Abs(a.rat()))
		if sum.rat().Cmp(want) != 0 {
			t.Fatalf("sum after %d lines = %v, want %v", i+1, sum.rat(), want)
		}
	}
}

// plainTextOK may only answer true when text accepts the value silently.
func TestPlainTextOKAgreesWithText(t *testing.T) {
	texts := []string{"", " ", "\u00a0", "a", " a ", "Pérez & Hijos", "ÿ°×", "x\ny", "x\ty", "x\r\ny", "\u0085",
		"\x7f", "\x01", "€", "\xff", "\xc3", "😀", strings.Repeat("ñ", 40), strings.Repeat("n", 41), "\u00a0x"}
	for _, s := range texts {
		for _, mode := range []textMode{textOptional, textRequired, textMultiline} {
			for _, max := range []int{1, 3, 40, 1000} {
				v := &validator{}
				ok := v.text("f", s, max, mode)
				if plainTextOK(s, max, mode) && (!ok || len(v.errs) > 0) {
					t.Errorf("plainTextOK(%q, %d, %d) but text reports %v", s, max, mode, v.errs)
				}
				w := &validator{}
				if w.textAt("detalle[0]", ".nombre", s, max, mode) != ok || len(w.errs) != len(v.errs) {
					t.Errorf("textAt(%q, %d, %d) disagrees with text", s, max, mode)
				}
				for _, e := range w.errs {
					if e.Field != "detalle[0].nombre" {
						t.Errorf("problem on field %q", e.Field)
					}
				}
			}
		}
	}
	// The common case is the fast one.
	for _, s := range []string{"Artículo Ñandú n° 1", "UN", "Av. Providencia 1234"} {
		if !plainTextOK(s, 40, textRequired) {
			t.Errorf("plainTextOK(%q) = false", s)
		}
	}
}

// FuzzValidateNumbers holds numberAt to the big.Rat reference on arbitrary
// text, for every rule Validate applies.
func FuzzValidateNumbers(f *testing.F) {
	for _, s := range []string{"0", "0.000001", "100.00", "-5", "999999999999999999", "99999999999999.9999", "1.5e3", "00012.3400"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		checkNumber(t, Decimal(s), validatorRules[int(which)%len(validatorRules)])
	})
}

// Hand-computed line amounts: cantidad × precio rounded half away from
// zero to pesos, or to 4 decimals on exports.
func TestLineAmountByHand(t *testing.T) {
	for _, c := range []struct {
		qty, price Decimal
		export     bool
		want       string
	}{
		{"2.5", "1990", false, "4975"},
		{"0.5", "1", false, "1"},
		{"1.5", "3", false, "5"},
		{"0.333333", "1", false, "0"},
		{"0.5", "0.0001", true, "0.0001"},
		{"0.49", "0.0001", true, "0"},
		{"3", "33.333333", true, "100"},
		{"3", "33.3333", true, "99.9999"},
		{"999999999999", "999999999999", false, "999999999998000000000001"},
	} {
		v := &validator{}
		q, okQ := v.number("q", c.qty, numRule{places: 6, intDigits: 12})
		p, okP := v.number("p", c.price, numRule{places: 6, intDigits: 12})
		if !okQ || !okP {
			t.Fatalf("%s × %s: %v", c.qty, c.price, v.errs)
		}
		if got := string(DecimalFromRat(lineAmount(q, p, c.export).rat(), 4)); got != c.want {
			t.Errorf("%s × %s (export %v) = %s, want %s", c.qty, c.price, c.export, got, c.want)
		}
	}
}
