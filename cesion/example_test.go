package cesion_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer"
)

// A company emits a factura, cedes it to a factoring company, and the
// factoring company verifies the AEC it receives.
func Example() {
	creds, err := dtetest.New(nil) // test CAFs and a test certificate
	if err != nil {
		log.Fatal(err)
	}
	em, err := creds.Emitter(nil)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("../testdata/requests/factura.json")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	req, err := dte.DecodeRequest(f)
	if err != nil {
		log.Fatal(err)
	}
	factura, err := em.Emit(context.Background(), req)
	if err != nil {
		log.Fatal(err)
	}

	aec, err := cesion.Ceder(
		cesion.Cedido{DTE: factura.XML, Firmante: creds.Cert},
		cesion.Cesion{
			// The cedente's RUT, name and address come from the DTE.
			Cedente:    cesion.Parte{Email: "finanzas@empresa.cl"},
			Cesionario: cesion.Parte{RUT: "96790240-3", RazonSocial: "Factoring S.A.", Direccion: "Av. Apoquindo 3000", Email: "cesiones@factoring.cl"},
			Firmantes:  []*signer.Certificate{creds.Cert},
		},
		cesion.Options{At: time.Now()})
	if err != nil {
		log.Fatal(err)
	}

	rep, err := cesion.Verify(aec, cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: creds.Keys}, Policy: cesion.PolicyStrict})
	if err != nil {
		log.Fatal(err)
	}
	c := rep.Cesiones[0]
	fmt.Printf("factura %d ceded by %s to %s for its total: %v\n", rep.Documento.Tipo, c.Cedente.RUT, c.Cesionario.RUT,
		fmt.Sprint(c.Monto) == fmt.Sprint(factura.MontoTotal))
	for _, s := range rep.Firmas {
		fmt.Println(s.Nivel, s.OK)
	}
	// Output:
	// factura 33 ceded by 76192083-9 to 96790240-3 for its total: true
	// DTE true
	// DTECedido true
	// Cesion[1] true
	// AEC true
}
