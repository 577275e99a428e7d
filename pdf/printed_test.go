package pdf_test

import (
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/pdf"
)

// TestPrintedGlobalsAndLongNames reads, with pdftotext, what a reader of
// the paper sees for global discounts and surcharges and for a name longer
// than NmbItem's 80 characters.
func TestPrintedGlobalsAndLongNames(t *testing.T) {
	exento := 1
	longName := "Servicio de mantención preventiva anual de equipos de refrigeración industrial, incluye repuestos menores y traslado"
	req := &dte.EmitirDTERequest{
		TipoDTE:      33,
		FechaEmision: "2025-05-14",
		Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Prueba Ltda.", Giro: "Comercio",
			Direccion: "Av. Siempre Viva 742", Comuna: "Santiago", Ciudad: "Santiago"},
		Detalle: []dte.LineaDetalle{
			{Nombre: "Tornillo 3 mm", Cantidad: "2", Precio: "50000"},
			{Nombre: "Tuerca 3 mm", Cantidad: "1", Precio: "20000"},
			{IndExe: &exento, Nombre: longName, Cantidad: "1", Precio: "30000"},
		},
		DescuentosGlobales: []dte.DscRcgGlobal{
			{TpoMov: "D", TpoValor: "%", ValorDR: "10", GlosaDR: "Cliente frecuente"},
			{TpoMov: "R", TpoValor: "$", ValorDR: "5000", GlosaDR: "Flete", IndExeDR: &exento},
		},
	}
	s := emit(t, "globals", req)
	for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
		b, err := pdf.RenderBytes(s.doc, pdf.Options{Format: f, Resolucion: testResolucion, OficinaSII: "Ñuñoa"})
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		file := writeTemp(t, t.TempDir(), "globals.pdf", b)
		txt := squash(pdfText(t, file, false, 0, 0))
		// By hand: taxable lines 2 × 50.000 + 1 × 20.000 = 120.000, 10 %
		// of it 12.000; the exempt line is 30.000 and carries the 5.000
		// surcharge.
		for _, want := range []string{
			"sobre afecto $ 120.000", "-$ 12.000 (10%)",
			"sobre exento $ 30.000", "+$ 5.000",
			"S.I.I. - ÑUÑOA",
		} {
			if !strings.Contains(txt, want) {
				t.Errorf("%v: the PDF lacks %q:\n%s", f, want, txt)
			}
		}
		// The whole name, once: NmbItem holds its first 80 characters and
		// DscItem the whole name, which must not print both.
		if n := strings.Count(txt, "Servicio de mantención"); n != 1 {
			t.Errorf("%v: the long name is printed %d times:\n%s", f, n, txt)
		}
		if !strings.Contains(txt, "incluye repuestos menores y traslado") {
			t.Errorf("%v: the end of the long name is missing:\n%s", f, txt)
		}
		// Wrapped at word boundaries: no word of the name is split.
		raw := pdfText(t, file, false, 0, 0)
		for _, w := range strings.Fields(longName) {
			if len(w) > 3 && !strings.Contains(raw, w) {
				t.Errorf("%v: the word %q of the name was broken across lines", f, w)
			}
		}
	}
}

// TestPrintedOfficeNeverGuessed: without an SII office the PDF says so.
func TestPrintedOfficeNeverGuessed(t *testing.T) {
	s := samples(t)[dte.FacturaElectronica]
	b, err := pdf.RenderBytes(s.doc, pdf.Options{Resolucion: testResolucion})
	if err != nil {
		t.Fatal(err)
	}
	txt := squash(pdfText(t, writeTemp(t, t.TempDir(), "office.pdf", b), false, 0, 0))
	if !strings.Contains(txt, pdf.OficinaNoInformada) || strings.Contains(txt, "SANTIAGO CENTRO") {
		t.Errorf("office: %s", txt)
	}
}

// TestPrintedCustomsNames reads, with pdftotext, the customs data of an
// export factura (110): every code the XML carries is printed with the
// name the customs tables give it, and a code the tables lack as its
// number. The names are written here by hand from the rows of
// ../shared/sii/aduana/*.csv.
func TestPrintedCustomsNames(t *testing.T) {
	req := readRequest(t, "factura_exportacion")
	x := req.ExportData
	one, six, unknownUnit := 1, 6, 77
	tara := int64(120)
	x.Nacionalidad = "563"                     // paises: ALEMANIA
	x.FormaPagoExp = &one                      // formas de pago: COB1, COBRANZA HASTA 1 AÑO
	x.ModalidadVenta = &one                    // modalidades: A FIRME
	x.ClausulaVenta = "FCA"                    // written as 10; clausulas: FCA
	x.ViaTransporte = &one                     // vias: MARITIMA, FLUVIAL Y LACUSTRE
	x.PuertoEmbarque = "906"                   // puertos: SAN ANTONIO
	x.PuertoDesembarque = "112"                // puertos: COSTA DEL PACÍFICO, OTROS NO ESPECIFICADOS
	x.PaisRecep = "400"                        // not in paises
	x.PaisDest = "225"                         // paises: ESTADOS UNIDOS DE AMÉRICA
	x.TipoBulto = "22"                         // bultos: CAJA DE CARTON, CAJAS DE CARTÓN, LATA O ...
	x.UnidadPesoBruto = &six                   // unidades: KN, KILOGRAMO NETO
	x.UnidadPesoNeto = &six                    // idem
	x.Tara, x.UnidadTara = &tara, &unknownUnit // 77 is not in unidades
	s := emit(t, "aduana", req)
	for _, el := range []string{"<Nacionalidad>563</Nacionalidad>", "<FmaPagExp>1</FmaPagExp>", "<CodClauVenta>10</CodClauVenta>",
		"<CodPtoEmbarque>906</CodPtoEmbarque>", "<CodPtoDesemb>112</CodPtoDesemb>", "<CodPaisRecep>400</CodPaisRecep>",
		"<CodPaisDestin>225</CodPaisDestin>", "<CodTpoBultos>22</CodTpoBultos>", "<CodUnidMedTara>77</CodUnidMedTara>"} {
		if !strings.Contains(string(s.xml), el) {
			t.Fatalf("the emitted XML lacks %s", el)
		}
	}
	b, err := pdf.RenderBytes(s.doc, pdf.Options{Resolucion: testResolucion})
	if err != nil {
		t.Fatal(err)
	}
	layout := pdfText(t, writeTemp(t, t.TempDir(), "aduana.pdf", b), true, 0, 0)
	for _, c := range []struct{ label, want string }{
		{"Nacionalidad:", "ALEMANIA (563)"},
		{"Forma de pago:", "COBRANZA HASTA 1 AÑO (COB1, código 1)"},
		{"Modalidad de venta:", "A FIRME (1)"},
		{"Cláusula de venta:", "FCA (10)"},
		{"Vía de transporte:", "MARITIMA, FLUVIAL Y LACUSTRE (1)"},
		{"Puerto de embarque:", "SAN ANTONIO (906)"},
		{"Puerto de desembarque:", "COSTA DEL PACÍFICO, OTROS NO ESPECIFICADOS (112)"},
		{"País receptor:", "código 400 (no listado)"},
		{"País de destino:", "ESTADOS UNIDOS DE AMÉRICA (225)"},
		{"Tipo de bulto:", "CAJAS DE CARTÓN, LATA O DE CUALQUIER OTRO MATERIAL EXCEPTO MADERA (22)"},
		{"Peso bruto:", "10.450,5 KN (KILOGRAMO NETO)"},
		{"Peso neto:", "10.000 KN (KILOGRAMO NETO)"},
		{"Tara:", "120 (unidad código 77, no listada)"},
	} {
		if got, ok := layoutValue(layout, c.label); !ok || got != c.want {
			t.Errorf("%s %q, want %q", c.label, got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("pdftotext -layout:\n%s", layout)
	}
}

// TestPrintedTransporte reads, with pdftotext, the transport data of the
// guía de despacho of testdata/requests (Res. Ex. SII 154/2025): vehicle,
// carrier, driver and destination under "Datos de transporte", the RUTs
// with their dots. The expected text is written here by hand from the
// request file.
func TestPrintedTransporte(t *testing.T) {
	t.Parallel()
	s := emit(t, "transporte", readRequest(t, "guia_despacho"))
	if !strings.Contains(string(s.xml), "<Patente>KXRT45</Patente>") {
		t.Fatal("the emitted guía carries no Patente")
	}
	b, err := pdf.RenderBytes(s.doc, pdf.Options{Resolucion: testResolucion})
	if err != nil {
		t.Fatal(err)
	}
	layout := pdfText(t, writeTemp(t, t.TempDir(), "transporte.pdf", b), true, 0, 0)
	if !strings.Contains(layout, "Datos de transporte") {
		t.Error(`no "Datos de transporte" block`)
	}
	for _, c := range []struct{ label, want string }{
		{"Patente:", "KXRT45"},
		{"RUT transportista:", "77.123.456-9"},
		{"Chofer:", "Juan Ñancucheo Pérez"},
		{"RUT chofer:", "16.789.012-1"},
		{"Dirección destino:", "Obra Los Canelos, Camino a Penco 1480"},
		{"Comuna destino:", "Penco"},
		{"Ciudad destino:", "Penco"},
		{"Traslado:", "Operación constituye venta"},
	} {
		if got, ok := layoutValue(layout, c.label); !ok || got != c.want {
			t.Errorf("%s %q, want %q", c.label, got, c.want)
		}
	}
	if t.Failed() {
		t.Logf("pdftotext -layout:\n%s", layout)
	}
}
