package libro_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/libro"
)

// at is the signing time of the tests' libros.
var at = time.Date(2026, 1, 15, 12, 30, 0, 0, dte.SantiagoLocation())

// oracles checks a signed file with the independent tools: xmllint
// against the official schema, and xmlsec1 on the signature of the element
// with ID attribute on signed, trusting only the embedded KeyValue.
func oracles(t *testing.T, data []byte, xsd, signed string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "libro.xml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(oracle.Schemas(t), xsd), p)
	oracle.Run(t, "xmlsec1", "--verify", "--id-attr:ID", signed, "--enabled-key-data", "key-value",
		"--enabled-key-data", "rsa", "--node-xpath", "/*/*[local-name()='Signature']", p)
}

// same compares a value read back with the one worked by hand, field by
// field in the message.
func same[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
	}
}

// The Libro de Ventas of SET BASICO 414175 (001-basico.txt; SET LIBRO DE
// VENTAS 414176 asks for it), built from the set's EnvioDTE: every total
// worked by hand from the set's lines, IVA 19 % rounded half up on each
// document's neto.
func TestVentasSetBasico(t *testing.T) {
	e := theSets(t)
	day := e.basico[0].FechaEmision
	out, err := libro.Ventas(libro.Options{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, e.envio)
	if err != nil {
		t.Fatal(err)
	}
	oracles(t, out, "LibroCV_v10.xsd", "EnvioLibro")
	l, err := libro.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Caratula", l.Caratula, libro.Caratula{
		RutEmisorLibro: dtetest.EmisorRUT, RutEnvia: dtetest.SignerRUT, PeriodoTributario: day[:7],
		FchResol: "2024-05-10", NroResol: 0, TipoOperacion: "VENTA", TipoLibro: "ESPECIAL", TipoEnvio: "TOTAL",
		FolioNotificacion: 1,
	})
	if l.ID != "LibroVentas" || l.Schema != "LibroCV_v10.xsd" || !l.TmstFirma.Equal(at) || l.ResumenSegmento != nil {
		t.Errorf("ID %q, schema %q, TmstFirma %v, ResumenSegmento %v", l.ID, l.Schema, l.TmstFirma, l.ResumenSegmento)
	}
	// Case 1: 123 × 923 + 53 × 1473 = 113529 + 78069 = 191598;
	// IVA 191598 × 0.19 = 36403.62 → 36404; total 228002.
	// Case 2: 235 × 1926 = 452610 less 4 % (18104.4 → 18104) = 434506;
	// 161 × 990 = 159390 less 5 % (7969.5 → 7970) = 151420; neto 585926;
	// IVA 111325.94 → 111326; total 697252.
	// Case 3: 24 × 1937 + 149 × 2975 = 46488 + 443275 = 489763; exento
	// 1 × 34705; IVA 93054.97 → 93055; total 489763 + 34705 + 93055 = 617523.
	// Case 4: 81 × 1672 + 35 × 1405 = 135432 + 49175 = 184607, less the
	// global 6 % (11076.42 → 11076) = 173531; exento 2 × 6767 = 13534; IVA
	// 32970.89 → 32971; total 173531 + 13534 + 32971 = 220036.
	// Case 5 (61, corrige giro) and case 8 (56, anula la NC 5): 0.
	// Case 6 (61, devolución): 86 × 1926 = 165636 less 4 % (6625.44 → 6625)
	// = 159011; 109 × 990 = 107910 less 5 % (5395.5 → 5396) = 102514; neto
	// 261525; IVA 49689.75 → 49690; total 311215.
	// Case 7 (61, anula factura 3): the totals of case 3.
	row := func(tipo int, folio int64, receptor int, name string, exe, neto, iva, total int64) libro.Detalle {
		d := libro.Detalle{TpoDoc: tipo, NroDoc: folio, FchDoc: day, RUTDoc: rut(receptor), RznSoc: name,
			MntExe: exe, MntNeto: neto, MntIVA: iva, MntTotal: total}
		if iva > 0 {
			d.TasaImp = "19"
		}
		return d
	}
	cli := func(k int) string { return "Cliente " + string(rune('0'+k)) + " de Prueba Ltda." }
	same(t, "Detalle", l.Detalle, []libro.Detalle{
		row(33, 1, 77000001, cli(1), 0, 191598, 36404, 228002),
		row(33, 2, 77000002, cli(2), 0, 585926, 111326, 697252),
		row(33, 3, 77000003, cli(3), 34705, 489763, 93055, 617523),
		row(33, 4, 77000004, cli(4), 13534, 173531, 32971, 220036),
		row(56, 1, 77000001, cli(1), 0, 0, 0, 0),
		row(61, 1, 77000001, cli(1), 0, 0, 0, 0),
		row(61, 2, 77000001, cli(1), 0, 261525, 49690, 311215),
		row(61, 3, 77000001, cli(1), 34705, 489763, 93055, 617523),
	})
	same(t, "ResumenPeriodo", l.ResumenPeriodo, []libro.Totales{
		{TpoDoc: 33, TotDoc: 4, TotMntExe: 34705 + 13534, // 48239
			TotMntNeto:  191598 + 585926 + 489763 + 173531, // 1440818
			TotMntIVA:   36404 + 111326 + 93055 + 32971,    // 273756
			TotMntTotal: 228002 + 697252 + 617523 + 220036, // 1762813
		},
		{TpoDoc: 56, TotDoc: 1},
		{TpoDoc: 61, TotDoc: 3, TotMntExe: 34705,
			TotMntNeto:  261525 + 489763, // 751288
			TotMntIVA:   49690 + 93055,   // 142745
			TotMntTotal: 0 + 311215 + 617523,
		},
	})
	// The same libro from the documents one by one, in another order.
	var docs [][]byte
	for i := len(e.basico) - 1; i >= 0; i-- {
		docs = append(docs, e.basico[i].XML)
	}
	again, err := libro.NewVentas(libro.Options{Emisor: e.creds.Emisor, At: at}, docs...)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "libro from the loose documents", again.Detalle, l.Detalle)
}

// compras are the seven documents of SET LIBRO DE COMPRAS 414177
// (003-compras.txt), written by hand from its table with the mapping of
// the notes (§3.3): FACTURA 30, FACTURA ELECTRONICA 33, NOTA DE CREDITO 60,
// FACTURA DE COMPRA ELECTRONICA 46, "ENTREGA GRATUITA DEL PROVEEDOR" IVA
// not recoverable code 4, "IVA USO COMUN" with the factor 0.60, the
// factura de compra with the IVA retained in full.
func compras(fecha string) []libro.Compra {
	supplier := rut(78000001)
	return []libro.Compra{
		{Tipo: 30, Folio: 234, Fecha: fecha, RutEmisor: supplier, RazonSocial: "Proveedor Uno Ltda.", MntNeto: 53253},
		{Tipo: 33, Folio: 32, Fecha: fecha, RutEmisor: supplier, RazonSocial: "Proveedor Uno Ltda.", MntExe: 10633, MntNeto: 11473},
		{Tipo: 30, Folio: 781, Fecha: fecha, RutEmisor: supplier, RazonSocial: "Proveedor Uno Ltda.", MntNeto: 30171, IVAUsoComun: true},
		{Tipo: 60, Folio: 451, Fecha: fecha, RutEmisor: supplier, RazonSocial: "Proveedor Uno Ltda.", MntNeto: 2928, TpoDocRef: 30, FolioDocRef: 234},
		{Tipo: 33, Folio: 67, Fecha: fecha, RutEmisor: supplier, RazonSocial: "Proveedor Uno Ltda.", MntNeto: 12135, IVANoRec: 4},
		{Tipo: 46, Folio: 9, Fecha: fecha, RutEmisor: rut(9000001), RazonSocial: "Vendedor Sin Factura", MntNeto: 10632, RetencionTotal: true},
		{Tipo: 60, Folio: 211, Fecha: fecha, RutEmisor: supplier, RazonSocial: "Proveedor Uno Ltda.", MntNeto: 9053, TpoDocRef: 33, FolioDocRef: 32},
	}
}

// The Libro de Compras of SET LIBRO DE COMPRAS 414177, every amount
// worked by hand (IVA 19 % of the row's neto, half up).
func TestComprasSet(t *testing.T) {
	e := theSets(t)
	out, err := libro.Compras(libro.Options{Emisor: e.creds.Emisor, At: at, FctProp: "0.60"}, e.creds.Cert, compras("2026-01-10"))
	if err != nil {
		t.Fatal(err)
	}
	oracles(t, out, "LibroCV_v10.xsd", "EnvioLibro")
	l, err := libro.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Caratula", l.Caratula, libro.Caratula{
		RutEmisorLibro: dtetest.EmisorRUT, RutEnvia: dtetest.SignerRUT, PeriodoTributario: "2026-01",
		FchResol: "2024-05-10", TipoOperacion: "COMPRA", TipoLibro: "ESPECIAL", TipoEnvio: "TOTAL", FolioNotificacion: 2,
	})
	supplier := rut(78000001)
	base := func(tipo int, folio, exe, neto int64) libro.Detalle {
		return libro.Detalle{TpoDoc: tipo, NroDoc: folio, TasaImp: "19", FchDoc: "2026-01-10", RUTDoc: supplier,
			RznSoc: "Proveedor Uno Ltda.", MntExe: exe, MntNeto: neto}
	}
	// 1. FACTURA 234: 53253 × 0.19 = 10118.07 → 10118; total 53253 + 10118 = 63371.
	r1 := base(30, 234, 0, 53253)
	r1.MntIVA, r1.MntTotal = 10118, 63371
	// 2. FACTURA ELECTRONICA 32: 11473 × 0.19 = 2179.87 → 2180; total
	// 10633 + 11473 + 2180 = 24286.
	r2 := base(33, 32, 10633, 11473)
	r2.MntIVA, r2.MntTotal = 2180, 24286
	// 3. FACTURA 781, IVA uso común: 30171 × 0.19 = 5732.49 → 5732, all of
	// it in IVAUsoComun (MntIVA 0); total 30171 + 5732 = 35903.
	r3 := base(30, 781, 0, 30171)
	r3.IVAUsoComun, r3.MntTotal = 5732, 35903
	// 4. NOTA DE CREDITO 451 to factura 234: 2928 × 0.19 = 556.32 → 556;
	// total 3484.
	r4 := base(60, 451, 0, 2928)
	r4.TpoDocRef, r4.FolioDocRef, r4.MntIVA, r4.MntTotal = 30, 234, 556, 3484
	// 5. FACTURA ELECTRONICA 67, entrega gratuita: 12135 × 0.19 = 2305.65 →
	// 2306, not recoverable, code 4 (MntIVA 0); total 12135 + 2306 = 14441.
	r5 := base(33, 67, 0, 12135)
	r5.IVANoRec, r5.MntTotal = []libro.IVANoRec{{CodIVANoRec: 4, MntIVANoRec: 2306}}, 14441
	// 6. FACTURA DE COMPRA 9, IVA retained in full: 10632 × 0.19 = 2020.08
	// → 2020 in MntIVA and in OtrosImp code 15; total = neto = 10632.
	r6 := base(46, 9, 0, 10632)
	r6.RUTDoc, r6.RznSoc = rut(9000001), "Vendedor Sin Factura"
	r6.MntIVA, r6.MntTotal = 2020, 10632
	r6.OtrosImp = []libro.OtroImp{{CodImp: 15, TasaImp: "19", MntImp: 2020}}
	// 7. NOTA DE CREDITO 211 to factura electrónica 32: 9053 × 0.19 =
	// 1720.07 → 1720; total 10773.
	r7 := base(60, 211, 0, 9053)
	r7.TpoDocRef, r7.FolioDocRef, r7.MntIVA, r7.MntTotal = 33, 32, 1720, 10773
	same(t, "Detalle", l.Detalle, []libro.Detalle{r1, r2, r3, r4, r5, r6, r7})
	same(t, "ResumenPeriodo", l.ResumenPeriodo, []libro.Totales{
		// 30: rows 1 and 3. Credit of IVA uso común 0.60 × 5732 = 3439.2 → 3439.
		{TpoDoc: 30, TotDoc: 2, TotMntNeto: 53253 + 30171, TotMntIVA: 10118, TotOpIVAUsoComun: 1, TotIVAUsoComun: 5732,
			FctProp: "0.6", TotCredIVAUsoComun: 3439, TotMntTotal: 63371 + 35903},
		// 33: rows 2 and 5.
		{TpoDoc: 33, TotDoc: 2, TotMntExe: 10633, TotMntNeto: 11473 + 12135, TotMntIVA: 2180,
			TotIVANoRec: []libro.TotIVANoRec{{CodIVANoRec: 4, TotOpIVANoRec: 1, TotMntIVANoRec: 2306}}, TotMntTotal: 24286 + 14441},
		// 46: row 6; the retention is not subtracted again.
		{TpoDoc: 46, TotDoc: 1, TotMntNeto: 10632, TotMntIVA: 2020,
			TotOtrosImp: []libro.TotOtrosImp{{CodImp: 15, TotMntImp: 2020}}, TotMntTotal: 10632},
		// 60: rows 4 and 7.
		{TpoDoc: 60, TotDoc: 2, TotMntNeto: 2928 + 9053, TotMntIVA: 556 + 1720, TotMntTotal: 3484 + 10773},
	})
	// No IVARetTotal anywhere: it is a sales field.
	if strings.Contains(string(out), "IVARetTotal") {
		t.Error("the purchase libro carries IVARetTotal")
	}
}

// The Libro de Guías of SET GUIA DE DESPACHO 428551 as SET LIBRO DE GUIAS
// 428552 (006-libro_guias.txt) asks: case 2 invoiced in the period, case 3
// annulled.
func TestGuiasSet(t *testing.T) {
	e := theSets(t)
	g := e.guias
	day := g[0].FechaEmision
	factura := e.basico[0]
	opts := libro.Options{Emisor: e.creds.Emisor, At: at,
		Anuladas: map[int64]int{g[2].Folio: libro.AnuladoDespues},
		Facturas: map[int64]libro.DocRef{g[1].Folio: {Tipo: 33, Folio: factura.Folio, Fecha: factura.FechaEmision}}}
	out, err := libro.Guias(opts, e.creds.Cert, g[0].XML, g[1].XML, g[2].XML)
	if err != nil {
		t.Fatal(err)
	}
	oracles(t, out, "LibroGuia_v10.xsd", "EnvioLibro")
	l, err := libro.ParseGuia(out)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Caratula", l.Caratula, libro.Caratula{
		RutEmisorLibro: dtetest.EmisorRUT, RutEnvia: dtetest.SignerRUT, PeriodoTributario: day[:7],
		FchResol: "2024-05-10", TipoLibro: "ESPECIAL", TipoEnvio: "TOTAL", FolioNotificacion: 3,
	})
	em := dtetest.DemoEmisor()
	// Case 1: traslado interno (5) to the company itself, no prices: 0.
	// Case 2: 202 × 4416 + 383 × 1263 = 892032 + 483729 = 1375761; IVA
	// 261394.59 → 261395; total 1637156; invoiced by the factura of case 1.
	// Case 3: annulled after it was sent: folio and mark only.
	same(t, "Detalle", l.Detalle, []libro.DetalleGuia{
		{Folio: g[0].Folio, TpoOper: 5, FchDoc: day, RUTDoc: em.Rut, RznSoc: em.RazonSocial},
		{Folio: g[1].Folio, TpoOper: 1, FchDoc: day, RUTDoc: rut(77000009), RznSoc: "Cliente de Guías S.A.",
			MntNeto: 1375761, TasaImp: "19", IVA: 261395, MntTotal: 1637156,
			TpoDocRef: 33, FolioDocRef: factura.Folio, FchDocRef: factura.FechaEmision},
		{Folio: g[2].Folio, Anulado: 2},
	})
	same(t, "ResumenPeriodo", l.ResumenPeriodo, &libro.ResumenGuias{TotGuiaAnulada: 1, TotGuiaVenta: 1, TotMntGuiaVta: 1637156,
		TotTraslado: []libro.TotTraslado{{TpoTraslado: 5, CantGuia: 1, MntGuia: 0}}})
}

// The RCOF of the boleta set's five boletas (prices with IVA included:
// neto = total / 1.19 rounded, IVA the rest).
func TestConsumoBoletas(t *testing.T) {
	e := theSets(t)
	var xmls [][]byte
	for _, b := range e.boletas {
		xmls = append(xmls, b.XML)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, xmls...)
	if err != nil {
		t.Fatal(err)
	}
	out, err := libro.ConsumoFolios(libro.Options{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, env)
	if err != nil {
		t.Fatal(err)
	}
	oracles(t, out, "ConsumoFolio_v10.xsd", "DocumentoConsumoFolios")
	c, err := libro.ParseConsumo(out)
	if err != nil {
		t.Fatal(err)
	}
	day := e.boletas[0].FechaEmision
	same(t, "Caratula", c.Caratula, libro.CaratulaConsumo{RutEmisor: dtetest.EmisorRUT, RutEnvia: dtetest.SignerRUT,
		FchResol: "2024-05-10", FchInicio: day, FchFinal: day, SecEnvio: 1, TmstFirmaEnv: at})
	// CASO-1: 19900 + 9900 = 29800; neto 29800 / 1.19 = 25042.02 → 25042,
	// IVA 4758. CASO-2: 17 × 120 = 2040; 1714.29 → 1714, IVA 326. CASO-3:
	// 2 × 1500 + 2 × 550 = 4100; 3445.38 → 3445, IVA 655. CASO-4: 8 × 1590 =
	// 12720 afecto, 10689.08 → 10689, IVA 2031, exento 2 × 1000 = 2000, total
	// 14720. CASO-5: 5 × 700 = 3500; 2941.18 → 2941, IVA 559.
	first := e.boletas[0].Folio
	same(t, "Resumen", c.Resumen, []libro.ResumenConsumo{{TipoDocumento: 39,
		MntNeto:        25042 + 1714 + 3445 + 10689 + 2941, // 43831
		MntIva:         4758 + 326 + 655 + 2031 + 559,      // 8329
		TasaIVA:        "19",
		MntExento:      2000,
		MntTotal:       29800 + 2040 + 4100 + 14720 + 3500, // 54160 = 43831 + 8329 + 2000
		FoliosEmitidos: 5, FoliosUtilizados: 5, RangoUtilizados: []libro.Rango{{Inicial: first, Final: first + 4}},
	}})
}

func TestRangos(t *testing.T) {
	same(t, "Rangos", libro.Rangos([]int64{7, 2, 3, 1, 3, 9, 8}), []libro.Rango{{1, 3}, {7, 9}})
	same(t, "Rangos(nil)", libro.Rangos(nil), []libro.Rango(nil))
}
