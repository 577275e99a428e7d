package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEmitGuiaTransporteCLI runs "dtekit emit" on the demo's guía (52)
// with and without its transporte block, today (after 2026-05-01): with
// the demo's certificación issuer the guía without it is written, with an
// "advertencias" entry in the summary and a warning line on standard
// error; the same issuer in producción refuses it with the envelope's
// REQUIRED detail and writes nothing. The complete guía carries the block
// into the file.
func TestEmitGuiaTransporteCLI(t *testing.T) {
	dir := demoFiles(t)
	work := t.TempDir()
	var req map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "request-52.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatal(err)
	}
	if _, ok := req["transporte"]; !ok {
		t.Fatal("the demo's guía carries no transporte")
	}
	delete(req, "transporte")
	bare := filepath.Join(work, "guia-sin-transporte.json")
	b, _ := json.Marshal(req)
	if err := os.WriteFile(bare, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var emisor map[string]any
	data, err = os.ReadFile(filepath.Join(dir, "emisor.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &emisor); err != nil {
		t.Fatal(err)
	}
	emisor["ambiente"], emisor["numero_resolucion"] = "produccion", 102
	prodEmisor := filepath.Join(work, "emisor-produccion.json")
	b, _ = json.Marshal(emisor)
	if err := os.WriteFile(prodEmisor, b, 0o600); err != nil {
		t.Fatal(err)
	}
	emit := func(emisorFile, request, out string, folio string) (int, string, string) {
		return runCLI(t, "", nil, "emit", "--emisor", emisorFile, "--caf", filepath.Join(dir, "CAF-52.xml"),
			"--cert", filepath.Join(dir, "cert-legacy.p12"), "--cert-password", "dtekit-demo",
			"--trust", filepath.Join(dir, "test-sii-authority.pub.pem"), "--folio", folio,
			"--at", time.Now().In(time.UTC).Format("2006-01-02")+"T10:00:00", "--out", out, request)
	}

	// Certificación: written, with a warning.
	out := t.TempDir()
	code, stdout, stderr := emit(filepath.Join(dir, "emisor.json"), bare, out, "31")
	if code != 0 {
		t.Fatalf("emit exited %d:\n%s\n%s", code, stdout, stderr)
	}
	var sum struct {
		File         string `json:"file"`
		Advertencias []struct{ Field, Code string }
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("emit output is not the summary JSON: %v\n%s", err, stdout)
	}
	if d := cmp.Diff([]struct{ Field, Code string }{{"transporte", "REQUIRED"}}, sum.Advertencias); d != "" {
		t.Errorf("advertencias (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(stderr, "dtekit emit: warning: transporte (") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("standard error = %q, want one warning line about transporte", stderr)
	}

	// Producción: refused, nothing written.
	out = t.TempDir()
	code, stdout, _ = emit(prodEmisor, bare, out, "32")
	if code != 1 || !strings.Contains(stdout, `"VALIDATION_ERROR"`) || !strings.Contains(stdout, `"field": "transporte",`) {
		t.Errorf("producción without transporte: exit %d, output:\n%s", code, stdout)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("emit wrote %d file(s) on refusal", len(entries))
	}

	// Producción with the demo's block: written, no warning.
	code, stdout, stderr = emit(prodEmisor, filepath.Join(dir, "request-52.json"), out, "33")
	if code != 0 || stderr != "" || strings.Contains(stdout, "advertencias") {
		t.Fatalf("producción with transporte: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	x, err := os.ReadFile(sum.File)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), "<Patente>KXRT45</Patente><RUTTrans>77123456-9</RUTTrans>") {
		t.Errorf("the emitted guía lacks its transport data")
	}
}
