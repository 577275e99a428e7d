package sii_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// ExampleClient_UploadAEC cedes a factura the SII accepted to a factoring
// company: the AEC built with package cesion goes to the registry, its
// review is polled until it ends, and the registry then names the
// factoring company as the document's holder.
func ExampleClient_UploadAEC() {
	creds, err := dtetest.New(nil) // a test company, its certificate and CAFs
	if err != nil {
		log.Fatal(err)
	}
	fake := siitest.New(siitest.Options{CAFKeys: creds.Keys}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	client, err := sii.New(sii.Config{Endpoints: fake.Endpoints(), Certificate: creds.Cert})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// A factura the SII received and accepted.
	em, err := creds.Emitter(nil)
	if err != nil {
		log.Fatal(err)
	}
	factura, err := em.Emit(ctx, &dte.EmitirDTERequest{TipoDTE: 33,
		Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial B Ltda.", Giro: "Comercio", Direccion: "Av. Libertador 1449", Comuna: "Santiago", Ciudad: "Santiago"},
		Detalle:  []dte.LineaDetalle{{Nombre: "Servicio de transporte", Cantidad: "1", Precio: "100000"}}})
	if err != nil {
		log.Fatal(err)
	}
	envio, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: creds.Emisor}, creds.Cert, factura.XML)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Upload(ctx, dtetest.EmisorRUT, envio); err != nil {
		log.Fatal(err)
	}

	// The cesión to the factoring company, and its upload.
	aec, err := cesion.Ceder(cesion.Cedido{DTE: factura.XML, Firmante: creds.Cert}, cesion.Cesion{
		Cedente:    cesion.Parte{Email: "finanzas@emisor.cl"},
		Cesionario: cesion.Parte{RUT: "96790240-3", RazonSocial: "Factoring S.A.", Direccion: "Av. Apoquindo 3000", Email: "cesiones@factoring.cl"},
		Firmantes:  []*signer.Certificate{creds.Cert},
	}, cesion.Options{})
	if err != nil {
		log.Fatal(err)
	}
	up, err := client.UploadAEC(ctx, dtetest.EmisorRUT, "finanzas@emisor.cl", aec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("upload:", sii.AECUploadOutcome(up).Kind)
	for {
		s, err := client.AECStatus(ctx, up.TrackID)
		if err != nil {
			log.Fatal(err)
		}
		o := sii.AECStatusOutcome(s)
		fmt.Println(o.Code, o.Kind)
		if o.Kind != sii.CesionPending {
			break
		}
	}
	// The registry now answers that the document is ceded.
	st, err := client.CesionStatus(ctx, sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 33, Folio: factura.Folio})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("cedido:", st.Cedido, st.Header.Glosa)
	// Output:
	// upload: pending
	// RCP pending
	// SOK pending
	// FSO pending
	// COK pending
	// VDC pending
	// VCS pending
	// EOK accepted
	// cedido: true Documento Cedido
}
