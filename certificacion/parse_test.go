package certificacion_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
)

// isUTF8 reports whether a file is UTF-8 with some non-ASCII text.
func isUTF8(b []byte) bool {
	return utf8.Valid(b) && bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x80 })
}

// utf8ToLatin1 re-saves a UTF-8 file (of Latin-1 characters) as Latin-1.
func utf8ToLatin1(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, r := range string(b) {
		out = append(out, byte(r))
	}
	return out
}

// latin1ToUTF8 re-saves a Latin-1 file as UTF-8.
func latin1ToUTF8(b []byte) []byte {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return []byte(string(r))
}

// summary flattens a plan's cases for comparison.
func summary(p *certificacion.Plan) string {
	var b strings.Builder
	for _, s := range p.Sets {
		b.WriteString(string(s.Kind) + " " + s.Atencion + "\n")
		for _, c := range s.Cases {
			b.WriteString(c.ID + " " + c.Tipo.String() + " " + c.Razon)
			if c.Ref != nil {
				b.WriteString(" ->" + c.Ref.CaseID)
			}
			for _, it := range c.Items {
				b.WriteString(" | " + strings.TrimSpace(it.Nombre) + ";" + string(it.Cantidad) + ";" + string(it.Precio) + ";" + string(it.DescuentoPct))
			}
			b.WriteString(" G" + string(c.DescuentoGlobalPct) + "\n")
		}
	}
	return b.String()
}

// TestParseVariants reads the basic set in the forms newer downloads and
// re-saves take (sii-wave3-notes §6.2) and wants the same plan each time.
func TestParseVariants(t *testing.T) {
	orig := setFile(t, "001-basico.txt")
	base, err := certificacion.Parse(orig)
	if err != nil {
		t.Fatal(err)
	}
	want := summary(base)
	if !strings.Contains(want, "Cajón AFECTO") || !strings.Contains(want, "Pañuelo AFECTO;235;1926;4") {
		t.Fatalf("the Latin-1 accents were not read: %s", want)
	}
	header := "INDICACIONES GENERALES:\r\nSE DEBE ADJUNTAR EJEMPLAR TRIBUTARIO Y CEDIBLE.\r\n\r\nSET BASICO - NUMERO DE ATENCI\xd3N: 414175\r\n"
	sep := "\r\n" + strings.Repeat("-", 80) + "\r\n"
	variants := map[string][]byte{
		"utf8":             latin1ToUTF8(orig),
		"utf8+bom":         append([]byte("\xEF\xBB\xBF"), latin1ToUTF8(orig)...),
		"lf":               bytes.ReplaceAll(orig, []byte("\r\n"), []byte("\n")),
		"mixed-eol":        bytes.Replace(orig, []byte("\r\n"), []byte("\n"), 20),
		"one-space-caso":   bytes.ReplaceAll(orig, []byte("CASO  "), []byte("CASO ")),
		"spaces-not-tabs":  bytes.ReplaceAll(orig, []byte("\t"), []byte("    ")),
		"no-blank-lines":   bytes.ReplaceAll(bytes.ReplaceAll(orig, []byte("\r\n\r\n"), []byte("\r\n")), []byte("\r\n\r\n"), []byte("\r\n")),
		"header+separator": append(append([]byte(header), orig...), []byte(sep+"SET LIBRO DE VENTAS - NUMERO DE ATENCION: 414176\r\nCONSTRUYA EL LIBRO.\r\n")...),
		"header-utf8":      latin1ToUTF8(append([]byte(header), orig...)),
	}
	for name, data := range variants {
		p, err := certificacion.Parse(data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got := summary(p)
		if strings.HasPrefix(name, "header+") {
			want := want + "LIBRO DE VENTAS 414176\n"
			if got != want {
				t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
			}
			if len(p.Indicaciones) != 1 || p.Sets[0].Name != "SET BASICO" {
				t.Errorf("%s: preamble %q, set %q", name, p.Indicaciones, p.Sets[0].Name)
			}
			continue
		}
		if got != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestParseRefuses checks that what the parser cannot read is an error
// naming the line, never a guess.
func TestParseRefuses(t *testing.T) {
	orig := setFile(t, "001-basico.txt")
	utf8 := latin1ToUTF8(orig)
	for _, tc := range []struct {
		name string
		data []byte
		line int
		want string
	}{
		// A UTF-8 re-save that lost the accent of "Cajón" (line 7).
		{"lost accent", bytes.Replace(utf8, []byte("Cajón"), []byte("Caj\uFFFDn"), 1), 7, "U+FFFD"},
		{"unknown document", bytes.Replace(orig, []byte("DOCUMENTO\tFACTURA ELECTRONICA"), []byte("DOCUMENTO\tBOLETA DE HONORARIOS"), 1), 4, "unknown document"},
		{"bad quantity", bytes.Replace(orig, []byte("    123"), []byte("    12x"), 1), 7, "not a number"},
		{"missing column", bytes.Replace(orig, []byte("\t\t    923"), nil, 1), 7, "column"},
		{"unknown reason", bytes.Replace(orig, []byte("CORRIGE GIRO DEL RECEPTOR"), []byte("POR QUE SI"), 1), 46, "reason"},
		{"reference to a later case", bytes.Replace(orig, []byte("CORRESPONDIENTE A CASO  414175-1"), []byte("CORRESPONDIENTE A CASO  414175-8"), 1), 45, "not an earlier case"},
		{"only an unknown set", []byte("SET DE MAGIA - NUMERO DE ATENCION: 1\r\n"), 0, "no set the kit knows: SET DE MAGIA"},
		{"not a set file", []byte("hola\r\n"), 0, "no set, case or table"},
		{"empty", nil, 0, "no set"},
	} {
		_, err := certificacion.Parse(tc.data)
		var pe *certificacion.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a ParseError", tc.name, err)
			continue
		}
		if pe.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (line %d), want line %d and %q", tc.name, err, pe.Line, tc.line, tc.want)
		}
	}
}

// TestParseSets checks what the parser reads from each kind of set.
func TestParseSets(t *testing.T) {
	compras, err := certificacion.Parse(setFile(t, "003-compras.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := compras.Sets[0]
	// The table of 003-compras.txt, row by row.
	want := []certificacion.Compra{{Documento: "FACTURA", Tipo: 30, Folio: 234, MontoAfecto: 53253},
		{Documento: "FACTURA ELECTRONICA", Tipo: 33, Folio: 32, MontoExento: 10633, MontoAfecto: 11473},
		{Documento: "FACTURA", Tipo: 30, Folio: 781, MontoAfecto: 30171},
		{Documento: "NOTA DE CREDITO", Tipo: 60, Folio: 451, MontoAfecto: 2928},
		{Documento: "FACTURA ELECTRONICA", Tipo: 33, Folio: 67, MontoAfecto: 12135},
		{Documento: "FACTURA DE COMPRA ELECTRONICA", Tipo: 46, Folio: 9, MontoAfecto: 10632},
		{Documento: "NOTA DE CREDITO", Tipo: 60, Folio: 211, MontoAfecto: 9053}}
	if s.Kind != certificacion.SetLibroCompras || s.Atencion != "414177" || len(s.Compras) != len(want) || s.FactorProporcionalidad != "0.60" {
		t.Fatalf("compras: %+v", s)
	}
	for i, w := range want {
		g := s.Compras[i]
		if g.Documento != w.Documento || g.Tipo != w.Tipo || g.Folio != w.Folio || g.MontoExento != w.MontoExento || g.MontoAfecto != w.MontoAfecto || g.Observacion == "" {
			t.Errorf("row %d: %+v, want %+v", i+1, g, w)
		}
	}
	guias, err := certificacion.Parse(setFile(t, "006-libro_guias.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if g := guias.Sets[0]; g.Kind != certificacion.SetLibroGuias || len(g.GuiasFacturadas) != 1 || g.GuiasFacturadas[0] != 2 || len(g.GuiasAnuladas) != 1 || g.GuiasAnuladas[0] != 3 {
		t.Errorf("libro de guías: %+v", g)
	}
	for name, kind := range map[string]certificacion.SetKind{"002-ventas.txt": certificacion.SetLibroVentas, "004-factura_exenta.txt": certificacion.SetFacturaExenta,
		"005-guia_despacho.txt": certificacion.SetGuiaDespacho, "008-factura_compra.txt": certificacion.SetFacturaCompra,
		"009-set_exportacion_1.txt": certificacion.SetExportacion, "boleta-SetPruebaBE-reconstructed.txt": certificacion.SetBoleta} {
		p, err := certificacion.Parse(setFile(t, name))
		if err != nil || len(p.Sets) != 1 || p.Sets[0].Kind != kind {
			t.Errorf("%s: %v %+v, want one set %s", name, err, p, kind)
		}
	}
	exp, _ := certificacion.Parse(setFile(t, "010-set_exportacion_2.txt"))
	c := exp.Sets[0].Cases[1]
	if c.Items[0].DescuentoPct != "5" || c.Export.ComisionPct != "11" || len(c.Export.Referencias) != 2 || c.Export.Get("TOTAL BULTOS") != "88" {
		t.Errorf("export case 2: %+v %+v", c.Items[0], c.Export)
	}
	if r := exp.Sets[0].Cases[0].Items[0].RecargoPct; r != "10" {
		t.Errorf("export case 1: line surcharge %q, want 10", r)
	}
	if got := dte.TipoDTE(exp.Sets[0].Cases[0].Tipo); got != 110 {
		t.Errorf("export case 1: tipo %d", got)
	}
}

// variants returns the forms a set file takes in newer downloads and
// re-saves (sii-wave3-notes §6.2), each with a name: UTF-8 (with and
// without a BOM), LF only, CRLF and LF mixed, runs of spaces for the
// tabs, one space or two in "CASO  n-k", blank lines dropped, and the
// INDICACIONES GENERALES preamble with an "ATENCIÓN" header and the
// 80-dash separator before another set.
func variants(name string, orig []byte) map[string][]byte {
	latin1, utf := orig, latin1ToUTF8(orig)
	if isUTF8(orig) {
		// A file written in UTF-8 (007-boletas.csv): the same in Latin-1.
		latin1, utf = utf8ToLatin1(orig), orig
	}
	out := map[string][]byte{
		"latin1":          latin1,
		"utf8":            utf,
		"utf8+bom":        append([]byte("\xEF\xBB\xBF"), utf...),
		"lf":              bytes.ReplaceAll(orig, []byte("\r\n"), []byte("\n")),
		"crlf":            bytes.ReplaceAll(bytes.ReplaceAll(orig, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n")),
		"mixed-eol":       bytes.Replace(orig, []byte("\r\n"), []byte("\n"), 20),
		"one-space-caso":  bytes.ReplaceAll(orig, []byte("CASO  "), []byte("CASO ")),
		"two-space-caso":  regexp.MustCompile(`CASO (\d)`).ReplaceAll(orig, []byte("CASO  $1")),
		"spaces-not-tabs": bytes.ReplaceAll(orig, []byte("\t"), []byte("    ")),
		"no-blank-lines":  regexp.MustCompile(`(\r?\n)(?:[ \t]*\r?\n)+`).ReplaceAll(orig, []byte("$1")),
	}
	if h, ok := setHeaders[name]; ok {
		// The header the SII's file has, with the accent the newer
		// downloads write, after the preamble, and another set after it.
		h = strings.Replace(h, "ATENCION", "ATENCI\xd3N", 1)
		out["header+separator"] = append(append([]byte("INDICACIONES GENERALES:\r\nSE DEBE ADJUNTAR EJEMPLAR TRIBUTARIO Y CEDIBLE.\r\n\r\n"+h), orig...),
			[]byte("\r\n"+strings.Repeat("-", 80)+"\r\nSET LIBRO DE VENTAS - NUMERO DE ATENCION: 1\r\nCONSTRUYA EL LIBRO.\r\n")...)
	}
	return out
}

// TestParseVariantsEverySet reads every SII set file in every variant
// and wants the plan of the file as the SII delivered it; and a UTF-8
// re-save that lost an accent (U+FFFD) is refused naming its line, in
// every file that has accents.
func TestParseVariantsEverySet(t *testing.T) {
	for _, name := range setFiles {
		orig := setFile(t, name)
		base, err := certificacion.Parse(orig)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := summary(base)
		for v, data := range variants(name, orig) {
			p, err := certificacion.Parse(data)
			if err != nil {
				t.Errorf("%s %s: %v", name, v, err)
				continue
			}
			got := summary(p)
			if v == "header+separator" {
				got = strings.TrimSuffix(got, "LIBRO DE VENTAS 1\n")
				if len(p.Indicaciones) != 1 {
					t.Errorf("%s %s: preamble %q", name, v, p.Indicaciones)
				}
			}
			if got != want {
				t.Errorf("%s %s:\n%s\nwant\n%s", name, v, got, want)
			}
		}
		// The first accented letter of the file, lost in a re-save.
		i := -1
		for j, b := range orig {
			if b >= 0x80 {
				i = j
				break
			}
		}
		if i < 0 {
			continue // an ASCII file: nothing to lose
		}
		line := 1 + bytes.Count(orig[:i], []byte("\n"))
		lost := append(append(latin1ToUTF8(orig[:i]), "\uFFFD"...), latin1ToUTF8(orig[i+1:])...)
		if isUTF8(orig) {
			_, size := utf8.DecodeRune(orig[i:])
			lost = append(append(append([]byte(nil), orig[:i]...), "\uFFFD"...), orig[i+size:]...)
		}
		_, err = certificacion.Parse(lost)
		var pe *certificacion.ParseError
		if !errors.As(err, &pe) || pe.Line != line || !strings.Contains(err.Error(), "U+FFFD") {
			t.Errorf("%s with a lost accent on line %d: %v", name, line, err)
		}
	}
}

// FuzzParse feeds the parser mutations of the SII's files: it must never
// panic, and a plan it returns must be one Generate can rely on (every
// case typed, every note's reference resolved, no lost accent in an item
// name). The seeds are every set file in every variant, the whole set
// file, the Libro de Compras para Exentos and a re-save with a lost
// accent.
func FuzzParse(f *testing.F) {
	for _, name := range setFiles {
		for _, v := range variants(name, setFile(f, name)) {
			f.Add(v)
		}
	}
	f.Add(fullSetFile(f, fullSetFiles...))
	// The boleta spreadsheet (007-boletas.csv is among setFiles) with the
	// edges of its layout: quotes, a `;` in a name, decimal commas, CRLF.
	f.Add([]byte("Folio;IndExe;NmbItem;QtyItem;UnmdItem;PrcItem;Anular;Rebajar\r\n1;;\"a \"\"b\"\";c\";3,8;Kg;710;;40%\r\n;1;d;1;;5;;\r\n2;;e;1;;1;1;\r\n"))
	for name := range variantFiles {
		f.Add(variantFile(f, name))
	}
	f.Add([]byte(exentosSet))
	f.Add(bytes.Replace(latin1ToUTF8(setFile(f, "001-basico.txt")), []byte("Cajón"), []byte("Caj\uFFFDn"), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := certificacion.Parse(data)
		if err != nil {
			var pe *certificacion.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("not a ParseError: %v", err)
			}
			return
		}
		var boletas map[string]bool
		for _, s := range p.Sets {
			seen := map[string]bool{}
			if s.Kind == certificacion.SetBoletaNotas {
				seen = boletas // notes on the boletas of the set before
				if seen == nil {
					t.Fatalf("%s without a boleta set before it", s.Name)
				}
			}
			if s.Kind == certificacion.SetBoleta {
				boletas = seen
			}
			for _, c := range s.Cases {
				if !c.Tipo.Valid() {
					t.Fatalf("case %s: tipo %d", c.ID, c.Tipo)
				}
				if c.Ref != nil && !seen[c.Ref.CaseID] {
					t.Fatalf("case %s refers to %s, not an earlier case", c.ID, c.Ref.CaseID)
				}
				for _, it := range c.Items {
					if strings.ContainsRune(it.Nombre, '\uFFFD') {
						t.Fatalf("case %s: a lost accent accepted in %q", c.ID, it.Nombre)
					}
				}
				seen[c.ID] = true
			}
		}
	})
}

// TestParseSetNames: the set headers the file and the portal write
// (sii-wave3-notes §6.2) name their kinds; a LIQUIDACION FACTURA set is
// read, and Generate lists it as not generated (the SII material the kit
// follows does not describe its cases) while it generates the rest of the
// file.
func TestParseSetNames(t *testing.T) {
	for header, kind := range map[string]certificacion.SetKind{
		"SET BASICO DOCUMENTOS DE EXPORTACION (1)":               certificacion.SetExportacion1,
		"SET DOCUMENTOS DE EXPORTACION(2)":                       certificacion.SetExportacion2,
		"SET BASICO CASO GENERAL DE EMISOR DE FACTURA DE COMPRA": certificacion.SetFacturaCompra,
		"SET CASO GENERAL FACTURA COMPRA":                        certificacion.SetFacturaCompra,
		"SET LIBRO DE COMPRAS PARA EXENTOS":                      certificacion.SetLibroComprasExentos,
		"SET LIQUIDACION FACTURA":                                certificacion.SetLiquidacionFactura,
	} {
		p, err := certificacion.Parse([]byte(header + " - NUMERO DE ATENCI\xd3N: 7\r\nINSTRUCCIONES.\r\n"))
		if err != nil || len(p.Sets) != 1 || p.Sets[0].Kind != kind || p.Sets[0].Atencion != "7" {
			t.Errorf("%s: %v %+v, want %s", header, err, p, kind)
		}
	}
	liq := "SET LIQUIDACION FACTURA - NUMERO DE ATENCION: 9\r\n\r\nCASO 9-1\r\n==============\r\nDOCUMENTO\tLIQUIDACION FACTURA ELECTRONICA\r\n\r\n" +
		"ITEM\t\tCANTIDAD\tPRECIO UNITARIO\r\nComision venta\t\t1\t\t1000\r\n"
	plan, err := certificacion.Parse([]byte(liq))
	if err != nil || plan.Sets[0].Cases[0].Tipo != 43 {
		t.Fatalf("%v %+v", err, plan)
	}
	c := creds(t)
	_, err = certificacion.Generate(context.Background(), plan, certificacion.Config{Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c)})
	if err == nil || !strings.Contains(err.Error(), "no set the kit generates") {
		t.Errorf("a file of one liquidación-factura set: %v, want refused as nothing to generate", err)
	}
	// Beside the basic set: the basic set is generated, the liquidación
	// set listed as not generated with its line, and no 43 is emitted.
	both := append(latin1ToUTF8(setFile(t, "001-basico.txt")), []byte("\r\n"+liq)...)
	plan, err = certificacion.Parse(both)
	if err != nil {
		t.Fatal(err)
	}
	res, err := certificacion.Generate(context.Background(), plan, certificacion.Config{Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c),
		TrustedKeys: c.Keys, Now: func() time.Time { return testAt }})
	if err != nil {
		t.Fatalf("the basic set beside a liquidación-factura set: %v", err)
	}
	if len(res.Plan.Skipped) != 1 || res.Plan.Skipped[0].Name != "SET LIQUIDACION FACTURA" || res.Plan.Skipped[0].Atencion != "9" ||
		!strings.Contains(res.Plan.Skipped[0].String(), "not generated") {
		t.Errorf("skipped %+v, want the liquidación set listed as not generated", res.Plan.Skipped)
	}
	if len(res.Sets) != 1 || res.Sets[0].Set.Kind != certificacion.SetBasico {
		t.Errorf("generated %d sets, want the basic set alone", len(res.Sets))
	}
	for _, sr := range res.Sets {
		for _, d := range sr.Docs {
			if d.Case.Tipo == 43 {
				t.Errorf("case %s: a 43 was emitted", d.Case.ID)
			}
		}
	}
	if len(plan.Skipped) != 0 {
		t.Errorf("Generate changed the caller's plan: skipped %+v", plan.Skipped)
	}
}
