package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/libro"
)

// TestVerifyLibro: "dtekit verify" of a signed Libro de Compras reports
// it verified, with what it is and who signed it (issue 29, point 9: it
// said a Signature lay where the SII's schema has none), in text and
// JSON; the same file with one amount edited fails with exit 1, and a
// signer policy naming another signer fails it too.
func TestVerifyLibro(t *testing.T) {
	t.Parallel()
	creds, err := dtetest.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := libro.Compras(libro.Options{Emisor: creds.Emisor, FctProp: "0.60"}, creds.Cert, []libro.Compra{
		{Tipo: 30, Folio: 234, Fecha: "2026-01-10", RutEmisor: "78000001-5", MntNeto: 53253},
		{Tipo: 46, Folio: 9, Fecha: "2026-01-10", RutEmisor: "78000001-5", MntNeto: 10632, RetencionTotal: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "libro.xml"), filepath.Join(dir, "editado.xml")
	if err := os.WriteFile(good, signed, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, bytes.Replace(signed, []byte(">53253<"), []byte(">53254<"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	verify := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
		return run(context.Background(), env, append([]string{"verify"}, args...)), out.String(), errb.String()
	}
	code, out, stderr := verify(good)
	if code != exitOK || !strings.Contains(out, good+": OK (LibroCompraVenta LibroCompras, COMPRA ESPECIAL TOTAL 2026-01, 2 row(s))") ||
		!strings.Contains(out, "signature ok; signer policy ok") || !strings.Contains(out, "signed by "+dtetest.SignerRUT) ||
		strings.Contains(out+stderr, "schema has none") {
		t.Errorf("verify of a signed libro: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = verify("--json", good)
	var rep struct {
		OK     bool
		Report struct {
			Kind      string
			RutEmisor string `json:"rut_emisor"`
			Signature struct{ OK bool }
		}
	}
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || !rep.OK || rep.Report.Kind != "LibroCompraVenta" ||
		rep.Report.RutEmisor != dtetest.EmisorRUT || !rep.Report.Signature.OK {
		t.Errorf("verify --json of a signed libro: exit %d %s", code, out)
	}
	code, out, _ = verify(bad)
	if code != exitFail || !strings.Contains(out, "FAILED") || !strings.Contains(out, "signature FAILED (reference digest does not match") {
		t.Errorf("verify of an edited libro: exit %d\n%s", code, out)
	}
	code, out, _ = verify("--signer", dtetest.EmisorRUT+"=11111111-1", good)
	if code != exitFail || !strings.Contains(out, "signer policy FAILED (signer "+dtetest.SignerRUT+" is not authorized") {
		t.Errorf("verify with another authorized signer: exit %d\n%s", code, out)
	}
}
