package pdf_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/pdf"
)

// FuzzRender feeds arbitrary texts, numbers and TED bytes into an emitted
// document's fields (as a hand-made or corrupted *dte.Document could hold
// them) and renders it in both formats: Render must never panic, and it
// either fails with one of its typed errors or writes a complete PDF.
func FuzzRender(f *testing.F) {
	f.Add("Aceite de oliva", "Tueste medio\nColombia", "12", "6490", "-7788", "Comercial Ñandú & Cía.", "76086428-5", "490218", []byte("<TED/>"), uint8(0), false)
	f.Add("", "", "", "", "", "", "", "", []byte{}, uint8(1), true)
	f.Add("漢字\x00\x01\u202e", "\t\r\n\n\n", "1e309", "-0.0000001", "NaN", "\xff\xfe", "1-9", "-5", bytes.Repeat([]byte{0xff}, 1100), uint8(1), false)
	f.Add("PALABRASINESPACIOSPALABRASINESPACIOSPALABRASINESPACIOSPALABRASINESPACIOSPALABRA", "x", "999999999999999999", "0.000001", "1", "(paréntesis) \\ barra", "K", "1.5", []byte("(\\)"), uint8(2), true)
	base := samples(f)[dte.FacturaElectronica].doc
	f.Fuzz(func(t *testing.T, name, desc, qty, price, disc, razon, rut, total string, ted []byte, format uint8, cedible bool) {
		doc := copyDoc(base)
		doc.Detalle = []dte.DocLine{
			{NroLinDet: 1, Nombre: name, Descripcion: desc, Cantidad: dte.Decimal(qty), Precio: dte.Decimal(price),
				DescuentoMonto: dte.Decimal(disc), DescuentoPct: dte.Decimal(qty), MontoItem: dte.Decimal(total), Unidad: razon},
		}
		doc.Receptor.RazonSocial = razon
		doc.Receptor.Rut = rut
		doc.Emisor.Giro = desc
		doc.Totales.MntTotal = dte.Decimal(total)
		doc.Totales.TpoMoneda = name
		doc.Referencias = []dte.Referencia{{TipoDocRef: dte.RefCodigo(name), RazonRef: desc, FechaRef: qty}}
		doc.DescuentosGlobales = []dte.DscRcgGlobal{{TpoMov: disc, TpoValor: price, ValorDR: dte.Decimal(disc), GlosaDR: name}}
		doc.FechaEmision = qty
		doc.TED = ted
		switch format % 3 {
		case 1:
			doc.Tipo = dte.BoletaElectronica
		case 2:
			doc.Tipo = dte.FacturaExportacionElectronica
			doc.Export = &dte.ExportData{TpoMoneda: name, ClausulaVenta: price, Marcas: desc, PesoBruto: dte.Decimal(qty),
				PuertoEmbarque: qty, PuertoDesembarque: total, PaisRecep: disc, PaisDest: price, TipoBulto: total, Nacionalidad: rut}
		}
		for _, fm := range []pdf.Format{pdf.Carta, pdf.Termica80} {
			var buf bytes.Buffer
			err := pdf.Render(&buf, doc, pdf.Options{Format: fm, Cedible: cedible, Resolucion: testResolucion, OficinaSII: razon})
			if err != nil {
				if !errors.Is(err, pdf.ErrNoTimbre) && !errors.Is(err, pdf.ErrNoCedible) &&
					!errors.Is(err, pdf.ErrFormat) && !errors.Is(err, pdf.ErrDocument) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			out := buf.Bytes()
			if !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(out), []byte("%%EOF")) {
				t.Fatalf("incomplete PDF (%d bytes)", len(out))
			}
		}
	})
}
