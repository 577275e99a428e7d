package pdf

import (
	"errors"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
)

// Expected strings below are written by hand from the rules: Chilean
// thousands dots, decimal comma, currency symbol first.

func TestFmtMoney(t *testing.T) {
	cases := []struct {
		in   dte.Decimal
		sym  string
		want string
	}{
		{"0", "$", "$ 0"},
		{"7", "$", "$ 7"},
		{"999", "$", "$ 999"},
		{"1000", "$", "$ 1.000"},
		{"1234567", "$", "$ 1.234.567"},
		{"490218", "$", "$ 490.218"},
		{"100000000000000000", "$", "$ 100.000.000.000.000.000"},
		{"-1500", "$", "-$ 1.500"},
		{"18338.8", "US$", "US$ 18.338,8"},
		{"1234.5678", "€", "€ 1.234,5678"},
		{"0.50", "US$", "US$ 0,50"},
		{"0012", "$", "$ 12"},
		{"+5", "$", "$ 5"},
		{"-0", "$", "$ 0"},
	}
	for _, c := range cases {
		if got := fmtMoney(c.in, c.sym); got != c.want {
			t.Errorf("fmtMoney(%q, %q) = %q, want %q", c.in, c.sym, got, c.want)
		}
	}
}

func TestFmtNumberMalformed(t *testing.T) {
	// Text that is not a plain decimal is printed as it is, cleaned.
	for in, want := range map[dte.Decimal]string{"1e3": "1e3", "12,5": "12,5", " 3 ": "3", "a\nb": "a b", "": ""} {
		if got := fmtNumber(in); got != want {
			t.Errorf("fmtNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCurrencySymbol(t *testing.T) {
	for in, want := range map[string]string{"": "$", "PESO CL": "$", "DOLAR USA": "US$", "EURO": "€",
		"LIBRA EST": "£", "YEN": "¥", "DOLAR CAN": "DOLAR CAN", " FRANCO  SZ ": "FRANCO SZ"} {
		if got := currencySymbol(in); got != want {
			t.Errorf("currencySymbol(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFmtFecha(t *testing.T) {
	for in, want := range map[string]string{
		"2025-05-14": "14 de mayo de 2025", "2024-12-01": "1 de diciembre de 2024", "2003-09-08": "8 de septiembre de 2003",
		"2025-13-01": "2025-13-01", "14/05/2025": "14/05/2025", "": "",
	} {
		if got := fmtFecha(in); got != want {
			t.Errorf("fmtFecha(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fmtFechaCorta("2025-05-09"); got != "09-05-2025" {
		t.Errorf("fmtFechaCorta = %q", got)
	}
}

func TestFmtRUT(t *testing.T) {
	for in, want := range map[string]string{"76192083-9": "76.192.083-9", "60803000-K": "60.803.000-K",
		"1-9": "1-9", "12345678-5": "12.345.678-5", "12345678-0": "12345678-0", "x": "x"} {
		if got := fmtRUT(in); got != want {
			t.Errorf("fmtRUT(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCP1252(t *testing.T) {
	// Windows-1252 code points, from the code page's table.
	got := cp1252("ñÑáéíóúü°¿¡«»ºª€—\t\x01x", false)
	want := "\xf1\xd1\xe1\xe9\xed\xf3\xfa\xfc\xb0\xbf\xa1\xab\xbb\xba\xaa\x80\x97  x"
	if got != want {
		t.Errorf("cp1252 = %q, want %q", got, want)
	}
	if got := cp1252("a\nb", true); got != "a\nb" {
		t.Errorf("keepLF: %q", got)
	}
	if got := cp1252("a\nb", false); got != "a b" {
		t.Errorf("no keepLF: %q", got)
	}
	if got := cp1252("漢字 ok", false); got != "?? ok" {
		t.Errorf("outside the code page: %q", got)
	}
	if got := cp1252("\xff\xfe", false); got != "??" {
		t.Errorf("invalid UTF-8: %q", got)
	}
	s := "plain ASCII"
	if got := cp1252(s, false); got != s {
		t.Errorf("ASCII changed: %q", got)
	}
}

func TestOficina(t *testing.T) {
	for in, want := range map[string]string{"": "S.I.I. - OFICINA NO INFORMADA", "Ñuñoa": "S.I.I. - ÑUÑOA",
		"S.I.I. - Temuco": "S.I.I. - TEMUCO", "  viña del mar ": "S.I.I. - VIÑA DEL MAR"} {
		if got := oficina(in); got != want {
			t.Errorf("oficina(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTitleName(t *testing.T) {
	if got := titleName(dte.NotaCreditoElectronica); got != "Nota de crédito electrónica" {
		t.Errorf("titleName(61) = %q", got)
	}
}

// TestStampGeometry checks the stamp plan against the SII's limits for TED
// lengths from short to the longest that fits at EC level 5 (1034 bytes;
// on 80 mm paper 1029 is the most that prints with 0.254 mm modules, and
// longer TEDs are refused).
func TestStampGeometry(t *testing.T) {
	long := make([]byte, 1034)
	if _, err := planStamp(long, Termica80); !errors.Is(err, ErrDocument) {
		t.Errorf("1034 bytes on 80 mm: err = %v, want ErrDocument", err)
	}
	for _, n := range []int{200, 500, 650, 800, 900, 1000, 1029, 1034} {
		ted := make([]byte, n)
		for i := range ted {
			ted[i] = byte('A' + i%26)
		}
		for _, f := range []Format{Carta, Termica80} {
			if f == Termica80 && n > 1029 {
				continue
			}
			st, err := planStamp(ted, f)
			if err != nil {
				t.Errorf("%d bytes, %s: %v", n, f, err)
				continue
			}
			maxW, maxH := 90.0, 40.0
			if f == Termica80 {
				maxW, maxH = 72.0, 60.0
			}
			if st.w > maxW+1e-6 || st.h > maxH+1e-6 {
				t.Errorf("%d bytes, %s: %.1f × %.1f mm exceeds %g × %g", n, f, st.w, st.h, maxW, maxH)
			}
			t.Logf("%4d bytes %-5s: %2d columns × %2d rows, module %.3f mm, %.1f × %.1f mm",
				n, f, st.sym.Columns(), st.sym.Rows(), st.module, st.w, st.h)
			if f == Carta && (st.w < 50 || st.h < 20) {
				t.Errorf("%d bytes: %.1f × %.1f mm is under 2 × 5 cm", n, st.w, st.h)
			}
			if st.module < 0.2 {
				t.Errorf("%d bytes, %s: module %.3f mm", n, f, st.module)
			}
		}
	}
}

func TestAppendCenti(t *testing.T) {
	for v, want := range map[int64]string{0: "0", 7200: "72", 1234: "12.34", 50: "0.5", 5: "0.05", -5: "-0.05", -12340: "-123.4", 61200: "612"} {
		if got := string(appendCenti(nil, v)); got != want {
			t.Errorf("appendCenti(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestWrapLinear wraps and fits texts of 200,000 characters without
// spaces: both must stay linear (a quadratic cut would take minutes).
func TestWrapLinear(t *testing.T) {
	r, err := newRenderer(&dte.Document{Tipo: 33, Folio: 1, TED: []byte("x")}, Options{Resolucion: Resolucion{Fecha: "2020"}})
	if err != nil {
		t.Fatal(err)
	}
	r.setFont("", 8)
	long := text(strings.Repeat("W", 200000))
	lines := r.wrap(long+" fin", 50)
	if len(lines) < 1000 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		if r.width(l) > 50+1e-9 {
			t.Fatalf("line %d is %.1f mm wide", i, r.width(l))
		}
	}
	if got := strings.Join(func() []string {
		s := make([]string, len(lines))
		for i, l := range lines {
			s[i] = string(l)
		}
		return s
	}(), ""); strings.ReplaceAll(got, " ", "") != string(long)+"fin" {
		t.Error("wrapping lost characters")
	}
	if f := r.fit(long, 30); r.width(f) > 30+1e-9 || !strings.HasSuffix(string(f), "...") {
		t.Errorf("fit: %q", f)
	}
}
