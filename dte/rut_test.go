package dte

import (
	"errors"
	"strings"
	"testing"
)

// Known RUTs, with check digits as the SII and the companies publish them.
var knownRUTs = []struct {
	text string
	want RUT
}{
	{"60803000-K", RUT{60803000, 'K'}}, // Servicio de Impuestos Internos
	{"66666666-6", RUT{66666666, '6'}}, // the SII's anonymous boleta receptor
	{"55555555-5", RUT{55555555, '5'}}, // the SII's generic foreign receptor
	{"97975000-5", RUT{97975000, '5'}},
	{"8414240-9", RUT{8414240, '9'}},
	// Hand-computed: 12345678 → 8·2+7·3+6·4+5·5+4·6+3·7+2·2+1·3 = 138,
	// 138 mod 11 = 6, 11 − 6 = 5.
	{"12345678-5", RUT{12345678, '5'}},
	// 1 → 1·2 = 2, 11 − 2 = 9.
	{"1-9", RUT{1, '9'}},
	// 99500410 → 0·2+1·3+4·4+0·5+0·6+5·7+9·2+9·3 = 99 = 9·11, 11 − 0 = 11 → 0.
	{"99500410-0", RUT{99500410, '0'}},
}

func TestParseRUTKnown(t *testing.T) {
	for _, k := range knownRUTs {
		got, err := ParseRUT(k.text)
		if err != nil || got != k.want {
			t.Errorf("ParseRUT(%q) = %v, %v; want %v", k.text, got, err, k.want)
		}
		if got := CheckDigit(k.want.Number); got != k.want.DV {
			t.Errorf("CheckDigit(%d) = %c, want %c", k.want.Number, got, k.want.DV)
		}
	}
	if RUTSII() != (RUT{60803000, 'K'}) || RUTSinReceptor() != (RUT{66666666, '6'}) {
		t.Errorf("RUTSII() %v, RUTSinReceptor() %v", RUTSII(), RUTSinReceptor())
	}
}

func TestParseRUTForms(t *testing.T) {
	want := RUT{76354771, 'K'}
	for _, s := range []string{
		"76354771-K",
		"76354771-k",
		"76.354.771-K",
		"76.354.771-k",
		"76 354 771-K",
		"76354771K",
		"76354771k",
		"  76354771-K\t",
		"76354771 - K",
	} {
		got, err := ParseRUT(s)
		if err != nil || got != want {
			t.Errorf("ParseRUT(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}

func TestParseRUTErrors(t *testing.T) {
	cases := []struct {
		in       string
		badDigit bool
	}{
		{"", false},
		{"-", false},
		{"5", false},
		{"abc", false},
		{"12345678-", false},
		{"-5", false},
		{"123456789-0", false}, // nine-digit body
		{"0-0", false},
		{"00000000-0", false},
		{"12345678-55", false},
		{"12.345.678-Z", false},
		{"12345678-5-5", false},
		{"1234567a-5", false},
		{"+12345678-5", false},
		{"１２３４５６７８-5", false}, // full-width digits
		{"12345678-4", true},
		{"60803000-0", true},
		{"66666666-K", true},
		{"8.414.240-8", true},
	}
	for _, c := range cases {
		_, err := ParseRUT(c.in)
		var re *RUTError
		if !errors.As(err, &re) {
			t.Errorf("ParseRUT(%q): err = %v, want a *RUTError", c.in, err)
			continue
		}
		if re.BadCheckDigit != c.badDigit {
			t.Errorf("ParseRUT(%q): BadCheckDigit = %v, want %v (%v)", c.in, re.BadCheckDigit, c.badDigit, err)
		}
		if re.Input != c.in || !strings.Contains(err.Error(), "RUT") {
			t.Errorf("ParseRUT(%q): error %q does not name the input", c.in, err)
		}
	}
}

func TestRUTStringFormat(t *testing.T) {
	cases := []struct {
		r              RUT
		str, formatted string
	}{
		{RUT{60803000, 'K'}, "60803000-K", "60.803.000-K"},
		{RUT{8414240, '9'}, "8414240-9", "8.414.240-9"},
		{RUT{97975000, '5'}, "97975000-5", "97.975.000-5"},
		{RUT{1, '9'}, "1-9", "1-9"},
		{RUT{999, '7'}, "999-7", "999-7"},
		{RUT{1000, '6'}, "1000-6", "1.000-6"},
		{RUT{123456, '0'}, "123456-0", "123.456-0"},
	}
	for _, c := range cases {
		if got := c.r.String(); got != c.str {
			t.Errorf("%v.String() = %q, want %q", c.r, got, c.str)
		}
		if got := c.r.Format(); got != c.formatted {
			t.Errorf("%v.Format() = %q, want %q", c.r, got, c.formatted)
		}
	}
	for _, k := range knownRUTs {
		for _, s := range []string{k.want.String(), k.want.Format()} {
			if got, err := ParseRUT(s); err != nil || got != k.want {
				t.Errorf("ParseRUT(%q) = %v, %v; want %v", s, got, err, k.want)
			}
		}
	}
	if !(RUT{}).IsZero() || RUTSII().IsZero() {
		t.Error("IsZero")
	}
}

func TestMustParseRUT(t *testing.T) {
	if got := MustParseRUT("60.803.000-k"); got != RUTSII() {
		t.Errorf("MustParseRUT = %v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustParseRUT accepted a bad check digit")
		}
	}()
	MustParseRUT("60803000-1")
}

// FuzzParseRUT: ParseRUT reads outside input; it must never panic, and what
// it accepts must be a consistent RUT that its own forms read back.
func FuzzParseRUT(f *testing.F) {
	for _, k := range knownRUTs {
		f.Add(k.text)
	}
	for _, s := range []string{"76.354.771-k", "12 345 678 5", "-", "", "K", "0-0", "999999999-9", "1.-9", "\xff-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRUT(s)
		if err != nil {
			var re *RUTError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *RUTError", err)
			}
			return
		}
		if r.Number < 1 || r.Number > 99_999_999 || r.DV != CheckDigit(r.Number) {
			t.Fatalf("ParseRUT(%q) = %+v", s, r)
		}
		for _, form := range []string{r.String(), r.Format()} {
			if back, err := ParseRUT(form); err != nil || back != r {
				t.Fatalf("ParseRUT(%q) = %v, %v; want %v", form, back, err, r)
			}
		}
	})
}
