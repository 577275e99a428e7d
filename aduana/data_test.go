package aduana

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// TestEmbeddedTablesAreTheSharedOnes compares every embedded table, byte
// for byte, with its copy in ../shared/sii/aduana, and the two lists of
// files: an update of the shared data fails here until the copy in
// data/ follows it.
func TestEmbeddedTablesAreTheSharedOnes(t *testing.T) {
	dir := filepath.Dir(oracle.SharedFile(t, "sii", "aduana", "README.md"))
	shared, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := fs.Glob(files, "data/*.csv")
	if err != nil {
		t.Fatal(err)
	}
	names := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			out = append(out, filepath.Base(p))
		}
		slices.Sort(out)
		return out
	}
	if s, e := names(shared), names(embedded); !slices.Equal(s, e) {
		t.Fatalf("shared tables %q, embedded %q", s, e)
	}
	for _, p := range shared {
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := files.ReadFile("data/" + filepath.Base(p))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("data/%s differs from %s: copy the shared file again", filepath.Base(p), p)
		}
		if !bytes.HasPrefix(got, []byte("# sources: ")) {
			t.Errorf("data/%s lost its source line", filepath.Base(p))
		}
	}
}

// TestTablesRead reads every table and counts its rows against the README
// of the shared data ("rows" column), and checks that every row has the
// name or short name the lookups return.
func TestTablesRead(t *testing.T) {
	for _, c := range []struct {
		file  string
		table func() map[int]entry
		rows  int
	}{
		{"aduana_paises.csv", paises, 259},
		{"aduana_puertos.csv", puertos, 362},
		{"aduana_vias_transporte.csv", vias, 9},
		{"aduana_modalidades_venta.csv", modalidad, 5},
		{"aduana_clausulas_venta.csv", clausulas, 14},
		{"aduana_formas_pago_exportacion.csv", formasPago, 9},
		{"aduana_unidades_medida.csv", unidades, 23},
		{"aduana_tipos_bulto.csv", bultos, 68},
	} {
		tab := c.table()
		if len(tab) != c.rows {
			t.Errorf("%s: %d rows, the README says %d", c.file, len(tab), c.rows)
		}
		for code, e := range tab {
			if e.sigla == "" && e.name == "" {
				t.Errorf("%s: code %d has no name", c.file, code)
			}
		}
	}
	// 63 currencies, of which 40 carry one of the schema's 40 names.
	b, err := files.ReadFile("data/aduana_monedas.csv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := readTable(b, nil, func(int, []string) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 63 {
		t.Errorf("aduana_monedas.csv: %d rows, the README says 63", n)
	}
	if m := monedas(); len(m) != 40 {
		t.Errorf("%d currencies with a schema name, want the schema's 40", len(m))
	}
}

// TestMonedasAreTheSchemaNames compares the currency names the table pairs
// with codes with the enumeration of TipMonType in the SII's
// SiiTypes_v10.xsd: the names a DTE's TpoMoneda may carry.
func TestMonedasAreTheSchemaNames(t *testing.T) {
	xsd, err := os.ReadFile(oracle.SharedFile(t, "sii", "schemas", "SiiTypes_v10.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(xsd, []byte(`<xs:simpleType name="TipMonType">`))
	body, _, ok2 := bytes.Cut(after, []byte("</xs:simpleType>"))
	if !ok || !ok2 {
		t.Fatal("SiiTypes_v10.xsd has no TipMonType")
	}
	var want []string
	for _, m := range regexp.MustCompile(`<xs:enumeration value="([^"]*)"`).FindAllSubmatch(body, -1) {
		want = append(want, string(m[1]))
	}
	var got []string
	for name := range monedas() {
		got = append(got, name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) != 40 || !slices.Equal(got, want) {
		t.Errorf("currency names %q, the schema's TipMonType %q", got, want)
	}
}

// TestReadTableRefuses: a table that does not read is reported with its
// line, so that a bad copy of the data breaks the tests, not a rendering.
func TestReadTableRefuses(t *testing.T) {
	for _, c := range []struct {
		name, csv, want string
	}{
		{"no code column", "id,name\n1,A\n", "no code column"},
		{"no such column", "code,name\n1,A\n", "no sigla column"},
		{"code not a number", "# src\ncode,sigla\n1,A\nX,B\n", "line 4"},
		{"code zero", "code,sigla\n0,A\n", "not a positive number"},
		{"short row", "code,sigla\n1\n", "wrong number of fields"},
		{"empty", "", "header"},
	} {
		err := readTable([]byte(c.csv), []string{"sigla"}, func(int, []string) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}
