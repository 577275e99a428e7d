package certificacion_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/internal/oracle"
)

var (
	reDD   = regexp.MustCompile(`(?s)<DD>.*</DD>`)
	reFRMT = regexp.MustCompile(`<FRMT algoritmo="SHA1withRSA">([^<]*)</FRMT>`)
	reRSAP = regexp.MustCompile(`(?s)<RSAPUBK>(.*)</RSAPUBK>`)
)

// run runs an oracle program in dir; ok is false on a non-zero exit.
func run(t *testing.T, dir, name string, args ...string) (string, bool) {
	t.Helper()
	cmd := oracle.Command(t, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestOracleEverything writes the folder of every set file and checks
// every file the kit wrote with the independent tools: each document and
// envelope against its official schema (xmllint) and its signatures
// (xmlsec1), each TED's FRMT with openssl and the CAF's public key, and
// each PDF's PDF417 (ZXingReader on the page rasterized by pdftoppm)
// against the TED of the exact signed XML.
func TestOracleEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the oracles over every file of every set (CI runs it)")
	}
	schemas := oracle.Schemas(t)
	for _, tool := range []string{"xmllint", "xmlsec1", "openssl", "pdftoppm", "ZXingReader"} {
		oracle.Tool(t, tool)
	}
	c := creds(t)
	root := t.TempDir()
	var (
		dtes, boletas, envios, enviosBoleta []string
		teds                                = map[string][]byte{} // PDF path → TED of its document
		pdfs                                []string
	)
	for i, name := range setFiles {
		res := generate(t, name)
		dir := filepath.Join(root, fmt.Sprintf("set%02d", i))
		m, err := certificacion.WriteDir(dir, res, c.Emisor)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for si, s := range m.Sets {
			if s.Envelope != "" {
				if res.Sets[si].Set.Kind == certificacion.SetBoleta {
					enviosBoleta = append(enviosBoleta, filepath.Join(dir, s.Envelope))
				} else {
					envios = append(envios, filepath.Join(dir, s.Envelope))
				}
			}
			for ci, cs := range s.Cases {
				d := res.Sets[si].Docs[ci]
				f := filepath.Join(dir, cs.File)
				if d.Emitted.Tipo.IsBoleta() {
					boletas = append(boletas, f)
				} else {
					dtes = append(dtes, f)
				}
				for _, p := range cs.PDFs {
					pdfs = append(pdfs, filepath.Join(dir, p))
					teds[filepath.Join(dir, p)] = d.Emitted.TED
				}
			}
		}
	}
	if len(dtes) != 28 || len(boletas) != 5 || len(envios) != 6 || len(enviosBoleta) != 1 {
		t.Fatalf("%d documents, %d boletas, %d EnvioDTE, %d EnvioBOLETA; want 28, 5, 6, 1", len(dtes), len(boletas), len(envios), len(enviosBoleta))
	}

	// Schemas: one xmllint run per schema.
	for _, b := range []struct {
		schema string
		files  []string
	}{{"DTE_v10.xsd", dtes}, {"BoletaDTE_wrapper.xsd", boletas}, {"EnvioDTE_v10.xsd", envios}, {"EnvioBOLETA_v11.xsd", enviosBoleta}} {
		msg, ok := run(t, schemas, "xmllint", append([]string{"--noout", "--schema", b.schema}, b.files...)...)
		for _, f := range b.files {
			if !strings.Contains(msg, f+" validates") {
				t.Errorf("xmllint %s: %s does not validate:\n%s", b.schema, f, msg)
			}
		}
		if !ok {
			t.Errorf("xmllint %s failed:\n%s", b.schema, msg)
		}
	}

	// Signatures: every document's, and every envelope's SetDTE one.
	xmlsec := func(file, xpath string) {
		args := []string{"--verify", "--id-attr:ID", "Documento", "--id-attr:ID", "Exportaciones", "--id-attr:ID", "SetDTE",
			"--enabled-key-data", "key-value", "--enabled-key-data", "rsa"}
		if xpath != "" {
			args = append(args, "--node-xpath", xpath)
		}
		if msg, ok := run(t, filepath.Dir(file), "xmlsec1", append(args, file)...); !ok {
			t.Errorf("xmlsec1 %s %s: %s", filepath.Base(file), xpath, msg)
		}
	}
	for _, f := range append(append([]string{}, dtes...), boletas...) {
		xmlsec(f, "")
	}
	for _, f := range append(append([]string{}, envios...), enviosBoleta...) {
		xmlsec(f, `/*/*[local-name()='Signature']`)
	}

	// TEDs: openssl over the flattened DD with the CAF's public key.
	tmp := t.TempDir()
	for i, f := range append(append([]string{}, dtes...), boletas...) {
		xml, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		td := regexp.MustCompile(`<TD>(\d+)</TD>`).FindSubmatch(xml)
		dd, frmt := reDD.Find(xml), reFRMT.FindSubmatch(xml)
		if td == nil || dd == nil || frmt == nil {
			t.Fatalf("%s: no TED", f)
		}
		var cafFile []byte
		for tipo, b := range c.CAFFiles {
			if tipo.String() == string(td[1]) {
				cafFile = b
			}
		}
		pub := reRSAP.FindSubmatch(cafFile)
		sig, err := base64.StdEncoding.DecodeString(string(frmt[1]))
		if pub == nil || err != nil {
			t.Fatalf("%s: CAF key or FRMT unreadable", f)
		}
		ddF, sigF, pubF := filepath.Join(tmp, fmt.Sprint(i, ".dd")), filepath.Join(tmp, fmt.Sprint(i, ".sig")), filepath.Join(tmp, fmt.Sprint(i, ".pub"))
		for p, b := range map[string][]byte{ddF: dd, sigF: sig, pubF: pub[1]} {
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if msg, ok := run(t, tmp, "openssl", "dgst", "-sha1", "-verify", pubF, "-signature", sigF, ddF); !ok || !strings.Contains(msg, "Verified OK") {
			t.Errorf("openssl TED of %s: %s", filepath.Base(f), msg)
		}
	}

	// PDFs: the stamp on the (last, only) page decodes to the TED.
	var pngs []string
	for i, p := range pdfs {
		prefix := filepath.Join(tmp, fmt.Sprintf("page%03d", i))
		if msg, ok := run(t, tmp, "pdftoppm", "-r", "300", "-gray", "-png", "-singlefile", "-f", "1", "-l", "1", p, prefix); !ok {
			t.Fatalf("pdftoppm %s: %s", p, msg)
		}
		pngs = append(pngs, prefix+".png")
	}
	zx := oracle.ZXingPDF417(t, pngs...)
	for i, p := range pdfs {
		r := zx[pngs[i]]
		if r.Symbols != 1 || !bytes.Equal(r.Bytes, teds[p]) {
			t.Errorf("%s: %d PDF417 symbols; decoded %q, want the document's TED %q", filepath.Base(p), r.Symbols, r.Bytes, teds[p])
		}
	}
	t.Logf("checked %d documents, %d boletas, %d envelopes, %d PDFs", len(dtes), len(boletas), len(envios)+len(enviosBoleta), len(pdfs))
}
