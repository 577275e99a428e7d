package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// runDevIn runs dtekit in process and returns its exit code and streams.
func runDevIn(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), &cmdEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// TestDevCredenciales: the test credentials for a RUT are every type's
// CAF for that RUT, trusted through the written public key and never by
// the SII's keys alone, a certificate that loads with its password, and an
// emisor.json of that RUT in certification; a bad RUT and a folder in use
// are refused.
func TestDevCredenciales(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "creds")
	code, out, errs := runDevIn("dev", "credenciales", "--rut", "11.111.111-1", "--out", dir, "--hasta", "50")
	if code != 0 || !strings.Contains(out, `"rut": "11111111-1"`) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	keys, err := trustedKeys([]string{filepath.Join(dir, "autoridad-prueba.pub.pem")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tp := range dte.Tipos() {
		b, err := os.ReadFile(filepath.Join(dir, "CAF-"+tp.String()+".xml"))
		if err != nil {
			t.Fatal(err)
		}
		c, err := caf.Parse(b)
		if err != nil || c.RutEmisor != "11111111-1" || c.Tipo != int(tp) || c.Desde != 1 || c.Hasta != 50 || !strings.HasSuffix(c.RazonSocial, "PRUEBA") {
			t.Fatalf("CAF %d: %v %+v", tp, err, c)
		}
		if err := c.Verify(keys); err != nil {
			t.Errorf("CAF %d does not verify with the written key: %v", tp, err)
		}
		if c.Verify(caf.SIIKeys()) == nil {
			t.Errorf("CAF %d verifies with the SII's keys alone", tp)
		}
	}
	p12, _ := os.ReadFile(filepath.Join(dir, "certificado-prueba.p12"))
	pw, _ := os.ReadFile(filepath.Join(dir, "certificado-clave.txt"))
	cert, err := signer.Load(p12, strings.TrimSpace(string(pw)))
	if err != nil || !strings.Contains(cert.Leaf.Subject.CommonName, "NO VALIDA EN EL SII") {
		t.Errorf("the certificate: %v", err)
	}
	em, _, lerr := loadIssuer(filepath.Join(dir, "emisor.json"), nil)
	if lerr != nil || em.Rut != "11111111-1" || em.Ambiente != dte.AmbienteCertificacion || em.NumeroResolucion != 0 {
		t.Errorf("emisor.json: %v %+v", lerr, em)
	}
	if code, _, errs := runDevIn("dev", "credenciales", "--rut", "11111111-2", "--out", filepath.Join(t.TempDir(), "x")); code != 1 || !strings.Contains(errs, "(INVALID_RUT)") {
		t.Errorf("a wrong check digit: exit %d %s", code, errs)
	}
	if code, _, errs := runDevIn("dev", "credenciales", "--rut", "11111111-1", "--out", dir); code != 1 || !strings.Contains(errs, "(OUTPUT_EXISTS)") {
		t.Errorf("a folder in use: exit %d %s", code, errs)
	}
	if code, _, errs := runDevIn("dev", "credenciales", "--out", dir); code != 2 || !strings.Contains(errs, "--rut") {
		t.Errorf("no --rut: exit %d %s", code, errs)
	}
}

// TestDemoAuthorityPublicKey: the demo server's data folder holds its
// authority's public key, which "dtekit verify --trust" takes and which
// verifies the CAFs the demo issues.
func TestDemoAuthorityPublicKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := loadDemoKeys(dir)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := trustedKeys([]string{filepath.Join(dir, demoAuthorityPubFile)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.authority.Issue(caftest.IssueRequest{RutEmisor: "76192083-9", RazonSocial: "DEMO", Tipo: 33, Desde: 1, Hasta: 5, FechaAutorizacion: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := caf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Verify(keys); err != nil {
		t.Errorf("the demo's CAF does not verify with %s: %v", demoAuthorityPubFile, err)
	}
	// A restart keeps the same authority and writes the same key.
	before, _ := os.ReadFile(filepath.Join(dir, demoAuthorityPubFile))
	if _, err := loadDemoKeys(dir); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, demoAuthorityPubFile)); !bytes.Equal(before, after) {
		t.Error("a restart changed the demo authority's public key")
	}
}
