package intercambio_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/signer/signertest"
)

// Company A (the test credentials' demo company) sends a factura to
// company B; B receives the envelope, acknowledges it and rejects the
// factura; A reads both answers back.
func Example() {
	const rutB = "76086428-5"
	a, err := dtetest.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	em, err := a.Emitter(nil)
	if err != nil {
		log.Fatal(err)
	}
	factura, err := em.Emit(context.Background(), &dte.EmitirDTERequest{
		TipoDTE: dte.FacturaElectronica,
		Receptor: dte.Receptor{Rut: rutB, RazonSocial: "Compañía B Ltda.", Giro: "Comercio",
			Direccion: "Av. Matta 1200", Comuna: "Santiago"},
		Detalle: []dte.LineaDetalle{{Nombre: "Resma carta", Cantidad: "10", Precio: "2990"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	envio, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: a.Emisor, RutReceptor: rutB}, a.Cert, factura.XML)
	if err != nil {
		log.Fatal(err)
	}

	// B: receive, answer.
	certB, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: "15111111-4"})
	if err != nil {
		log.Fatal(err)
	}
	rec, err := intercambio.Receive(envio, intercambio.Options{Empresa: rutB, Verify: dte.VerifyOptions{Keys: a.Keys}, CodEnvio: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("envelope:", rec.Estado)
	for _, d := range rec.Documentos {
		fmt.Printf("tipo %d folio %d: %v\n", d.Tipo, d.Folio, d.Estado)
	}
	acuse, err := rec.Acuse(certB, intercambio.AnswerOptions{IdRespuesta: 1})
	if err != nil {
		log.Fatal(err)
	}
	resultado, _, err := rec.Resultado(certB, intercambio.AnswerOptions{IdRespuesta: 2},
		intercambio.Todos(intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: "precio distinto del pactado"}))
	if err != nil {
		log.Fatal(err)
	}

	// A: read the answers about its documents.
	for _, answer := range [][]byte{acuse, resultado} {
		r, err := intercambio.Read(answer, intercambio.ReadOptions{Empresa: dtetest.EmisorRUT})
		if err != nil {
			log.Fatal(err)
		}
		for _, d := range r.Documentos {
			line := fmt.Sprintf("%s from %s: tipo %d folio %d %s", r.Kind, r.RutResponde, d.Tipo, d.Folio, d.Outcome)
			if d.Motivo != "" {
				line += " (" + d.Motivo + ")"
			}
			fmt.Println(line)
		}
	}
	// Output:
	// envelope: 0 (Envio Recibido Conforme)
	// tipo 33 folio 1: 0 (DTE Recibido OK)
	// RecepcionEnvio from 76086428-5: tipo 33 folio 1 recibido
	// ResultadoDTE from 76086428-5: tipo 33 folio 1 rechazado (RECHAZADO: precio distinto del pactado)
}
