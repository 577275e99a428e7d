package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

// readmeBlocks returns the indented code blocks of the README section
// whose heading is title, in order.
func readmeBlocks(t *testing.T, title string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+title+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", title)
	}
	if i := strings.Index(rest, "\n#"); i >= 0 {
		rest = rest[:i]
	}
	var blocks []string
	var cur []string
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, "    ") {
			cur = append(cur, strings.TrimPrefix(line, "    "))
			continue
		}
		if len(cur) > 0 && strings.TrimSpace(line) != "" {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	if len(cur) > 0 {
		blocks = append(blocks, strings.Join(cur, "\n"))
	}
	return blocks
}

// TestREADMEWalkthrough runs the README's walkthrough as a newcomer would:
// the demo server started as the first block says (the built binary in
// place of go run, on a free port instead of 8080), then each shell block
// as written, with the id the emission answered in place of the
// placeholder. Each command must succeed and answer what the README says.
func TestREADMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	for _, tool := range []string{"curl", "python3", "sed"} {
		oracle.Tool(t, tool)
	}
	blocks := readmeBlocks(t, "### Walkthrough")
	if len(blocks) != 4 || blocks[0] != "go run ./cmd/dtekit serve --demo" {
		t.Fatalf("the walkthrough's blocks changed (%d): %q", len(blocks), blocks)
	}
	wd := t.TempDir()
	p := startServe(t, buildDtekit(t), filepath.Join(wd, "dtekit-data"))
	run := func(script string) string {
		t.Helper()
		script = strings.ReplaceAll(script, "http://127.0.0.1:8080", p.base)
		cmd := exec.Command("sh", "-e", "-c", script)
		cmd.Dir = wd
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s\n%v\nstderr: %s", script, err, errb.String())
		}
		return out.String()
	}

	// Block 2: the key, the API and the emission.
	emit := blocks[1]
	if !strings.Contains(emit, "Idempotency-Key") {
		t.Fatal("the walkthrough's emission has no Idempotency-Key")
	}
	out := run(emit)
	var em struct {
		ID         string `json:"id"`
		Folio      int64  `json:"folio"`
		Estado     string `json:"estado"`
		MontoTotal int64  `json:"monto_total"`
	}
	if err := json.Unmarshal([]byte(out), &em); err != nil || em.ID == "" || em.Folio < 1 {
		t.Fatalf("the emission answered %q (%v)", out, err)
	}
	// The README's comment shows the answer: 10 × 4,990 = 49,900 net, IVA
	// 19 % = 9,481, total 59,381.
	if !strings.Contains(emit, `"monto_total":59381`) || em.MontoTotal != 59381 {
		t.Errorf("monto_total %d; the README shows 59381", em.MontoTotal)
	}

	// Block 3: read it back, the PDF, the XML, the list.
	read := blocks[2]
	placeholder := regexp.MustCompile(`(?m)^ID=\S+.*$`)
	if !placeholder.MatchString(read) {
		t.Fatalf("the walkthrough's read block has no ID= line:\n%s", read)
	}
	setup := run(`sed -n 's/.*"api_key": "\(.*\)".*/\1/p' dtekit-data/demo.json | head -1`)
	script := "KEY=" + strings.TrimSpace(setup) + "\nAPI=" + p.base + "/api/v1/billing\n" + placeholder.ReplaceAllString(read, "ID="+em.ID)
	out = run(script)
	for _, want := range []string{`"id":"` + em.ID + `"`, `"xml_documento":"\u003c?xml version=\"1.0\" encoding=\"UTF-8\"?\u003e`, `"items":[`} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, `\u003c`, "<")) {
			t.Errorf("the read block's output lacks %s:\n%.600s", want, out)
		}
	}
	for name, prefix := range map[string]string{"factura.pdf": "%PDF-", "factura.xml": `<?xml version="1.0" encoding="ISO-8859-1"?>`} {
		b, err := os.ReadFile(filepath.Join(wd, name))
		if err != nil || !bytes.HasPrefix(b, []byte(prefix)) {
			t.Errorf("%s: %.40q (%v)", name, b, err)
		}
	}
	oracle.Run(t, "xmlsec1", "--verify", "--id-attr:ID", "Documento", "--enabled-key-data", "key-value",
		"--enabled-key-data", "rsa", "--node-xpath", "/*/*[local-name()='Signature']", filepath.Join(wd, "factura.xml"))
	p.stop(t)
}

// TestREADMEInbox runs the README's inbox walkthrough against a fresh
// demo server: the supplier's three facturas are listed pending, then the
// first is accepted and the next claimed, each in the fake registry.
func TestREADMEInbox(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	for _, tool := range []string{"curl", "python3", "sed"} {
		oracle.Tool(t, tool)
	}
	blocks := readmeBlocks(t, "#### Inbox walkthrough")
	if len(blocks) != 2 {
		t.Fatalf("the inbox walkthrough's blocks changed (%d): %q", len(blocks), blocks)
	}
	wd := t.TempDir()
	p := startServe(t, buildDtekit(t), filepath.Join(wd, "dtekit-data"))
	run := func(script string) string {
		t.Helper()
		script = strings.ReplaceAll(script, "http://127.0.0.1:8080", p.base)
		cmd := exec.Command("sh", "-e", "-c", script)
		cmd.Dir = wd
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s\n%v\nstderr: %s", script, err, errb.String())
		}
		return out.String()
	}
	var list struct {
		Data []struct {
			Estado    string `json:"estado"`
			RutEmisor string `json:"rut_emisor"`
		} `json:"data"`
		TotalCount int `json:"total_count"`
	}
	out := run(blocks[0])
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.TotalCount != demoSupplierDocs {
		t.Fatalf("the inbox lists %q (%v), want the supplier's %d facturas", out, err, demoSupplierDocs)
	}
	for _, r := range list.Data {
		if r.Estado != "pendiente" || r.RutEmisor != demoSupplierRut {
			t.Errorf("recibido %+v", r)
		}
	}
	// The demo's SII reviews the supplier's facturas within seconds of the
	// start; until then the registry answers 409 and the block is run
	// again, as a reader would.
	deadline := time.Now().Add(60 * time.Second)
	for {
		out = run(blocks[1])
		if strings.Contains(out, `"estado":"aceptado"`) && strings.Contains(out, `"estado":"reclamado"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the decisions answered, after 60 s:\n%s", out)
		}
		time.Sleep(time.Second)
	}
	if !strings.Contains(out, `"rcv_codigo":0`) {
		t.Errorf("the decisions do not show the registry's code 0:\n%s", out)
	}
	p.stop(t)
}
