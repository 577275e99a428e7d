package certificacion_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/libro"
)

// variantFiles are our own set files: the content of the SII's files in
// another layout (testdata/variantes). orden-lf-utf8.txt: the preamble,
// the sets in another order (LIBRO DE VENTAS before BASICO, LIBRO DE GUIAS
// before GUIA DE DESPACHO), LF, UTF-8, "ATENCIÓN", a space before the tab
// of DOCUMENTO, REFERENCIA and MONEDA lines, FLETE (**) and a "(**)"
// footnote between rule lines after the export set. espacios-crlf-latin1:
// CRLF, ISO-8859-1, runs of spaces for every tab, a line the kit does not
// know inside a case of the basic set (line 44) and after the last case of
// the export set (line 185), and a set it does not know (line 130).
var variantFiles = map[string]struct {
	// sources are the SII files whose sets the variant holds.
	sources  []string
	warnings []int
	skipped  []int
}{
	"orden-lf-utf8.txt":        {sources: []string{"002-ventas.txt", "001-basico.txt", "006-libro_guias.txt", "005-guia_despacho.txt", "010-set_exportacion_2.txt"}},
	"espacios-crlf-latin1.txt": {sources: []string{"001-basico.txt", "002-ventas.txt", "003-compras.txt", "009-set_exportacion_1.txt"}, warnings: []int{44, 185}, skipped: []int{130}},
}

func variantFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "variantes", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// setSummary is summary for the set of kind k alone.
func setSummary(p *certificacion.Plan, k certificacion.SetKind) string {
	for _, s := range p.Sets {
		if s.Kind == k || (k == certificacion.SetExportacion && (s.Kind == certificacion.SetExportacion1 || s.Kind == certificacion.SetExportacion2)) {
			q := &certificacion.Plan{Sets: []*certificacion.Set{{Cases: s.Cases}}}
			return summary(q)
		}
	}
	return ""
}

// TestParseVariantFiles: our variants read as the SII's files do, set by
// set (same cases, items, amounts, references), the lines the kit does
// not know are warnings naming their lines, the set it does not know is
// listed as not generated, and every case generates; the folder's
// manifest.json and LEEME.md list the warnings and the set not generated.
func TestParseVariantFiles(t *testing.T) {
	t.Parallel()
	for name, v := range variantFiles {
		p, err := certificacion.Parse(variantFile(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, src := range v.sources {
			orig, err := certificacion.Parse(setFile(t, src))
			if err != nil {
				t.Fatal(err)
			}
			k := orig.Sets[0].Kind
			if got, want := setSummary(p, k), setSummary(orig, k); got != want {
				t.Errorf("%s: the set of %s reads\n%s\nwant\n%s", name, src, got, want)
			}
			if k == certificacion.SetLibroCompras && len(p.Sets[2].Compras) != 7 {
				t.Errorf("%s: the compras table has %d rows, want 7", name, len(p.Sets[2].Compras))
			}
		}
		var lines []int
		for _, w := range p.Warnings {
			lines = append(lines, w.Line)
		}
		if !equal(fmtInts(lines), fmtInts(v.warnings)) {
			t.Errorf("%s: warnings on lines %v (%v), want %v", name, lines, p.Warnings, v.warnings)
		}
		lines = nil
		for _, s := range p.Skipped {
			lines = append(lines, s.Line)
		}
		if !equal(fmtInts(lines), fmtInts(v.skipped)) {
			t.Errorf("%s: sets not generated on lines %v, want %v", name, lines, v.skipped)
		}
	}
	// The footnote of the export set is one of its notes, not a warning.
	p, _ := certificacion.Parse(variantFile(t, "orden-lf-utf8.txt"))
	if exp := p.Sets[len(p.Sets)-1]; len(exp.Notes) != 1 || !strings.HasPrefix(exp.Notes[0], "(**) VER INSTRUCCIONES") || exp.Cases[1].Export.Get("FLETE") != "3686.34" {
		t.Errorf("the export set's notes %q, FLETE %q", exp.Notes, exp.Cases[1].Export.Get("FLETE"))
	}

	res := generateOnce(t, "espacios-crlf-latin1.txt", func() []byte { return variantFile(t, "espacios-crlf-latin1.txt") })
	dir := filepath.Join(t.TempDir(), "kit")
	m, err := certificacion.WriteDir(dir, res, creds(t).Emisor)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Advertencias) != 2 || !strings.HasPrefix(m.Advertencias[0], `line 44 "ENTREGAR EN HORARIO DE OFICINA": in case 414175-4`) ||
		len(m.NoGenerados) != 1 || !strings.HasPrefix(m.NoGenerados[0], "SET BOLETA DE HONORARIOS ELECTRONICA (número de atención 414179, line 130)") {
		t.Errorf("manifest advertencias %q, no_generados %q", m.Advertencias, m.NoGenerados)
	}
	leeme, err := os.ReadFile(filepath.Join(dir, certificacion.LeemeFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(m.Advertencias, m.NoGenerados...) {
		if !bytes.Contains(leeme, []byte(want)) {
			t.Errorf("LEEME.md does not list %q", want)
		}
	}
	if n := len(m.Sets[0].Cases) + len(m.Sets[len(m.Sets)-1].Cases); n != 8+3 {
		t.Errorf("%d cases of the basic and export sets generated, want 11", n)
	}
}

// TestParseCaseData: a line of a case's own data that cannot be read
// refuses the file, naming the line and the case.
func TestParseCaseData(t *testing.T) {
	t.Parallel()
	orig := setFile(t, "001-basico.txt")
	for _, tc := range []struct {
		name   string
		data   []byte
		line   int
		caseID string
	}{
		{"quantity", bytes.Replace(orig, []byte("    123"), []byte("    12x"), 1), 7, "414175-1"},
		{"document", bytes.Replace(orig, []byte("DOCUMENTO\tFACTURA ELECTRONICA\r\n\r\nITEM\t\t\tCANTIDAD\tPRECIO UNITARIO\t\tDESCUENTO ITEM"),
			[]byte("DOCUMENTO\tFACTURA DE MAGIA\r\n\r\nITEM\t\t\tCANTIDAD\tPRECIO UNITARIO\t\tDESCUENTO ITEM"), 1), 13, "414175-2"},
	} {
		_, err := certificacion.Parse(tc.data)
		var pe *certificacion.ParseError
		if !errors.As(err, &pe) || pe.Line != tc.line || pe.Case != tc.caseID || !strings.Contains(err.Error(), "(case "+tc.caseID+")") {
			t.Errorf("%s: %v, want line %d of case %s", tc.name, err, tc.line, tc.caseID)
		}
	}
}

// TestParseWindows1252: a file re-saved on Windows, with curly quotes
// (0x93, 0x94 in Windows-1252) in a line the kit does not know, is read:
// the line is a warning with its quotes, the cases as the SII's file.
func TestParseWindows1252(t *testing.T) {
	t.Parallel()
	orig := setFile(t, "001-basico.txt")
	p, err := certificacion.Parse(append(append([]byte{}, orig...), "\r\nENTREGAR \x93SIN DEMORA\x94\r\n"...))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := certificacion.Parse(orig)
	if len(p.Warnings) != 1 || p.Warnings[0].Text != "ENTREGAR “SIN DEMORA”" || p.Warnings[0].Line != 73 || summary(p) != summary(base) {
		t.Errorf("warnings %v", p.Warnings)
	}
}

// TestParseBoletaObservacion: an OBSERVACION sentence the kit does not
// apply is a warning naming the boleta case; the sentences it knows still
// apply.
func TestParseBoletaObservacion(t *testing.T) {
	t.Parallel()
	orig := setFile(t, "boleta-SetPruebaBE-reconstructed.txt")
	i := bytes.Index(orig, []byte("OBSERVACION"))
	j := i + bytes.IndexByte(orig[i:], '"') + 1
	data := append(append(append([]byte{}, orig[:j]...), "Entregue la boleta impresa. "...), orig[j:]...)
	p, err := certificacion.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := certificacion.Parse(orig)
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Reason, "Entregue la boleta impresa") || !strings.Contains(p.Warnings[0].Reason, "in case ") || summary(p) != summary(base) {
		t.Errorf("warnings %v\n%s\nwant\n%s", p.Warnings, summary(p), summary(base))
	}
	for ci, c := range base.Sets[0].Cases {
		for ii, it := range c.Items {
			if got := p.Sets[0].Cases[ci].Items[ii]; got.Exento != it.Exento || got.Unidad != it.Unidad {
				t.Errorf("case %s item %d: exento %v unidad %q, want %v %q", c.ID, ii+1, got.Exento, got.Unidad, it.Exento, it.Unidad)
			}
		}
	}
}

// TestParseSetHeaders: the set header written without its colon, or with
// "N°" or "NRO." for NUMERO, still opens its set.
func TestParseSetHeaders(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"SET BASICO - NUMERO DE ATENCION 414175", "SET BASICO - N\xb0 DE ATENCION: 414175", "SET BASICO - NRO. DE ATENCI\xd3N: 414175", "SET BASICO-NUMERO DE ATENCION:414175"} {
		p, err := certificacion.Parse(append([]byte(h+"\r\n\r\n"), setFile(t, "001-basico.txt")...))
		if err != nil || len(p.Sets) != 1 || p.Sets[0].Kind != certificacion.SetBasico || p.Sets[0].Atencion != "414175" || len(p.Sets[0].Cases) != 8 || len(p.Warnings) != 0 {
			t.Errorf("%q: %v %+v", h, err, p)
		}
	}
}

// TestFolioLedger: a second run with the same CAFs, beside a folder that
// used folios, starts above them and says so; the simulación too; a run
// whose CAFs have no folio left above them is refused before signing.
func TestFolioLedger(t *testing.T) {
	t.Parallel()
	c := creds(t)
	root := t.TempDir()
	first := filepath.Join(root, "sets")
	if _, err := certificacion.WriteDir(first, generate(t, "001-basico.txt"), c.Emisor); err != nil {
		t.Fatal(err)
	}
	dirs, err := certificacion.FoldersBeside(filepath.Join(root, "otra"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := certificacion.FoliosUsados(c.Emisor.Rut, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	// The basic set: cases 1-4 are facturas (33 1-4), 5-7 notes de
	// crédito (61 1-3), 8 a nota de débito (56 1).
	if l.Usados[33] != 4 || l.Usados[61] != 3 || l.Usados[56] != 1 || len(l.Folders) != 1 || !strings.Contains(l.Folders[0], "tipo 33 folios 1-4") {
		t.Fatalf("ledger %+v", l)
	}
	plan, err := certificacion.Parse(setFile(t, "001-basico.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := certificacion.Config{Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c), TrustedKeys: c.Keys, Now: func() time.Time { return testAt }, FoliosUsados: l.Usados}
	again, err := certificacion.Generate(context.Background(), plan, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if f := again.Sets[0].Docs[0].Emitted.Folio; f != 5 {
		t.Errorf("the second run's first factura has folio %d, want 5", f)
	}
	m, err := certificacion.WriteDir(filepath.Join(root, "otra"), again, c.Emisor)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.FoliosSaltados) != 3 || !strings.Contains(m.FoliosSaltados[0], "tipo 33") || !strings.Contains(m.FoliosSaltados[0], "empieza en el 5") {
		t.Errorf("folios_saltados %q", m.FoliosSaltados)
	}
	sim, err := certificacion.Simulacion(context.Background(), certificacion.SimulacionConfig{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sim.Sets[0].Docs {
		if d.Emitted.Folio <= l.Usados[d.Emitted.Tipo] {
			t.Errorf("the simulación reuses tipo %d folio %d", d.Emitted.Tipo, d.Emitted.Folio)
		}
	}
	// CAFs of 1-1000 with every folio used: refused, nothing signed.
	cfg.FoliosUsados = map[dte.TipoDTE]int64{33: 999, 56: 1000, 61: 1}
	_, err = certificacion.Generate(context.Background(), plan, cfg)
	var me *certificacion.MissingCAFError
	if !errors.As(err, &me) || len(me.Missing) != 2 || me.Missing[0].Tipo != 33 || me.Missing[0].Have != 1 || me.Missing[1].Tipo != 56 || me.Missing[1].Have != 0 {
		t.Errorf("used-up CAFs: %v", err)
	}
}

// TestSetFileRUT: the SII's name of a set file carries the company's RUT.
func TestSetFileRUT(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"SIISetDePruebas761920839.txt":             "76192083-9",
		"/descargas/SIISetDePruebas76192083-9.txt": "76192083-9",
		"siisetdepruebas11111111K.TXT":             "", // a wrong check digit
		"SIISetDePruebas111111111 (1).txt":         "11111111-1",
		"set-basico.txt":                           "",
	} {
		got, ok := certificacion.SetFileRUT(name)
		if got != want || ok != (want != "") {
			t.Errorf("%s: %q %v, want %q", name, got, ok, want)
		}
	}
}

// TestReviewerReads checks the cases as the SII's reviewer reads them
// (sii-wave3-notes §6.2-§7): the export of goods carries its weights,
// tare and packages; the hotel's service the guest's passport; the Libro
// de Guías links the invoiced guía to the factura that invoices it (same
// customer, its lines, referring to it); the boleta samples print the
// boleta consultation address under the timbre, not the SII's.
func TestReviewerReads(t *testing.T) {
	t.Parallel()
	exp1 := docsByCase(t, generate(t, "009-set_exportacion_1.txt"))
	// 493307-1: CHATARRA DE ALUMINIO 377 KN, units U (tara), KN (pesos),
	// 38 PALLETS: PesoNeto = PesoBruto = 377, Tara 38.
	if raw := exp1["493307-1"].Raw; !containsAll(raw, "<Tara>38</Tara>", "<PesoBruto>377</PesoBruto>", "<PesoNeto>377</PesoNeto>", "<TotBultos>38</TotBultos>") {
		t.Errorf("export of goods without its weights, tare and packages:\n%s", raw)
	}
	exp2 := docsByCase(t, generate(t, "010-set_exportacion_2.txt"))
	if raw := exp2["493308-3"].Raw; !containsAll(raw, "<IndServicio>4</IndServicio>", "<TpoDocRef>813</TpoDocRef><FolioRef>PAS4933083</FolioRef>") {
		t.Errorf("the hotel's service without IndServicio 4 and the passport reference:\n%s", raw)
	}

	res := generateFull(t)
	docs := docsByCase(t, res)
	var factura, guia *certificacion.Doc
	for _, s := range res.Sets {
		for _, d := range s.Docs {
			switch {
			case s.Set.Kind == certificacion.SetFacturaGuias:
				factura = d
			case s.Set.Kind == certificacion.SetGuiaDespacho && d.Case.N == 2:
				guia = d
			}
		}
	}
	if factura == nil || guia == nil {
		t.Fatal("no factura of the invoiced guía, or no guía of case 2")
	}
	f, g := docs[factura.Case.ID], docs[guia.Case.ID]
	if f.Receptor.Rut != g.Receptor.Rut || len(f.Referencias) != 1 || f.Referencias[0].TipoDocRef.Tipo != 52 || f.Referencias[0].FolioRef != g.Folio ||
		f.Totales.MntTotal != g.Totales.MntTotal || len(f.Detalle) != len(g.Detalle) {
		t.Errorf("the factura of the guía: receptor %s (guía %s), references %+v, total %s (guía %s)", f.Receptor.Rut, g.Receptor.Rut, f.Referencias, f.Totales.MntTotal, g.Totales.MntTotal)
	}
	lg, err := libro.ParseGuia(libroOf(t, res, certificacion.LibroGuias))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range lg.Detalle {
		if d.Folio == g.Folio && (d.TpoDocRef != 33 || d.FolioDocRef != f.Folio) {
			t.Errorf("the Libro de Guías links guía %d to %d F%d, want the factura that invoices it, 33 F%d", g.Folio, d.TpoDocRef, d.FolioDocRef, f.Folio)
		}
	}

	samples, err := res.Samples(creds(t).Emisor)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	n := 0
	for _, s := range samples {
		if !s.Doc.Emitted.Tipo.IsBoleta() && s.Doc.Emitted.Tipo != 33 {
			continue
		}
		p := filepath.Join(dir, s.Name)
		if err := os.WriteFile(p, s.PDF, 0o600); err != nil {
			t.Fatal(err)
		}
		text := string(oracle.Run(t, "pdftotext", "-layout", p, "-"))
		boleta := s.Doc.Emitted.Tipo.IsBoleta()
		if boleta {
			n++
		}
		if got := strings.Contains(text, "Verifique documento: "+testURLBoletas); got != boleta || strings.Contains(text, "www.sii.cl") == boleta {
			t.Errorf("%s: the consultation address under the timbre:\n%s", s.Name, text)
		}
	}
	if n != 5 {
		t.Errorf("%d boleta samples, want 5", n)
	}
}
