package pdf_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/pdf"
)

// testResolucion is the resolution passed to every rendering, and the
// texts the stamp must carry with it.
var testResolucion = pdf.Resolucion{Numero: 80, Fecha: "2014-08-22"}

var stampTexts = []string{"Timbre Electrónico SII", "Res. N° 80 de 2014", "Verifique documento: www.sii.cl"}

// Size limits of the SII for the printed stamp, and the paper.
const (
	maxPDFBytes    = 500 << 10
	minStampW      = 50.0 // mm
	maxStampW      = 90.0
	minStampH      = 20.0
	maxStampH      = 40.0
	minStampLeftMM = 20.0
	letterDPI      = 300
	rollDPI        = 200
)

// rendering is one PDF under test.
type rendering struct {
	s      *sample
	format pdf.Format
	file   string
	png    string
}

// TestOracleAllTypes renders one emitted document of each of the twelve
// types on letter paper, and the four 80 mm types on roll paper, and checks
// every file with the independent tools:
//
//   - qpdf --check passes and the file is under 500 KB;
//   - pdftotext shows "N° <folio>", both RUTs as 12.345.678-5, the
//     receptor's name with its accents, the total as "$ 1.234.567" (or the
//     export currency with decimal comma) and the stamp's three texts;
//   - the last page rasterized by pdftoppm (300 dpi letter, 200 dpi roll)
//     decodes with ZXingReader to exactly the TED bytes of the XML, at EC
//     level 5;
//   - the symbol measured on that raster is 2–4 cm high and 5–9 cm wide,
//     starts at least 2 cm from the left edge on letter paper and fits the
//     80 mm paper with margins, with a clear quiet zone.
func TestOracleAllTypes(t *testing.T) {
	if testing.Short() {
		t.Skip("rasterizes or runs the oracles on many documents; skipped under -short")
	}
	oracle.Tool(t, "qpdf")
	oracle.Tool(t, "pdftotext")
	oracle.Tool(t, "pdftoppm")
	oracle.Tool(t, "ZXingReader")
	dir := t.TempDir()
	var all []*rendering
	for _, tipo := range dte.Tipos() {
		s := samples(t)[tipo]
		for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
			if f == pdf.Termica80 && !(tipo == 33 || tipo == 34 || tipo == 39 || tipo == 41) {
				continue
			}
			b, err := pdf.RenderBytes(s.doc, pdf.Options{Format: f, Resolucion: testResolucion, OficinaSII: "Ñuñoa"})
			if err != nil {
				t.Fatalf("%s %s: %v", s.name, f, err)
			}
			all = append(all, &rendering{s: s, format: f, file: writeTemp(t, dir, fmt.Sprintf("%s-%s.pdf", s.name, f), b)})
		}
	}
	if len(all) != 16 {
		t.Fatalf("%d renderings, want 12 letter + 4 roll", len(all))
	}

	// Text, structure and size.
	for _, r := range all {
		t.Run(r.s.name+"/"+r.format.String()+"/text", func(t *testing.T) {
			qpdfCheck(t, r.file)
			b := readFile(t, r.file)
			if len(b) >= maxPDFBytes {
				t.Errorf("%d bytes, the SII's limit is 500 KB", len(b))
			}
			if !bytes.HasPrefix(b, []byte("%PDF-")) {
				t.Errorf("not a PDF: %.10q", b)
			}
			checkText(t, r.s, pdfText(t, r.file, true, 0, 0))
		})
	}

	// The stamp: one ZXingReader run over the last page of every file.
	var pngs []string
	for _, r := range all {
		dpi := letterDPI
		if r.format == pdf.Termica80 {
			dpi = rollDPI
		}
		r.png = rasterize(t, r.file, pageCount(t, r.file), dpi)
		pngs = append(pngs, r.png)
	}
	zx := oracle.ZXingPDF417(t, pngs...)
	for _, r := range all {
		t.Run(r.s.name+"/"+r.format.String()+"/stamp", func(t *testing.T) {
			res := zx[r.png]
			ted := xmlTED(t, r.s.xml)
			switch {
			case res.Symbols != 1:
				t.Fatalf("ZXingReader found %d PDF417 symbols on the last page, want 1", res.Symbols)
			case !bytes.Equal(res.Bytes, ted):
				t.Errorf("the stamp decodes to %d bytes that differ from the XML's TED (%d bytes)\n got %q\nwant %q",
					len(res.Bytes), len(ted), res.Bytes, ted)
			case res.ECLevel != "5":
				t.Errorf("EC level %q, want 5", res.ECLevel)
			}
			if !bytes.Equal(r.s.doc.TED, ted) {
				t.Errorf("dte.ParseDTE's TED differs from the XML's TED element")
			}
			dpi := letterDPI
			if r.format == pdf.Termica80 {
				dpi = rollDPI
			}
			m := measureStamp(t, r.png, res, dpi)
			t.Logf("stamp: %v", m)
			if !m.quietClean {
				t.Errorf("dark pixels around the symbol (quiet zone not clear): dark box %v, symbol %v", m.box, res.Box)
			}
			if r.format == pdf.Carta {
				if m.widthMM < minStampW || m.widthMM > maxStampW || m.heightMM < minStampH || m.heightMM > maxStampH {
					t.Errorf("stamp %v is outside 2 × 5 cm … 4 × 9 cm", m)
				}
				if m.leftMM < minStampLeftMM {
					t.Errorf("stamp %v starts less than 2 cm from the left edge", m)
				}
			} else {
				if m.leftMM < 2 || m.rightMM < 2 {
					t.Errorf("stamp %v does not fit the %.1f mm paper with 2 mm margins", m, m.pageWidth)
				}
				if m.widthMM < minStampW {
					t.Errorf("stamp %v is narrower than 5 cm", m)
				}
			}
		})
	}
}

// checkText checks the extracted text of a rendering against the XML.
func checkText(t *testing.T, s *sample, txt string) {
	t.Helper()
	flat := squash(txt)
	moneda := ""
	if s.doc.Tipo.IsExport() {
		moneda = xmlField(t, s.xml, "TpoMoneda")
	}
	want := []string{
		"N° " + xmlField(t, s.xml, "Folio"),
		"R.U.T.: " + printedRUT(xmlField(t, s.xml, "RUTEmisor")),
		printedRUT(xmlField(t, s.xml, "RUTRecep")),
		squash(xmlField(t, s.xml, "RznSocRecep")),
		squash(xmlField(t, s.xml, "RznSoc|RznSocEmisor")),
		printedAmount(xmlField(t, s.xml, "MntTotal"), moneda),
		s.doc.Tipo.Name(),
	}
	want = append(want, stampTexts...)
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("pdftotext output lacks %q:\n%s", w, txt)
		}
	}
	if strings.Contains(flat, "CEDIBLE") {
		t.Errorf("a copy that is not cedible says CEDIBLE")
	}
}

// TestOracleCedible renders the cedible copy of each type that has one and
// checks its texts with pdftotext: "CEDIBLE", the acuse de recibo fields
// and the Ley 19.983 text on 33, 34, 43 and 46 (and on 33 and 34 in 80 mm);
// "CEDIBLE CON SU FACTURA" on 52. Every other type is refused with
// ErrNoCedible, in both formats.
func TestOracleCedible(t *testing.T) {
	oracle.Tool(t, "pdftotext")
	dir := t.TempDir()
	ley := "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, " +
		"y la letra c) del Art. 5° de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) prestado(s) ha(n) sido recibido(s)."
	fields := []string{"ACUSE DE RECIBO", "Nombre:", "R.U.T.:", "Fecha:", "Recinto:", "Firma:"}
	for _, tipo := range dte.Tipos() {
		s := samples(t)[tipo]
		for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
			if !f.Applies(tipo) {
				continue
			}
			t.Run(fmt.Sprintf("%d/%s", tipo, f), func(t *testing.T) {
				b, err := pdf.RenderBytes(s.doc, pdf.Options{Format: f, Cedible: true, Resolucion: testResolucion})
				switch tipo {
				case 33, 34, 43, 46, 52:
				default:
					if !errors.Is(err, pdf.ErrNoCedible) {
						t.Fatalf("cedible copy of type %d: err = %v, want ErrNoCedible", tipo, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				file := writeTemp(t, dir, fmt.Sprintf("%d-%s-cedible.pdf", tipo, f), b)
				// Reading order (no -layout) keeps the legal paragraph whole.
				flat := squash(pdfText(t, file, false, 0, 0))
				want := append([]string{ley}, fields...)
				mark := "CEDIBLE"
				if tipo == 52 {
					mark = "CEDIBLE CON SU FACTURA"
				}
				want = append(want, mark, "N° "+xmlField(t, s.xml, "Folio"))
				for _, w := range want {
					if !strings.Contains(flat, w) {
						t.Errorf("pdftotext output lacks %q:\n%s", w, flat)
					}
				}
				if tipo != 52 && strings.Contains(flat, "CON SU FACTURA") {
					t.Errorf("type %d says CON SU FACTURA", tipo)
				}
			})
		}
	}
}

// TestOracleSixtyLines renders a factura of 60 detail lines: it must run
// over at least two pages, each line printed once, with "continúa" at the
// foot of every page but the last, the column titles repeated on every
// page, and the totals and the stamp only on the last page.
func TestOracleSixtyLines(t *testing.T) {
	oracle.Tool(t, "pdftotext")
	oracle.Tool(t, "qpdf")
	s := manyLines(t, 60)
	b, err := pdf.RenderBytes(s.doc, pdf.Options{Resolucion: testResolucion})
	if err != nil {
		t.Fatal(err)
	}
	file := writeTemp(t, t.TempDir(), "sixty.pdf", b)
	qpdfCheck(t, file)
	n := pageCount(t, file)
	if n < 2 {
		t.Fatalf("60 lines fit in %d page", n)
	}
	total := printedAmount(xmlField(t, s.xml, "MntTotal"), "")
	seen := map[int]int{}
	for p := 1; p <= n; p++ {
		flat := squash(pdfText(t, file, true, p, p))
		last := p == n
		if got := strings.Contains(flat, "continúa en la página siguiente"); got == last {
			t.Errorf("page %d of %d: continúa marker present = %v", p, n, got)
		}
		if !strings.Contains(flat, "Descripción") || !strings.Contains(flat, "Precio unit.") {
			t.Errorf("page %d lacks the column titles", p)
		}
		if !strings.Contains(flat, fmt.Sprintf("página %d de %d", p, n)) {
			t.Errorf("page %d lacks its number", p)
		}
		for _, w := range append([]string{"TOTAL " + total}, stampTexts...) {
			if got := strings.Contains(flat, w); got != last {
				t.Errorf("page %d of %d: %q present = %v", p, n, w, got)
			}
		}
		for i := 1; i <= 60; i++ {
			if strings.Contains(flat, fmt.Sprintf("línea %d ", i)) || strings.HasSuffix(flat, fmt.Sprintf("línea %d", i)) {
				seen[i]++
			}
		}
	}
	for i := 1; i <= 60; i++ {
		if seen[i] != 1 {
			t.Errorf("line %d printed %d times", i, seen[i])
		}
	}
}

// TestOracleSpanishText checks that pdftotext reads back the letters of
// Spanish text exactly: ñ, á, é, í, ó, ú, ü, °, ¿, ¡, «», in both
// formats.
func TestOracleSpanishText(t *testing.T) {
	oracle.Tool(t, "pdftotext")
	req := readRequest(t, "boleta")
	text := "¿Año Ñandú? ¡Sí! «Pingüino» Nº 5, 20° cañón"
	req.Detalle[0].Nombre = text
	req.Receptor.RazonSocial = "Señora Begoña Müller-Ibáñez ÁÉÍÓÚ"
	req.Receptor.Rut = "12345678-5"
	s := emit(t, "espanol", req)
	dir := t.TempDir()
	for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
		b, err := pdf.RenderBytes(s.doc, pdf.Options{Format: f, Resolucion: testResolucion})
		if err != nil {
			t.Fatal(err)
		}
		file := writeTemp(t, dir, "es-"+f.String()+".pdf", b)
		flat := squash(pdfText(t, file, true, 0, 0))
		for _, w := range []string{text, "Señora Begoña Müller-Ibáñez ÁÉÍÓÚ", "12.345.678-5", "BOLETA ELECTRÓNICA"} {
			if !strings.Contains(flat, w) {
				t.Errorf("%s: pdftotext lacks %q:\n%s", f, w, flat)
			}
		}
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOracleLongTED prints TEDs longer than any real one (the longest that
// fit each format: 1,034 bytes on letter, where the module drops below
// 0.254 mm, and 1,029 on 80 mm paper) with bytes ≥ 0x80, and reads them
// back with ZXingReader at the required resolutions.
func TestOracleLongTED(t *testing.T) {
	if testing.Short() {
		t.Skip("rasterizes or runs the oracles on many documents; skipped under -short")
	}
	oracle.Tool(t, "pdftoppm")
	oracle.Tool(t, "ZXingReader")
	base := samples(t)[dte.FacturaElectronica]
	dir := t.TempDir()
	var files, pngs []string
	var teds [][]byte
	for i, c := range []struct {
		n   int
		f   pdf.Format
		dpi int
	}{{1034, pdf.Carta, letterDPI}, {1029, pdf.Termica80, rollDPI}} {
		ted := bytes.Repeat(xmlTED(t, base.xml), 2)[:c.n]
		for j := 40; j < len(ted); j += 97 {
			ted[j] = byte(0xc0 + j%60) // ISO-8859-1 letters
		}
		doc := copyDoc(base.doc)
		doc.TED = ted
		b, err := pdf.RenderBytes(doc, pdf.Options{Format: c.f, Resolucion: testResolucion})
		if err != nil {
			t.Fatalf("%d bytes on %s: %v", c.n, c.f, err)
		}
		file := writeTemp(t, dir, fmt.Sprintf("long-%d.pdf", i), b)
		files = append(files, file)
		pngs = append(pngs, rasterize(t, file, pageCount(t, file), c.dpi))
		teds = append(teds, ted)
	}
	zx := oracle.ZXingPDF417(t, pngs...)
	for i, p := range pngs {
		if r := zx[p]; r.Symbols != 1 || !bytes.Equal(r.Bytes, teds[i]) {
			t.Errorf("%s: %d symbols, bytes equal = %v", files[i], r.Symbols, bytes.Equal(r.Bytes, teds[i]))
		}
	}
}
