package main

// Tests of the built binary along the paths a newcomer takes: the demo and
// the commands it prints, help, a forgotten flag, the usual operational
// mistakes, and the refusals that protect the files. Each checks the exit
// status, which stream carries what, and the message.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// builtBinary builds cmd/dtekit once per test run and returns its path.
func builtBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "dtekit-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "dtekit")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = &buildError{err: err, out: string(out)}
		}
	})
	if binErr != nil {
		t.Fatalf("building dtekit: %v", binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

// runBin runs the built binary in dir with extra environment variables.
func runBin(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(builtBinary(t), args...)
	return runCmd(t, cmd, dir, env)
}

func runCmd(t *testing.T, cmd *exec.Cmd, dir string, env []string) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errb
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return result{code, out.String(), errb.String()}
}

var (
	newcomerOnce sync.Once
	newcomerWD   string
	newcomerOut  result
)

// newcomerDemo runs "dtekit demo" with the built binary once, in a fresh
// working directory, as the README says, and returns that directory.
func newcomerDemo(t *testing.T) (string, result) {
	t.Helper()
	newcomerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dtekit-newcomer-")
		if err != nil {
			t.Fatal(err)
		}
		newcomerWD = dir
		newcomerOut = runBin(t, dir, nil, "demo")
	})
	if newcomerOut.code != 0 {
		t.Fatalf("dtekit demo: exit %d\n%s\n%s", newcomerOut.code, newcomerOut.stdout, newcomerOut.stderr)
	}
	return newcomerWD, newcomerOut
}

// repeatedPrefix finds "x: x: " in a message.
var repeatedPrefix = regexp.MustCompile(`(?:^|\s)([^\s:]+): ([^\s:]+): `)

func checkNoRepeatedPrefix(t *testing.T, what, msg string) {
	t.Helper()
	for _, m := range repeatedPrefix.FindAllStringSubmatch(msg, -1) {
		if m[1] == m[2] {
			t.Errorf("%s repeats %q: %q", what, m[1], msg)
		}
	}
}

// TestNewcomerDemoFollowUps runs the commands the demo prints, exactly as
// printed, through a shell (so the globs expand as a user's would), with
// the binary on PATH as "go install ./cmd/dtekit" puts it; then runs the
// demo again in the same folder and its printed commands again: they still
// work, and the first run's files (with the factura emitted by hand) moved
// aside still verify with their own authority.
func TestNewcomerDemoFollowUps(t *testing.T) {
	wd, demo := newcomerDemo(t)
	if demo.stderr != "" {
		t.Errorf("demo wrote to standard error: %q", demo.stderr)
	}
	runFollowUps(t, wd, demo.stdout)

	again := runBin(t, wd, nil, "demo")
	if again.code != 0 || again.stderr != "" {
		t.Fatalf("second dtekit demo in the same folder: exit %d\n%s\n%s", again.code, again.stdout, again.stderr)
	}
	runFollowUps(t, wd, again.stdout)
	prev, _ := filepath.Glob(filepath.Join(wd, "dtekit-demo", "previous", "*"))
	if len(prev) != 1 || !strings.Contains(again.stdout, prev[0]) && !strings.Contains(again.stdout, strings.TrimPrefix(prev[0], wd+"/")) {
		t.Fatalf("the first run's files: %v; second run said:\n%s", prev, again.stdout)
	}
	r := runCmd(t, exec.Command("sh", "-c", "dtekit verify --trust "+prev[0]+"/test-sii-authority.pub.pem "+prev[0]+"/DTE-*.xml "+prev[0]+"/Envio*.xml"),
		wd, []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")})
	if n := strings.Count(r.stdout, ": OK ("); r.code != 0 || n != 15 {
		t.Errorf("the first run's 15 files (with DTE-33-2.xml) with their authority: exit %d, %d OK\n%s%s", r.code, n, r.stdout, r.stderr)
	}
}

// runFollowUps runs the three commands a demo printed (verify, emit, pdf)
// as printed, in wd, and checks what each answers.
func runFollowUps(t *testing.T, wd, stdout string) {
	t.Helper()
	var cmds []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		if _, cmd, ok := strings.Cut(sc.Text(), ":  "); ok && strings.HasPrefix(strings.TrimSpace(cmd), "dtekit ") {
			cmds = append(cmds, strings.TrimSpace(cmd))
		} else if _, cmd, ok := strings.Cut(sc.Text(), ": dtekit "); ok {
			cmds = append(cmds, "dtekit "+cmd)
		}
	}
	if len(cmds) != 3 {
		t.Fatalf("demo printed %d follow-up commands, want 3 (verify, emit, pdf):\n%s", len(cmds), stdout)
	}
	for _, c := range cmds {
		cmd := exec.Command("sh", "-c", c)
		r := runCmd(t, cmd, wd, []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH")})
		if r.code != 0 {
			t.Fatalf("%s\nexit %d\nstdout: %s\nstderr: %s", c, r.code, r.stdout, r.stderr)
		}
		switch {
		case strings.HasPrefix(c, "dtekit verify"):
			if n := strings.Count(r.stdout, ": OK ("); n != 14 {
				t.Errorf("verify: %d files OK, want 14 (12 DTEs, 2 envelopes):\n%s", n, r.stdout)
			}
		case strings.HasPrefix(c, "dtekit emit"):
			var res struct {
				File string `json:"file"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || !strings.HasSuffix(res.File, "DTE-33-2.xml") {
				t.Errorf("emit: stdout %q (%v)", r.stdout, err)
			}
		case strings.HasPrefix(c, "dtekit pdf"):
			if !strings.Contains(r.stdout, "DTE-33-2.pdf: FACTURA ELECTRÓNICA N° 2") || r.stderr != "" {
				t.Errorf("pdf: stdout %q, stderr %q", r.stdout, r.stderr)
			}
		}
	}
}

// TestNewcomerHelp: --help on every command prints on standard output,
// exits 0 and describes each flag; "dtekit version" answers.
func TestNewcomerHelp(t *testing.T) {
	wd := t.TempDir()
	for _, tc := range []struct {
		args []string
		flag string // a flag whose description must appear
	}{
		{[]string{"--help"}, ""},
		{[]string{"help"}, ""},
		{[]string{"help", "emit"}, "-cert-password-file"},
		{[]string{"totals", "--help"}, ""},
		{[]string{"emit", "--help"}, "-cert-password-file"},
		{[]string{"emit", "-h"}, "-force"},
		{[]string{"envio", "--help"}, "-no-verify"},
		{[]string{"verify", "--help"}, "-trust"},
		{[]string{"caf", "--help"}, ""},
		{[]string{"caf", "inspect", "--help"}, "-at"},
		{[]string{"demo", "--help"}, "-out"},
		{[]string{"pdf", "--help"}, "-oficina"},
		{[]string{"webhook", "--help"}, ""},
		{[]string{"webhook", "sign", "--help"}, "-secret"},
		{[]string{"webhook", "verify", "--help"}, "-tolerance"},
		{[]string{"webhook", "secret", "--help"}, ""},
		{[]string{"version", "--help"}, ""},
		{[]string{"sii", "--help"}, ""},
		{[]string{"sii", "token", "--help"}, "-cert-password-file"},
		{[]string{"sii", "fake", "--help"}, "-addr"},
		{[]string{"serve", "--help"}, "-addr"},
		{[]string{"admin", "--help"}, ""},
	} {
		r := runBin(t, wd, nil, tc.args...)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "usage:") {
			t.Errorf("dtekit %s: exit %d, stdout %.80q, stderr %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr)
			continue
		}
		if tc.flag != "" && !regexp.MustCompile(`(?m)^  `+regexp.QuoteMeta(tc.flag)+`\b.*\n\s+\S`).MatchString(r.stdout) {
			t.Errorf("dtekit %s: no description of %s:\n%s", strings.Join(tc.args, " "), tc.flag, r.stdout)
		}
	}
	r := runBin(t, wd, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "dtekit ") || !strings.Contains(r.stdout, "go1.") || r.stderr != "" {
		t.Errorf("dtekit version: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// No command: usage on standard error, exit 2.
	if r := runBin(t, wd, nil); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "usage:") {
		t.Errorf("dtekit alone: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestNewcomerMistakes covers the usual mistakes with the demo's files:
// each has its own code, on standard error and (for emit, whose standard
// output is JSON) in the envelope, never VALIDATION_ERROR, and no message
// repeats its prefix.
func TestNewcomerMistakes(t *testing.T) {
	wd, _ := newcomerDemo(t)
	d := "dtekit-demo"
	out := t.TempDir()
	corrupt := filepath.Join(out, "corrupt.p12")
	if err := os.WriteFile(corrupt, []byte("this is not PKCS#12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emit := func(cert, caf string, extra ...string) []string {
		return append([]string{"emit", "--emisor", d + "/emisor.json", "--caf", caf, "--cert", cert,
			"--trust", d + "/test-sii-authority.pub.pem", "--folio", "7", "--out", out}, append(extra, d+"/request-33.json")...)
	}
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		code string
		msg  string
	}{
		{"wrong password", emit(d+"/cert.p12", d+"/CAF-33.xml", "--cert-password", "nope"), nil, "CERTIFICATE_PASSWORD", "the password does not open this file"},
		{"wrong password from the environment", emit(d+"/cert.p12", d+"/CAF-33.xml"), []string{"DTEKIT_CERT_PASSWORD=nope"}, "CERTIFICATE_PASSWORD", "--cert dtekit-demo/cert.p12"},
		{"corrupt .p12", emit(corrupt, d+"/CAF-33.xml", "--cert-password", "x"), nil, "INVALID_CERTIFICATE", "corrupt"},
		{"CAF of another type", emit(d+"/cert.p12", d+"/CAF-34.xml", "--cert-password-file", d+"/cert-password.txt"), nil, "CAF_TIPO_MISMATCH", "the CAF authorizes tipo 34"},
		{"unreadable CAF", emit(d+"/cert.p12", d+"/CAF-99.xml", "--cert-password-file", d+"/cert-password.txt"), nil, "FILE_UNREADABLE", "CAF-99.xml: no such file"},
		{"not a CAF", emit(d+"/cert.p12", d+"/emisor.json", "--cert-password-file", d+"/cert-password.txt"), nil, "INVALID_CAF", "malformed CAF"},
		{"unreadable password file", emit(d+"/cert.p12", d+"/CAF-33.xml", "--cert-password-file", d+"/nope.txt"), nil, "FILE_UNREADABLE", "nope.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runBin(t, wd, tc.env, tc.args...)
			var env struct{ Code, Message string }
			if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
				t.Fatalf("stdout is not an error envelope: %v\n%s", err, r.stdout)
			}
			if r.code != 1 || env.Code != tc.code || !strings.Contains(env.Message, tc.msg) {
				t.Errorf("exit %d, envelope %+v; want exit 1, code %s, message with %q", r.code, env, tc.code, tc.msg)
			}
			if !strings.HasPrefix(r.stderr, "dtekit emit: ") || !strings.Contains(r.stderr, "("+tc.code+")") || strings.Contains(r.stderr+r.stdout, "VALIDATION_ERROR") {
				t.Errorf("stderr %q", r.stderr)
			}
			checkNoRepeatedPrefix(t, "stderr", r.stderr)
		})
	}
	if entries, _ := os.ReadDir(out); len(entries) != 1 {
		t.Errorf("failed emits wrote %d file(s) beside corrupt.p12", len(entries)-1)
	}

	// The repository's sample factura dated 2025-05-14, before the demo's
	// fresh CAF: refused with the CAF's code and the way out.
	sample, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), "testdata", "requests", "factura.json"))
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(out, "factura-2025-05-14.json")
	dated := bytes.Replace(sample, []byte(`"tipo_dte": 33,`), []byte(`"tipo_dte": 33, "fecha_emision": "2025-05-14",`), 1)
	if bytes.Equal(dated, sample) {
		t.Fatal("factura.json does not start with tipo_dte 33")
	}
	if err := os.WriteFile(old, dated, 0o644); err != nil {
		t.Fatal(err)
	}
	args := emit(d+"/cert.p12", d+"/CAF-33.xml", "--cert-password-file", d+"/cert-password.txt")
	r := runBin(t, wd, nil, append(args[:len(args)-1], old)...)
	if r.code != 1 || !strings.Contains(r.stdout, `"CAF_NOT_USABLE"`) || !strings.Contains(r.stderr, "leave it out to emit today") {
		t.Errorf("emit of a request dated before the CAF: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	// An invalid request: VALIDATION_ERROR, each field named once.
	bad := filepath.Join(out, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"tipo_dte":33,"receptor":{"rut":"76086428-4","razon_social":"X","giro":"g","direccion":"d","comuna":"c"},"detalle":[{"nombre":"a","cantidad":1,"precio":10}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runBin(t, wd, nil, "totals", bad)
	if r.code != 1 || !strings.Contains(r.stdout, `"VALIDATION_ERROR"`) || !strings.Contains(r.stderr, "receptor.rut: check digit") {
		t.Errorf("totals of a bad RUT: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	checkNoRepeatedPrefix(t, "totals stderr", r.stderr)

	// A forgotten required flag is named.
	r = runBin(t, wd, nil, "emit", "--emisor", d+"/emisor.json", "--cert", d+"/cert.p12", "--folio", "7", d+"/request-33.json")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "missing required flag --caf") {
		t.Errorf("emit without --caf: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, wd, nil, "envio", "--cert", d+"/cert.p12", d+"/DTE-33-1.xml")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "missing required flag --emisor") {
		t.Errorf("envio without --emisor: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestNewcomerFilesAreProtected: emit keeps an existing file unless told,
// passwords come from a file or the environment, and pdf and envio refuse
// a document whose amounts were edited after signing, saying so on
// standard error only.
func TestNewcomerFilesAreProtected(t *testing.T) {
	wd, _ := newcomerDemo(t)
	d := "dtekit-demo"
	out := t.TempDir()
	base := []string{"emit", "--emisor", d + "/emisor.json", "--caf", d + "/CAF-33.xml", "--cert", d + "/cert.p12",
		"--trust", d + "/test-sii-authority.pub.pem", "--folio", "40", "--out", out, d + "/request-33.json"}
	r := runBin(t, wd, []string{"DTEKIT_CERT_PASSWORD=dtekit-demo"}, base...)
	if r.code != 0 {
		t.Fatalf("emit with the password in $DTEKIT_CERT_PASSWORD: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	file := filepath.Join(out, "DTE-33-40.xml")
	first, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	withFile := append([]string{"emit", "--cert-password-file", d + "/cert-password.txt"}, base[1:]...)
	r = runBin(t, wd, nil, withFile...)
	if r.code != 1 || !strings.Contains(r.stdout, `"OUTPUT_EXISTS"`) || !strings.Contains(r.stderr, "--force") {
		t.Errorf("second emit to the same file: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if again, _ := os.ReadFile(file); !bytes.Equal(again, first) {
		t.Error("the existing DTE was changed")
	}
	r = runBin(t, wd, nil, append(withFile, "--force")...)
	if r.code != 0 {
		t.Errorf("emit --force with the password in a file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Edit the total of the signed document, as a fraudster would.
	tampered := filepath.Join(out, "tampered.xml")
	signed, err := os.ReadFile(filepath.Join(wd, d, "DTE-33-1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<MntTotal>(\d+)</MntTotal>`).FindSubmatch(signed)
	if m == nil {
		t.Fatal("no MntTotal in DTE-33-1.xml")
	}
	edited := bytes.Replace(signed, m[0], []byte("<MntTotal>1"+string(m[1])+"</MntTotal>"), 1)
	if err := os.WriteFile(tampered, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	trust := d + "/test-sii-authority.pub.pem"
	pdfOut := filepath.Join(out, "tampered.pdf")
	for _, args := range [][]string{
		{"pdf", "--trust", trust, "--emisor", d + "/emisor.json", "-o", pdfOut, tampered},
		{"pdf", "--trust", trust, "--emisor", d + "/emisor.json", "-o", "-", tampered},
		{"envio", "--emisor", d + "/emisor.json", "--cert", d + "/cert.p12", "--cert-password-file", d + "/cert-password.txt", "--trust", trust, d + "/DTE-33-1.xml", tampered},
	} {
		r := runBin(t, wd, nil, args...)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "(DOCUMENT_NOT_VERIFIED)") || !strings.Contains(r.stderr, "totals") || !strings.Contains(r.stderr, "--no-verify") {
			t.Errorf("%s of a tampered DTE: exit %d, stdout %.40q, stderr %q", args[0], r.code, r.stdout, r.stderr)
		}
		checkNoRepeatedPrefix(t, args[0]+" stderr", r.stderr)
	}
	if _, err := os.Stat(pdfOut); err == nil {
		t.Error("pdf wrote a PDF of the tampered document")
	}
	r = runBin(t, wd, nil, "pdf", "--no-verify", "--emisor", d+"/emisor.json", "-o", pdfOut, tampered)
	if r.code != 0 {
		t.Errorf("pdf --no-verify: exit %d, %s", r.code, r.stderr)
	}
	// Without --trust the demo's test CAF is not trusted: refused, with
	// the way out in the message.
	r = runBin(t, wd, nil, "pdf", "--emisor", d+"/emisor.json", "-o", pdfOut, d+"/DTE-33-1.xml")
	if r.code != 1 || !strings.Contains(r.stderr, "--trust") {
		t.Errorf("pdf without --trust: exit %d, stderr %q", r.code, r.stderr)
	}
}

// internalChain matches the prefix a Go package puts on its errors
// ("caf: ", "signer: ", "pkcs12: ", "asn1: "): words for a log, not for the
// one line a command prints.
var internalChain = regexp.MustCompile(`(^|[\s(])(dte|caf|ted|billing|store|signer|smallrsa|pkcs12|x509|asn1|sii|xmltree|xmlflat|xml|json|strconv|rsa|crypto/[a-z0-9]+|pem|base64)(: parse)?: `)

// TestCLIErrorsCarryNoInternalChains: the one-line errors of the commands
// a newcomer runs first name the file and the problem, without the error
// chains of the packages below (a damaged certificate used to print
// "signer: corrupt or unsupported PKCS#12 file: pkcs12: error reading P12
// data: asn1: structure error: …").
func TestCLIErrorsCarryNoInternalChains(t *testing.T) {
	wd, _ := newcomerDemo(t)
	d := filepath.Join(wd, "dtekit-demo")
	junk := filepath.Join(t.TempDir(), "junk")
	nope := filepath.Join(t.TempDir(), "nope.xml")
	os.WriteFile(junk, []byte("not a certificate, not a CAF"), 0o600)
	os.WriteFile(nope, []byte("<nope/>"), 0o600)
	emit := func(caf, cert string) []string {
		return []string{"emit", "--emisor", d + "/emisor.json", "--caf", caf, "--cert", cert, "--cert-password-file", d + "/cert-password.txt",
			"--trust", d + "/test-sii-authority.pub.pem", "--folio", "9", "--out", t.TempDir(), d + "/request-33.json"}
	}
	for _, args := range [][]string{
		{"caf", "inspect", nope},
		{"caf", "inspect", "--trust", d + "/test-sii-authority.pub.pem", junk},
		{"verify", nope},
		{"verify", junk},
		emit(d+"/CAF-33.xml", junk),
		emit(nope, d+"/cert.p12"),
		emit(junk, d+"/cert.p12"),
		{"pdf", nope},
	} {
		r := runBin(t, wd, nil, args...)
		if r.code == 0 {
			t.Errorf("dtekit %v succeeded", args)
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
			if loc := internalChain.FindStringIndex(line); loc != nil {
				t.Errorf("dtekit %s: the error carries an internal chain at %q: %s", args[0], line[loc[0]:loc[1]], line)
			}
			checkNoRepeatedPrefix(t, "stderr", line)
		}
	}
}
