package sii

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dtekit/dtekit/dte"
)

// latin1 encodes s (only characters below U+0100) as ISO-8859-1 bytes,
// as the SII writes its file.
func latin1(t testing.TB, s string) []byte {
	t.Helper()
	var b []byte
	for _, r := range s {
		if r > 0xff {
			t.Fatalf("%q is not ISO-8859-1", r)
		}
		b = append(b, byte(r))
	}
	return b
}

const contribuyentesHeader = "RUT;RAZON SOCIAL;NUMERO RESOLUCION;FECHA RESOLUCION;MAIL INTERCAMBIO;URL"

// readAll reads a list and returns its companies.
func readAll(t *testing.T, data []byte, lim ContribuyentesLimits) ([]Contribuyente, *ContribuyentesReport, error) {
	t.Helper()
	var out []Contribuyente
	rep, err := ReadContribuyentes(bytes.NewReader(data), lim, func(c Contribuyente) error { out = append(out, c); return nil })
	return out, rep, err
}

// TestReadContribuyentes reads a list shaped as the SII's (ISO-8859-1,
// CRLF, the header, a date with a trailing space, an empty address), with
// every line the reader must skip or read in part; each expected value is
// written by hand from the lines.
func TestReadContribuyentes(t *testing.T) {
	t.Parallel()
	lines := []string{
		contribuyentesHeader, // 1
		"76543210-3;ÑANDÚ Y ARAÑA LIMITADA;80;22-08-2014 ;dte@ñandu.cl;",                  // 2: the address is not ASCII but valid
		"11111111-1;SIN CASILLA LTDA;42;01-01-2020 ;;",                                    // 3
		"12.345.678-5;PUNTOS SPA;0;05-03-2019;facturas@puntos.cl;http://puntos.cl",        // 4: dots accepted
		"76543210-4;DÍGITO MALO;1;01-01-2020;a@b.cl;",                                     // 5: bad check digit
		"no es rut;X;1;01-01-2020;a@b.cl;",                                                // 6
		"",                                                                                // 7: blank
		"77777777-7;CASA; SUCURSAL;7;31-12-2021;intercambio@casa.cl;",                     // 8: a ";" in the name
		"8888888-K;FECHA RARA;abc;2021/12/31;no es correo;",                               // 9: three fields unreadable
		"9999999-3;CONTROL\x01;1;01-01-2020;a@b.cl;",                                      // 10: a control character
		"5126663-3;ÚLTIMA SIN FIN DE LÍNEA;3;15-06-2015;Recepcion@Ultima.CL;https://u.cl", // 11
	}
	data := append([]byte("\xef\xbb\xbf"), latin1(t, strings.Join(lines, "\r\n"))...)
	// The BOM is UTF-8 and the rest ISO-8859-1: each line is decoded on
	// its own.
	got, rep, err := readAll(t, data, ContribuyentesLimits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Contribuyente{
		{Line: 2, Rut: dte.MustParseRUT("76543210-3"), RazonSocial: "ÑANDÚ Y ARAÑA LIMITADA", NumeroResolucion: 80, FechaResolucion: "2014-08-22", Correo: "dte@ñandu.cl"},
		{Line: 3, Rut: dte.MustParseRUT("11111111-1"), RazonSocial: "SIN CASILLA LTDA", NumeroResolucion: 42, FechaResolucion: "2020-01-01"},
		{Line: 4, Rut: dte.MustParseRUT("12345678-5"), RazonSocial: "PUNTOS SPA", FechaResolucion: "2019-03-05", Correo: "facturas@puntos.cl", URL: "http://puntos.cl"},
		{Line: 8, Rut: dte.MustParseRUT("77777777-7"), RazonSocial: "CASA; SUCURSAL", NumeroResolucion: 7, FechaResolucion: "2021-12-31", Correo: "intercambio@casa.cl"},
		{Line: 9, Rut: dte.MustParseRUT("8888888-K"), RazonSocial: "FECHA RARA"},
		{Line: 11, Rut: dte.MustParseRUT("5126663-3"), RazonSocial: "ÚLTIMA SIN FIN DE LÍNEA", NumeroResolucion: 3, FechaResolucion: "2015-06-15", Correo: "Recepcion@Ultima.CL", URL: "https://u.cl"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d companies, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("company %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	wantWarn := []int{5, 6, 9, 9, 9, 10}
	if rep.WarningCount != len(wantWarn) || len(rep.Warnings) != len(wantWarn) {
		t.Fatalf("warnings %v, want lines %v", rep.Warnings, wantWarn)
	}
	for i, l := range wantWarn {
		if rep.Warnings[i].Line != l {
			t.Errorf("warning %d on line %d (%s), want line %d", i, rep.Warnings[i].Line, rep.Warnings[i].Message, l)
		}
	}
	for _, w := range []string{`RUT "76543210-4"`, `RUT "no es rut"`, "NUMERO RESOLUCION", "FECHA RESOLUCION", "MAIL INTERCAMBIO", "control"} {
		found := false
		for _, x := range rep.Warnings {
			found = found || strings.Contains(x.Message, w)
		}
		if !found {
			t.Errorf("no warning mentions %s: %v", w, rep.Warnings)
		}
	}
	if rep.Lines != 11 || rep.Rows != 6 {
		t.Errorf("report: %d lines, %d rows; want 11, 6", rep.Lines, rep.Rows)
	}

	// A file saved again as UTF-8 (LF endings) reads the same.
	got2, _, err := readAll(t, []byte(strings.Join(lines[:4], "\n")+"\n"), ContribuyentesLimits{})
	if err != nil || len(got2) != 3 || got2[0] != want[0] {
		t.Errorf("the UTF-8 file: %+v, %v", got2, err)
	}
}

// TestReadContribuyentesRefuses: what is not the list, or exceeds a bound,
// is refused whole, naming the line.
func TestReadContribuyentesRefuses(t *testing.T) {
	t.Parallel()
	row := "76543210-3;EJEMPLO;1;01-01-2020;a@b.cl;"
	cases := []struct {
		name, data string
		lim        ContribuyentesLimits
		want       string
	}{
		{"empty", "", ContribuyentesLimits{}, "empty"},
		{"no header", row + "\n" + row, ContribuyentesLimits{}, "line 1:"},
		{"header without the address", "RUT;RAZON SOCIAL\n" + row, ContribuyentesLimits{}, "line 1:"},
		{"a long line", contribuyentesHeader + "\n" + row + "\n" + strings.Repeat("x", 5000) + "\n", ContribuyentesLimits{}, "line 3: longer than 4096 bytes"},
		{"a long line with no end", contribuyentesHeader + "\n" + strings.Repeat("x", 100<<10), ContribuyentesLimits{}, "line 2: longer"},
		{"too many bytes", contribuyentesHeader + "\n" + strings.Repeat(row+"\n", 100), ContribuyentesLimits{MaxBytes: 1000}, "larger than 1000 bytes"},
		{"too many rows", contribuyentesHeader + "\n" + strings.Repeat(row+"\n", 4), ContribuyentesLimits{MaxRows: 3}, "line 5: more than 3"},
	}
	for _, c := range cases {
		_, _, err := readAll(t, []byte(c.data), c.lim)
		if !errors.Is(err, ErrNotContribuyentes) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrNotContribuyentes with %q", c.name, err, c.want)
		}
	}
	// The caller's error stops the read.
	stop := errors.New("stop")
	_, err := ReadContribuyentes(strings.NewReader(contribuyentesHeader+"\n"+row+"\n"+row), ContribuyentesLimits{},
		func(Contribuyente) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("the caller's error: %v", err)
	}
	// Warnings past MaxWarnings are counted, not kept.
	_, rep, err := readAll(t, []byte(contribuyentesHeader+"\n"+strings.Repeat("x;;;;;\n", 10)), ContribuyentesLimits{MaxWarnings: 3})
	if err != nil || rep.WarningCount != 10 || len(rep.Warnings) != 3 {
		t.Errorf("warnings over the bound: %d counted, %d kept (%v)", rep.WarningCount, len(rep.Warnings), err)
	}
}

// FuzzReadContribuyentes: whatever the bytes, no panic, the bounds hold,
// and every company handed out has a valid RUT, valid UTF-8 text within
// its bounds and an address the service would take.
func FuzzReadContribuyentes(f *testing.F) {
	f.Add([]byte(contribuyentesHeader + "\r\n76543210-3;EJEMPLO;80;22-08-2014 ;dte@e.cl;\r\n"))
	f.Add([]byte(contribuyentesHeader + "\n77777777-7;A;B;C;7;31-12-2021;x@y.cl;u\n\xd1\xd1;;;;;\n"))
	f.Add([]byte("URL;MAIL INTERCAMBIO;RUT\nhttp://x;a@b.cl;11111111-1\n;;\n"))
	f.Add([]byte("\xef\xbb\xbf" + contribuyentesHeader + "\n\x00;\x01;;;;\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := ContribuyentesLimits{MaxBytes: 1 << 16, MaxLine: 256, MaxRows: 50, MaxWarnings: 5}
		n := 0
		rep, err := ReadContribuyentes(bytes.NewReader(data), lim, func(c Contribuyente) error {
			n++
			if r, err := dte.ParseRUT(c.Rut.String()); err != nil || r != c.Rut {
				t.Fatalf("line %d: RUT %v does not read back: %v", c.Line, c.Rut, err)
			}
			for _, s := range []string{c.RazonSocial, c.FechaResolucion, c.Correo, c.URL} {
				if !utf8.ValidString(s) || len(s) > 500 {
					t.Fatalf("line %d: field %q", c.Line, s)
				}
			}
			if c.Correo != "" {
				if _, ok := mailAddress(c.Correo); !ok {
					t.Fatalf("line %d: address %q", c.Line, c.Correo)
				}
			}
			if c.Line < 2 {
				t.Fatalf("a company on line %d", c.Line)
			}
			return nil
		})
		if rep == nil {
			t.Fatal("no report")
		}
		if n > lim.MaxRows || rep.Rows != n || len(rep.Warnings) > lim.MaxWarnings || rep.WarningCount < len(rep.Warnings) {
			t.Fatalf("bounds: %d rows handed, report %+v", n, rep)
		}
		if err != nil && !errors.Is(err, ErrNotContribuyentes) {
			t.Fatalf("error %v is not ErrNotContribuyentes", err)
		}
	})
}
