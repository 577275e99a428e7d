package dte_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeHarness calls the README's emitOne with test credentials. It is
// compiled into the same package as the snippet.
const readmeHarness = `package main

import (
	"context"
	"log"
	"os"
	"strings"

	"github.com/dtekit/dtekit/dte/dtetest"
)

func main() {
	creds, err := dtetest.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	folios, err := creds.Folios()
	if err != nil {
		log.Fatal(err)
	}
	env, err := emitOne(context.Background(), creds.Emisor, creds.Cert, folios, creds.Keys, strings.NewReader(os.Args[1]))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(os.Args[2], env, 0o644); err != nil {
		log.Fatal(err)
	}
}
`

// readmeSnippet returns the Go block of the README's "Emitting from Go".
func readmeSnippet(t *testing.T) []byte {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := bytes.Cut(readme, []byte("\n## Emitting from Go\n"))
	if !ok {
		t.Fatal(`README.md has no "## Emitting from Go" section`)
	}
	_, code, ok := bytes.Cut(section, []byte("```go\n"))
	if !ok {
		t.Fatal("the section has no Go block")
	}
	code, _, ok = bytes.Cut(code, []byte("\n```"))
	if !ok {
		t.Fatal("the Go block is not closed")
	}
	return code
}

// TestREADMESnippet builds the README's Go snippet exactly as written, with
// a main that feeds it test credentials, and runs it: once on a valid
// request, whose envelope must be written and verified, and once on a
// request with a misspelt field, which must fail with UNKNOWN_FIELD. The
// files are laid over the module with go's -overlay, so nothing is written
// into the source tree.
func TestREADMESnippet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	snippet, harness := filepath.Join(dir, "snippet.go"), filepath.Join(dir, "main.go")
	if err := os.WriteFile(snippet, readmeSnippet(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(harness, []byte(readmeHarness), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "internal", "readmesnippet")
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(pkg, "snippet.go"): snippet,
		filepath.Join(pkg, "main.go"):    harness,
	}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "readme")
	build := exec.Command(goBin, "build", "-overlay", overlayFile, "-o", bin, "./internal/readmesnippet")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's snippet does not build: %v\n%s", err, out)
	}

	run := func(request string) (stdout, stderr string, envelope []byte, err error) {
		envFile := filepath.Join(dir, "envio.xml")
		os.Remove(envFile)
		cmd := exec.Command(bin, request, envFile)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		envelope, _ = os.ReadFile(envFile)
		return o.String(), e.String(), envelope, err
	}

	// 2 × 1000 = 2000 net, IVA 380, total 2380.
	stdout, stderr, env, err := run(`{"tipo_dte": 33,
	  "receptor": {"rut": "76086428-5", "razon_social": "Comercial Andes Ltda.", "giro": "Comercio"},
	  "detalle": [{"nombre": "Resma carta", "cantidad": 2, "precio": 1000}]}`)
	if err != nil {
		t.Fatalf("the snippet failed: %v\n%s", err, stderr)
	}
	if want := "folio 1: 2380, verified true\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if !bytes.Contains(env, []byte("<EnvioDTE ")) || !bytes.Contains(env, []byte("<MntTotal>2380</MntTotal>")) {
		t.Errorf("the envelope written is not an EnvioDTE of 2380 (%d bytes)", len(env))
	}

	_, stderr, env, err = run(`{"tipo_dte": 33, "receptor": {"rut": "76086428-5", "razon_social": "X"},
	  "detalle": [{"nombre": "A", "cantidad": 1, "precio": 1, "descuento_pc": 5}]}`)
	if err == nil || len(env) > 0 || !strings.Contains(stderr, "detalle[0].descuento_pc") || !strings.Contains(stderr, "UNKNOWN_FIELD") {
		t.Errorf("a misspelt field: err %v, %d-byte envelope, stderr %q", err, len(env), stderr)
	}
}
