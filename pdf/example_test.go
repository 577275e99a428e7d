package pdf_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/pdf"
)

// A signed DTE, as stored or received, is read back and printed on letter
// paper with the issuer's resolution and SII office, then on 80 mm paper.
func Example() {
	// A signed factura from test credentials (a real caller reads its own
	// stored XML instead).
	creds, err := dtetest.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	em, err := creds.Emitter(time.Now)
	if err != nil {
		log.Fatal(err)
	}
	signed, err := em.Emit(context.Background(), &dte.EmitirDTERequest{
		TipoDTE:  dte.FacturaElectronica,
		Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Prueba Ltda.", Giro: "Comercio", Direccion: "Av. Siempre Viva 742", Comuna: "Santiago", Ciudad: "Santiago"},
		Detalle:  []dte.LineaDetalle{{Nombre: "Resma carta 500 hojas", Cantidad: "10", Precio: "4990"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	doc, err := dte.ParseDTE(signed.XML)
	if err != nil {
		log.Fatal(err)
	}
	opts := pdf.OptionsFor(creds.Emisor) // resolution and SII office of the issuer
	letter, err := pdf.RenderBytes(doc, opts)
	if err != nil {
		log.Fatal(err)
	}
	opts.Format = pdf.Termica80
	var roll bytes.Buffer
	if err := pdf.Render(&roll, doc, opts); err != nil {
		log.Fatal(err)
	}
	fmt.Println(doc.Tipo.Name(), doc.Folio)
	fmt.Println(bytes.HasPrefix(letter, []byte("%PDF-")), bytes.HasPrefix(roll.Bytes(), []byte("%PDF-")))
	// Output:
	// FACTURA ELECTRÓNICA 1
	// true true
}
