package intercambio_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// plain writes a glosa of the notes as the schema does: without accents,
// with a hyphen for the dash.
var plain = strings.NewReplacer("í", "i", "–", "-", "—", "-")

// TestCodeTablesMatchTheNotes: the three tables hold exactly the codes of
// sii-wave3-notes.md §1.2 (the EstadoRecepEnv and EstadoRecepDTE tables,
// and the EstadoDTE row of the ResultadoDTE table) with the same glosas.
func TestCodeTablesMatchTheNotes(t *testing.T) {
	notes, err := os.ReadFile(oracle.SharedFile(t, "docs", "sii-wave3-notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(notes)
	section = section[strings.Index(section, "### 1.2 "):strings.Index(section, "### 1.3 ")]
	// table returns the "| code | meaning |" rows after the line heading.
	table := func(heading string) map[int]string {
		i := strings.Index(section, heading)
		if i < 0 {
			t.Fatalf("no %q in §1.2", heading)
		}
		rows := map[int]string{}
		for _, line := range strings.Split(section[i:], "\n")[1:] {
			m := regexp.MustCompile(`^\| (\d+) \| (.+) \|$`).FindStringSubmatch(line)
			if m == nil {
				if len(rows) > 0 {
					break
				}
				continue
			}
			n, _ := strconv.Atoi(m[1])
			rows[n] = plain.Replace(m[2])
		}
		return rows
	}
	estadoDTE := map[int]string{}
	row := regexp.MustCompile("(?m)^\\| 8 \\| `EstadoDTE` \\| (.*) \\|$").FindStringSubmatch(section)
	if row == nil {
		t.Fatal("no EstadoDTE row in the ResultadoDTE table")
	}
	for _, m := range regexp.MustCompile(`(\d) = ([^;]+)`).FindAllStringSubmatch(row[1], -1) {
		n, _ := strconv.Atoi(m[1])
		estadoDTE[n] = strings.TrimSpace(m[2])
	}
	for _, tc := range []struct {
		name  string
		notes map[int]string
		table []intercambio.Code
	}{
		{"EstadoRecepEnv", table("EstadoRecepEnv codes"), intercambio.EstadosRecepEnv()},
		{"EstadoRecepDTE", table("EstadoRecepDTE codes"), intercambio.EstadosRecepDTE()},
		{"EstadoDTE", estadoDTE, intercambio.EstadosDTE()},
	} {
		if len(tc.notes) != len(tc.table) || len(tc.notes) < 3 {
			t.Errorf("%s: %d codes in the notes, %d in the table", tc.name, len(tc.notes), len(tc.table))
		}
		for _, c := range tc.table {
			if got, ok := tc.notes[c.Value]; !ok || got != c.Glosa {
				t.Errorf("%s %d: glosa %q, the notes say %q", tc.name, c.Value, c.Glosa, got)
			}
			if c.Meaning == "" || c.Texto == "" {
				t.Errorf("%s %d has no meaning or text", tc.name, c.Value)
			}
		}
	}
	// The manual's words for EstadoDTEGlosa (§1.2, row 9).
	for _, c := range intercambio.EstadosDTE() {
		if !strings.Contains(section, `"`+c.Texto+`"`) {
			t.Errorf("EstadoDTE %d: text %q is not one the notes give", c.Value, c.Texto)
		}
	}
}

// TestCodeTablesMatchTheSchema: each table is the enumeration of its
// element in RespuestaEnvioDTE_v10.xsd, glosa for documentation.
func TestCodeTablesMatchTheSchema(t *testing.T) {
	raw, err := os.ReadFile(oracle.SharedFile(t, "sii", "schemas", "RespuestaEnvioDTE_v10.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	xsd := xmlflat.Latin1ToString(raw)
	enum := regexp.MustCompile(`(?s)<xs:enumeration value="(\d+)">\s*<xs:annotation>\s*<xs:documentation>([^<]*)</xs:documentation>`)
	for _, tc := range []struct {
		element string
		table   []intercambio.Code
	}{
		{"EstadoRecepEnv", intercambio.EstadosRecepEnv()},
		{"EstadoRecepDTE", intercambio.EstadosRecepDTE()},
		{"EstadoDTE", intercambio.EstadosDTE()},
	} {
		start := strings.Index(xsd, `<xs:element name="`+tc.element+`">`)
		if start < 0 {
			t.Fatalf("no element %s in the schema", tc.element)
		}
		body := xsd[start : start+strings.Index(xsd[start:], "</xs:element>")]
		found := enum.FindAllStringSubmatch(body, -1)
		if len(found) != len(tc.table) {
			t.Errorf("%s: %d values in the schema, %d in the table", tc.element, len(found), len(tc.table))
		}
		for i, m := range found {
			if i < len(tc.table) && (strconv.Itoa(tc.table[i].Value) != m[1] || tc.table[i].Glosa != m[2]) {
				t.Errorf("%s: the schema has %s %q, the table %d %q", tc.element, m[1], m[2], tc.table[i].Value, tc.table[i].Glosa)
			}
		}
	}
}

// TestCodeMethods: the typed codes read the same tables.
func TestCodeMethods(t *testing.T) {
	if intercambio.EnvioRUTReceptorNoCorresponde.String() != "3 (Envio Rechazado - RUT Receptor No Corresponde)" ||
		intercambio.DTERepetido.Glosa() != "DTE No Recibido - DTE Repetido" ||
		intercambio.DTERechazado.Glosa() != "DTE Rechazado" {
		t.Error("glosas")
	}
	if intercambio.EstadoRecepEnv(4).Valid() || intercambio.EstadoRecepDTE(5).Valid() || intercambio.EstadoDTE(3).Valid() ||
		!intercambio.EnvioOtros.Valid() || intercambio.EstadoDTE(3).String() != "3 (not a code of the SII)" {
		t.Error("validity")
	}
	// The tables handed out are copies.
	intercambio.EstadosDTE()[0].Glosa = "x"
	if intercambio.DTEAceptadoOK.Glosa() != "DTE Aceptado OK" {
		t.Error("a caller changed the table")
	}
}
