package certificacion_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/libro"
)

// fullSetFiles are the set files that, concatenated, make a set file as
// the SII hands it to a company that asked for the basic set, the guía set,
// their three libros and the boletas; the two stored without their header
// (the samples are excerpts) get the header the SII's file has.
var fullSetFiles = []string{"001-basico.txt", "002-ventas.txt", "003-compras.txt", "005-guia_despacho.txt",
	"006-libro_guias.txt", "boleta-SetPruebaBE-reconstructed.txt"}

var setHeaders = map[string]string{"001-basico.txt": "SET BASICO - NUMERO DE ATENCION:  414175\r\n\r\n",
	"005-guia_despacho.txt": "SET GUIA DE DESPACHO - NUMERO DE ATENCION:  428551\r\n\r\n"}

func fullSetFile(tb testing.TB, names ...string) []byte {
	tb.Helper()
	var all []byte
	for _, f := range names {
		all = append(all, setHeaders[f]...)
		all = append(all, setFile(tb, f)...)
		all = append(all, '\r', '\n')
	}
	return all
}

// generateFull returns the result of the whole set file (fullSetFiles),
// generated once for the package's tests.
func generateFull(tb testing.TB) *certificacion.Result {
	tb.Helper()
	return generateOnce(tb, "full", func() []byte { return fullSetFile(tb, fullSetFiles...) })
}

// generateFullExentos is generateFull's file with the Libro de Compras
// para Exentos (exentosSet) after it: every libro the kit builds.
func generateFullExentos(tb testing.TB) *certificacion.Result {
	tb.Helper()
	return generateOnce(tb, "full+exentos", func() []byte { return append(fullSetFile(tb, fullSetFiles...), exentosSet...) })
}

func pesosOf(t *testing.T, d interface{ Int64() (int64, bool) }) int64 {
	t.Helper()
	n, ok := d.Int64()
	if !ok {
		t.Fatalf("amount %v is not whole pesos", d)
	}
	return n
}

func libroOf(t *testing.T, r *certificacion.Result, k certificacion.LibroKind) []byte {
	t.Helper()
	for _, l := range r.Libros {
		if l.Kind == k {
			return l.XML
		}
	}
	t.Fatalf("no %s among %d libros", k, len(r.Libros))
	return nil
}

// TestLibros checks the libros Generate signs for a full set file: their
// order, the Libro de Compras against totals worked by hand from the
// table of 003-compras.txt, and the Libro de Ventas, the Libro de Guías and
// the RCOF against the documents they list.
func TestLibros(t *testing.T) {
	res := generateFull(t)
	var kinds []string
	for _, l := range res.Libros {
		kinds = append(kinds, string(l.Kind))
	}
	if want := "LIBRO DE VENTAS,LIBRO DE COMPRAS,LIBRO DE GUIAS,CONSUMO DE FOLIOS"; strings.Join(kinds, ",") != want || len(res.Pending) != 0 {
		t.Fatalf("libros %v, pending %v; want %s and none pending", kinds, res.Pending, want)
	}
	docs := docsByCase(t, res)

	// Ventas: one row per document of the SET BASICO, totals per type equal
	// the documents'.
	v, err := libro.Parse(libroOf(t, res, certificacion.LibroVentas))
	if err != nil {
		t.Fatal(err)
	}
	if c := v.Caratula; c.TipoOperacion != "VENTA" || c.TipoLibro != "ESPECIAL" || c.TipoEnvio != "TOTAL" || c.FolioNotificacion != 1 || c.PeriodoTributario != "2026-03" {
		t.Errorf("ventas carátula %+v", c)
	}
	want := map[int][2]int64{} // tipo → count, MntTotal
	for _, s := range res.Sets {
		if s.Set.Kind != certificacion.SetBasico {
			continue
		}
		for _, d := range s.Docs {
			doc := docs[d.Case.ID]
			w := want[int(doc.Tipo)]
			w[0]++
			w[1] += pesosOf(t, doc.Totales.MntTotal)
			want[int(doc.Tipo)] = w
		}
	}
	if len(v.Detalle) != 8 || len(v.ResumenPeriodo) != len(want) {
		t.Errorf("ventas: %d rows, %d types; want the 8 documents of the basic set in %d types", len(v.Detalle), len(v.ResumenPeriodo), len(want))
	}
	for _, tot := range v.ResumenPeriodo {
		if w := want[tot.TpoDoc]; int64(tot.TotDoc) != w[0] || tot.TotMntTotal != w[1] {
			t.Errorf("ventas tipo %d: %d docs, total %d; the documents give %d, %d", tot.TpoDoc, tot.TotDoc, tot.TotMntTotal, w[0], w[1])
		}
	}
	// The same totals by hand, from the basic set's golden cases
	// (goldenTotals["001-basico.txt"]):
	//   33, cases 1-4: neto 191598 + 585926 + 489763 + 173531 = 1440818;
	//      exento 34705 + 13534 = 48239; IVA 36404 + 111326 + 93055 + 32971
	//      = 273756; total 228002 + 697252 + 617523 + 220036 = 1762813
	//      (= 1440818 + 48239 + 273756).
	//   61, cases 5-7: neto 0 + 261525 + 489763 = 751288; exento 34705;
	//      IVA 49690 + 93055 = 142745; total 0 + 311215 + 617523 = 928738.
	//   56, case 8: one document, all 0.
	type ventasTot struct {
		docs                  int
		neto, exe, iva, total int64
	}
	wantV := map[int]ventasTot{33: {4, 1440818, 48239, 273756, 1762813}, 61: {3, 751288, 34705, 142745, 928738}, 56: {1, 0, 0, 0, 0}}
	for _, tot := range v.ResumenPeriodo {
		if got := (ventasTot{tot.TotDoc, tot.TotMntNeto, tot.TotMntExe, tot.TotMntIVA, tot.TotMntTotal}); got != wantV[tot.TpoDoc] {
			t.Errorf("ventas tipo %d: %+v, by hand %+v", tot.TpoDoc, got, wantV[tot.TpoDoc])
		}
	}

	// Compras, by hand (IVA 19 % rounded half up on each row):
	//   30 F234  neto 53253, IVA 10118.07 → 10118, total 63371
	//   33 F32   exento 10633, neto 11473, IVA 2179.87 → 2180, total 24286
	//   30 F781  neto 30171, IVA uso común 5732.49 → 5732, total 35903
	//   60 F451  neto 2928, IVA 556.32 → 556, total 3484, refers to 30 F234
	//   33 F67   neto 12135, IVA no recuperable (4) 2305.65 → 2306, total 14441
	//   46 F9    neto 10632, IVA 2020.08 → 2020 retained: total 10632
	//   60 F211  neto 9053, IVA 1720.07 → 1720, total 10773, refers to 33 F32
	// Per type: 30 two docs, neto 83424, IVA 10118, uso común 5732 with a
	// credit of 0.60 × 5732 = 3439.2 → 3439, total 99274; 33 two docs,
	// exento 10633, neto 23608, IVA 2180, no recuperable 2306, total 38727;
	// 60 two docs, neto 2928 + 9053 = 11981, IVA 556 + 1720 = 2276, total
	// 3484 + 10773 = 14257; 46 one doc 10632 / 2020 / 10632.
	cl, err := libro.Parse(libroOf(t, res, certificacion.LibroCompras))
	if err != nil {
		t.Fatal(err)
	}
	if c := cl.Caratula; c.TipoOperacion != "COMPRA" || c.TipoLibro != "ESPECIAL" || c.FolioNotificacion != 2 {
		t.Errorf("compras carátula %+v", c)
	}
	type tot struct {
		docs                                         int
		exe, neto, iva, usoComun, cred, noRec, total int64
	}
	wantC := map[int]tot{30: {2, 0, 83424, 10118, 5732, 3439, 0, 99274}, 33: {2, 10633, 23608, 2180, 0, 0, 2306, 38727},
		60: {2, 0, 11981, 2276, 0, 0, 0, 14257}, 46: {1, 0, 10632, 2020, 0, 0, 0, 10632}}
	if len(cl.ResumenPeriodo) != len(wantC) {
		t.Errorf("compras: %d types, want 4", len(cl.ResumenPeriodo))
	}
	for _, r := range cl.ResumenPeriodo {
		var noRec int64
		for _, n := range r.TotIVANoRec {
			noRec += n.TotMntIVANoRec
		}
		got := tot{r.TotDoc, r.TotMntExe, r.TotMntNeto, r.TotMntIVA, r.TotIVAUsoComun, r.TotCredIVAUsoComun, noRec, r.TotMntTotal}
		if got != wantC[r.TpoDoc] {
			t.Errorf("compras tipo %d: %+v, want %+v", r.TpoDoc, got, wantC[r.TpoDoc])
		}
	}
	// Row by row, as worked out above.
	type compraRow struct {
		tipo                                 int
		folio                                int64
		exe, neto, iva, usoComun, noRec, ret int64
		total                                int64
	}
	wantRows := []compraRow{{30, 234, 0, 53253, 10118, 0, 0, 0, 63371}, {33, 32, 10633, 11473, 2180, 0, 0, 0, 24286},
		{30, 781, 0, 30171, 0, 5732, 0, 0, 35903}, {60, 451, 0, 2928, 556, 0, 0, 0, 3484}, {33, 67, 0, 12135, 0, 0, 2306, 0, 14441},
		{46, 9, 0, 10632, 2020, 0, 0, 2020, 10632}, {60, 211, 0, 9053, 1720, 0, 0, 0, 10773}}
	if len(cl.Detalle) != len(wantRows) {
		t.Fatalf("compras: %d rows, want %d", len(cl.Detalle), len(wantRows))
	}
	for i, w := range wantRows {
		d := cl.Detalle[i]
		got := compraRow{tipo: d.TpoDoc, folio: d.NroDoc, exe: d.MntExe, neto: d.MntNeto, iva: d.MntIVA, usoComun: d.IVAUsoComun, total: d.MntTotal}
		for _, n := range d.IVANoRec {
			got.noRec += n.MntIVANoRec
		}
		for _, o := range d.OtrosImp {
			if o.CodImp == 15 {
				got.ret += o.MntImp
			}
		}
		if got != w {
			t.Errorf("compras row %d: %+v, want %+v", i+1, got, w)
		}
	}
	ruts := map[string]bool{}
	for _, d := range cl.Detalle {
		ruts[d.RUTDoc] = true
		if ref := map[int64][2]int64{451: {30, 234}, 211: {33, 32}}[d.NroDoc]; d.TpoDoc == 60 && (int64(d.TpoDocRef) != ref[0] || d.FolioDocRef != ref[1]) {
			t.Errorf("compras: note F%d refers to %d F%d, want %d F%d", d.NroDoc, d.TpoDocRef, d.FolioDocRef, ref[0], ref[1])
		}
		if d.TpoDoc == 33 && d.NroDoc == 67 && (len(d.IVANoRec) != 1 || d.IVANoRec[0].CodIVANoRec != 4) {
			t.Errorf("compras: F67 IVANoRec %+v, want code 4", d.IVANoRec)
		}
	}
	if len(ruts) != 7 {
		t.Errorf("compras: %d distinct suppliers for 7 rows", len(ruts))
	}

	// Guías: case 1 a traslado interno, case 2 invoiced by a factura 33,
	// case 3 annulled after it was sent.
	g, err := libro.ParseGuia(libroOf(t, res, certificacion.LibroGuias))
	if err != nil {
		t.Fatal(err)
	}
	folio := map[int]int64{}
	for _, s := range res.Sets {
		if s.Set.Kind == certificacion.SetGuiaDespacho {
			for _, d := range s.Docs {
				folio[d.Case.N] = d.Emitted.Folio
			}
		}
	}
	for _, d := range g.Detalle {
		switch d.Folio {
		case folio[1]:
			if d.TpoOper != 5 || d.Anulado != 0 {
				t.Errorf("guía case 1: %+v, want TpoOper 5", d)
			}
		case folio[2]:
			if d.TpoOper != 1 || d.TpoDocRef != 33 || d.FolioDocRef == 0 || d.FchDocRef != "2026-03-02" {
				t.Errorf("guía case 2: %+v, want a sale invoiced by a 33 of 2026-03-02", d)
			}
		case folio[3]:
			if d.Anulado != libro.AnuladoDespues {
				t.Errorf("guía case 3: %+v, want Anulado 2", d)
			}
		default:
			t.Errorf("guía folio %d is no case of the set", d.Folio)
		}
	}
	if len(g.Detalle) != 3 || g.ResumenPeriodo == nil || g.ResumenPeriodo.TotGuiaAnulada != 1 {
		t.Fatalf("guías: %d rows, resumen %+v; want 3 rows and one annulled guía", len(g.Detalle), g.ResumenPeriodo)
	}
	// By hand, from goldenTotals["005-guia_despacho.txt"]: case 1 a
	// traslado interno of value 0; case 2 a sale, neto 1375761, IVA
	// 261395, total 1637156; case 3 annulled (its 1249538 not counted).
	// Summary: one sale for 1637156, one annulled guía, TotTraslado 5 one
	// guía for 0.
	for _, d := range g.Detalle {
		switch d.Folio {
		case folio[1]:
			if d.MntTotal != 0 {
				t.Errorf("guía case 1: MntTotal %d, want 0", d.MntTotal)
			}
		case folio[2]:
			if d.MntNeto != 1375761 || d.IVA != 261395 || d.MntTotal != 1637156 {
				t.Errorf("guía case 2: neto %d IVA %d total %d, want 1375761, 261395, 1637156", d.MntNeto, d.IVA, d.MntTotal)
			}
		}
	}
	if r := g.ResumenPeriodo; r.TotGuiaVenta != 1 || r.TotMntGuiaVta != 1637156 || r.TotFolAnulado != 0 || len(r.TotTraslado) != 1 ||
		r.TotTraslado[0].TpoTraslado != 5 || r.TotTraslado[0].CantGuia != 1 || r.TotTraslado[0].MntGuia != 0 {
		t.Errorf("guías summary %+v, want 1 sale for 1637156, TotTraslado 5: 1 guía for 0", r)
	}

	// RCOF: the rule of the RVD (sii-wave3-notes §4.1): IVA = neto x 19 %.
	rc, err := libro.ParseConsumo(libroOf(t, res, certificacion.LibroRCOF))
	if err != nil {
		t.Fatal(err)
	}
	// By hand, from goldenTotals["boleta-SetPruebaBE-reconstructed.txt"]:
	// 39, five boletas, folios 1-5; neto 25042 + 1714 + 3445 + 10689 + 2941
	// = 43831; the boletas' own IVA add up to 4758 + 326 + 655 + 2031 + 559
	// = 8329, but the RVD's MntIva is the neto times the rate: 43831 x 0.19
	// = 8327.89, 8328; exento 2000; total 43831 + 8328 + 2000 = 54159 (a
	// peso below the boletas' 54160).
	if r := rc.Resumen[0]; len(rc.Resumen) != 1 || r.TipoDocumento != 39 || r.FoliosEmitidos != 5 || r.FoliosUtilizados != 5 || r.MntNeto != 43831 ||
		r.MntIva != 8328 || r.MntExento != 2000 || r.MntTotal != 54159 || len(r.RangoUtilizados) != 1 || r.RangoUtilizados[0] != (libro.Rango{Inicial: 1, Final: 5}) {
		t.Errorf("RCOF %+v, want 39: 5 boletas 1-5, neto 43831, IVA 8328, exento 2000, total 54159", rc.Resumen)
	}
}

// TestFactorAfterObservations: the factor de proporcionalidad is read
// from observations that end at the next set's header, not only at the end
// of the file (a full set file has SET GUIA DE DESPACHO after them).
func TestFactorAfterObservations(t *testing.T) {
	plan, err := certificacion.Parse(fullSetFile(t, "003-compras.txt", "005-guia_despacho.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if f := plan.Sets[0].FactorProporcionalidad; f != "0.60" {
		t.Errorf("factor %q, want 0.60", f)
	}
}

// TestLibrosPending: a file with the libro sets alone gives the Libro de
// Compras (its table is in the file) and lists the other two as pending.
func TestLibrosPending(t *testing.T) {
	res := generate(t, "002-ventas.txt")
	if len(res.Libros) != 0 || len(res.Pending) != 1 || !strings.Contains(res.Pending[0].Reason, "SET BASICO") {
		t.Errorf("libros %d, pending %+v; want the Libro de Ventas pending for want of the basic set", len(res.Libros), res.Pending)
	}
	res = generate(t, "003-compras.txt")
	if len(res.Libros) != 1 || res.Libros[0].Kind != certificacion.LibroCompras {
		t.Errorf("003-compras.txt gives %d libros, want the Libro de Compras", len(res.Libros))
	}
}

// TestLibrosFolder writes the full folder and checks every libro with the
// oracles (xmllint against its schema, xmlsec1 on its signature), and
// that the manifest and LEEME.md list them in upload order.
func TestLibrosFolder(t *testing.T) {
	res := generateFull(t)
	dir := filepath.Join(t.TempDir(), "kit")
	m, err := certificacion.WriteDir(dir, res, creds(t).Emisor)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"libros/01-LibroVentas-414176.xml", "libros/02-LibroCompras-414177.xml", "libros/03-LibroGuias-428552.xml", "libros/04-ConsumoFolios.xml"}
	if len(m.Libros) != len(want) {
		t.Fatalf("manifest libros %+v, want %v", m.Libros, want)
	}
	leeme, err := os.ReadFile(filepath.Join(dir, certificacion.LeemeFile))
	if err != nil {
		t.Fatal(err)
	}
	schemas := oracle.Schemas(t)
	xsd := map[string]string{"LIBRO DE VENTAS": "LibroCV_v10.xsd", "LIBRO DE COMPRAS": "LibroCV_v10.xsd", "LIBRO DE GUIAS": "LibroGuia_v10.xsd", "CONSUMO DE FOLIOS": "ConsumoFolio_v10.xsd"}
	for i, l := range m.Libros {
		if l.File != want[i] {
			t.Errorf("libro %d: %s, want %s", i+1, l.File, want[i])
		}
		if !strings.Contains(string(leeme), "`"+l.File+"`") {
			t.Errorf("LEEME.md does not list %s", l.File)
		}
		p := filepath.Join(dir, l.File)
		oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(schemas, xsd[l.Kind]), p)
		oracle.Run(t, "xmlsec1", "--verify", "--id-attr:ID", "EnvioLibro", "--id-attr:ID", "DocumentoConsumoFolios",
			"--enabled-key-data", "key-value", "--enabled-key-data", "rsa", "--node-xpath", "/*/*[local-name()='Signature']", p)
	}
}
