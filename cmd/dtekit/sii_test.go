package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// siiFiles writes a certificate and an EnvioDTE with one factura, and
// returns their paths and the factura's path.
func siiFiles(t *testing.T) (p12, envio, dteFile string, creds *dtetest.Creds) {
	t.Helper()
	creds, err := dtetest.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	em, err := creds.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := em.Emit(context.Background(), &dte.EmitirDTERequest{TipoDTE: 33, Receptor: dte.Receptor{Rut: "76086428-5",
		RazonSocial: "Cliente Ñandú", Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"},
		Detalle: []dte.LineaDetalle{{Nombre: "Item", Cantidad: "2", Precio: "1500"}}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: creds.Emisor}, creds.Cert, res.XML)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p12, envio, dteFile = filepath.Join(dir, "cert.p12"), filepath.Join(dir, "envio.xml"), filepath.Join(dir, "dte.xml")
	for p, b := range map[string][]byte{p12: creds.P12, envio: env, dteFile: res.XML} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p12, envio, dteFile, creds
}

// TestSIICommands runs token, upload, status and dte-status in process
// against the fake.
func TestSIICommands(t *testing.T) {
	t.Parallel()
	p12, envio, dteFile, creds := siiFiles(t)
	fake := siitest.New(siitest.Options{Steps: []string{"SOK"}}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	url := fake.Endpoints().Classic
	runOut := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdout: &out, stderr: &errb, getenv: func(k string) string {
			if k == "DTEKIT_CERT_PASSWORD" {
				return creds.Password
			}
			return ""
		}}
		code := run(context.Background(), env, append([]string{"sii"}, args...))
		return code, out.String(), errb.String()
	}
	conn := []string{"--url", url, "--cert", p12}
	code, out, errs := runOut(append([]string{"token"}, conn...)...)
	if code != 0 || !regexp.MustCompile(`^[A-Za-z0-9]{13}\n$`).MatchString(out) {
		t.Fatalf("token: %d %q %s", code, out, errs)
	}
	code, out, errs = runOut(append([]string{"upload", envio}, conn...)...)
	var up struct {
		Status  int    `json:"status"`
		TrackID string `json:"trackid"`
		Outcome struct {
			Estado string `json:"estado"`
		} `json:"outcome"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &up) != nil || up.Status != 0 || len(up.TrackID) != 10 || up.Outcome.Estado != "procesando" {
		t.Fatalf("upload: %d %s %s", code, out, errs)
	}
	for _, want := range []string{"SOK", "EPR"} {
		code, out, errs = runOut(append([]string{"status", "--company", dtetest.EmisorRUT, up.TrackID}, conn...)...)
		if code != 0 || !strings.Contains(out, `"estado": "`+want+`"`) {
			t.Fatalf("status: %d %s %s, want %s", code, out, errs, want)
		}
	}
	if !strings.Contains(out, `"estado": "aceptado"`) {
		t.Errorf("final status does not map to aceptado:\n%s", out)
	}
	code, out, errs = runOut(append([]string{"dte-status", dteFile}, conn...)...)
	if code != 0 || !strings.Contains(out, `"estado_sii": "DOK"`) {
		t.Errorf("dte-status: %d %s %s", code, out, errs)
	}
	// The advanced query names the envelope the upload above got.
	code, out, errs = runOut(append([]string{"dte-status", "--advanced", dteFile}, conn...)...)
	if code != 0 || !strings.Contains(out, `"recibido": true`) || !strings.Contains(out, `"trackid": "`+up.TrackID+`"`) {
		t.Errorf("dte-status --advanced: %d %s %s, want track id %s", code, out, errs, up.TrackID)
	}
	if code, _, _ := runOut(append([]string{"dte-status", "--advanced", "--emisor", dtetest.EmisorRUT, "--receptor", "66666666-6",
		"--tipo", "33", "--folio", "1", "--fecha", "2026-01-02", "--monto", "1"}, conn...)...); code != 2 {
		t.Errorf("dte-status --advanced without DTE.xml: exit %d, want 2", code)
	}
	// Usage errors.
	for _, args := range [][]string{{}, {"nope"}, {"token"}, {"status", "--cert", p12, "123"}, {"fake", "--addr", "0.0.0.0:0"}} {
		if code, _, _ := runOut(args...); code != 2 {
			t.Errorf("dtekit sii %v: exit %d, want 2", args, code)
		}
	}
	// A wrong password is an error naming the file.
	if code, _, errs := runOut("token", "--url", url, "--cert", p12, "--cert-password", "nope"); code != 1 || !strings.Contains(errs, p12) {
		t.Errorf("wrong password: %d %s", code, errs)
	}
}

// startSIIFake runs "dtekit sii fake" on a free loopback port with a
// --register for each of registers, and returns the process (killed when
// the test ends) and its base URL.
func startSIIFake(t *testing.T, bin string, registers ...string) (*exec.Cmd, string) {
	t.Helper()
	args := []string{"sii", "fake", "--addr", "127.0.0.1:0"}
	for _, r := range registers {
		args = append(args, "--register", r)
	}
	fake := exec.Command(bin, args...)
	stdout, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Process.Kill(); fake.Wait() })
	return fake, fakeURL(t, stdout)
}

// fakeURL reads the first line "dtekit sii fake" prints and returns the
// base URL it names; the rest of its output is read and dropped.
func fakeURL(t *testing.T, stdout io.Reader) string {
	t.Helper()
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			first <- sc.Text()
		}
		close(first)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-first:
		m := regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`).FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("fake printed %q", l)
		}
		return m[1]
	case <-time.After(20 * time.Second):
		t.Fatal("the fake did not start")
	}
	return ""
}

// TestSIIBinary builds dtekit, runs "dtekit sii fake" as a process and
// drives a submission through it with the other sii commands.
func TestSIIBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary; skipped with -short")
	}
	t.Parallel()
	bin := builtBinary(t)
	p12, envio, dteFile, creds := siiFiles(t)
	fake, url := startSIIFake(t, bin, dtetest.SignerRUT+"="+dtetest.EmisorRUT)
	dtekit := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append(append([]string{"sii"}, args...), "--url", url, "--cert", p12)...)
		cmd.Env = append(os.Environ(), "DTEKIT_CERT_PASSWORD="+creds.Password)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("dtekit sii %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	var up struct {
		TrackID string `json:"trackid"`
	}
	if err := json.Unmarshal([]byte(dtekit("upload", envio)), &up); err != nil || len(up.TrackID) != 10 {
		t.Fatalf("upload: %v %+v", err, up)
	}
	var states []string
	for i := 0; i < 6; i++ {
		var s struct{ Estado string }
		json.Unmarshal([]byte(dtekit("status", "--company", dtetest.EmisorRUT, up.TrackID)), &s)
		states = append(states, s.Estado)
		if s.Estado == "EPR" {
			break
		}
	}
	if got := strings.Join(states, " "); got != "SOK CRT FOK PDR EPR" {
		t.Errorf("states %q", got)
	}
	if out := dtekit("dte-status", dteFile); !strings.Contains(out, `"estado_sii": "DOK"`) {
		t.Errorf("dte-status:\n%s", out)
	}
	// SIGINT stops the fake cleanly.
	fake.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- fake.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("fake exited with %v after SIGINT", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the fake did not stop on SIGINT")
	}
}
