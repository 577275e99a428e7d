package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/signer/signertest"
)

// adminRun runs a dtekit command in process and returns its exit code,
// standard output and standard error.
func adminRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestAdminCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a SQLite database")
	}
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	if code, _, stderr := adminRun(t, "admin", "apikey", "list", "--data", data, "--empresa", "76543210-3"); code != exitFail || !strings.Contains(stderr, "--data") {
		t.Errorf("missing data directory: %d %s", code, stderr)
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	company := []string{"admin", "empresa", "create", "--data", data, "--rut", "76543210-3", "--razon-social", "Mi Empresa SpA",
		"--giro", "Comercio", "--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago",
		"--fecha-resolucion", "2024-01-01", "--acteco", "620200"}
	code, out, stderr := adminRun(t, company...)
	var e struct{ ID, Rut, Ambiente string }
	if code != exitOK || json.Unmarshal([]byte(out), &e) != nil || e.ID == "" || e.Ambiente != "certificacion" {
		t.Fatalf("empresa create: %d %s %s", code, out, stderr)
	}
	// The same RUT again is a conflict, reported with its code.
	if code, _, stderr := adminRun(t, company...); code != exitFail || !strings.Contains(stderr, "CONFLICT") {
		t.Errorf("second empresa create: %d %s", code, stderr)
	}
	if code, _, stderr := adminRun(t, "admin", "empresa", "create", "--data", data, "--rut", "76543210-3"); code != exitUsage || !strings.Contains(stderr, "--razon-social") {
		t.Errorf("missing flags: %d %s", code, stderr)
	}

	code, out, stderr = adminRun(t, "admin", "apikey", "create", "--data", data, "--empresa", "76.543.210-3", "--write")
	var k struct {
		ID, Key string
		Write   bool
	}
	if code != exitOK || json.Unmarshal([]byte(out), &k) != nil || k.Key == "" || !k.Write || !strings.Contains(stderr, "shown only now") {
		t.Fatalf("apikey create: %d %s %s", code, out, stderr)
	}
	code, out, _ = adminRun(t, "admin", "apikey", "list", "--data", data, "--empresa", "76543210-3")
	if code != exitOK || !strings.Contains(out, k.ID) || strings.Contains(out, k.Key) {
		t.Errorf("apikey list: %d %s", code, out)
	}
	if code, out, stderr := adminRun(t, "admin", "apikey", "revoke", "--data", data, "--empresa", "76543210-3", "--id", k.ID); code != exitOK {
		t.Errorf("apikey revoke: %d %s %s", code, out, stderr)
	}
	code, out, _ = adminRun(t, "admin", "apikey", "list", "--data", data, "--empresa", "76543210-3")
	if code != exitOK || !strings.Contains(out, "revoked_at") {
		t.Errorf("revoked key not marked: %s", out)
	}
	if code, _, stderr := adminRun(t, "admin", "apikey", "create", "--data", data, "--empresa", "11111111-1"); code != exitFail || !strings.Contains(stderr, "no company") {
		t.Errorf("unknown company: %d %s", code, stderr)
	}
	if code, _, _ := adminRun(t, "admin", "apikey", "create", "--data", data, "--empresa", "76543210-4"); code != exitUsage {
		t.Errorf("bad RUT: %d", code)
	}
	// The certificate, with its password from a file.
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: "13567890-2"})
	if err != nil {
		t.Fatal(err)
	}
	p12, err := signertest.EncodePKCS12(cert, "s3cret", signertest.Modern)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPath, pwPath, badPath := filepath.Join(dir, "c.p12"), filepath.Join(dir, "pw"), filepath.Join(dir, "bad")
	os.WriteFile(certPath, p12, 0o600)
	os.WriteFile(pwPath, []byte("s3cret\n"), 0o600)
	os.WriteFile(badPath, []byte("wrong\n"), 0o600)
	upload := []string{"admin", "certificado", "upload", "--data", data, "--empresa", "76543210-3", "--cert", certPath, "--rut-firmante", "13567890-2"}
	if code, _, stderr := adminRun(t, append(upload, "--cert-password-file", badPath)...); code != exitFail || !strings.Contains(stderr, "VALIDATION_ERROR") {
		t.Errorf("wrong password: %d %s", code, stderr)
	}
	code, out, stderr = adminRun(t, append(upload, "--cert-password-file", pwPath)...)
	if code != exitOK || !strings.Contains(out, `"has_certificado": true`) || !strings.Contains(out, "13567890-2") {
		t.Errorf("certificado upload: %d %s %s", code, out, stderr)
	}
	if code, _, _ := adminRun(t, "admin", "nothing", "here"); code != exitUsage {
		t.Errorf("unknown admin command: %d", code)
	}
}
