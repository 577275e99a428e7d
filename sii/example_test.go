package sii_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// Example asks a fake SII for a token and for the state of an envelope.
// Against the real services, leave Endpoints empty and pick the
// Environment.
func Example() {
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: "11111111-1", Bits: 1024})
	if err != nil {
		log.Fatal(err)
	}
	fake := siitest.New(siitest.Options{}).Start()
	defer fake.Close()
	fake.Register("11111111-1", "76192083-9")

	client, err := sii.New(sii.Config{Endpoints: fake.Endpoints(), Certificate: cert})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	token, err := client.Token(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("token length:", len(token))

	s, err := client.EnvelopeStatus(ctx, "76192083-9", "0000000001")
	if err != nil {
		log.Fatal(err)
	}
	o := sii.EnvelopeOutcome(s, 0)
	fmt.Println(s.Estado, s.ErrCode, o.Estado)
	// Output:
	// token length: 13
	// -11 1 procesando
}

// ExampleClient_DocumentStatusAdvanced asks getEstDteAv whether the SII
// received a document, and in which envelope, after an upload whose answer
// was lost. The signature is the DTE's own SignatureValue
// (dte.Document.SignatureValue of the signed XML). This fake never got the
// document, so there is no envelope to take the track id from: the
// caller may send it again.
func ExampleClient_DocumentStatusAdvanced() {
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: "11111111-1", Bits: 1024})
	if err != nil {
		log.Fatal(err)
	}
	fake := siitest.New(siitest.Options{}).Start()
	defer fake.Close()
	fake.Register("11111111-1", "76192083-9")
	client, err := sii.New(sii.Config{Endpoints: fake.Endpoints(), Certificate: cert})
	if err != nil {
		log.Fatal(err)
	}
	q := sii.DocumentQuery{RutEmisor: "76192083-9", RutReceptor: "76086428-5", Tipo: 33, Folio: 1001,
		FechaEmision: "2026-11-23", Monto: 119000}
	s, err := client.DocumentStatusAdvanced(context.Background(), q, "JG1Ig0pvSIH85kIK\nGRZUjkyX6CNaY08Y94j4UegTgDe8+w==")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("recibido %v, estado %s, envelope %q\n", s.Recibido, s.Estado, s.Envelope())
	// Output:
	// recibido false, estado FAU, envelope ""
}

// ExampleClient_RegisterRCV accepts a received factura in the SII's
// registry, as its receptor, and shows that a later claim is refused:
// the first decision stands. The fake knows the document because it was
// seeded; it would equally know one its issuer uploaded to it.
func ExampleClient_RegisterRCV() {
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: "11111111-1", Bits: 1024})
	if err != nil {
		log.Fatal(err)
	}
	fake := siitest.New(siitest.Options{}).Start()
	defer fake.Close()
	fake.Register("11111111-1", "76086428-5") // the signer acts for the receptor
	fake.SeedRCV(siitest.RCVSeed{RutEmisor: "76192083-9", RutReceptor: "76086428-5", Tipo: 33, Folio: 1001})

	client, err := sii.New(sii.Config{Endpoints: fake.Endpoints(), Certificate: cert})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	doc := sii.RCVDocument{RutEmisor: "76192083-9", Tipo: 33, Folio: 1001}
	for _, action := range []sii.RCVAction{sii.RCVAccept, sii.RCVClaimContent} {
		a, err := client.RegisterRCV(ctx, doc, action)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: codResp %d (%s) %s\n", action, a.Code, a.Outcome, a.Desc)
	}
	h, err := client.RCVEvents(ctx, doc)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range h.Events {
		fmt.Println("on record:", e.Action, e.Desc, "by", e.RutResponsable)
	}
	// Output:
	// ACD: codResp 0 (recorded) Acción Completada OK
	// RCD: codResp 11 (conflict) No se puede reclamar DTE previamente aceptado
	// on record: ACD Acepta Contenido del Documento by 11111111-1
}
