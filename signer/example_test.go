package signer_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// A Documento is signed where it stands, then verified: the result names
// the signer and the exact bytes the signature covers, and an edit to
// those bytes is caught.
func Example() {
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Ana Prueba", RUT: "7.880.442-4", Bits: 1024})
	if err != nil {
		log.Fatal(err)
	}
	doc := []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n" +
		`<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="T33F1"><Folio>1</Folio></Documento></DTE>`)
	signed, err := cert.SignEnveloped(doc, "T33F1")
	if err != nil {
		log.Fatal(err)
	}
	res, err := signer.Verify(signed)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Println(r.URI, r.RUT, r.Err == nil)
		fmt.Printf("%s\n", signed[r.RefStart:r.RefEnd])
	}
	tampered := bytes.Replace(signed, []byte("<Folio>1<"), []byte("<Folio>2<"), 1)
	_, err = signer.Verify(tampered)
	fmt.Println(errors.Is(err, signer.ErrDigestMismatch))
	// Output:
	// #T33F1 7880442-4 true
	// <Documento ID="T33F1"><Folio>1</Folio></Documento>
	// true
}
