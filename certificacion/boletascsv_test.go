package certificacion_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
)

// TestParseBoletasCSV reads 007-boletas.csv, the spreadsheet of the
// pre-2020 boleta set, into the boleta set and its credit notes, every
// figure counted by hand from the file: 10 boletas with 2, 1, 2, 3, 1, 2, 1,
// 2, 5 and 1 items (20), three of them exempt (items 2 and 3 of boleta 4,
// item 2 of boleta 6); Anular on boletas 1, 3 and 5, Rebajar 40 on boletas 7
// (40 % of 5 = 2) and 10 (40 % of 3.8 = 1.52 Kg).
func TestParseBoletasCSV(t *testing.T) {
	t.Parallel()
	p, err := certificacion.Parse(setFile(t, "007-boletas.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sets) != 2 || p.Sets[0].Kind != certificacion.SetBoleta || p.Sets[1].Kind != certificacion.SetBoletaNotas {
		t.Fatalf("sets %+v, want the boleta set and its notes", p.Sets)
	}
	if len(p.Warnings) != 1 || p.Warnings[0].Line != 1 || !strings.Contains(p.Warnings[0].Reason, "transcription") {
		t.Errorf("warnings %v, want one saying the file is a transcription", p.Warnings)
	}
	bol := p.Sets[0].Cases
	wantItems := []int{2, 1, 2, 3, 1, 2, 1, 2, 5, 1}
	if len(bol) != len(wantItems) {
		t.Fatalf("%d boletas, want 10", len(bol))
	}
	items, exentos := 0, 0
	for i, c := range bol {
		if c.Tipo != dte.BoletaElectronica || c.ID != string(rune('1'+i)) && !(i == 9 && c.ID == "10") || len(c.Items) != wantItems[i] {
			t.Errorf("boleta %d: id %s tipo %d, %d items; want %d items", i+1, c.ID, c.Tipo, len(c.Items), wantItems[i])
		}
		for _, it := range c.Items {
			items++
			if it.Exento {
				exentos++
			}
		}
	}
	if items != 20 || exentos != 3 {
		t.Errorf("%d items, %d exempt; want 20 and 3", items, exentos)
	}
	if it := bol[3].Items; !(!it[0].Exento && it[1].Exento && it[2].Exento) || !bol[5].Items[1].Exento {
		t.Errorf("exempt items of boletas 4 and 6 wrong")
	}
	// The quoted name (a doubled quote inside), a decimal quantity, a unit.
	if it := bol[9].Items[0]; it.Nombre != `Clavo Galvanizado 3/4"` || it.Cantidad != "3.8" || it.Unidad != "Kg" || it.Precio != "710" || it.Line != 21 {
		t.Errorf("boleta 10: %+v", it)
	}
	if it := bol[1].Items[0]; it.Nombre != "pizza española el italiano" || it.Cantidad != "29" || it.Precio != "2990" {
		t.Errorf("boleta 2: %+v", it)
	}
	type nota struct {
		id, ref, razon string
		cod            int
		items          string // name;qty;unit
	}
	want := []nota{
		{"NC-1", "1", "ANULA BOLETA", 1, ""},
		{"NC-3", "3", "ANULA BOLETA", 1, ""},
		{"NC-5", "5", "ANULA BOLETA", 1, ""},
		{"NC-7", "7", "SE REBAJA EN UN 40%", 3, "goma de borrar school;2;"},
		{"NC-10", "10", "SE REBAJA EN UN 40%", 3, `Clavo Galvanizado 3/4";1.52;Kg`},
	}
	notas := p.Sets[1].Cases
	if len(notas) != len(want) {
		t.Fatalf("%d notes, want %d", len(notas), len(want))
	}
	for i, w := range want {
		c := notas[i]
		var its []string
		for _, it := range c.Items {
			its = append(its, string(it.Nombre)+";"+string(it.Cantidad)+";"+it.Unidad)
		}
		if c.ID != w.id || c.Tipo != 61 || c.Ref == nil || c.Ref.CaseID != w.ref || c.Razon != w.razon || c.CodRef != w.cod || strings.Join(its, "|") != w.items {
			t.Errorf("note %d: %s tipo %d ref %+v %q cod %d items %q; want %+v", i+1, c.ID, c.Tipo, c.Ref, c.Razon, c.CodRef, its, w)
		}
	}
}

// TestGenerarBoletasCSV: the notes on the boletas of 007-boletas.csv carry
// each taxable line at its net amount (its quantity and price with IVA
// described), go to an identified receptor in their own EnvioDTE, and the
// folder's manifest and LEEME-BOLETAS.md say the file is a transcription.
// (Their totals are in goldenTotals, their references in referenceCases;
// the oracles check every XML in TestOracleEverything.)
func TestGenerarBoletasCSV(t *testing.T) {
	t.Parallel()
	res := generate(t, "007-boletas.csv")
	docs := docsByCase(t, res)
	type line struct {
		nombre, dsc, qty, prc string
		exe                   bool
	}
	want := map[string][]line{
		// 2040 / 1.19 = 1714.29 → 1714; 21000 / 1.19 = 17647.06 → 17647.
		"NC-1": {{"koyak el chupete", "12 x $170 IVA incluido", "1", "1714", false}, {"cuaderno pre U", "20 x $1050 IVA incluido", "1", "17647", false}},
		// 1.52 × 710 = 1079.2; / 1.19 = 906.89 → 907.
		"NC-10": {{`Clavo Galvanizado 3/4"`, "1.52 Kg x $710 IVA incluido", "1", "907", false}},
	}
	for id, lines := range want {
		d := docs[id]
		if d == nil || len(d.Detalle) != len(lines) {
			t.Fatalf("%s: %+v", id, d)
		}
		for i, w := range lines {
			l := d.Detalle[i]
			if l.Nombre != w.nombre || l.Descripcion != w.dsc || string(l.Cantidad) != w.qty || string(l.Precio) != w.prc || (l.IndExe == 1) != w.exe {
				t.Errorf("%s line %d: %+v; want %+v", id, i+1, l, w)
			}
		}
		if d.Receptor.Rut == "66666666-6" || d.Receptor.Rut == "" {
			t.Errorf("%s: receptor %q, want an identified one", id, d.Receptor.Rut)
		}
	}
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, res, creds(t).Emisor); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, certificacion.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m certificacion.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Advertencias) != 1 || !strings.Contains(m.Advertencias[0], "transcription") {
		t.Errorf("advertencias %q", m.Advertencias)
	}
	envelopes := map[string]string{}
	for _, s := range m.Sets {
		envelopes[s.Kind] = s.Envelope
	}
	if !strings.Contains(envelopes[string(certificacion.SetBoleta)], "EnvioBOLETA") || !strings.Contains(envelopes[string(certificacion.SetBoletaNotas)], "EnvioDTE") {
		t.Errorf("envelopes %v: the boletas in an EnvioBOLETA, the notes in an EnvioDTE", envelopes)
	}
	env, err := os.ReadFile(filepath.Join(dir, envelopes[string(certificacion.SetBoletaNotas)]))
	if err != nil || !strings.Contains(string(env), "<EnvioDTE ") || strings.Count(string(env), "<TipoDTE>61</TipoDTE>") != 5 {
		t.Errorf("the notes' envelope is not an EnvioDTE of 5 notes (%v)", err)
	}
	guide, err := os.ReadFile(filepath.Join(dir, certificacion.LeemeBoletasFile))
	if err != nil || !strings.Contains(string(guide), "007-boletas.csv") || !strings.Contains(string(guide), "no para certificar") ||
		!strings.Contains(string(guide), "ya tiene sus 10 boletas") || !strings.Contains(string(guide), "02-EnvioDTE-NOTAS_DE_CREDITO_DE_BOLETAS.xml`: 5 notas") {
		t.Errorf("LEEME-BOLETAS.md does not say the file is a transcription (%v)", err)
	}
	leeme, err := os.ReadFile(filepath.Join(dir, certificacion.LeemeFile))
	if err != nil || !strings.Contains(string(leeme), "examples/029-set_boleta.php") {
		t.Errorf("LEEME.md does not record the reading of Anular and Rebajar (%v)", err)
	}
}

// TestParseBoletasCSVHostile: the layout is outside input. A row of a
// boleta that cannot be read is refused naming its line and the boleta;
// rows outside every boleta are warnings; bounds hold.
func TestParseBoletasCSVHostile(t *testing.T) {
	t.Parallel()
	const head = "Folio;IndExe;NmbItem;QtyItem;UnmdItem;PrcItem;Anular;Rebajar\n"
	refused := []struct {
		name, body string
		line       int
		kase, why  string
	}{
		{"open quote", "1;;\"pan;2;;100;;\n", 2, "", "field"},
		{"open quote in an item row", "1;;pan;2;;100;;\n;;\"te;1;;50;;\n", 3, "1", "field"},
		{"too few fields", "1;;pan;2;;100;;\n;;te;1;;50\n", 3, "1", "8"},
		{"too many fields", "1;;pan;2;;100;;;;\n", 2, "", "8"},
		{"quantity", "1;;pan;dos;;100;;\n", 2, "1", "QtyItem"},
		{"negative price", "1;;pan;2;;-100;;\n", 2, "1", "PrcItem"},
		{"folio", "uno;;pan;2;;100;;\n", 2, "", "Folio"},
		{"folio zero", "0;;pan;2;;100;;\n", 2, "", "Folio"},
		{"duplicate folio", "1;;pan;2;;100;;\n1;;te;1;;50;;\n", 3, "1", "second boleta"},
		{"IndExe", "1;x;pan;2;;100;;\n", 2, "1", "IndExe"},
		{"Anular", "1;;pan;2;;100;2;\n", 2, "1", "Anular"},
		{"Rebajar over 100", "1;;pan;2;;100;;150\n", 2, "1", "Rebajar"},
		{"Rebajar text", "1;;pan;2;;100;;mucho\n", 2, "1", "Rebajar"},
		{"Rebajar and Anular", "1;;pan;2;;100;1;40\n", 2, "1", "annuls"},
		{"Rebajar on one of two items of a name", "1;;pan;2;;100;;\n;;pan;1;;90;;50\n", 3, "1", "two items"},
		{"Rebajar to nothing", "1;;pan;0.000001;;100;;1\n", 2, "1", "0.000001"},
		{"empty name", "1;;;2;;100;;\n", 2, "1", "NmbItem"},
		{"long name", "1;;" + strings.Repeat("a", 81) + ";2;;100;;\n", 2, "1", "80"},
		{"long unit", "1;;pan;2;Kilos;100;;\n", 2, "1", "UnmdItem"},
		{"lost accent", "1;;caf\uFFFD;2;;100;;\n", 2, "1", "U+FFFD"},
	}
	for _, c := range refused {
		_, err := certificacion.Parse([]byte(head + c.body))
		var pe *certificacion.ParseError
		if !errors.As(err, &pe) || pe.Line != c.line || pe.Case != c.kase || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v; want line %d, case %q, %q", c.name, err, c.line, c.kase, c.why)
		}
	}
	// Rows outside every boleta are left aside with a warning; blank and
	// empty rows are nothing; a decimal comma, a quoted `;` and "40%" read.
	p, err := certificacion.Parse([]byte(head + "\n;;;;;;;\nnotas de la planilla\n;;huérfano;1;;10;;\n1;;\"pan; grande\";\"2,5\";Kg;100;;40%\n;1;te;1;;50;;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 3 || p.Warnings[1].Line != 4 || p.Warnings[2].Line != 5 {
		t.Errorf("warnings %v, want the transcription's and lines 4 and 5", p.Warnings)
	}
	b := p.Sets[0].Cases[0]
	if len(b.Items) != 2 || b.Items[0].Nombre != "pan; grande" || b.Items[0].Cantidad != "2.5" || !b.Items[1].Exento {
		t.Errorf("boleta %+v", b.Items)
	}
	if n := p.Sets[1].Cases[0]; n.Razon != "SE REBAJA EN UN 40%" || n.Items[0].Cantidad != "1" || n.Items[0].Nombre != "pan; grande" {
		t.Errorf("note %+v %+v", n, n.Items[0])
	}
	// A header alone is not a set.
	if _, err := certificacion.Parse([]byte(head)); err == nil || !strings.Contains(err.Error(), "without boletas") {
		t.Errorf("header alone: %v", err)
	}
	// More boletas than a set holds.
	var big strings.Builder
	big.WriteString(head)
	for i := 1; i <= 501; i++ {
		big.WriteString(strconv.Itoa(i) + ";;pan;1;;1;;\n")
	}
	if _, err := certificacion.Parse([]byte(big.String())); err == nil || !strings.Contains(err.Error(), "more than 500") {
		t.Errorf("501 boletas: %v", err)
	}
}
