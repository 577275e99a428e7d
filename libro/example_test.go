package libro_test

import (
	"fmt"
	"log"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/libro"
)

// The Libro de Compras of a certification set: three rows of the set's
// table, the factor de proporcionalidad it states, and the company's
// resolution (NroResol 0 in certification). The result is signed and ready
// for DTEUpload; reading it back shows the totals per type. By hand: 30 has
// 53253 and 30171 of neto, IVA 10118 (53253 × 19 % = 10118.07) plus 5732
// of uso común (30171 × 19 % = 5732.49), a credit of 0.60 × 5732 = 3439.2
// → 3439, and totals 63371 + 35903 = 99274; the factura de compra 46 with
// its IVA (2020) retained totals its neto, 10632.
func ExampleCompras() {
	creds, err := dtetest.New(nil) // a test company, certificate and CAFs
	if err != nil {
		log.Fatal(err)
	}
	supplier := "78000001-5"
	signed, err := libro.Compras(libro.Options{Emisor: creds.Emisor, FctProp: "0.60"}, creds.Cert, []libro.Compra{
		{Tipo: 30, Folio: 234, Fecha: "2026-01-10", RutEmisor: supplier, MntNeto: 53253},
		{Tipo: 30, Folio: 781, Fecha: "2026-01-10", RutEmisor: supplier, MntNeto: 30171, IVAUsoComun: true},
		{Tipo: 46, Folio: 9, Fecha: "2026-01-10", RutEmisor: supplier, MntNeto: 10632, RetencionTotal: true},
	})
	if err != nil {
		log.Fatal(err)
	}
	l, err := libro.Parse(signed)
	if err != nil {
		log.Fatal(err)
	}
	c := l.Caratula
	fmt.Println(c.TipoOperacion, c.TipoLibro, c.TipoEnvio, c.PeriodoTributario, "FolioNotificacion", c.FolioNotificacion)
	for _, t := range l.ResumenPeriodo {
		fmt.Printf("tipo %d: %d docs, neto %d, IVA %d, uso común %d (crédito %d), total %d\n",
			t.TpoDoc, t.TotDoc, t.TotMntNeto, t.TotMntIVA, t.TotIVAUsoComun, t.TotCredIVAUsoComun, t.TotMntTotal)
	}
	// Output:
	// COMPRA ESPECIAL TOTAL 2026-01 FolioNotificacion 2
	// tipo 30: 2 docs, neto 83424, IVA 10118, uso común 5732 (crédito 3439), total 99274
	// tipo 46: 1 docs, neto 10632, IVA 2020, uso común 0 (crédito 0), total 10632
}
