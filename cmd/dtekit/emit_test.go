package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

var (
	demoOnce sync.Once
	demoDir  string
	demoOut  string
	demoCode int
)

// demoFiles runs "dtekit demo" once for the package's tests.
func demoFiles(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dtekit-demo-test-")
		if err != nil {
			t.Fatal(err)
		}
		demoDir = dir
		demoCode, demoOut, _ = runCLI(t, "", nil, "demo", "--out", dir)
	})
	if demoCode != 0 {
		t.Fatalf("dtekit demo exited %d:\n%s", demoCode, demoOut)
	}
	return demoDir
}

// parallelTests is how many parallel tests run at once unless
// -test.parallel is given: more than this package has, so that they all
// start together. Most of them wait on a served binary, a fake SII or a
// rescue delay rather than on the CPU (together about 120 s of CPU), and
// the longest, the kill -9 submission tests (about 3 min of waiting for
// rescues and webhook retries), set the package's time only if they start
// at once; the default (GOMAXPROCS, 2 on the CI machine) ran the tests
// nearly one after another.
const parallelTests = 64

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
	code := m.Run()
	for _, dir := range []string{demoDir, binDir, newcomerWD, icDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

func TestDemoProducesVerifiedDocuments(t *testing.T) {
	dir := demoFiles(t)
	for _, name := range []string{"DTE-33-1.xml", "DTE-34-1.xml", "DTE-39-1.xml", "DTE-41-1.xml", "DTE-43-1.xml",
		"DTE-46-1.xml", "DTE-52-1.xml", "DTE-56-1.xml", "DTE-61-1.xml", "DTE-110-1.xml", "DTE-111-1.xml",
		"DTE-112-1.xml", "EnvioDTE.xml", "EnvioBOLETA.xml", "cert.p12", "cert-legacy.p12", "emisor.json", "CAF-33.xml"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("demo did not write %s: %v", name, err)
		}
	}
	if !strings.Contains(demoOut, "12 documents and 2 envelopes written and verified") {
		t.Errorf("demo output lacks its summary:\n%s", demoOut)
	}
	// Independent checks of the demo's envelopes: the official schemas and
	// xmlsec1 on the SetDTE signature, trusting only the KeyValue.
	schemas := oracle.Schemas(t)
	for env, xsd := range map[string]string{"EnvioDTE.xml": "EnvioDTE_v10.xsd", "EnvioBOLETA.xml": "EnvioBOLETA_v11.xsd"} {
		p := filepath.Join(dir, env)
		oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(schemas, xsd), p)
		oracle.Run(t, "xmlsec1", "--verify", "--id-attr:ID", "SetDTE", "--enabled-key-data", "key-value",
			"--enabled-key-data", "rsa", "--node-xpath", "/*/*[local-name()='Signature']", p)
	}
	// The verification is repeated by the verify command, with the demo's
	// test authority trusted...
	files, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	var xmls []string
	for _, f := range files {
		if !strings.Contains(filepath.Base(f), "CAF-") {
			xmls = append(xmls, f)
		}
	}
	if len(xmls) != 14 {
		t.Fatalf("found %d DTE/envelope files, want 14", len(xmls))
	}
	args := append([]string{"verify", "--trust", filepath.Join(dir, "test-sii-authority.pub.pem")}, xmls...)
	code, out, errs := runCLI(t, "", nil, args...)
	if code != 0 {
		t.Fatalf("verify exited %d:\n%s\n%s", code, out, errs)
	}
	if n := strings.Count(out, ": OK ("); n != 14 {
		t.Errorf("verify printed %d OK files, want 14:\n%s", n, out)
	}
	// ...and without it the CAFs' FRMA is not trusted.
	code, out, _ = runCLI(t, "", nil, "verify", filepath.Join(dir, "DTE-33-1.xml"))
	if code != 1 || !strings.Contains(out, "TED FAILED") {
		t.Errorf("verify without --trust: exit %d, want 1 with a TED failure:\n%s", code, out)
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	dir := demoFiles(t)
	pem := filepath.Join(dir, "test-sii-authority.pub.pem")
	orig, err := os.ReadFile(filepath.Join(dir, "DTE-33-1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func([]byte) []byte{
		// A changed total breaks the signature, the TED's MNT and the sums.
		"total": func(b []byte) []byte {
			return bytes.Replace(b, []byte("<MntTotal>"), []byte("<MntTotal>1"), 1)
		},
		// A changed line price breaks the signature and the recomputed totals.
		"price": func(b []byte) []byte { return bytes.Replace(b, []byte("<PrcItem>6490<"), []byte("<PrcItem>6491<"), 1) },
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			bad := mutate(orig)
			if bytes.Equal(bad, orig) {
				t.Fatal("mutation changed nothing")
			}
			p := filepath.Join(t.TempDir(), "bad.xml")
			if err := os.WriteFile(p, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, _ := runCLI(t, "", nil, "verify", "--trust", pem, p)
			if code != 1 || !strings.Contains(out, "signature FAILED") || !strings.Contains(out, "totals FAILED") {
				t.Errorf("verify of a tampered file: exit %d, want 1 with signature and totals failures:\n%s", code, out)
			}
		})
	}
}

func TestEmitWithDemoCredentials(t *testing.T) {
	dir := demoFiles(t)
	out := t.TempDir()
	req := filepath.Join(dir, "request-33.json")
	args := []string{"emit", "--emisor", filepath.Join(dir, "emisor.json"), "--caf", filepath.Join(dir, "CAF-33.xml"),
		"--cert", filepath.Join(dir, "cert-legacy.p12"), "--cert-password", "dtekit-demo",
		"--trust", filepath.Join(dir, "test-sii-authority.pub.pem"), "--folio", "77",
		"--at", time.Now().In(time.UTC).Format("2006-01-02") + "T10:00:00", "--out", out, req}
	code, stdout, stderr := runCLI(t, "", nil, args...)
	if code != 0 {
		t.Fatalf("emit exited %d:\n%s\n%s", code, stdout, stderr)
	}
	var res struct {
		TipoDTE    int     `json:"tipo_dte"`
		Folio      int64   `json:"folio"`
		MontoTotal float64 `json:"monto_total"`
		File       string  `json:"file"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("emit output is not the summary JSON: %v\n%s", err, stdout)
	}
	// Hand computation for request-33 (demo factura): line 1 12 × 6490 = 77880,
	// 10 % discount 7788 → 70092; line 2 6 × 8990 = 53940; taxable 124032;
	// 5 % global discount round(6201.6) = 6202 → MntNeto 117830; IVA
	// round(22387.7) = 22388; exempt 350000; total 117830 + 22388 + 350000.
	if res.TipoDTE != 33 || res.Folio != 77 || res.MontoTotal != 490218 || res.File != filepath.Join(out, "DTE-33-77.xml") {
		t.Errorf("emit summary = %+v", res)
	}
	schemas := oracle.Schemas(t)
	oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(schemas, "DTE_v10.xsd"), res.File)
	code, vout, _ := runCLI(t, "", nil, "verify", "--trust", filepath.Join(dir, "test-sii-authority.pub.pem"), res.File)
	if code != 0 {
		t.Errorf("verify of the emitted file exited %d:\n%s", code, vout)
	}

	// The same folio out of the CAF's range is refused with an envelope and
	// no file.
	out2 := t.TempDir()
	args[len(args)-2] = out2
	for i, a := range args {
		if a == "--folio" {
			args[i+1] = "5000"
		}
	}
	code, stdout, _ = runCLI(t, "", nil, args...)
	if code != 1 || !strings.Contains(stdout, `"CAF_NOT_USABLE"`) || !strings.Contains(stdout, "folio 5000 is not in 1-1000") {
		t.Errorf("emit with a folio outside the CAF: exit %d, output:\n%s", code, stdout)
	}
	if entries, _ := os.ReadDir(out2); len(entries) != 0 {
		t.Errorf("emit wrote %d file(s) on failure", len(entries))
	}
}

func TestEmitBadInputPrintsEnvelopeAndWritesNothing(t *testing.T) {
	dir := demoFiles(t)
	out := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"tipo_dte":33,"receptor":{"rut":"76086428-4","razon_social":"X"},"detalle":[{"nombre":"a","cantidad":0,"precio":10}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"emit", "--emisor", filepath.Join(dir, "emisor.json"), "--caf", filepath.Join(dir, "CAF-33.xml"),
		"--cert", filepath.Join(dir, "cert.p12"), "--cert-password", "dtekit-demo",
		"--trust", filepath.Join(dir, "test-sii-authority.pub.pem"), "--folio", "90", "--out", out}
	code, stdout, _ := runCLI(t, "", nil, append(base, bad)...)
	var env struct {
		Code    string `json:"code"`
		Details []struct{ Field, Code string }
	}
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("not an error envelope: %v\n%s", err, stdout)
	}
	fields := map[string]string{}
	for _, d := range env.Details {
		fields[d.Field] = d.Code
	}
	if code != 1 || env.Code != "VALIDATION_ERROR" || fields["receptor.rut"] != "INVALID_RUT" || fields["detalle[0].cantidad"] == "" {
		t.Errorf("exit %d, envelope %+v", code, env)
	}

	// A wrong certificate password has its own code.
	wrong := append([]string(nil), base...)
	for i, a := range wrong {
		if a == "--cert-password" {
			wrong[i+1] = "nope"
		}
	}
	code, stdout, _ = runCLI(t, "", nil, append(wrong, filepath.Join(dir, "request-33.json"))...)
	if code != 1 || !strings.Contains(stdout, `"CERTIFICATE_PASSWORD"`) {
		t.Errorf("wrong password: exit %d\n%s", code, stdout)
	}
	// A CAF of another type is refused.
	other := append([]string(nil), base...)
	for i, a := range other {
		if a == "--caf" {
			other[i+1] = filepath.Join(dir, "CAF-34.xml")
		}
	}
	code, stdout, _ = runCLI(t, "", nil, append(other, filepath.Join(dir, "request-33.json"))...)
	if code != 1 || !strings.Contains(stdout, `"CAF_TIPO_MISMATCH"`) {
		t.Errorf("CAF of another type: exit %d\n%s", code, stdout)
	}
	// An issuer whose activity code DTE_v10.xsd refuses (Acteco is a
	// positive integer of at most six digits) is refused before signing,
	// as billing refuses it for a company: both use dte.Emisor.Validate.
	em, err := os.ReadFile(filepath.Join(dir, "emisor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var emisor map[string]any
	if err := json.Unmarshal(em, &emisor); err != nil {
		t.Fatal(err)
	}
	emisor["acteco"] = []int{1234567}
	badEmisor := filepath.Join(t.TempDir(), "emisor.json")
	if b, err := json.Marshal(emisor); err != nil || os.WriteFile(badEmisor, b, 0o644) != nil {
		t.Fatal(err)
	}
	withEmisor := append([]string(nil), base...)
	withEmisor[2] = badEmisor
	code, stdout, _ = runCLI(t, "", nil, append(withEmisor, filepath.Join(dir, "request-33.json"))...)
	if code != 1 || !strings.Contains(stdout, `"INVALID_EMISOR"`) || !strings.Contains(stdout, "acteco[0]") {
		t.Errorf("acteco 1234567: exit %d\n%s", code, stdout)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("emit wrote %d file(s) on bad input", len(entries))
	}
}

func TestEnvioCommand(t *testing.T) {
	dir := demoFiles(t)
	code, stdout, stderr := runCLI(t, "", nil, "envio", "--emisor", filepath.Join(dir, "emisor.json"),
		"--cert", filepath.Join(dir, "cert.p12"), "--cert-password", "dtekit-demo",
		"--trust", filepath.Join(dir, "test-sii-authority.pub.pem"),
		filepath.Join(dir, "DTE-39-1.xml"), filepath.Join(dir, "DTE-41-1.xml"))
	if code != 0 {
		t.Fatalf("envio exited %d: %s", code, stderr)
	}
	p := filepath.Join(t.TempDir(), "envio.xml")
	if err := os.WriteFile(p, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	oracle.Run(t, "xmllint", "--noout", "--schema", filepath.Join(oracle.Schemas(t), "EnvioBOLETA_v11.xsd"), p)

	// Mixing a boleta with a factura is refused, on standard error only:
	// standard output is the envelope.
	code, stdout, stderr = runCLI(t, "", nil, "envio", "--emisor", filepath.Join(dir, "emisor.json"),
		"--cert", filepath.Join(dir, "cert.p12"), "--cert-password", "dtekit-demo",
		"--trust", filepath.Join(dir, "test-sii-authority.pub.pem"),
		filepath.Join(dir, "DTE-39-1.xml"), filepath.Join(dir, "DTE-33-1.xml"))
	if code != 1 || stdout != "" || !strings.Contains(stderr, "(INVALID_DTE)") {
		t.Errorf("mixed envelope: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

func TestCAFInspect(t *testing.T) {
	dir := demoFiles(t)
	caf := filepath.Join(dir, "CAF-61.xml")
	code, stdout, _ := runCLI(t, "", nil, "caf", "inspect", "--trust", filepath.Join(dir, "test-sii-authority.pub.pem"), caf)
	var s map[string]any
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("caf inspect output: %v\n%s", err, stdout)
	}
	if code != 0 || s["tipo_dte"] != 61.0 || s["folio_desde"] != 1.0 || s["folio_hasta"] != 1000.0 ||
		s["rut_emisor"] != "76192083-9" || s["ambiente"] != "certificacion" || s["valido"] != true || s["vence"] == nil {
		t.Errorf("caf inspect: exit %d, %v", code, s)
	}
	// Untrusted authority: the FRMA check fails and the exit code says so.
	code, stdout, _ = runCLI(t, "", nil, "caf", "inspect", caf)
	if code != 1 || !strings.Contains(stdout, `"valido": false`) {
		t.Errorf("caf inspect without --trust: exit %d\n%s", code, stdout)
	}
}
