package dte

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	for _, s := range []string{"0", "3", "-1.5", "+2.25", "0.000001", "007", "-0", "12.50", "999999999999999999999999"} {
		d, err := ParseDecimal(s)
		if err != nil || string(d) != s || !d.Valid() || !d.IsSet() {
			t.Errorf("ParseDecimal(%q) = %q, %v", s, d, err)
		}
	}
	for _, s := range []string{"", ".5", "5.", "1e3", "1E3", "1,5", " 1", "1 ", "--1", "+-1", "-", "+", "1.2.3", "NaN", "Infinity", "0x10", "١", "1_000"} {
		if d, err := ParseDecimal(s); err == nil {
			t.Errorf("ParseDecimal(%q) = %q, want an error", s, d)
		} else if !strings.Contains(err.Error(), "not a decimal") {
			t.Errorf("ParseDecimal(%q): error %q does not say why", s, err)
		}
		if Decimal(s).Valid() || Decimal(s).Rat() != nil || Decimal(s).Sign() != 0 {
			t.Errorf("Decimal(%q) treated as a number", s)
		}
	}
	if Decimal("").IsSet() {
		t.Error(`Decimal("").IsSet()`)
	}
}

func TestDecimalAccessors(t *testing.T) {
	cases := []struct {
		d      Decimal
		places int
		rat    string // a/b
		sign   int
		i64    int64
		isInt  bool
	}{
		{"3", 0, "3/1", 1, 3, true},
		{"1.50", 2, "3/2", 1, 0, false},
		{"12.00", 2, "12/1", 1, 12, true},
		{"-1200.0001", 4, "-12000001/10000", -1, 0, false},
		{"+2.5", 1, "5/2", 1, 0, false},
		{"-0", 0, "0/1", 0, 0, true},
		{"0.000001", 6, "1/1000000", 1, 0, false},
		{"9223372036854775807", 0, "9223372036854775807/1", 1, 9223372036854775807, true},
		{"-9223372036854775808", 0, "-9223372036854775808/1", -1, -9223372036854775808, true},
		{"9223372036854775808", 0, "9223372036854775808/1", 1, 0, false},
	}
	for _, c := range cases {
		if got := c.d.Places(); got != c.places {
			t.Errorf("%q.Places() = %d, want %d", c.d, got, c.places)
		}
		if got := c.d.Rat(); got == nil || got.String() != c.rat {
			t.Errorf("%q.Rat() = %v, want %s", c.d, got, c.rat)
		}
		if got := c.d.Sign(); got != c.sign {
			t.Errorf("%q.Sign() = %d, want %d", c.d, got, c.sign)
		}
		n, ok := c.d.Int64()
		if ok != c.isInt || n != c.i64 {
			t.Errorf("%q.Int64() = %d, %v; want %d, %v", c.d, n, ok, c.i64, c.isInt)
		}
	}
	if got := DecimalFromInt(-42); got != "-42" {
		t.Errorf("DecimalFromInt(-42) = %q", got)
	}
}

func TestDecimalFromRat(t *testing.T) {
	cases := []struct {
		num, den int64
		places   int
		want     Decimal
	}{
		{5, 2, 0, "3"},   // half away from zero
		{-5, 2, 0, "-3"}, // also for negatives
		{7, 2, 0, "4"},
		{1, 2, 0, "1"},
		{1, 3, 4, "0.3333"},
		{2, 3, 4, "0.6667"},
		{201, 200, 2, "1.01"}, // 1.005 exactly
		{12000, 10, 0, "1200"},
		{100, 1, 2, "100"}, // no trailing zeros
		{1, 20, 1, "0.1"},
		{-1, 20, 1, "-0.1"},
		{-1, 1000, 2, "0"}, // no negative zero
		{1, 1_000_000, 6, "0.000001"},
		{15, 10, 4, "1.5"},
		{-68000, 119, 0, "-571"}, // 680/1.19 = 571.43
		{500000, 119, 0, "4202"}, // 5000/1.19 = 4201.68
	}
	for _, c := range cases {
		if got := DecimalFromRat(big.NewRat(c.num, c.den), c.places); got != c.want {
			t.Errorf("DecimalFromRat(%d/%d, %d) = %q, want %q", c.num, c.den, c.places, got, c.want)
		}
	}
}

func TestDecimalJSON(t *testing.T) {
	type holder struct {
		A Decimal `json:"a,omitempty"`
		B Decimal `json:"b"`
	}
	var h holder
	if err := json.Unmarshal([]byte(`{"a": 12.50, "b": "-3.25"}`), &h); err != nil {
		t.Fatal(err)
	}
	if h.A != "12.50" || h.B != "-3.25" {
		t.Errorf("decoded %+v; the text must be kept as sent", h)
	}
	// Malformed numeric strings decode (validation reports them by field).
	if err := json.Unmarshal([]byte(`{"a": "12,5"}`), &h); err != nil || h.A != "12,5" {
		t.Errorf("decoding a malformed string: %+v, %v", h, err)
	}
	if err := json.Unmarshal([]byte(`{"a": null}`), &h); err != nil || h.A != "" {
		t.Errorf("null: %+v, %v", h, err)
	}
	for _, bad := range []string{`{"a": true}`, `{"a": [1]}`, `{"a": {}}`} {
		if err := json.Unmarshal([]byte(bad), &h); err == nil {
			t.Errorf("%s decoded into a Decimal", bad)
		}
	}
	b, err := json.Marshal(holder{A: "", B: "1.5"})
	if err != nil || string(b) != `{"b":1.5}` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	b, err = json.Marshal(holder{B: ""})
	if err != nil || string(b) != `{"b":null}` {
		t.Errorf("Marshal of an absent required Decimal = %s, %v", b, err)
	}
	if _, err := json.Marshal(holder{B: "1e3"}); err == nil {
		t.Error("a malformed Decimal was written as JSON")
	}
}

// FuzzParseDecimal: ParseDecimal and Decimal's JSON reading take outside
// input. Every accepted text must equal math/big's reading of it, and the
// helpers must agree with each other.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "-1.5", "+2.25", "0.000001", "007", "1e3", "", ".", "-0.0", "12345678901234567890.123"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDecimal(s)
		if err != nil {
			return
		}
		ref, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
		if !ok || strings.ContainsAny(s, "eE/xX_") {
			t.Fatalf("ParseDecimal accepted %q, which is not a plain decimal", s)
		}
		if got := d.Rat(); got == nil || got.Cmp(ref) != 0 {
			t.Fatalf("%q.Rat() = %v, want %v", s, got, ref)
		}
		if d.Sign() != ref.Sign() {
			t.Fatalf("%q.Sign() = %d", s, d.Sign())
		}
		if back := DecimalFromRat(ref, d.Places()); back.Rat().Cmp(ref) != 0 {
			t.Fatalf("DecimalFromRat(%v, %d) = %q", ref, d.Places(), back)
		}
		var j Decimal
		if err := json.Unmarshal([]byte(strings.TrimPrefix(s, "+")), &j); err == nil && j.Rat().Cmp(ref) != 0 {
			t.Fatalf("JSON %q decoded as %q", s, j)
		}
	})
}
