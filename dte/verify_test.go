package dte_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
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
