package dte_test

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// Every document dtekit emits takes BuildEnvio's fast path (one strict scan,
// stepped over when the SetDTE is digested), and the digest it signs is
// SHA-1 over the SetDTE as the signer's full canonicalization renders it.
// TestOracleEnvelopes has xmlsec1 verify the same envelopes.
func TestEnvioFastPathDigest(t *testing.T) {
	docs, _ := emitAll(t)
	c := creds(t)
	var facturas [][]byte
	for _, tipo := range dte.Tipos() {
		if !dte.EnvioFastPath(docs[tipo].XML) {
			t.Errorf("tipo %d: BuildEnvio does not take the fast path", tipo)
		}
		if !tipo.IsBoleta() {
			facturas = append(facturas, docs[tipo].XML)
		}
	}
	// A document that is not in canonical form takes the ordinary path,
	// and its neighbours still the fast one.
	odd := bytes.Replace(facturas[0], []byte("<Encabezado>"), []byte("<Encabezado >"), 1)
	if dte.EnvioFastPath(odd) {
		t.Fatal("a DTE not written in canonical form took the fast path")
	}
	mixed := append([][]byte{odd}, facturas[1:]...)
	for _, set := range [][][]byte{facturas, mixed} {
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor, At: time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())}, c.Cert, set...)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := signer.Canonicalize(env, dte.DefaultSetID)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum(canon)
		want := "<DigestValue>" + base64.StdEncoding.EncodeToString(sum[:]) + "</DigestValue>"
		last := bytes.LastIndex(env, []byte("<Signature "))
		if last < 0 || !bytes.Contains(env[last:], []byte(want)) {
			t.Fatalf("the SetDTE digest is not SHA-1 of its full canonical form %s", want)
		}
	}
}
