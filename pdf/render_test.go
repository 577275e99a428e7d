package pdf_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/pdf"
)

// copyDoc returns a shallow copy of a sample's document, safe to modify
// at the top level.
func copyDoc(d *dte.Document) *dte.Document {
	c := *d
	return &c
}

func TestRenderErrors(t *testing.T) {
	ss := samples(t)
	opts := pdf.Options{Resolucion: testResolucion}
	factura := ss[dte.FacturaElectronica].doc

	noTED := copyDoc(factura)
	noTED.TED = nil
	badTipo := copyDoc(factura)
	badTipo.Tipo = 35
	noFolio := copyDoc(factura)
	noFolio.Folio = 0
	hugeTED := copyDoc(factura)
	hugeTED.TED = bytes.Repeat([]byte("x"), 2000)

	cases := []struct {
		name string
		doc  *dte.Document
		opts pdf.Options
		want error
	}{
		{"boleta cedible", ss[39].doc, pdf.Options{Cedible: true, Resolucion: testResolucion}, pdf.ErrNoCedible},
		{"boleta exenta cedible 80mm", ss[41].doc, pdf.Options{Format: pdf.Termica80, Cedible: true, Resolucion: testResolucion}, pdf.ErrNoCedible},
		{"nota de crédito cedible", ss[61].doc, pdf.Options{Cedible: true, Resolucion: testResolucion}, pdf.ErrNoCedible},
		{"exportación cedible", ss[110].doc, pdf.Options{Cedible: true, Resolucion: testResolucion}, pdf.ErrNoCedible},
		{"guía on 80 mm", ss[52].doc, pdf.Options{Format: pdf.Termica80, Resolucion: testResolucion}, pdf.ErrFormat},
		{"nota on 80 mm", ss[56].doc, pdf.Options{Format: pdf.Termica80, Resolucion: testResolucion}, pdf.ErrFormat},
		{"unknown format", factura, pdf.Options{Format: pdf.Format(9), Resolucion: testResolucion}, pdf.ErrFormat},
		{"no TED", noTED, opts, pdf.ErrNoTimbre},
		{"no resolution", factura, pdf.Options{}, pdf.ErrResolucion},
		{"bad resolution date", factura, pdf.Options{Resolucion: pdf.Resolucion{Numero: 1, Fecha: "22-08-2014"}}, pdf.ErrResolucion},
		{"negative resolution", factura, pdf.Options{Resolucion: pdf.Resolucion{Numero: -1, Fecha: "2014-08-22"}}, pdf.ErrResolucion},
		{"type 35", badTipo, opts, pdf.ErrDocument},
		{"folio 0", noFolio, opts, pdf.ErrDocument},
		{"TED too long", hugeTED, opts, pdf.ErrDocument},
		{"nil document", nil, opts, pdf.ErrDocument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := pdf.Render(&buf, c.doc, c.opts)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written before failing", buf.Len())
			}
			if c.doc != nil && !strings.Contains(err.Error(), c.doc.ID) && c.doc.ID != "" {
				t.Errorf("error %q does not name the document %s", err, c.doc.ID)
			}
		})
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRenderWriterAndDeterminism(t *testing.T) {
	doc := samples(t)[dte.FacturaElectronica].doc
	opts := pdf.Options{Resolucion: testResolucion}
	a, err := pdf.RenderBytes(doc, opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pdf.Render(&buf, doc, opts); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, buf.Bytes()) {
		t.Error("two renderings of the same document differ")
	}
	if err := pdf.Render(errWriter{}, doc, opts); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error: %v", err)
	}
	// The output depends on the options: a cedible copy differs.
	opts.Cedible = true
	c, err := pdf.RenderBytes(doc, opts)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Error("the cedible copy equals the normal one")
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]pdf.Format{"carta": pdf.Carta, "LETTER": pdf.Carta, "80mm": pdf.Termica80, " 80 ": pdf.Termica80, "termica": pdf.Termica80} {
		got, err := pdf.ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := pdf.ParseFormat("a4"); !errors.Is(err, pdf.ErrFormat) {
		t.Errorf("ParseFormat(a4): %v", err)
	}
	if pdf.Carta.String() != "carta" || pdf.Termica80.String() != "80mm" {
		t.Errorf("String: %s %s", pdf.Carta, pdf.Termica80)
	}
	for _, tipo := range dte.Tipos() {
		want := tipo == 33 || tipo == 34 || tipo == 39 || tipo == 41
		if got := pdf.Termica80.Applies(tipo); got != want {
			t.Errorf("Termica80.Applies(%d) = %v", tipo, got)
		}
		if !pdf.Carta.Applies(tipo) {
			t.Errorf("Carta.Applies(%d) = false", tipo)
		}
	}
}

func TestResolucionText(t *testing.T) {
	for _, c := range []struct {
		r    pdf.Resolucion
		want string
	}{
		{pdf.Resolucion{Numero: 80, Fecha: "2014-08-22"}, "Res. N° 80 de 2014"},
		{pdf.Resolucion{Numero: 0, Fecha: "2024-05-10"}, "Res. N° 0 de 2024"},
		{pdf.Resolucion{Numero: 99, Fecha: "2003"}, "Res. N° 99 de 2003"},
	} {
		got, err := c.r.Text()
		if err != nil || got != c.want {
			t.Errorf("%+v.Text() = %q, %v; want %q", c.r, got, err, c.want)
		}
	}
	for _, f := range []string{"", "14", "20x4-01-01", "0001-01-01", "2014/08/22"} {
		if _, err := (pdf.Resolucion{Fecha: f}).Text(); !errors.Is(err, pdf.ErrResolucion) {
			t.Errorf("Fecha %q: err = %v", f, err)
		}
	}
	e := dtetest.DemoEmisor()
	o := pdf.OptionsFor(e)
	if o.Resolucion.Numero != e.NumeroResolucion || o.Resolucion.Fecha != e.FechaResolucion || o.OficinaSII != e.OficinaSII || o.Format != pdf.Carta {
		t.Errorf("OptionsFor = %+v", o)
	}
}

// TestExtremeContent renders documents stretched to the schema's limits
// (1000-character descriptions, 40 references, 20 global discounts, long
// names without spaces) and checks them with qpdf and pdftotext: every
// reference is printed and the totals close the last page.
func TestExtremeContent(t *testing.T) {
	oracle.Tool(t, "qpdf")
	oracle.Tool(t, "pdftotext")
	doc := copyDoc(samples(t)[dte.FacturaElectronica].doc)
	long := strings.Repeat("Descripción extensa con eñes y tildes, ", 25)[:1000]
	doc.Detalle = append([]dte.DocLine(nil), doc.Detalle...)
	doc.Detalle[0].Descripcion = long
	doc.Detalle[1].Nombre = strings.Repeat("PALABRASINESPACIOS", 5)[:80]
	doc.Receptor.RazonSocial = strings.Repeat("Razón Social Larguísima ", 5)[:100]
	doc.Emisor.Giro = strings.Repeat("Giro muy largo de la empresa emisora ", 3)[:80]
	doc.Referencias = nil
	for i := range 40 {
		doc.Referencias = append(doc.Referencias, dte.Referencia{TipoDocRef: dte.RefTipo(801), FolioRef: int64(1000 + i),
			FechaRef: "2025-05-01", RazonRef: fmt.Sprintf("Referencia número %d", i+1)})
	}
	doc.DescuentosGlobales = nil
	for i := range 20 {
		doc.DescuentosGlobales = append(doc.DescuentosGlobales, dte.DscRcgGlobal{TpoMov: "R", TpoValor: "$", ValorDR: "1000", GlosaDR: fmt.Sprintf("Recargo %d", i+1)})
	}
	for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
		for _, ced := range []bool{false, true} {
			b, err := pdf.RenderBytes(doc, pdf.Options{Format: f, Cedible: ced, Resolucion: testResolucion})
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			file := writeTemp(t, t.TempDir(), "extreme.pdf", b)
			qpdfCheck(t, file)
			n := pageCount(t, file)
			if f == pdf.Termica80 && n != 1 {
				t.Errorf("80 mm: %d pages, want one long page", n)
			}
			flat := squash(pdfText(t, file, false, 0, 0))
			for _, w := range []string{"Referencia número 1", "Referencia número 40", "Recargo 20", "TOTAL", stampTexts[2]} {
				if !strings.Contains(flat, w) {
					t.Errorf("%s (%d pages): lacks %q", f, n, w)
				}
			}
			last := squash(pdfText(t, file, false, n, n))
			if !strings.Contains(last, "TOTAL") {
				t.Errorf("%s: the totals are not on the last page", f)
			}
		}
	}
}

// TestHugeAmountsPrintWhole gives a line and the total 18-digit amounts
// (the schema's maximum): pdftotext must show them whole, not cut.
func TestHugeAmountsPrintWhole(t *testing.T) {
	oracle.Tool(t, "pdftotext")
	doc := copyDoc(samples(t)[dte.FacturaElectronica].doc)
	doc.Detalle = append([]dte.DocLine(nil), doc.Detalle...)
	doc.Detalle[0].MontoItem = "999999999999999999"
	doc.Detalle[0].Precio = "999999999999999999"
	doc.Totales.MntTotal = "999999999999999999"
	for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
		b, err := pdf.RenderBytes(doc, pdf.Options{Format: f, Resolucion: testResolucion})
		if err != nil {
			t.Fatal(err)
		}
		file := writeTemp(t, t.TempDir(), "huge.pdf", b)
		flat := squash(pdfText(t, file, false, 0, 0))
		if n := strings.Count(flat, "999.999.999.999.999.999"); n < 3 {
			t.Errorf("%s: the 18-digit amount appears %d times whole, want 3:\n%s", f, n, flat)
		}
		if !strings.Contains(flat, "$ 999.999.999.999.999.999") {
			t.Errorf("%s: the total is not printed whole", f)
		}
	}
}
