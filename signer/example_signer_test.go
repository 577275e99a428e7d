package signer_test

import (
	"crypto"
	"crypto/rsa"
	"fmt"
	"io"
	"log"

	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// remoteKey stands for a key that never enters the process (a PKCS#11
// token, a cloud KMS, an OpenSSL engine): anything with Public and Sign.
// Here it forwards to a key in memory and counts the requests.
type remoteKey struct {
	priv  *rsa.PrivateKey
	calls int
}

func (k *remoteKey) Public() crypto.PublicKey { return k.priv.Public() }

func (k *remoteKey) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	k.calls++ // a real one would send digest to the device here
	return rsa.SignPKCS1v15(rand, k.priv, opts.HashFunc(), digest)
}

// A credential whose private key lives elsewhere: New takes the
// certificate and any crypto.Signer whose public key is the certificate's,
// and every signature is one Sign call with a SHA-1 digest.
func ExampleNew() {
	loaded, err := signertest.NewCertificate(nil, signertest.CertOptions{CommonName: "Ana Prueba", RUT: "7.880.442-4", Bits: 1024})
	if err != nil {
		log.Fatal(err)
	}
	key := &remoteKey{priv: loaded.Key.(*rsa.PrivateKey)}
	cert, err := signer.New(loaded.Leaf, key)
	if err != nil {
		log.Fatal(err)
	}
	doc := []byte(`<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="T33F1"><Folio>1</Folio></Documento></DTE>`)
	signed, err := cert.SignEnveloped(doc, "T33F1")
	if err != nil {
		log.Fatal(err)
	}
	res, err := signer.Verify(signed)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res[0].URI, res[0].RUT, res[0].Err == nil, key.calls)
	// Output:
	// #T33F1 7880442-4 true 1
}
