package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// pdfTextOf runs pdftotext (reading order) on a file and collapses white
// space.
func pdfTextOf(t *testing.T, file string) string {
	t.Helper()
	out := oracle.Run(t, "pdftotext", "-enc", "UTF-8", file, "-")
	return strings.Join(strings.Fields(string(out)), " ")
}

// copyInto copies a file into dir and returns the new path.
func copyInto(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPDFCommand(t *testing.T) {
	oracle.Tool(t, "pdftotext")
	oracle.Tool(t, "qpdf")
	demo := demoFiles(t)
	tmp := t.TempDir()

	// Letter, resolution and office from the demo's emisor.json
	// (numero_resolucion 0, fecha_resolucion 2024-05-10, oficina ÑUÑOA).
	out := filepath.Join(tmp, "factura.pdf")
	code, stdout, stderr := runCLI(t, "", nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), filepath.Join(demo, "DTE-33-1.xml"), "--emisor", filepath.Join(demo, "emisor.json"), "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, out) || stderr != "" {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	oracle.Run(t, "qpdf", "--check", out)
	txt := pdfTextOf(t, out)
	for _, w := range []string{"FACTURA ELECTRÓNICA", "N° 1", "R.U.T.: 76.192.083-9", "S.I.I. - ÑUÑOA",
		"Timbre Electrónico SII", "Res. N° 0 de 2024", "Verifique documento: www.sii.cl"} {
		if !strings.Contains(txt, w) {
			t.Errorf("factura: pdftotext lacks %q:\n%s", w, txt)
		}
	}
	if strings.Contains(txt, "CEDIBLE") {
		t.Error("factura without --cedible says CEDIBLE")
	}

	// Cedible copy with explicit resolution, flags after the file, and the
	// default output name beside the input.
	in := copyInto(t, filepath.Join(demo, "DTE-33-1.xml"), tmp)
	code, stdout, stderr = runCLI(t, "", nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), in, "--cedible", "--resolucion", "80", "--fecha-resolucion", "2014-08-22", "--oficina", "Santiago Oriente")
	if code != 0 {
		t.Fatalf("cedible: exit %d\n%s%s", code, stdout, stderr)
	}
	ced := filepath.Join(tmp, "DTE-33-1-cedible.pdf")
	txt = pdfTextOf(t, ced)
	for _, w := range []string{"CEDIBLE", "ACUSE DE RECIBO", "Recinto:", "Ley 19.983", "Res. N° 80 de 2014", "S.I.I. - SANTIAGO ORIENTE"} {
		if !strings.Contains(txt, w) {
			t.Errorf("cedible: pdftotext lacks %q:\n%s", w, txt)
		}
	}

	// 80 mm boleta to standard output.
	code, stdout, stderr = runCLI(t, "", nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), "--format", "80mm", "--emisor", filepath.Join(demo, "emisor.json"), "-o", "-", filepath.Join(demo, "DTE-39-1.xml"))
	if code != 0 || !strings.HasPrefix(stdout, "%PDF-") {
		t.Fatalf("80mm to stdout: exit %d, %.20q\n%s", code, stdout, stderr)
	}
	boleta := filepath.Join(tmp, "boleta.pdf")
	if err := os.WriteFile(boleta, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	oracle.Run(t, "qpdf", "--check", boleta)
	if txt := pdfTextOf(t, boleta); !strings.Contains(txt, "BOLETA ELECTRÓNICA") {
		t.Errorf("boleta: %s", txt)
	}

	// An envelope's document: the resolution comes from its Carátula, so
	// no warning.
	env := filepath.Join(tmp, "envelope.pdf")
	code, stdout, stderr = runCLI(t, "", nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), filepath.Join(demo, "EnvioBOLETA.xml"), "--doc", "2", "--format", "80mm", "--oficina", "ÑUÑOA", "-o", env)
	if code != 0 || stderr != "" {
		t.Fatalf("envelope: exit %d\n%s%s", code, stdout, stderr)
	}
	if txt := pdfTextOf(t, env); !strings.Contains(txt, "BOLETA NO AFECTA O EXENTA ELECTRÓNICA") || !strings.Contains(txt, "Res. N° 0 de 2024") {
		t.Errorf("envelope document 2: %s", txt)
	}

	// No resolution anywhere: certification value and a warning.
	code, _, stderr = runCLI(t, "", nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), filepath.Join(demo, "DTE-61-1.xml"), "-o", filepath.Join(tmp, "nc.pdf"))
	if code != 0 || !strings.Contains(stderr, "warning") {
		t.Errorf("without resolution: exit %d, stderr %q", code, stderr)
	}
}

func TestPDFCommandRefusals(t *testing.T) {
	demo := demoFiles(t)
	tmp := t.TempDir()
	emisor := filepath.Join(demo, "emisor.json")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"boleta cedible", []string{filepath.Join(demo, "DTE-39-1.xml"), "--cedible", "--emisor", emisor}, 1, "no cedible copy"},
		{"nota de crédito cedible", []string{filepath.Join(demo, "DTE-61-1.xml"), "--cedible", "--emisor", emisor}, 1, "no cedible copy"},
		{"guía on 80 mm", []string{filepath.Join(demo, "DTE-52-1.xml"), "--format", "80mm", "--emisor", emisor}, 1, "80mm paper is for types 33, 34, 39 and 41"},
		{"missing file", []string{filepath.Join(tmp, "nope.xml")}, 1, "no such file"},
		{"not a DTE", []string{emisor}, 1, ""},
		{"CAF is not a DTE", []string{filepath.Join(demo, "CAF-33.xml"), "--emisor", emisor}, 1, "not a DTE"},
		{"envelope index", []string{filepath.Join(demo, "EnvioBOLETA.xml"), "--doc", "3"}, 1, "holds 2 documents"},
		{"boleta cedible without resolution", []string{filepath.Join(demo, "DTE-41-1.xml"), "--cedible"}, 1, "no cedible copy"},
		{"no file", nil, 2, "usage"},
		{"two files", []string{"a.xml", "b.xml"}, 2, "usage"},
		{"bad format", []string{"a.xml", "--format", "a4"}, 2, "want carta or 80mm"},
		{"half resolution", []string{"a.xml", "--resolucion", "80"}, 2, "go together"},
		{"doc 0", []string{"a.xml", "--doc", "0"}, 2, "numbered from 1"},
		{"unknown flag", []string{"a.xml", "--color"}, 2, "flag provided but not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(tmp, strings.ReplaceAll(c.name, " ", "_")+".pdf")
			args := append([]string{"pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), "-o", out}, c.args...)
			code, stdout, stderr := runCLI(t, "", nil, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			if !strings.Contains(stderr, c.msg) {
				t.Errorf("stderr %q lacks %q", stderr, c.msg)
			}
			if strings.Contains(stderr, "warning") {
				t.Errorf("a refused document also got a warning: %q", stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
	code, stdout, _ := runCLI(t, "", nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), "--help")
	if code != 0 || !strings.Contains(stdout, "usage: dtekit pdf DTE.xml") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
}

func TestPDFCommandStdin(t *testing.T) {
	demo := demoFiles(t)
	xml, err := os.ReadFile(filepath.Join(demo, "DTE-34-1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(xml), nil, "pdf", "--trust", filepath.Join(demo, "test-sii-authority.pub.pem"), "-", "--resolucion", "1", "--fecha-resolucion", "2020-01-01")
	if code != 0 || !bytes.HasPrefix([]byte(stdout), []byte("%PDF-")) {
		t.Fatalf("stdin: exit %d %.20q\n%s", code, stdout, stderr)
	}
}
