package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// TestREADMEGuiaTransporte runs the README's guía with transport data
// against a fresh demo server, as a reader would after the walkthrough
// (its KEY and API set): the emission answers what the README shows (120 ×
// 4,290 = 514,800 net, IVA 19 % = 97,812, total 612,612; no
// advertencias), and the PDF block prints the transport data it shows.
func TestREADMEGuiaTransporte(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	for _, tool := range []string{"curl", "python3", "sed", "pdftotext", "grep"} {
		oracle.Tool(t, tool)
	}
	blocks := readmeBlocks(t, "#### Guía de despacho with transport data")
	if len(blocks) != 2 {
		t.Fatalf("the guía step's blocks changed (%d): %q", len(blocks), blocks)
	}
	wd := t.TempDir()
	p := startServe(t, buildDtekit(t), filepath.Join(wd, "dtekit-data"))
	defer p.stop(t)
	run := func(script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-e", "-c", script)
		cmd.Dir = wd
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s\n%v", script, err)
		}
		return string(out)
	}
	key := strings.TrimSpace(run(`sed -n 's/.*"api_key": "\(.*\)".*/\1/p' dtekit-data/demo.json | head -1`))
	vars := "KEY=" + key + "\nAPI=" + p.base + "/api/v1/billing\n"

	out := run(vars + blocks[0])
	var em struct {
		ID           string `json:"id"`
		TipoDTE      int    `json:"tipo_dte"`
		Estado       string `json:"estado"`
		MontoTotal   int64  `json:"monto_total"`
		Advertencias []any  `json:"advertencias"`
	}
	if err := json.Unmarshal([]byte(out), &em); err != nil || em.ID == "" {
		t.Fatalf("the emission answered %q (%v)", out, err)
	}
	if em.TipoDTE != 52 || em.Estado != "firmado" || em.MontoTotal != 612612 || em.Advertencias != nil ||
		!strings.Contains(blocks[0], `"monto_total":612612`) {
		t.Errorf("the emission answered %s; the README shows tipo 52, firmado, 612612", out)
	}

	placeholder := regexp.MustCompile(`(?m)^ID=\S+.*$`)
	if !placeholder.MatchString(blocks[1]) {
		t.Fatalf("the PDF block has no ID= line:\n%s", blocks[1])
	}
	out = run(vars + placeholder.ReplaceAllString(blocks[1], "ID="+em.ID))
	for _, re := range []string{`(?m)^Datos de transporte`, `Patente: +KXRT45 +Dirección destino: +Camino a Penco 1480`,
		`RUT transportista: +77\.123\.456-9 +Comuna destino: +Penco`, `Chofer: +Juan Pérez Soto +Ciudad destino: +Penco`,
		`RUT chofer: +16\.789\.012-1`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the PDF block's output does not match %s:\n%s", re, out)
		}
		// The README's comment shows the same lines.
		if !regexp.MustCompile(strings.ReplaceAll(re, "(?m)^", "")).MatchString(blocks[1]) {
			t.Errorf("the README's comment does not show %s", re)
		}
	}
}
