package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// TestCertificacionGenerarBinary runs "dtekit certificacion generar" through
// the built binary on the SII's basic set, with the demo's credentials:
// help on standard output, a missing CAF refused before anything is
// written, an unreadable line named, then the folder with its manifest.
func TestCertificacionGenerarBinary(t *testing.T) {
	wd := t.TempDir()
	if r := runBin(t, wd, nil, "demo", "--out", "creds"); r.code != 0 {
		t.Fatalf("demo: %d %s", r.code, r.stderr)
	}
	set := oracle.SharedFile(t, "sii", "sets", "001-basico.txt")
	base := []string{"certificacion", "generar", "--set", set, "--emisor", "creds/emisor.json", "--cert", "creds/cert.p12",
		"--cert-password-file", "creds/cert-password.txt", "--trust", "creds/test-sii-authority.pub.pem"}
	withCAFs := func(out string, tipos ...string) []string {
		a := append([]string{}, base...)
		for _, tp := range tipos {
			a = append(a, "--caf", "creds/CAF-"+tp+".xml")
		}
		return append(a, "--out", out)
	}

	if r := runBin(t, wd, nil, "certificacion", "generar", "--help"); r.code != 0 || !strings.Contains(r.stdout, "manifest.json") || r.stderr != "" {
		t.Errorf("--help: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := runBin(t, wd, nil, "certificacion", "generar", "--set", set); r.code != 2 || !strings.Contains(r.stderr, "--emisor") {
		t.Errorf("missing flags: exit %d, stderr %q", r.code, r.stderr)
	}

	// The basic set needs 33, 56 and 61: one error naming both missing
	// types, and no folder.
	r := runBin(t, wd, nil, withCAFs("out-missing", "33")...)
	if r.code != 1 || !strings.Contains(r.stderr, "(CAF_MISSING)") || !strings.Contains(r.stderr, "tipo 56") || !strings.Contains(r.stderr, "tipo 61") {
		t.Errorf("missing CAFs: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "out-missing")); !os.IsNotExist(err) {
		t.Errorf("a folder was written despite the missing CAFs: %v", err)
	}

	// A set file with a line the kit does not understand: a warning naming
	// the line, every case generated (in a folder elsewhere, so that its
	// folios do not count beside "out").
	odd := filepath.Join(wd, "odd.txt")
	data, _ := os.ReadFile(set)
	if err := os.WriteFile(odd, append(data, []byte("\r\nPAGUE CON CHEQUE\r\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	args := withCAFs(filepath.Join("aparte", "out-odd"), "33", "56", "61")
	args[3] = odd
	r = runBin(t, wd, nil, args...)
	if r.code != 0 || !strings.Contains(r.stderr, "advertencia: line 73 \"PAGUE CON CHEQUE\"") || !strings.Contains(r.stdout, "line 73") || !strings.Contains(r.stdout, `"documents": 8`) {
		t.Errorf("a set with an unknown line: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if leeme := readString(t, filepath.Join(wd, "aparte", "out-odd", "LEEME.md")); !strings.Contains(leeme, "PAGUE CON CHEQUE") {
		t.Errorf("LEEME.md does not list the line left aside")
	}
	// A case whose own data cannot be read: refused, naming the line and
	// the case, nothing written.
	bad := filepath.Join(wd, "bad.txt")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(data), "    123", "    12x", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	args = withCAFs("out-bad", "33", "56", "61")
	args[3] = bad
	r = runBin(t, wd, nil, args...)
	if r.code != 1 || !strings.Contains(r.stderr, "(INVALID_SET_FILE)") || !strings.Contains(r.stderr, "line 7") || !strings.Contains(r.stderr, "case 414175-1") {
		t.Errorf("bad set: exit %d, stderr %q", r.code, r.stderr)
	}

	r = runBin(t, wd, nil, withCAFs("out", "33", "56", "61")...)
	if r.code != 0 {
		t.Fatalf("generar: exit %d, stderr %s", r.code, r.stderr)
	}
	var m struct {
		Sets []struct {
			Name, NumeroAtencion, Envelope string
			Cases                          []struct {
				CaseID     string `json:"case_id"`
				TipoDTE    int    `json:"tipo_dte"`
				Folio      int64
				File       string
				MontoTotal json.Number `json:"monto_total"`
			}
		}
		Libros []any
	}
	mj, err := os.ReadFile(filepath.Join(wd, "out", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(mj)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if len(m.Sets) != 1 || m.Sets[0].Envelope != "envios/01-EnvioDTE-BASICO-414175.xml" || len(m.Sets[0].Cases) != 8 || m.Libros == nil {
		t.Fatalf("manifest: %s", mj)
	}
	// Case 1: 123 × 923 + 53 × 1473 = 191598, IVA 36404, total 228002.
	if c := m.Sets[0].Cases[0]; c.CaseID != "414175-1" || c.TipoDTE != 33 || c.Folio != 1 || c.File != "documentos/T33F1.xml" || c.MontoTotal != "228002" {
		t.Errorf("case 1 in the manifest: %+v", c)
	}
	for _, f := range []string{"LEEME.md", "documentos/T61F3.xml", m.Sets[0].Envelope, "muestras/001-T33F1-tributario.pdf", "muestras/002-T33F1-cedible.pdf"} {
		if _, err := os.Stat(filepath.Join(wd, "out", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The basic set with its SET LIBRO DE VENTAS (as the SII's file puts
	// them): the folder carries the Libro de Ventas, listed in the summary
	// and the manifest.
	full := filepath.Join(wd, "full.txt")
	ventas, err := os.ReadFile(oracle.SharedFile(t, "sii", "sets", "002-ventas.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, append(append([]byte("SET BASICO - NUMERO DE ATENCION:  414175\r\n\r\n"), append(data, '\r', '\n')...), ventas...), 0o600); err != nil {
		t.Fatal(err)
	}
	args = withCAFs("out-libros", "33", "56", "61")
	args[3] = full
	if r := runBin(t, wd, nil, args...); r.code != 0 || !strings.Contains(r.stdout, `"libros": 1`) {
		t.Errorf("generar with the libro set: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "out-libros", "libros", "01-LibroVentas-414176.xml")); err != nil {
		t.Errorf("the Libro de Ventas: %v", err)
	}

	// The folder beside "out" started above its folios: 33 1-4 there, so
	// 5 here, and it said so.
	if _, err := os.Stat(filepath.Join(wd, "out-libros", "documentos", "T33F5.xml")); err != nil {
		t.Errorf("the second folder does not start above the first one's folios: %v", err)
	}

	// Again into the same folder: refused, saying its folios are spent.
	if r := runBin(t, wd, nil, withCAFs("out", "33", "56", "61")...); r.code != 1 || !strings.Contains(r.stderr, "(OUTPUT_EXISTS)") || !strings.Contains(r.stderr, "tipo 33 folios 1-4") {
		t.Errorf("existing folder: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestCertificacionSetFileRUT: a set file the SII named for another
// company than --emisor is refused, saying why, unless --forzar; one named
// for the emisor, and a renamed one, are generated.
func TestCertificacionSetFileRUT(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	if r := runBin(t, wd, nil, "demo", "--out", "creds"); r.code != 0 {
		t.Fatalf("demo: %d %s", r.code, r.stderr)
	}
	data, err := os.ReadFile(oracle.SharedFile(t, "sii", "sets", "004-factura_exenta.txt"))
	if err != nil {
		t.Fatal(err)
	}
	gen := func(name, out string, extra ...string) result {
		if err := os.WriteFile(filepath.Join(wd, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"certificacion", "generar", "--set", name, "--emisor", "creds/emisor.json", "--cert", "creds/cert.p12",
			"--cert-password-file", "creds/cert-password.txt", "--trust", "creds/test-sii-authority.pub.pem",
			"--caf", "creds/CAF-34.xml", "--caf", "creds/CAF-56.xml", "--caf", "creds/CAF-61.xml", "--out", filepath.Join(out, "kit")}
		return runBin(t, wd, nil, append(args, extra...)...)
	}
	// 76.192.083-9 is the demo's company; 11.111.111-1 another.
	if r := gen("SIISetDePruebas111111111.txt", "otra"); r.code != 1 || !strings.Contains(r.stderr, "(SET_FILE_OTHER_RUT)") ||
		!strings.Contains(r.stderr, "issued this set file to 11111111-1") || !strings.Contains(r.stderr, "--forzar") {
		t.Errorf("another company's set: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "otra")); !os.IsNotExist(err) {
		t.Errorf("a folder was written for another company's set: %v", err)
	}
	if r := gen("SIISetDePruebas111111111.txt", "forzada", "--forzar"); r.code != 0 {
		t.Errorf("--forzar: exit %d %s", r.code, r.stderr)
	}
	if r := gen("SIISetDePruebas761920839.txt", "propia"); r.code != 0 {
		t.Errorf("the emisor's own set: exit %d %s", r.code, r.stderr)
	}
	if r := gen("mi-set.txt", "renombrada"); r.code != 0 {
		t.Errorf("a renamed set file: exit %d %s", r.code, r.stderr)
	}
}

// TestCertificacionSimulacionBinary runs "dtekit certificacion simulacion"
// through the built binary with the demo's credentials: ten documents of
// the CAFs' types in one envelope; fewer than ten, or no factura CAF, are
// refused before anything is written.
func TestCertificacionSimulacionBinary(t *testing.T) {
	wd := t.TempDir()
	if r := runBin(t, wd, nil, "demo", "--out", "creds"); r.code != 0 {
		t.Fatalf("demo: %d %s", r.code, r.stderr)
	}
	base := []string{"certificacion", "simulacion", "--emisor", "creds/emisor.json", "--cert", "creds/cert.p12",
		"--cert-password-file", "creds/cert-password.txt", "--trust", "creds/test-sii-authority.pub.pem"}
	with := func(out string, tipos ...string) []string {
		a := append([]string{}, base...)
		for _, tp := range tipos {
			a = append(a, "--caf", "creds/CAF-"+tp+".xml")
		}
		return append(a, "--out", out)
	}
	if r := runBin(t, wd, nil, append(with("sim9", "33"), "--n", "9")...); r.code != 2 || !strings.Contains(r.stderr, "10 to 100") {
		t.Errorf("--n 9: exit %d %s", r.code, r.stderr)
	}
	if r := runBin(t, wd, nil, with("sim-nf", "61")...); r.code != 1 || !strings.Contains(r.stderr, "(CAF_MISSING)") {
		t.Errorf("no factura CAF: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "sim-nf")); !os.IsNotExist(err) {
		t.Errorf("a folder was written despite the refusal: %v", err)
	}
	r := runBin(t, wd, nil, with("sim", "33", "56", "61")...)
	if r.code != 0 || !strings.Contains(r.stdout, `"documents": 10`) {
		t.Fatalf("simulacion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"manifest.json", "LEEME.md", "envios/01-EnvioDTE-SIMULACION.xml", "documentos/T33F1.xml", "documentos/T61F1.xml", "documentos/T56F1.xml"} {
		if _, err := os.Stat(filepath.Join(wd, "sim", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// A second simulación beside the first: 33, 61, 56 cycled over ten
	// documents took 33 1-4, 61 1-3 and 56 1-3 there, so it starts at 33
	// 5, 61 4, 56 4, and says so.
	r = runBin(t, wd, nil, with("sim2", "33", "56", "61")...)
	if r.code != 0 || !strings.Contains(r.stderr, "tipo 33 folios 1-4") || !strings.Contains(r.stderr, "empieza en el 5") {
		t.Fatalf("second simulacion: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"documentos/T33F5.xml", "documentos/T61F4.xml", "documentos/T56F4.xml"} {
		if _, err := os.Stat(filepath.Join(wd, "sim2", f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "sim2", "documentos", "T33F1.xml")); err == nil {
		t.Errorf("the second simulación reused folio 1 of tipo 33")
	}
}
