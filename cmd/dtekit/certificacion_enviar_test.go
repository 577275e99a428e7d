package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestCertificacionEnviarEstado runs "dtekit certificacion enviar" and
// "estado" in process against the fake SII found through $DTEKIT_SII_URL,
// on the folder of the basic set with its Libro de Ventas: before sending,
// estado says SII_PENDING; enviar records the track ids; estado, waiting,
// prints the portal's table with the envelope EPR with its 8 documents
// accepted and the libro LOK, and exits 0; the command line's mistakes
// exit 2 and a missing folder is FILE_UNREADABLE.
func TestCertificacionEnviarEstado(t *testing.T) {
	p12, _, _, creds := siiFiles(t)
	basico, err := os.ReadFile(oracle.SharedFile(t, "sii", "sets", "001-basico.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ventas, err := os.ReadFile(oracle.SharedFile(t, "sii", "sets", "002-ventas.txt"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := certificacion.Parse(append(append([]byte("SET BASICO - NUMERO DE ATENCION:  414175\r\n\r\n"), append(basico, '\r', '\n')...), ventas...))
	if err != nil {
		t.Fatal(err)
	}
	var cafs []*caf.CAF
	for _, c := range creds.CAFs {
		cafs = append(cafs, c)
	}
	res, err := certificacion.Generate(context.Background(), plan, certificacion.Config{Emisor: creds.Emisor, Cert: creds.Cert, CAFs: cafs, TrustedKeys: creds.Keys})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, res, creds.Emisor); err != nil {
		t.Fatal(err)
	}
	fake := siitest.New(siitest.Options{}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	runIn := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
			switch k {
			case "DTEKIT_CERT_PASSWORD":
				return creds.Password
			case siiURLEnv:
				return fake.Endpoints().Classic
			}
			return ""
		}}
		return run(context.Background(), env, args), out.String(), errb.String()
	}

	if code, _, errs := runIn("certificacion", "estado", "--dir", dir, "--cert", p12); code != 1 || !strings.Contains(errs, "(SII_PENDING)") {
		t.Errorf("estado before enviar: %d %s", code, errs)
	}
	code, out, errs := runIn("certificacion", "enviar", "--dir", dir, "--cert", p12)
	if code != 0 || !strings.Contains(out, "| SET BASICO | 414175 | `envios/01-EnvioDTE-BASICO-414175.xml` | 0") || errs != "" {
		t.Fatalf("enviar: %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = runIn("certificacion", "estado", "--dir", dir, "--cert", p12, "--esperar", "1s", "--intervalo", "1ms")
	if code != 0 || !strings.Contains(out, "EPR (8 aceptados, 0 reparos, 0 rechazos)") || !strings.Contains(out, "`libros/01-LibroVentas-414176.xml`") ||
		!strings.Contains(out, "| LOK |") || errs != "" {
		t.Errorf("estado: %d\n%s\n%s", code, out, errs)
	}
	m, err := certificacion.ReadManifest(dir)
	if err != nil || m.Sets[0].Envio == nil || m.Sets[0].Envio.Estado != "EPR" || m.Libros[0].Envio == nil || m.Libros[0].Envio.Estado != "LOK" {
		t.Errorf("manifest after estado: %v %+v", err, m)
	}

	if code, _, errs := runIn("certificacion", "enviar", "--cert", p12); code != 2 || !strings.Contains(errs, "--dir") {
		t.Errorf("enviar without --dir: %d %s", code, errs)
	}
	if code, _, errs := runIn("certificacion", "estado", "--dir", filepath.Join(dir, "nada"), "--cert", p12); code != 1 || !strings.Contains(errs, "(FILE_UNREADABLE)") {
		t.Errorf("estado of a missing folder: %d %s", code, errs)
	}
	if code, out, _ := runIn("certificacion", "enviar", "--help"); code != 0 || !strings.Contains(out, "DTEKIT_SII_URL") {
		t.Errorf("enviar --help: %d %s", code, out)
	}
}

// TestCertificacionIntercambio: the intercambio step in the kit's folder
// answers the SII's envelope (addressed to the company, one document to
// another RUT) for the manifest's company with the three files, written
// under intercambio/ and listed in manifest.json, the same answers as
// "dtekit intercambio responder --aceptar --recibo".
func TestCertificacionIntercambio(t *testing.T) {
	dir := intercambioFiles(t)
	kit := filepath.Join(t.TempDir(), "kit")
	if err := os.Mkdir(kit, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := certificacion.SaveManifest(kit, &certificacion.Manifest{RutEmisor: icRutB}); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, dir, nil, "certificacion", "intercambio", "--dir", kit, "--cert", "b.p12", "--cert-password-file", "b-password.txt",
		"--trust", "authority.pem", "--cod-envio", "7", "envio-mixto.xml")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	m, err := certificacion.ReadManifest(kit)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"intercambio/RecepcionEnvio-7.xml", "intercambio/ResultadoDTE-7.xml", "intercambio/EnvioRecibos-7.xml"}
	if strings.Join(m.Intercambio, " ") != strings.Join(want, " ") {
		t.Fatalf("manifest intercambio %v, want %v", m.Intercambio, want)
	}
	for _, f := range want {
		checkAnswerFile(t, dir, filepath.Join(kit, f))
	}
	if got := readString(t, filepath.Join(kit, want[1])); !strings.Contains(got, "<EstadoDTE>2</EstadoDTE>") || !strings.Contains(got, "<CodRchDsc>-1</CodRchDsc>") {
		t.Errorf("the resultado does not reject the document addressed to another RUT:\n%s", got)
	}
	if got := readString(t, filepath.Join(kit, want[2])); !strings.Contains(got, "<Recinto>CASA MATRIZ</Recinto>") {
		t.Errorf("the receipt's Recinto is not the default")
	}
	if r := runBin(t, dir, nil, "certificacion", "intercambio", "--dir", filepath.Join(kit, "nada"), "--cert", "b.p12", "envio-mixto.xml"); r.code != 1 || !strings.Contains(r.stderr, "(FILE_UNREADABLE)") {
		t.Errorf("missing folder: exit %d %s", r.code, r.stderr)
	}
}
