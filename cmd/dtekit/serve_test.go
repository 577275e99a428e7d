package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/internal/oracle"
)

// serveProc is a running "dtekit serve" binary.
type serveProc struct {
	cmd  *exec.Cmd
	base string
	out  chan string // the rest of standard output
	done chan error
}

// buildDtekit returns the dtekit binary, built once per test run (see
// builtBinary): each test runs it in its own data directory.
func buildDtekit(t *testing.T) string {
	t.Helper()
	return builtBinary(t)
}

// startServe starts "dtekit serve --demo" on a free loopback port and waits
// for its listening line.
func startServe(t *testing.T, bin, data string, env ...string) *serveProc {
	t.Helper()
	return startServeArgs(t, bin, []string{"--demo", "--data", data}, env...)
}

// startServeFlags is startServe with extra flags.
func startServeFlags(t *testing.T, bin, data string, flags []string, env ...string) *serveProc {
	t.Helper()
	return startServeArgs(t, bin, append([]string{"--demo", "--data", data}, flags...), env...)
}

// startServeArgs starts "dtekit serve" with args on a free loopback port,
// without rate limits, and waits for its listening line.
func startServeArgs(t *testing.T, bin string, args []string, env ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(bin, append(append([]string{"serve"}, args...), "--addr", "127.0.0.1:0", "--rate-limit", "-1")...)
	cmd.Env = append(os.Environ(), "DTEKIT_KEK=", "DTEKIT_DATABASE_URL=")
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, out: make(chan string, 1000), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.out <- sc.Text()
		}
		close(p.out)
		p.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.After(60 * time.Second)
	for p.base == "" {
		select {
		case l, ok := <-p.out:
			if !ok {
				t.Fatalf("serve exited before listening:\n%s", stderr.String())
			}
			if _, a, found := strings.Cut(l, "listening on "); found {
				p.base, _, _ = strings.Cut(a, " ")
			}
		case <-deadline:
			t.Fatal("no listening line within 60 s")
		}
	}
	return p
}

// kill ends the process with SIGKILL (no chance to finish anything).
func (p *serveProc) kill(t *testing.T) {
	t.Helper()
	p.cmd.Process.Kill()
	for range p.out {
	}
	<-p.done
}

// stop sends SIGTERM and waits for a clean exit.
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range p.out {
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve still running 60 s after SIGTERM")
	}
}

func readDemoFile(t *testing.T, data string) demoFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, demoFileName))
	if err != nil {
		t.Fatal(err)
	}
	var d demoFile
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("demo.json: %v", err)
	}
	if d.APIKey == "" || d.AdminToken == "" || d.EmpresaID == "" {
		t.Fatalf("demo.json lacks a field: %s", b)
	}
	return d
}

// call makes one API request and returns the status and body.
func call(t *testing.T, client *http.Client, method, url, auth string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(auth, "Bearer ") {
		req.Header.Set("Authorization", auth)
	} else if auth != "" {
		req.Header.Set("X-Api-Key", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// postDemoFactura emits demoFactura once through the API at api
// (…/api/v1/billing) with a fresh Idempotency-Key. Unlike call it returns
// a transport error (a server killed or stopping) instead of failing the
// test, so load goroutines can use it.
func postDemoFactura(hc *http.Client, api, apiKey string) (int, []byte, error) {
	return postRaw(hc, api+"/dte", apiKey, "application/json", []byte(demoFactura))
}

// postRaw posts body with an API key and a fresh Idempotency-Key, and
// returns a transport error rather than failing the test.
func postRaw(hc *http.Client, target, apiKey, contentType string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest("POST", target, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Api-Key", apiKey)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Idempotency-Key", uuid.NewString())
	res, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// signedOrLater are the states of a signed document: the demo submits it
// to its fake SII right away.
var signedOrLater = map[string]bool{"firmado": true, "enviando": true, "procesando": true, "aceptado": true}

// TestServeDemoBinary runs the built binary: serve --demo, emit with the
// key of demo.json, check the XML with xmlsec1 and the PDF's stamp with
// ZXingReader, stop it with SIGTERM in the middle of a load and check that
// every acknowledged document is there after a restart, which provisions
// nothing twice.
func TestServeDemoBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, bin, data)
	demo := readDemoFile(t, data)
	client := &http.Client{Timeout: 60 * time.Second}
	api := p.base + "/api/v1/billing"

	status, body := call(t, client, "POST", api+"/dte", demo.APIKey, []byte(demoFactura))
	if status != 201 {
		t.Fatalf("emit: %d %s", status, body)
	}
	var em struct {
		ID    string
		Folio int64
	}
	json.Unmarshal(body, &em)

	// The console is mounted beside the API: its sign-in page answers,
	// and a page without a session leads there.
	if status, page := call(t, client, "GET", p.base+"/console/resumen", "", nil); status != 200 || !bytes.Contains(page, []byte(`name="credencial"`)) {
		t.Errorf("the console: %d %.300s", status, page)
	}

	// The signed XML verifies with xmlsec1, trusting only its KeyValue.
	status, xml := call(t, client, "GET", api+"/dte/"+em.ID+"/xml", demo.APIKey, nil)
	if status != 200 {
		t.Fatalf("xml: %d %s", status, xml)
	}
	dir := t.TempDir()
	xmlPath := filepath.Join(dir, "dte.xml")
	os.WriteFile(xmlPath, xml, 0o644)
	oracle.Run(t, "xmlsec1", "--verify", "--id-attr:ID", "Documento", "--enabled-key-data", "key-value",
		"--enabled-key-data", "rsa", "--node-xpath", "/*/*[local-name()='Signature']", xmlPath)

	// The PDF's stamp decodes with ZXingReader to exactly the XML's TED.
	status, pdfBytes := call(t, client, "GET", api+"/dte/"+em.ID+"/pdf", demo.APIKey, nil)
	if status != 200 || !bytes.HasPrefix(pdfBytes, []byte("%PDF-")) {
		t.Fatalf("pdf: %d", status)
	}
	pdfPath := filepath.Join(dir, "dte.pdf")
	os.WriteFile(pdfPath, pdfBytes, 0o644)
	oracle.Run(t, "pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", "-f", "1", "-l", "1", pdfPath, filepath.Join(dir, "page"))
	zx := string(oracle.Run(t, "ZXingReader", "-format", "PDF417", filepath.Join(dir, "page.png")))
	var stamp []byte
	for _, line := range strings.Split(zx, "\n") {
		if v, ok := strings.CutPrefix(line, "Bytes:"); ok {
			b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(v), " ", ""))
			if err != nil {
				t.Fatalf("ZXingReader bytes: %v", err)
			}
			stamp = b
		}
	}
	i, j := bytes.Index(xml, []byte("<TED ")), bytes.Index(xml, []byte("</TED>"))
	if i < 0 || j < i {
		t.Fatal("the XML has no TED")
	}
	if ted := xml[i : j+len("</TED>")]; !bytes.Equal(stamp, ted) {
		t.Fatalf("the stamp decodes to %q, the XML's TED is %q", stamp, ted)
	}

	// Every sample request of the repository emits as shipped through the
	// demo server (they carry no fecha_emision, so they are dated today,
	// within the demo CAFs' validity).
	samples, err := filepath.Glob(filepath.Join(oracle.RepoRoot(t), "testdata", "requests", "*.json"))
	if err != nil || len(samples) != 12 {
		t.Fatalf("testdata/requests holds %d files (%v), want 12", len(samples), err)
	}
	for _, f := range samples {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			TipoDTE int `json:"tipo_dte"`
		}
		json.Unmarshal(b, &want)
		status, body := call(t, client, "POST", api+"/dte", demo.APIKey, b)
		var got struct {
			TipoDTE int    `json:"tipo_dte"`
			Estado  string `json:"estado"`
		}
		json.Unmarshal(body, &got)
		if status != 201 || got.TipoDTE != want.TipoDTE || !signedOrLater[got.Estado] {
			t.Errorf("%s through the demo server: %d %s", filepath.Base(f), status, body)
		}
	}

	// The admin token of demo.json may read the certificate status.
	if status, body := call(t, client, "GET", api+"/empresa/certificado", "Bearer "+demo.AdminToken, nil); status != 200 || !bytes.Contains(body, []byte(`"has_certificado":true`)) {
		t.Fatalf("certificate status with the admin token: %d %s", status, body)
	}

	// SIGTERM in the middle of a load: every 201 received is a stored
	// document after a restart.
	var mu sync.Mutex
	acked := []string{em.ID}
	stopLoad := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lc := &http.Client{Timeout: 30 * time.Second}
			for n := 0; n < 500; n++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				status, b, err := postDemoFactura(lc, api, demo.APIKey)
				if err != nil {
					return // the server is going away
				}
				if status == 201 {
					var r struct{ ID string }
					json.Unmarshal(b, &r)
					mu.Lock()
					acked = append(acked, r.ID)
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	p.stop(t)
	close(stopLoad)
	wg.Wait()
	if len(acked) < 5 {
		t.Fatalf("only %d documents acknowledged before SIGTERM", len(acked))
	}

	// Restart: the same company, key and CAFs, and every acknowledged
	// document signed.
	p2 := startServe(t, bin, data)
	demo2 := readDemoFile(t, data)
	if demo2.APIKey != demo.APIKey || demo2.EmpresaID != demo.EmpresaID {
		t.Errorf("restart changed demo.json: %+v → %+v", demo, demo2)
	}
	api = p2.base + "/api/v1/billing"
	status, body = call(t, client, "GET", api+"/caf", demo.APIKey, nil)
	var cafs struct{ Data []json.RawMessage }
	json.Unmarshal(body, &cafs)
	if status != 200 || len(cafs.Data) != 12 {
		t.Errorf("after restart: %d CAFs (status %d), want 12", len(cafs.Data), status)
	}
	folios := map[int64]bool{}
	for _, id := range acked {
		status, body := call(t, client, "GET", api+"/dte/"+id, demo.APIKey, nil)
		var d struct {
			Estado string
			Folio  int64
		}
		json.Unmarshal(body, &d)
		if status != 200 || !signedOrLater[d.Estado] {
			t.Errorf("acknowledged %s after restart: %d %s", id, status, body)
		}
		if folios[d.Folio] {
			t.Errorf("folio %d used twice", d.Folio)
		}
		folios[d.Folio] = true
	}
	t.Logf("%d documents acknowledged before SIGTERM, all present after restart", len(acked))
	p2.stop(t)
}
