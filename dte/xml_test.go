package dte

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The special characters every oracle request carries in its names: an
// ñ and accents (two bytes in UTF-8, one in ISO-8859-1), and the five
// characters XML cares about.
const (
	specialRazon = `Pérez & Hijos <Ñuñoa> "El 'Sol'" Ltda.`
	specialItem  = `Café «Ñandú» & <té> 'frío' "ácido"`
)

func iptr(n int) *int       { return &n }
func i64ptr(n int64) *int64 { return &n }

// OracleRequests returns one emission request per supported type, each with
// names carrying ñ, accents, an ampersand, a '<', an apostrophe and a double
// quote. It is exported only to this package's external tests.
func OracleRequests() map[TipoDTE]*EmitirDTERequest { return oracleRequests() }

func oracleRequests() map[TipoDTE]*EmitirDTERequest {
	recep := Receptor{Rut: "77777777-7", RazonSocial: specialRazon, Giro: "Importación & exportación",
		Direccion: "Av. Providencia 1234, of. 5", Comuna: "Providencia", Ciudad: "Santiago"}
	foreign := Receptor{Rut: "55555555-5", RazonSocial: `Müller & Söhne <GmbH> "Köln's"`, Giro: "Importador",
		Direccion: "Hauptstraße 1", Comuna: "Köln", Ciudad: "Köln"}
	lines := func() []LineaDetalle {
		return []LineaDetalle{
			{Nombre: specialItem, DscItem: `Descripción con "comillas" & <ángulos>`, Cantidad: "2", Unidad: "UN", Precio: "15990", DescuentoPct: "10"},
			{Nombre: "Servicio de instalación", Cantidad: "1.5", Unidad: "HR", Precio: "20000"},
		}
	}
	export := func() *ExportData {
		return &ExportData{TpoMoneda: "DOLAR USA", TpoCambio: "950.25", Nacionalidad: "225", NumID: "X-99 & <7>",
			FormaPagoExp: iptr(1), ModalidadVenta: iptr(1), ClausulaVenta: "FOB", TotalClausula: "1200.5",
			ViaTransporte: iptr(1), PuertoEmbarque: "906", PuertoDesembarque: "0345",
			PesoBruto: "120.5", UnidadPesoBruto: iptr(6), PesoNeto: "100", UnidadPesoNeto: iptr(6),
			TipoBulto: "75", TotalBultos: i64ptr(3), Marcas: `Frágil <arriba> & "seco"`,
			MntFlete: "50.25", MntSeguro: "10", PaisRecep: "225", PaisDest: "225"}
	}
	ref := func(t TipoDTE, folio int64, cod int) []Referencia {
		return []Referencia{{TipoDocRef: RefTipo(t), FolioRef: folio, FechaRef: "2026-01-15", CodigoRef: iptr(cod),
			RazonRef: `Corrige "monto" & <precio> de Ñandú`}}
	}
	return map[TipoDTE]*EmitirDTERequest{
		33: {TipoDTE: 33, Receptor: recep, Detalle: lines(),
			DescuentosGlobales: []DscRcgGlobal{{TpoMov: "D", TpoValor: "%", ValorDR: "5", GlosaDR: `Descuento "cliente" & <fiel>`}}},
		34: {TipoDTE: 34, Receptor: recep, Detalle: lines()},
		39: {TipoDTE: 39, Receptor: Receptor{Rut: "66666666-6", RazonSocial: "Cliente boleta «Ñ» & <1>"}, Detalle: []LineaDetalle{
			{Nombre: specialItem, Cantidad: "3", Precio: "1190"},
			{Nombre: "Bebida 'Ñam' & <cía>", Cantidad: "1", Precio: "990", DescuentoPct: "5"},
		}},
		41: {TipoDTE: 41, Receptor: Receptor{Rut: "77777777-7", RazonSocial: specialRazon}, Detalle: []LineaDetalle{
			{Nombre: specialItem, Cantidad: "2", Precio: "2500"},
		}},
		43: {TipoDTE: 43, Receptor: recep, Detalle: []LineaDetalle{
			{TipoDocLiq: "33", Nombre: specialItem, Cantidad: "10", Precio: "1000"},
			{TipoDocLiq: "33", Nombre: "Venta por cuenta de terceros", Cantidad: "1", Precio: "5000", MontoItem: "5000"},
		}, Comisiones: []ComisionDTE{{TipoMovim: "C", Glosa: `Comisión "venta" & <flete>`, TasaComision: "5", ValComNeto: 750, ValComExe: 0}}},
		46: {TipoDTE: 46, Receptor: recep, Detalle: lines(),
			ImpuestosRetenciones: []ImpuestoRetencion{{TipoImp: 15, TasaImp: "19"}}},
		52: {TipoDTE: 52, Receptor: recep, Detalle: lines(), IndTraslado: iptr(1), TipoDespacho: iptr(2),
			Transporte: &Transporte{Patente: "KX-RT45", RutTransportista: "77123456-9",
				Chofer:           &Chofer{Rut: "16789012-1", Nombre: `Juan "Ñato" Pérez & <hijo>`},
				DireccionDestino: `Bodega <B> & "Patio 3", Ruta 5 km 12`, ComunaDestino: "Ñuñoa", CiudadDestino: "Santiago"}},
		56: {TipoDTE: 56, Receptor: recep, Detalle: lines(), Referencias: ref(33, 1001, 3)},
		61: {TipoDTE: 61, Receptor: recep, Detalle: lines(), Referencias: ref(33, 1001, 1)},
		110: {TipoDTE: 110, Receptor: foreign, Detalle: []LineaDetalle{
			{Nombre: specialItem, Cantidad: "10", Unidad: "KG", Precio: "12.5"},
			{Nombre: "Vino «Reserva» & <Carménère>", Cantidad: "12", Unidad: "BOT", Precio: "8.75"},
		}, ExportData: export(), IndServicio: iptr(3),
			Transporte: &Transporte{Patente: "BBCL22", RutTransportista: "96512340-7", DireccionDestino: "Puerto de San Antonio, sitio 3",
				ComunaDestino: "San Antonio", CiudadDestino: "San Antonio"}},
		111: {TipoDTE: 111, Receptor: foreign, Detalle: []LineaDetalle{
			{Nombre: specialItem, Cantidad: "1", Precio: "25.5"},
		}, ExportData: export(), Referencias: ref(110, 1001, 3)},
		112: {TipoDTE: 112, Receptor: foreign, Detalle: []LineaDetalle{
			{Nombre: specialItem, Cantidad: "2", Precio: "12.5"},
		}, ExportData: export(), Referencias: ref(110, 1001, 1)},
	}
}

func TestXWEscapeLatin1(t *testing.T) {
	w := &xw{}
	w.text("A", "f", ` <Ñu & "ñ" 'x'> `, 0)
	if w.err != nil {
		t.Fatal(w.err)
	}
	// Hand-written expectation: the trimmed text with &, < and > escaped,
	// quotes literal, and Ñ/ñ as the single ISO-8859-1 bytes D1 and F1.
	want := "<A>&lt;\xD1u &amp; \"\xF1\" 'x'&gt;</A>"
	if string(w.buf) != want {
		t.Fatalf("got %q, want %q", w.buf, want)
	}
}

func TestXWRejectsNonLatin1(t *testing.T) {
	for _, tc := range []struct {
		in   string
		code DetailCode
	}{
		{"precio en €", CodeNotLatin1},
		{"emoji 😀", CodeNotLatin1},
		{"curly “quotes”", CodeNotLatin1},
		{"bell \a", CodeInvalidCharacter},
		{"c1 \u0085 mid", CodeInvalidCharacter},
		{"bad \xff utf8", CodeNotLatin1},
	} {
		w := &xw{}
		w.text("NmbItem", "detalle[3].nombre", tc.in, 0)
		var ve *ValidationError
		if !errors.As(w.err, &ve) || len(ve.Details) != 1 {
			t.Fatalf("%q: got %v, want a ValidationError", tc.in, w.err)
		}
		if d := ve.Details[0]; d.Field != "detalle[3].nombre" || d.Code != tc.code {
			t.Errorf("%q: got %s/%s, want detalle[3].nombre/%s", tc.in, d.Field, d.Code, tc.code)
		}
	}
}

func TestXWClipAndDecimals(t *testing.T) {
	if got := xwClip("  ÑandúÑandú  ", 6); got != "ÑandúÑ" {
		t.Errorf("clip by characters: %q", got)
	}
	for in, want := range map[Decimal]string{
		"+1.50": "1.5", "007": "7", "-0.000": "0", "12.000100": "12.0001", "0.5": "0.5", "-3.10": "-3.1", "100": "100",
	} {
		if got := xwNormDec(in); got != want {
			t.Errorf("xwNormDec(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[Decimal]int{"0": 0, "0.00": 0, "-0.01": -1, "+2": 1, "0.001": 1, "abc": 0} {
		if got := xwSign(in); got != want {
			t.Errorf("xwSign(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestDocumentID(t *testing.T) {
	if got := DocumentID(33, 1001); got != "T33F1001" {
		t.Fatalf("DocumentID = %q", got)
	}
}

func TestExportCodes(t *testing.T) {
	w := &xw{}
	docAduana(w, &ExportData{ClausulaVenta: "fob", PuertoEmbarque: "906", PuertoDesembarque: "0345", PaisDest: "225"})
	if w.err != nil {
		t.Fatal(w.err)
	}
	s := string(w.buf)
	for _, want := range []string{"<CodClauVenta>5</CodClauVenta>", "<CodPtoEmbarque>906</CodPtoEmbarque>",
		"<CodPtoDesemb>345</CodPtoDesemb>", "<CodPaisDestin>225</CodPaisDestin>"} {
		if !strings.Contains(s, want) {
			t.Errorf("Aduana lacks %s: %s", want, s)
		}
	}
	w = &xw{}
	docAduana(w, &ExportData{PaisRecep: "Alemania"})
	var ve *ValidationError
	if !errors.As(w.err, &ve) || ve.Details[0].Field != "export_data.pais_recep" {
		t.Fatalf("a country name must be refused naming the field, got %v", w.err)
	}
}

// SeedDocuments returns one unsigned document per type, written from the
// oracle requests with a stand-in TED and Signature (structurally complete,
// cryptographically meaningless): fuzz seeds that need no credentials. It
// is exported only to this package's external tests.
func SeedDocuments() [][]byte {
	em := &Emisor{Rut: "76192083-9", RazonSocial: "Comercializadora Ñuñoa & Cía. Ltda.", Giro: "Comercio",
		Direccion: "Irarrázaval 2401", Comuna: "Ñuñoa", Ciudad: "Santiago", Acteco: []int{465100}}
	var out [][]byte
	for _, tipo := range Tipos() {
		req := oracleRequests()[tipo]
		tot, err := ComputeTotals(req)
		if err != nil {
			continue
		}
		p, err := prepareDoc(&docInput{req: req, tot: tot, em: em, fecha: "2026-01-15"})
		if err != nil {
			continue
		}
		ted := `<TED version="1.0"><DD><RE>76192083-9</RE><TD>` + tipo.String() + `</TD><F>7</F><FE>2026-01-15</FE><RR>` +
			p.rr + `</RR><RSR>` + "P\xe9rez" + `</RSR><MNT>1</MNT><IT1>x</IT1><CAF version="1.0"><DA><RE>76192083-9</RE></DA>` +
			`<FRMA algoritmo="SHA1withRSA">AA==</FRMA></CAF><TSTED>2026-01-15T10:00:00</TSTED></DD><FRMT algoritmo="SHA1withRSA">AA==</FRMT></TED>`
		doc := p.assemble(7, []byte(ted), time.Date(2026, 1, 15, 10, 0, 0, 0, SantiagoLocation()))
		sig := `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo><Reference URI="#` + DocumentID(tipo, 7) +
			`"><DigestValue>AA==</DigestValue></Reference></SignedInfo><SignatureValue>AA==</SignatureValue></Signature>`
		i := len(doc) - len("</DTE>")
		out = append(out, append(append(doc[:i:i], sig...), "</DTE>"...))
	}
	return out
}
