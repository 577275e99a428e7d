package libro_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/libro"
)

// signedFiles are one signed file of each kind Verify reads, built from
// the sets (whose schema and signature xmlsec1 and xmllint accept in the
// tests above).
func signedFiles(t *testing.T) map[string][]byte {
	t.Helper()
	e := theSets(t)
	compras, err := libro.Compras(libro.Options{Emisor: e.creds.Emisor, At: at, FctProp: "0.60"}, e.creds.Cert, compras("2026-01-10"))
	if err != nil {
		t.Fatal(err)
	}
	guias, err := libro.Guias(libro.Options{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, e.guias[0].XML)
	if err != nil {
		t.Fatal(err)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, e.boletas[0].XML)
	if err != nil {
		t.Fatal(err)
	}
	rcof, err := libro.ConsumoFolios(libro.Options{Emisor: e.creds.Emisor, At: at}, e.creds.Cert, env)
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{libro.RootCompraVenta: compras, libro.RootGuia: guias, libro.RootConsumo: rcof}
}

// TestVerify: a signed libro, Libro de Guías and RCOF verify, with who
// signed them and what they are (issue 29, point 9: "dtekit verify" said
// the schema allowed no signature there); an edited one fails its
// signature, an unsigned one says so, a signature moved into the carátula
// is refused, and the signer policy is applied to the carátula's emisor.
func TestVerify(t *testing.T) {
	t.Parallel()
	files := signedFiles(t)
	for kind, data := range files {
		rep, err := libro.Verify(data, dte.VerifyOptions{})
		if err != nil || !rep.OK() || rep.Kind != kind || rep.RutEmisor != dtetest.EmisorRUT || rep.RutEnvia != dtetest.SignerRUT ||
			rep.Signer == nil || rep.Signer.RUT != dtetest.SignerRUT {
			t.Errorf("%s: %+v, %v", kind, rep, err)
		}
		// The company's own signer passes a policy naming it, and as the
		// carátula's RutEnvia; another signer fails it.
		own := dte.VerifyOptions{AuthorizedSigners: map[string][]string{dtetest.EmisorRUT: {dtetest.SignerRUT}}, SignerIsRutEnvia: true}
		if rep, err := libro.Verify(data, own); err != nil || !rep.Policy.OK {
			t.Errorf("%s with its own signer authorized: %+v, %v", kind, rep, err)
		}
		other := dte.VerifyOptions{AuthorizedSigners: map[string][]string{dtetest.EmisorRUT: {"11111111-1"}}}
		rep, err = libro.Verify(data, other)
		if !errors.Is(err, dte.ErrVerification) || rep == nil || !rep.Signature.OK || rep.Policy.OK ||
			!strings.Contains(rep.Policy.Error, "not authorized") {
			t.Errorf("%s with another signer authorized: %+v, %v", kind, rep, err)
		}
	}

	data := files[libro.RootCompraVenta]
	// One digit of a signed amount changed: 53253 is the first row's neto.
	edited := bytes.Replace(data, []byte("<MntNeto>53253</MntNeto>"), []byte("<MntNeto>53254</MntNeto>"), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the libro has no row of neto 53253")
	}
	rep, err := libro.Verify(edited, dte.VerifyOptions{})
	if !errors.Is(err, dte.ErrVerification) || rep == nil || rep.Signature.OK || !strings.Contains(rep.Signature.Error, "digest") {
		t.Errorf("an edited libro: %+v, %v", rep, err)
	}

	start, end := bytes.Index(data, []byte("<Signature")), bytes.LastIndex(data, []byte("</Signature>"))+len("</Signature>")
	sig := data[start:end]
	unsigned := append(bytes.Clone(data[:start]), data[end:]...)
	rep, err = libro.Verify(unsigned, dte.VerifyOptions{})
	if !errors.Is(err, dte.ErrVerification) || rep == nil || rep.Signature.OK || !strings.Contains(rep.Signature.Error, "not signed") {
		t.Errorf("an unsigned libro: %+v, %v", rep, err)
	}
	// The signature moved into the carátula: the schema has none there.
	moved := bytes.Replace(unsigned, []byte("</Caratula>"), append(bytes.Clone(sig), "</Caratula>"...), 1)
	if rep, err := libro.Verify(moved, dte.VerifyOptions{}); rep != nil || err == nil || !strings.Contains(err.Error(), "where the SII's schema has none") {
		t.Errorf("a signature inside the carátula: %+v, %v", rep, err)
	}
	// A DTE is not a libro.
	if rep, err := libro.Verify(theSets(t).basico[0].XML, dte.VerifyOptions{}); rep != nil || err == nil {
		t.Errorf("a DTE: %+v, %v", rep, err)
	}
}
