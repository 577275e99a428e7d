package signertest_test

import (
	"fmt"
	"log"

	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// A test certificate is written as a .p12 file, the form a user receives
// from a certification authority, and read back the way a real one is.
func Example() {
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Ana Prueba", RUT: "7.880.442-4", Bits: 1024})
	if err != nil {
		log.Fatal(err)
	}
	p12, err := signertest.EncodePKCS12(cert, "secreto", signertest.Legacy)
	if err != nil {
		log.Fatal(err)
	}
	loaded, err := signer.Load(p12, "secreto")
	if err != nil {
		log.Fatal(err)
	}
	rut, _ := loaded.RUT()
	fmt.Println(loaded.Leaf.Subject.CommonName, rut)
	_, err = signer.Load(p12, "otra")
	fmt.Println(err != nil)
	// Output:
	// Ana Prueba 7880442-4
	// true
}
