package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// The receptor of siiFiles' factura, and the signer who acts for it.
const (
	rcvReceptor = "76086428-5"
	rcvSigner   = "11111111-1"
)

// rcvCert writes a certificate for the receptor's signer, with its
// password in a file, and returns both paths.
func rcvCert(t *testing.T) (p12, passwordFile string) {
	t.Helper()
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: rcvSigner, Bits: 1024})
	if err != nil {
		t.Fatal(err)
	}
	data, err := signertest.EncodePKCS12(cert, "clave receptor", signertest.Modern)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p12, passwordFile = filepath.Join(dir, "receptor.p12"), filepath.Join(dir, "password.txt")
	if err := os.WriteFile(p12, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passwordFile, []byte("clave receptor\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p12, passwordFile
}

// rcvAnswer is the JSON the rcv commands print.
type rcvAnswer struct {
	Operacion   string `json:"operacion"`
	Accion      string `json:"accion"`
	CodResp     *int   `json:"cod_resp"`
	DescResp    string `json:"desc_resp"`
	Significado string `json:"significado"`
	Resultado   string `json:"resultado"`
	Cedible     bool   `json:"cedible"`
	Eventos     []struct {
		CodEvento      string `json:"cod_evento"`
		RutResponsable string `json:"rut_responsable"`
		FechaEvento    string `json:"fecha_evento"`
	} `json:"eventos"`
	Recibido          bool   `json:"recibido"`
	FechaRecepcion    string `json:"fecha_recepcion"`
	FechaRecepcionSII string `json:"fecha_recepcion_sii"`
	PlazoHasta        string `json:"plazo_hasta"`
}

// TestRCVCommands runs the rcv commands in process against a fake on
// loopback found through $DTEKIT_SII_URL: company A's factura, uploaded to
// the fake, is accepted by B; B's claim is then refused with the SII's
// code 11 (exit 1, a line naming it); the history lists the acceptance;
// the reception date and cedibility are answered; and the command line's
// mistakes are exit 2.
func TestRCVCommands(t *testing.T) {
	t.Parallel()
	p12A, envio, dteFile, creds := siiFiles(t)
	p12B, pwB := rcvCert(t)
	fake := siitest.New(siitest.Options{Steps: []string{}}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	fake.Register(rcvSigner, rcvReceptor)
	url := fake.Endpoints().Classic
	d, err := dte.ParseDTE(mustRead(t, dteFile))
	if err != nil {
		t.Fatal(err)
	}
	folio := strconv.FormatInt(d.Folio, 10)
	runIn := func(siiURL string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
			switch k {
			case "DTEKIT_CERT_PASSWORD":
				return creds.Password
			case siiURLEnv:
				return siiURL
			}
			return ""
		}}
		return run(context.Background(), env, args), out.String(), errb.String()
	}
	if code, out, errs := runIn("", "sii", "upload", envio, "--url", url, "--cert", p12A); code != 0 {
		t.Fatalf("upload: %d %s %s", code, out, errs)
	}
	rcv := func(sub string, extra ...string) (int, rcvAnswer, string) {
		t.Helper()
		args := append([]string{"rcv", sub, "--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", folio,
			"--cert", p12B, "--cert-password-file", pwB}, extra...)
		code, out, errs := runIn(url, args...)
		var a rcvAnswer
		if out != "" {
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("rcv %s printed %q: %v", sub, out, err)
			}
		}
		return code, a, errs
	}

	code, a, errs := rcv("aceptar")
	if code != 0 || a.CodResp == nil || *a.CodResp != 0 || a.Resultado != "recorded" || a.Accion != "ACD" || errs != "" {
		t.Fatalf("aceptar: %d %+v %s", code, a, errs)
	}
	code, a, _ = rcv("aceptar")
	if code != 0 || *a.CodResp != 7 || a.Resultado != "already_recorded" {
		t.Errorf("aceptar again: %d %+v", code, a)
	}
	code, a, errs = rcv("reclamar", "--motivo", "falta-total")
	if code != 1 || *a.CodResp != 11 || a.Accion != "RFT" || a.Resultado != "conflict" ||
		!regexp.MustCompile(`^dtekit rcv reclamar: --emisor-rut \S+ --tipo 33 --folio [0-9]+: the SII answered codResp 11 \(conflict\): No se puede reclamar DTE previamente aceptado \(RCV_REFUSED\)\n$`).MatchString(errs) {
		t.Errorf("reclamar after aceptar: %d %+v %q", code, a, errs)
	}
	code, a, errs = rcv("recibo")
	if code != 0 || *a.CodResp != 0 || a.Accion != "ERM" {
		t.Errorf("recibo: %d %+v %s", code, a, errs)
	}
	code, a, errs = rcv("eventos")
	if code != 0 || *a.CodResp != 15 || len(a.Eventos) != 2 || a.Eventos[0].CodEvento != "ACD" || a.Eventos[1].CodEvento != "ERM" ||
		a.Eventos[0].RutResponsable != rcvSigner || a.Eventos[0].FechaEvento == "" {
		t.Errorf("eventos: %d %+v %s", code, a, errs)
	}
	code, a, errs = rcv("fecha-recepcion")
	if code != 0 || !a.Recibido || !regexp.MustCompile(`^[0-9]{2}-[0-9]{2}-[0-9]{4} [0-9:]{8}$`).MatchString(a.FechaRecepcionSII) ||
		a.FechaRecepcion == "" || a.PlazoHasta == "" {
		t.Errorf("fecha-recepcion: %d %+v %s", code, a, errs)
	}
	code, a, errs = rcv("cedible")
	if code != 0 || *a.CodResp != 23 || !a.Cedible {
		t.Errorf("cedible: %d %+v %s", code, a, errs)
	}

	// Another folio is not in the registry.
	code, out, errs := runIn(url, "rcv", "fecha-recepcion", "--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", "999999",
		"--cert", p12B, "--cert-password-file", pwB)
	if code != 1 || !strings.Contains(out, `"recibido": false`) || !strings.HasSuffix(errs, "(RCV_REFUSED)\n") {
		t.Errorf("an unknown folio's date: %d %s %s", code, out, errs)
	}
	code, _, errs = runIn(url, "rcv", "aceptar", "--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", "999999",
		"--cert", p12B, "--cert-password-file", pwB)
	if code != 1 || !strings.Contains(errs, "codResp 18") {
		t.Errorf("an unknown folio's acceptance: %d %s", code, errs)
	}

	// An SII that does not answer.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	code, out, errs = runIn(closed, "rcv", "eventos", "--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", folio,
		"--cert", p12B, "--cert-password-file", pwB, "--timeout", "2s")
	if code != 1 || out != "" || !strings.HasSuffix(errs, "(SII_UNAVAILABLE)\n") || strings.Count(errs, "\n") != 1 {
		t.Errorf("no SII: %d %q %q", code, out, errs)
	}

	// Help, and the command line's mistakes.
	if code, out, _ := runIn("", "rcv", "--help"); code != 0 || !strings.Contains(out, "dtekit rcv aceptar") {
		t.Errorf("rcv --help: %d %s", code, out)
	}
	if code, out, _ := runIn("", "rcv", "reclamar", "--help"); code != 0 || !strings.Contains(out, "-motivo") {
		t.Errorf("rcv reclamar --help: %d %s", code, out)
	}
	doc := []string{"--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", folio, "--cert", p12B, "--cert-password-file", pwB}
	for name, args := range map[string][]string{
		"no command":           {"rcv"},
		"unknown command":      {"rcv", "anular"},
		"no folio":             {"rcv", "aceptar", "--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--cert", p12B},
		"reclamar, no motivo":  append([]string{"rcv", "reclamar"}, doc...),
		"reclamar, bad motivo": append([]string{"rcv", "reclamar", "--motivo", "precio"}, doc...),
		"a bad check digit":    {"rcv", "eventos", "--emisor-rut", "76192083-0", "--tipo", "33", "--folio", "1", "--cert", p12B, "--cert-password-file", pwB},
		"an argument":          append([]string{"rcv", "eventos", "extra.xml"}, doc...),
		"an unknown env":       append([]string{"rcv", "eventos", "--env", "staging"}, doc...),
	} {
		if code, _, errs := runIn(url, args...); code != 2 || errs == "" {
			t.Errorf("%s: exit %d %q, want 2", name, code, errs)
		}
	}
	if code, _, errs := runIn(url, "rcv", "eventos", "--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", folio,
		"--cert", p12B, "--cert-password", "nope"); code != 1 || !strings.HasSuffix(errs, "(CERTIFICATE_PASSWORD)\n") {
		t.Errorf("a wrong password: %d %s", code, errs)
	}
}

// mustRead reads a file.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRCVBinary builds dtekit and runs the whole exchange as processes:
// "dtekit sii fake" with both companies' signers, company A's "dtekit sii
// upload" and status polls until its review ends, then company B's
// "dtekit rcv" against the fake named by $DTEKIT_SII_URL: B accepts, a
// claim is refused with codResp 11 and exit 1, the history shows the
// acceptance.
func TestRCVBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary; skipped with -short")
	}
	t.Parallel()
	bin := buildDtekit(t)
	p12A, envio, dteFile, creds := siiFiles(t)
	p12B, pwB := rcvCert(t)
	_, url := startSIIFake(t, bin, dtetest.SignerRUT+"="+dtetest.EmisorRUT, rcvSigner+"="+rcvReceptor)
	dtekit := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DTEKIT_CERT_PASSWORD="+creds.Password, siiURLEnv+"="+url)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("dtekit %v: %v", args, err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	}
	code, out, errs := dtekit("sii", "upload", envio, "--url", url, "--cert", p12A)
	var up struct {
		TrackID string `json:"trackid"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &up) != nil || up.TrackID == "" {
		t.Fatalf("upload: %d %s %s", code, out, errs)
	}
	// The registry knows the document once the review accepted it.
	for i := 0; ; i++ {
		_, out, _ = dtekit("sii", "status", "--company", dtetest.EmisorRUT, up.TrackID, "--url", url, "--cert", p12A)
		if strings.Contains(out, `"estado": "EPR"`) {
			break
		}
		if i == 6 {
			t.Fatalf("the envelope never reached EPR: %s", out)
		}
	}
	d, err := dte.ParseDTE(mustRead(t, dteFile))
	if err != nil {
		t.Fatal(err)
	}
	doc := []string{"--emisor-rut", dtetest.EmisorRUT, "--tipo", "33", "--folio", strconv.FormatInt(d.Folio, 10), "--cert", p12B, "--cert-password-file", pwB}
	if code, out, errs := dtekit(append([]string{"rcv", "aceptar"}, doc...)...); code != 0 || !strings.Contains(out, `"cod_resp": 0`) {
		t.Fatalf("rcv aceptar: %d %s %s", code, out, errs)
	}
	code, out, errs = dtekit(append([]string{"rcv", "reclamar", "--motivo", "contenido"}, doc...)...)
	if code != 1 || !strings.Contains(out, `"cod_resp": 11`) || !strings.Contains(errs, "codResp 11") || !strings.HasSuffix(errs, "(RCV_REFUSED)\n") {
		t.Errorf("rcv reclamar after aceptar: %d %s %s", code, out, errs)
	}
	if code, out, errs := dtekit(append([]string{"rcv", "eventos"}, doc...)...); code != 0 || !strings.Contains(out, `"cod_evento": "ACD"`) ||
		strings.Contains(out, `"cod_evento": "RCD"`) {
		t.Errorf("rcv eventos: %d %s %s", code, out, errs)
	}
	if code, out, errs := dtekit(append([]string{"rcv", "fecha-recepcion"}, doc...)...); code != 0 || !strings.Contains(out, `"recibido": true`) {
		t.Errorf("rcv fecha-recepcion: %d %s %s", code, out, errs)
	}
}
