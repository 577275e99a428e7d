package dte

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The validator and the totals compute with 18-digit fixed point read by
// one parser (Decimal.parse). These tests hold that code to the exact
// rational arithmetic of math/big and to a reading of the text written
// independently with package strings, which stay the reference.

// validatorRules are the numeric rules Validate applies (validate.go).
var validatorRules = []numRule{
	{places: 6, intDigits: 12, min: "0.000001"},                                  // cantidad
	{places: 0, intDigits: 12, min: "0", placesHint: "precio is an integer"},     // precio CLP
	{places: 6, intDigits: 12, min: "0"},                                         // precio export
	{places: 0, intDigits: 18, min: "0", placesHint: "monto_item is an integer"}, // monto_item CLP
	{places: 4, intDigits: 14, min: "0"},                                         // monto_item export
	{places: 0, intDigits: 18},                                                   // monto_item 43
	{places: 4, intDigits: 14},                                                   // monto_item, unknown type
	{places: 2, intDigits: 3, min: "0", max: "100"},                              // descuento_pct
	{places: 2, intDigits: 3, min: "0", minExclusive: true, max: "100"},          // tasa_imp
	{places: 2, intDigits: 16, min: "0", minExclusive: true},                     // valor_dr
	{places: 4, intDigits: 6, min: "0", minExclusive: true},                      // tpo_cambio
	{places: 2, intDigits: 8, min: "0"},                                          // peso_bruto
}

// refShape reads d with package strings: its significant integer digits and
// decimal places, the number without those zeros, and false when d is not a
// plain decimal number.
func refShape(d Decimal) (intDigits, places int, canon string, ok bool) {
	s := string(d)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if strings.HasPrefix(string(d), "+") && neg {
		return 0, 0, "", false
	}
	ip, fp, hasDot := strings.Cut(s, ".")
	isDigits := func(x string) bool { return x != "" && strings.Trim(x, "0123456789") == "" }
	if !isDigits(ip) || (hasDot && !isDigits(fp)) {
		return 0, 0, "", false
	}
	ip, fp = strings.TrimLeft(ip, "0"), strings.TrimRight(fp, "0")
	canon = ip
	if canon == "" {
		canon = "0"
	}
	if fp != "" {
		canon += "." + fp
	}
	if neg {
		canon = "-" + canon
	}
	return len(ip), len(fp), canon, true
}

// refNumber is number() as it was written with big.Rat: the outcome and the
// value it must agree with.
func refNumber(d Decimal, rule numRule) (*big.Rat, bool) {
	intDigits, places, canon, ok := refShape(d)
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
func refLineAmount(q, p *big.Rat, places int) *big.Rat {
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
	limit := new(big.Rat).SetInt64(amountLimit)
	for i := 0; i < 20000; i++ {
		places := 4 * r.IntN(2)
		priceRule := numRule{places: 0, intDigits: 12, min: "0"}
		if places == 4 {
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
		got, fits := lineAmount(q, p, places)
		want := refLineAmount(q.rat(), p.rat(), places)
		wantUnits := new(big.Rat).Mul(want, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)))
		if !fits {
			if wantUnits.Num().IsInt64() {
				t.Fatalf("lineAmount(%s, %s, %d) reports an overflow; want %v", qd, pd, places, want)
			}
			continue
		}
		if g := (fxNum{v: got, scale: places}).rat(); g.Cmp(want) != 0 {
			t.Fatalf("lineAmount(%s, %s, %d) = %v, want %v", qd, pd, places, g, want)
		}
		if (fxAbs(got) > amountLimit) != (new(big.Rat).Abs(wantUnits).Cmp(limit) > 0) {
			t.Fatalf("%v compared with the 18-digit limit disagrees", want)
		}
	}
}

// TestDecimalParseMatchesStrings holds Decimal.parse to refShape and
// math/big on fixed and random text.
func TestDecimalParseMatchesStrings(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	inputs := []Decimal{"0", "-0", "+0.000", "0.000001", "007.10", "-0.0500", "999999999999999999",
		"1000000000000000000", "0.000000000000000000001", "1234567890123456789", "12345678901234567.8",
		"1e3", "", ".5", "5.", "--1", "+-1", "1.2.3", " 1"}
	for i := 0; i < 5000; i++ {
		inputs = append(inputs, randDecimal(r, 22, 8))
	}
	for _, d := range inputs {
		p, ok := d.parse()
		intDigits, places, canon, wantOK := refShape(d)
		if ok != wantOK {
			t.Fatalf("%q.parse() ok = %v, want %v", d, ok, wantOK)
		}
		if !ok {
			continue
		}
		if p.intDigits != intDigits || p.places != places {
			t.Fatalf("%q.parse() = %d integer digits, %d places; want %d, %d", d, p.intDigits, p.places, intDigits, places)
		}
		want, _ := new(big.Rat).SetString(canon)
		// Significant digits: from the first non-zero digit to the last
		// one kept in canon (trailing fractional zeros are already gone).
		sig := len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(canon), "0"))
		if p.fits != (sig <= fxMaxDigits) {
			t.Fatalf("%q.parse() fits = %v with %d significant digits", d, p.fits, sig)
		}
		if p.fits && p.fx.rat().Cmp(want) != 0 {
			t.Fatalf("%q.parse() = %v, want %v", d, p.fx.rat(), want)
		}
		if got := d.Rat(); got.Cmp(want) != 0 {
			t.Fatalf("%q.Rat() = %v, want %v", d, got, want)
		}
	}
}

// TestFxCompareAndEqual holds fxCompare and decimalEqual to math/big.
func TestFxCompareAndEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	values := []Decimal{"0", "-0.00", "999999999999999999", "99999999999999.9999", "0.000000000000000000001",
		"-0.0000000000000000000010", "123456789012345678901234.5", "1350", "1350.0", "", "x"}
	for i := 0; i < 1500; i++ {
		values = append(values, randDecimal(r, 20, 8))
	}
	ratOf := func(d Decimal) *big.Rat {
		if x := d.Rat(); x != nil {
			return x
		}
		return new(big.Rat)
	}
	for i := 0; i < 20000; i++ {
		a, b := values[r.IntN(len(values))], values[r.IntN(len(values))]
		if i < len(values) {
			b = Decimal(strings.TrimSuffix(string(a), "0")) // often the same value written otherwise
		}
		want := ratOf(a).Cmp(ratOf(b))
		if got := decimalEqual(a, b); got != (want == 0) {
			t.Fatalf("decimalEqual(%q, %q) = %v, want %v", a, b, got, want == 0)
		}
		fa, okA := fxParse(a)
		fb, okB := fxParse(b)
		if okA && okB {
			if got := fxCompare(fa, fb); got != want {
				t.Fatalf("fxCompare(%q, %q) = %d, want %d", a, b, got, want)
			}
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
		{"999999999999", "999999999999", false, "overflow"}, // 999999999998000000000001: beyond an int64
	} {
		v := &validator{}
		q, okQ := v.number("q", c.qty, numRule{places: 6, intDigits: 12})
		p, okP := v.number("p", c.price, numRule{places: 6, intDigits: 12})
		if !okQ || !okP {
			t.Fatalf("%s × %s: %v", c.qty, c.price, v.errs)
		}
		places := 0
		if c.export {
			places = 4
		}
		got := "overflow"
		if a, fits := lineAmount(q, p, places); fits {
			got = string(fxFormat(a, places))
		}
		if got != c.want {
			t.Errorf("%s × %s (export %v) = %s, want %s", c.qty, c.price, c.export, got, c.want)
		}
	}
}
