package dte_test

import (
	"bytes"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// replaceOnce replaces the first match of re in b, failing the test when
// there is none.
func replaceOnce(t *testing.T, b []byte, re, repl string) []byte {
	t.Helper()
	rx := regexp.MustCompile(re)
	loc := rx.FindIndex(b)
	if loc == nil {
		t.Fatalf("pattern %q not found", re)
	}
	out := append([]byte{}, b[:loc[0]]...)
	out = append(out, rx.ReplaceAll(b[loc[0]:loc[1]], []byte(repl))...)
	return append(out, b[loc[1]:]...)
}

func TestVerifyEmittedDocuments(t *testing.T) {
	docs, _ := emitAll(t)
	keys := creds(t).Keys
	for tipo, out := range docs {
		rep, err := dte.Verify(out.XML, keys)
		if err != nil || !rep.OK() || len(rep.Documents) != 1 || rep.Documents[0].Folio != out.Folio {
			t.Errorf("tipo %d: Verify = %+v, %v", tipo, rep, err)
		}
	}
}

func TestVerifyCatchesAlteredAmounts(t *testing.T) {
	docs, _ := emitAll(t)
	keys := creds(t).Keys
	cases := []struct {
		name string
		tipo dte.TipoDTE
		re   string
		repl string
		// want is a fragment of the totals check's error.
		want string
	}{
		{"commission IVA", 43, `<ValComIVA>\d+</ValComIVA></Comisiones><MntTotal>`, "<ValComIVA>1</ValComIVA></Comisiones><MntTotal>", "Totales/Comisiones"},
		{"retained IVA", 46, `<MontoImp>\d+</MontoImp>`, "<MontoImp>7</MontoImp>", "ImptoReten[1]"},
		{"other currency", 110, `<MntTotOtrMnda>\d+</MntTotOtrMnda>`, "<MntTotOtrMnda>5</MntTotOtrMnda>", "OtraMoneda"},
		{"IVA", 33, `<IVA>\d+</IVA>`, "<IVA>1</IVA>", "Totales/IVA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := replaceOnce(t, docs[c.tipo].XML, c.re, c.repl)
			rep, err := dte.Verify(bad, keys)
			if !errors.Is(err, dte.ErrVerification) || rep == nil {
				t.Fatalf("Verify of an altered %d: %v", c.tipo, err)
			}
			d := rep.Documents[0]
			if d.Totals.OK || !strings.Contains(d.Totals.Error, c.want) || d.Signature.OK {
				t.Errorf("report %+v; want a totals failure naming %q and a signature failure", d, c.want)
			}
		})
	}
}

// A line whose discount is written only as an amount (DescuentoMonto without
// DescuentoPct, as the SII schema allows) keeps its MontoItem when totals
// are recomputed: only the signature, which covers the change, fails.
func TestVerifyAcceptsDiscountAsAmountOnly(t *testing.T) {
	docs, _ := emitAll(t)
	orig := docs[33].XML
	if !bytes.Contains(orig, []byte("<DescuentoPct>")) {
		t.Fatal("the oracle factura lost its line discount; this test needs one")
	}
	bad := replaceOnce(t, orig, `<DescuentoPct>[0-9.]+</DescuentoPct>`, "")
	rep, err := dte.Verify(bad, creds(t).Keys)
	if rep == nil {
		t.Fatal(err)
	}
	d := rep.Documents[0]
	if !d.Totals.OK || d.Signature.OK {
		t.Errorf("report %+v; want totals ok and the signature failed", d)
	}
}

// The SII's own signed sample: both signatures are valid under their
// KeyValue (signer's TestSampleVerify has xmlsec1 and openssl say so), but
// the embedded certificate holds another key, which the report names for
// the envelope and for the document (checked standalone, as it was
// signed). The signer is the sample's RutEnvia, 7880442-4; the stamp's CAF
// is the SII's test authority, trusted by nobody here.
func TestVerifySIISample(t *testing.T) {
	data, err := os.ReadFile(oracle.SharedFile(t, "sii", "samples", "F60T33-ejemplo-oficial-SII.xml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := dte.Verify(data, nil)
	if !errors.Is(err, dte.ErrVerification) || rep == nil || len(rep.Documents) != 1 || rep.Envelope == nil {
		t.Fatalf("Verify of the SII sample: %v, %+v", err, rep)
	}
	d := rep.Documents[0]
	const mismatch = "KeyValue does not match the certificate"
	switch {
	case rep.Kind != "EnvioDTE" || d.ID != "F60T33" || d.Folio != 60 || d.MntTotal != "119000":
		t.Errorf("document %+v in a %s", d, rep.Kind)
	case !strings.Contains(rep.Envelope.Error, mismatch) || !strings.Contains(d.Signature.Error, mismatch) || !d.Standalone:
		t.Errorf("signatures: envelope %+v, document %+v (standalone %v)", rep.Envelope, d.Signature, d.Standalone)
	case rep.EnvelopeSigner == nil || rep.EnvelopeSigner.RUT != "7880442-4" || d.Signer == nil || d.Signer.RUT != "7880442-4":
		t.Errorf("signers: envelope %v, document %v", rep.EnvelopeSigner, d.Signer)
	case d.TED.OK || !d.Totals.OK:
		t.Errorf("stamp %+v, totals %+v", d.TED, d.Totals)
	}
}
