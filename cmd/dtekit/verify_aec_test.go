package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte/dtetest"
)

// cededAEC writes, with "cesion ceder", A's first cesión of the factura
// of cesionFiles to F into the test's own folder, and returns the folder
// of cesionFiles and the AEC's path.
func cededAEC(t *testing.T) (dir, aec string) {
	t.Helper()
	dir = cesionFiles(t)
	aec = filepath.Join(t.TempDir(), "AEC.xml")
	if code, stdout, stderr := runCLI(t, "", nil, cederArgs(dir, "--out", aec)...); code != 0 {
		t.Fatalf("ceder: exit %d\n%s%s", code, stdout, stderr)
	}
	return dir, aec
}

// TestVerifyAEC: "dtekit verify" recognises an AEC by its root and reads
// it as "dtekit cesion leer" does. An AEC written by "cesion ceder"
// verifies under both policies (with the test CAF authority trusted),
// beside a DTE in the same call; without --trust its stamp is refused; the
// file edited at one byte (the cesionario's name, which the file's
// signature covers) is refused with exit 1, the summary on standard output
// and one line on standard error naming AEC.Signature and AEC_REFUSED;
// --signer reaches the AEC's signers; --json prints the report of "cesion
// leer --json"; --help names AEC and --policy.
func TestVerifyAEC(t *testing.T) {
	t.Parallel()
	dir, aec := cededAEC(t)
	out := t.TempDir()
	trust := "--trust=" + filepath.Join(dir, "authority.pem")

	for _, pol := range []string{"registry", "strict"} {
		code, stdout, stderr := runCLI(t, "", nil, "verify", trust, "--policy", pol, filepath.Join(dir, "dte.xml"), aec)
		for _, want := range []string{aec + ": OK (policy " + pol + ")\n", "  cesión 1: " + dtetest.EmisorRUT,
			"→ " + cesRutF + ` "Factoring Ñandú & Cía. S.A."`, "    AEC        OK, signed by " + dtetest.SignerRUT,
			filepath.Join(dir, "dte.xml") + ": OK (DTE, 1 document(s))"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("policy %s: no %q in\n%s", pol, want, stdout)
			}
		}
		if code != 0 || stderr != "" || strings.Contains(stdout, "FAILED") {
			t.Errorf("policy %s: exit %d\n%s%s", pol, code, stdout, stderr)
		}
	}

	// The test CAF's authority is not the SII's: without --trust the
	// ceded DTE's stamp fails, and so does the AEC.
	code, stdout, stderr := runCLI(t, "", nil, "verify", aec)
	if code != 1 || !strings.Contains(stdout, aec+": REFUSED (policy registry)") || strings.Count(stderr, "\n") != 1 ||
		!strings.HasPrefix(stderr, "dtekit verify: "+aec+": refused: DocumentoDTECedido.DTE.TED") || !strings.HasSuffix(stderr, "(AEC_REFUSED)\n") {
		t.Errorf("without --trust: exit %d, want 1\n%s%s", code, stdout, stderr)
	}

	// One byte edited: "Ñandú" loses its accent (ú → u, one Latin-1 byte).
	orig, err := os.ReadFile(aec)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(orig, []byte("Factoring \xd1and\xfa"), []byte("Factoring \xd1andu"), 1)
	if bytes.Equal(bad, orig) || len(bad) != len(orig) {
		t.Fatal("the edit changed nothing or more than a byte")
	}
	edited := filepath.Join(out, "edited.xml")
	if err := os.WriteFile(edited, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, pol := range []string{"registry", "strict"} {
		code, stdout, stderr := runCLI(t, "", nil, "verify", trust, "--policy", pol, edited)
		if code != 1 || !strings.Contains(stdout, edited+": REFUSED (policy "+pol+")") || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "AEC.Signature: ") || !strings.HasSuffix(stderr, "(AEC_REFUSED)\n") {
			t.Errorf("edited, policy %s: exit %d, want 1 naming AEC.Signature\n%s%s", pol, code, stdout, stderr)
		}
	}
	// A good file beside the edited one: the call still exits 1.
	if code, _, _ := runCLI(t, "", nil, "verify", trust, aec, edited); code != 1 {
		t.Errorf("a good and an edited AEC: exit %d, want 1", code)
	}

	// --signer: A's own signer passes; another RUT for A is refused at
	// every level A signed.
	if code, stdout, stderr := runCLI(t, "", nil, "verify", trust, "--signer", dtetest.EmisorRUT+"="+dtetest.SignerRUT, aec); code != 0 {
		t.Errorf("--signer A=A's signer: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "", nil, "verify", trust, "--signer", dtetest.EmisorRUT+"=11111111-1", aec)
	if code != 1 || !strings.Contains(stderr, "Cesion[1].Signature[1]: ") || !strings.Contains(stderr, "AEC.Signature: ") ||
		!strings.HasSuffix(stderr, "(AEC_REFUSED)\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("--signer A=another RUT: exit %d, want 1\n%s%s", code, stdout, stderr)
	}

	// --json: the report "cesion leer --json" prints.
	code, stdout, stderr = runCLI(t, "", nil, "verify", "--json", trust, aec)
	var rep struct {
		File      string `json:"file"`
		OK        bool   `json:"ok"`
		Policy    string `json:"policy"`
		Documento struct {
			Tipo int `json:"tipo_dte"`
		} `json:"documento"`
		Report struct {
			Firmas []struct {
				Nivel string `json:"nivel"`
				OK    bool   `json:"ok"`
			} `json:"firmas"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || stderr != "" {
		t.Fatalf("--json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	// The DTE's, the ceded document's, the cesión's and the file's.
	if rep.File != aec || !rep.OK || rep.Policy != "registry" || rep.Documento.Tipo != 33 || len(rep.Report.Firmas) != 4 {
		t.Errorf("--json: %+v", rep)
	}

	// The command line.
	if code, _, stderr := runCLI(t, "", nil, "verify", "--policy", "laxa", aec); code != 2 || !strings.Contains(stderr, `"laxa" is not registry or strict`) {
		t.Errorf("--policy laxa: exit %d, want 2\n%s", code, stderr)
	}
	code, stdout, _ = runCLI(t, "", nil, "verify", "--help")
	if code != 0 || !strings.Contains(stdout, "Archivo Electrónico de Cesión (AEC") ||
		!regexp.MustCompile(`(?m)^  -policy\b.*\n\s+\S`).MatchString(stdout) {
		t.Errorf("verify --help: exit %d, no AEC or -policy:\n%s", code, stdout)
	}
}
