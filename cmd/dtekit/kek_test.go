package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// lockedBuffer is a bytes.Buffer safe to write from the command's
// goroutines while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runEnv runs a dtekit command in process with the environment vars and
// returns its exit code, standard output and standard error.
func runEnv(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// serveResult is how an in-process "dtekit serve" ended.
type serveResult struct {
	code           int
	stdout, stderr string
	listened       bool
}

// serveOnce runs "dtekit serve" (with --demo when demo) in process on a
// free loopback port with the environment vars. When it starts listening,
// use (if not nil) runs against its base URL, then the server is stopped;
// a server that does not start returns at once. Either way it is bounded
// to two minutes.
func serveOnce(t *testing.T, data string, vars map[string]string, demo bool, use func(base string)) serveResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb lockedBuffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	done := make(chan int, 1)
	args := []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--rate-limit", "-1", "--shutdown-timeout", "10s"}
	if demo {
		args = append(args, "--demo")
	}
	go func() { done <- run(ctx, env, args) }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case code := <-done:
			return serveResult{code: code, stdout: out.String(), stderr: errb.String(), listened: strings.Contains(out.String(), "listening on")}
		case <-tick.C:
			_, rest, ok := strings.Cut(out.String(), "listening on ")
			if !ok {
				continue
			}
			if use != nil {
				base, _, _ := strings.Cut(rest, " ")
				use(base)
			}
			cancel()
			code := <-done
			return serveResult{code: code, stdout: out.String(), stderr: errb.String(), listened: true}
		}
	}
}

// emitDemo emits the demo factura through a server started by serveOnce
// and fails the test unless it is created.
func emitDemo(t *testing.T, data, base string) {
	t.Helper()
	demo := readDemoFile(t, data)
	status, body := call(t, &http.Client{Timeout: 30 * time.Second}, "POST", base+"/api/v1/billing/dte", demo.APIKey, []byte(demoFactura))
	if status != 201 {
		t.Errorf("emission: %d %s", status, body)
	}
}

// TestServeRefusesAnotherKEK: once the database holds secrets sealed under
// its key, serve refuses another key given in DTEKIT_KEK, and a lost key
// file (instead of making a new key), exiting non-zero with what to do;
// with the key file restored it serves again (issue 20, point 5).
func TestServeRefusesAnotherKEK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dtekit serve; skipped with -short")
	}
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	// The first start on an empty database makes the key file; the demo
	// seals a certificate and twelve CAF keys under it.
	first := serveOnce(t, data, nil, true, func(base string) { emitDemo(t, data, base) })
	if !first.listened || first.code != exitOK {
		t.Fatalf("first start: %+v", first)
	}
	keyFile := filepath.Join(data, kekFileName)
	saved, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}

	other := hex.EncodeToString(bytes.Repeat([]byte{0x5a}, billing.KEKSize))
	res := serveOnce(t, data, map[string]string{"DTEKIT_KEK": other}, false, nil)
	if res.listened || res.code == exitOK || !strings.Contains(res.stderr, "wrong key-encryption key") ||
		!strings.Contains(res.stderr, "restore it from the backup taken with the database") {
		t.Errorf("serve with another DTEKIT_KEK: listened %v, code %d, stderr:\n%s", res.listened, res.code, res.stderr)
	}

	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	res = serveOnce(t, data, nil, false, nil)
	if res.listened || res.code == exitOK || !strings.Contains(res.stderr, "key-encryption key missing") ||
		!strings.Contains(res.stderr, keyFile) {
		t.Errorf("serve without its key file: listened %v, code %d, stderr:\n%s", res.listened, res.code, res.stderr)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Errorf("serve made a new key file for a database sealed under another key (%v)", err)
	}

	if err := os.WriteFile(keyFile, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	res = serveOnce(t, data, nil, true, func(base string) { emitDemo(t, data, base) })
	if !res.listened || res.code != exitOK {
		t.Errorf("serve with its key file restored: %+v", res)
	}
}

// keyOf reads the key file at path as its fingerprint.
func keyOf(t *testing.T, path string) string {
	t.Helper()
	k, err := billing.ReadKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return k.Fingerprint()
}

// TestAdminKEKRotate: "admin kek rotate" on SQLite with the key file
// re-seals every secret under a new key that replaces the file; serve then
// emits under the new key and refuses the old. A rotation stopped after
// writing its new key but before its commit, and one stopped after its
// commit but before moving the new key into place, are both finished by
// running the command again (issue 20, point 5).
func TestAdminKEKRotate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dtekit serve; skipped with -short")
	}
	t.Parallel()
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	if res := serveOnce(t, data, nil, true, nil); !res.listened {
		t.Fatalf("first start: %+v", res)
	}
	keyFile, newFile := filepath.Join(data, kekFileName), filepath.Join(data, kekFileName+kekNewSuffix)
	oldKey, _ := os.ReadFile(keyFile)
	oldFP := keyOf(t, keyFile)

	// A plain rotation: the demo company's certificate and twelve CAF keys,
	// and its supplier's certificate and CAF key, re-sealed.
	code, out, stderr := runEnv(t, nil, "admin", "kek", "rotate", "--data", data)
	if code != exitOK || !strings.Contains(out, "re-sealed 15 secrets") {
		t.Fatalf("rotate: %d %s %s", code, out, stderr)
	}
	if keyOf(t, keyFile) == oldFP {
		t.Fatal("the key file still holds the old key")
	}
	if _, err := os.Stat(newFile); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", newFile, err)
	}
	if res := serveOnce(t, data, nil, true, func(base string) { emitDemo(t, data, base) }); !res.listened {
		t.Errorf("serve under the new key: %+v", res)
	}
	if res := serveOnce(t, data, map[string]string{"DTEKIT_KEK": string(oldKey)}, false, nil); res.listened || !strings.Contains(res.stderr, "wrong key-encryption key") {
		t.Errorf("serve under the old key after the rotation: %+v", res)
	}

	// Stopped after writing the new key, before the commit: the database
	// and kek.key are as they were, and the next run uses the new key
	// already written.
	pending := bytes.Repeat([]byte{0x42}, billing.KEKSize)
	if err := billing.WriteKeyFile(newFile, pending); err != nil {
		t.Fatal(err)
	}
	if res := serveOnce(t, data, nil, true, func(base string) { emitDemo(t, data, base) }); !res.listened {
		t.Errorf("serve with a rotation stopped before its commit: %+v", res)
	}
	if code, out, stderr := runEnv(t, nil, "admin", "kek", "rotate", "--data", data); code != exitOK || !strings.Contains(out, "re-sealed 15 secrets") {
		t.Fatalf("rotate run again: %d %s %s", code, out, stderr)
	}
	pendingKR, _ := billing.NewKeyring(pending)
	if keyOf(t, keyFile) != pendingKR.Fingerprint() {
		t.Error("the rotation run again did not finish with the key it had written")
	}

	// Stopped after the commit, before moving the new key into place:
	// serve refuses kek.key and says how to finish; the command finishes.
	committed := bytes.Repeat([]byte{0x43}, billing.KEKSize)
	if err := billing.WriteKeyFile(newFile, committed); err != nil {
		t.Fatal(err)
	}
	committedKR, _ := billing.NewKeyring(committed)
	st, err := sqlite.Open(ctx, filepath.Join(data, sqlite.FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := billing.RotateKEK(ctx, st, pendingKR, committedKR); err != nil {
		t.Fatal(err)
	}
	st.Close()
	res := serveOnce(t, data, nil, false, nil)
	if res.listened || !strings.Contains(res.stderr, "dtekit admin kek rotate --data "+data) {
		t.Errorf("serve with a rotation stopped after its commit: %+v", res)
	}
	code, out, stderr = runEnv(t, nil, "admin", "kek", "rotate", "--data", data)
	if code != exitOK || !strings.Contains(out, "already sealed under the key") {
		t.Fatalf("rotate after a commit: %d %s %s", code, out, stderr)
	}
	if keyOf(t, keyFile) != committedKR.Fingerprint() {
		t.Error("the rotation was not finished with the committed key")
	}
	if res := serveOnce(t, data, nil, true, func(base string) { emitDemo(t, data, base) }); !res.listened {
		t.Errorf("serve after finishing the rotation: %+v", res)
	}

	// While a server runs, rotate refuses (the data directory is locked).
	serveOnce(t, data, nil, false, func(string) {
		code, _, stderr := runEnv(t, nil, "admin", "kek", "rotate", "--data", data)
		if code == exitOK || !strings.Contains(stderr, "in use by another dtekit serve") {
			t.Errorf("rotate beside a running server: %d %s", code, stderr)
		}
	})
}

// TestAdminKEKRotatePostgres: with DTEKIT_KEK (PostgreSQL), the new key
// comes from --new-key-file (made there when missing); afterwards the
// admin commands work under the new key and refuse the old; the same
// command run again, with either key as DTEKIT_KEK, changes nothing.
func TestAdminKEKRotatePostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("uses PostgreSQL; skipped with -short")
	}
	t.Parallel()
	url := pgtest.URL(t)
	oldKEK := hex.EncodeToString(bytes.Repeat([]byte{0x11}, billing.KEKSize))
	vars := map[string]string{"DTEKIT_DATABASE_URL": url, "DTEKIT_KEK": oldKEK}
	code, _, stderr := runEnv(t, vars, "admin", "empresa", "create", "--rut", "76543210-3", "--razon-social", "Mi Empresa SpA",
		"--giro", "Comercio", "--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago",
		"--fecha-resolucion", "2024-01-01", "--acteco", "620200")
	if code != exitOK {
		t.Fatalf("empresa create: %s", stderr)
	}
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: "13567890-2"})
	if err != nil {
		t.Fatal(err)
	}
	p12, _ := signertest.EncodePKCS12(cert, "s3cret", signertest.Modern)
	dir := t.TempDir()
	certPath, pwPath := filepath.Join(dir, "c.p12"), filepath.Join(dir, "pw")
	os.WriteFile(certPath, p12, 0o600)
	os.WriteFile(pwPath, []byte("s3cret\n"), 0o600)
	if code, _, stderr := runEnv(t, vars, "admin", "certificado", "upload", "--empresa", "76543210-3", "--cert", certPath,
		"--rut-firmante", "13567890-2", "--cert-password-file", pwPath); code != exitOK {
		t.Fatalf("certificado upload: %s", stderr)
	}
	if code, _, stderr := runEnv(t, vars, "admin", "kek", "rotate"); code != exitUsage || !strings.Contains(stderr, "--new-key-file") {
		t.Errorf("rotate without --new-key-file: %d %s", code, stderr)
	}
	newFile := filepath.Join(dir, "new.key")
	code, out, stderr := runEnv(t, vars, "admin", "kek", "rotate", "--new-key-file", newFile)
	if code != exitOK || !strings.Contains(out, "re-sealed 1 secrets") || !strings.Contains(out, "set DTEKIT_KEK") {
		t.Fatalf("rotate: %d %s %s", code, out, stderr)
	}
	newKEK, err := os.ReadFile(newFile)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runEnv(t, vars, "admin", "apikey", "list", "--empresa", "76543210-3"); code == exitOK || !strings.Contains(stderr, "wrong key-encryption key") {
		t.Errorf("an admin command under the old key: %d %s", code, stderr)
	}
	newVars := map[string]string{"DTEKIT_DATABASE_URL": url, "DTEKIT_KEK": strings.TrimSpace(string(newKEK))}
	code, out, stderr = runEnv(t, newVars, "admin", "certificado", "upload", "--empresa", "76543210-3", "--cert", certPath,
		"--rut-firmante", "13567890-2", "--cert-password-file", pwPath)
	if code != exitOK || !strings.Contains(out, `"has_certificado": true`) {
		t.Errorf("certificado upload under the new key: %d %s %s", code, out, stderr)
	}
	for _, v := range []map[string]string{vars, newVars} {
		if code, out, stderr := runEnv(t, v, "admin", "kek", "rotate", "--new-key-file", newFile); code != exitOK || !strings.Contains(out, "already sealed") {
			t.Errorf("rotate run again: %d %s %s", code, out, stderr)
		}
	}
	// The database records the new key's fingerprint.
	st, err := postgres.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kek, _ := billing.ParseKEK(string(newKEK))
	kr, _ := billing.NewKeyring(kek)
	if fp, _, _ := st.Setting(context.Background(), store.SettingKEKFingerprint); fp != kr.Fingerprint() {
		t.Errorf("recorded fingerprint %s, want %s", fp, kr.Fingerprint())
	}
}
