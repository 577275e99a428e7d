package certificacion_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

var (
	reDD   = regexp.MustCompile(`(?s)<DD>.*</DD>`)
	reFRMT = regexp.MustCompile(`<FRMT algoritmo="SHA1withRSA">([^<]*)</FRMT>`)
	reRSAP = regexp.MustCompile(`(?s)<RSAPUBK>(.*)</RSAPUBK>`)
	reTD   = regexp.MustCompile(`<TD>(\d+)</TD>`)
)

// run runs an oracle program in dir; ok is false on a non-zero exit.
func run(t *testing.T, dir, name string, args ...string) (string, bool) {
	t.Helper()
	cmd := oracle.Command(t, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// kitFolders writes the folders the oracle test checks: one per SII set
// file, one of a whole set file with every libro (the Libro de Compras
// para Exentos too) and the RCOF, and the simulación's. It returns each
// folder with the PDFs to decode and their TEDs (only the per-file
// folders' and the simulación's: the whole file repeats the same cases).
func kitFolders(t *testing.T, root string) (dirs []string, teds map[string][]byte) {
	t.Helper()
	c := creds(t)
	teds = map[string][]byte{}
	write := func(name string, res *certificacion.Result, samples bool) {
		dir := filepath.Join(root, name)
		m, err := certificacion.WriteDir(dir, res, c.Emisor)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dirs = append(dirs, dir)
		if !samples {
			return
		}
		for si, s := range m.Sets {
			for ci, cs := range s.Cases {
				for _, p := range cs.PDFs {
					teds[filepath.Join(dir, p)] = res.Sets[si].Docs[ci].Emitted.TED
				}
			}
		}
	}
	for _, name := range setFiles {
		write(name, generate(t, name), true)
	}
	res := generateFullExentos(t)
	if len(res.Libros) != 5 {
		t.Fatalf("the whole set file gives %d libros, want 5 (ventas, compras, compras para exentos, guías, RCOF)", len(res.Libros))
	}
	write("full", res, false)
	for name := range variantFiles {
		write("variante-"+name, generateOnce(t, name, func() []byte { return variantFile(t, name) }), false)
	}
	sim, err := certificacion.Simulacion(context.Background(), certificacion.SimulacionConfig{Config: certificacion.Config{
		Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c), TrustedKeys: c.Keys, Now: func() time.Time { return testAt }}})
	if err != nil {
		t.Fatal(err)
	}
	write("simulacion", sim, true)
	return dirs, teds
}

// schemaOf names the official schema of a file the kit wrote, by its root
// (a boleta by its type).
func schemaOf(t *testing.T, path string, data []byte) string {
	t.Helper()
	root, err := dte.RootName(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if root == "DTE" {
		if td := reTD.FindSubmatch(data); td != nil && (string(td[1]) == "39" || string(td[1]) == "41") {
			return "BoletaDTE_wrapper.xsd"
		}
		return "DTE_v10.xsd"
	}
	xsd := oracle.SchemaFiles[root]
	if xsd == "" {
		t.Fatalf("%s: a <%s> the test has no schema for", path, root)
	}
	return xsd
}

// TestOracleEverything checks every XML file of every folder the kit
// writes (kitFolders: each SII set file, a whole set file with its five
// libros, the simulación) with the independent tools: each against its
// official schema (xmllint: documents, boletas, EnvioDTE, EnvioBOLETA,
// LibroCompraVenta, LibroGuia, ConsumoFolios) and its signatures
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
	dirs, teds := kitFolders(t, t.TempDir())
	bySchema := map[string][]string{}
	var signed, stamped []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".xml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			xsd := schemaOf(t, p, data)
			bySchema[xsd] = append(bySchema[xsd], p)
			signed = append(signed, p)
			if bytes.Contains(data, []byte("<TED ")) && !bytes.HasPrefix(bytes.TrimSpace(data[bytes.Index(data, []byte("?>"))+2:]), []byte("<Envio")) {
				stamped = append(stamped, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every kind of file the kit writes is there.
	for xsd, min := range map[string]int{"DTE_v10.xsd": 38, "BoletaDTE_wrapper.xsd": 5, "EnvioDTE_v10.xsd": 9, "EnvioBOLETA_v11.xsd": 2,
		"LibroCV_v10.xsd": 4, "LibroGuia_v10.xsd": 1, "ConsumoFolio_v10.xsd": 1} {
		if len(bySchema[xsd]) < min {
			t.Errorf("%d files for %s, want at least %d", len(bySchema[xsd]), xsd, min)
		}
	}

	// Schemas: one xmllint run per schema.
	xsds := make([]string, 0, len(bySchema))
	for k := range bySchema {
		xsds = append(xsds, k)
	}
	sort.Strings(xsds)
	for _, xsd := range xsds {
		files := bySchema[xsd]
		msg, ok := run(t, schemas, "xmllint", append([]string{"--noout", "--schema", xsd}, files...)...)
		for _, f := range files {
			if !strings.Contains(msg, f+" validates") {
				t.Errorf("xmllint %s: %s does not validate:\n%s", xsd, f, msg)
			}
		}
		if !ok {
			t.Errorf("xmllint %s failed:\n%s", xsd, msg)
		}
	}

	// Signatures: every file's outer one (the envelope's SetDTE, the
	// libro's EnvioLibro …) and, in a document, the document's.
	for _, f := range signed {
		args := []string{"--verify", "--id-attr:ID", "Documento", "--id-attr:ID", "Exportaciones", "--id-attr:ID", "SetDTE",
			"--id-attr:ID", "EnvioLibro", "--id-attr:ID", "DocumentoConsumoFolios",
			"--enabled-key-data", "key-value", "--enabled-key-data", "rsa", "--node-xpath", `/*/*[local-name()='Signature']`, f}
		if msg, ok := run(t, filepath.Dir(f), "xmlsec1", args...); !ok {
			t.Errorf("xmlsec1 %s: %s", f, msg)
		}
	}

	// TEDs: openssl over the flattened DD with the CAF's public key.
	tmp := t.TempDir()
	for i, f := range stamped {
		xml, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		td := reTD.FindSubmatch(xml)
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
			t.Errorf("openssl TED of %s: %s", f, msg)
		}
	}

	// PDFs: the stamp on the (only) page decodes to the TED. The lower
	// third of the letter page, where the stamp is, is rasterized at 150
	// dpi, which its modules survive; a page that does not decode so is
	// tried again whole at 300 dpi.
	pdfs := make([]string, 0, len(teds))
	for p := range teds {
		pdfs = append(pdfs, p)
	}
	sort.Strings(pdfs)
	raster := func(dpi int, files []string) map[string]string {
		out := map[string]string{}
		for i, p := range files {
			prefix := filepath.Join(tmp, fmt.Sprintf("page%d-%03d", dpi, i))
			args := []string{"-r", fmt.Sprint(dpi), "-gray", "-png", "-singlefile", "-f", "1", "-l", "1"}
			if dpi == 150 { // 8.5 × 11 in: 1275 × 1650 pixels; the lower third
				args = append(args, "-x", "0", "-y", "1100", "-W", "1275", "-H", "550")
			}
			if msg, ok := run(t, tmp, "pdftoppm", append(args, p, prefix)...); !ok {
				t.Fatalf("pdftoppm %s: %s", p, msg)
			}
			out[p] = prefix + ".png"
		}
		return out
	}
	decode := func(pngs map[string]string) (failed []string) {
		list := make([]string, 0, len(pngs))
		for _, png := range pngs {
			list = append(list, png)
		}
		zx := oracle.ZXingPDF417(t, list...)
		for p, png := range pngs {
			if r := zx[png]; r.Symbols != 1 || !bytes.Equal(r.Bytes, teds[p]) {
				failed = append(failed, p)
			}
		}
		sort.Strings(failed)
		return failed
	}
	again := decode(raster(150, pdfs))
	if len(again) > 0 {
		t.Logf("%d PDFs decoded only from the whole page at 300 dpi: %v", len(again), again)
		pngs := raster(300, again)
		zx := oracle.ZXingPDF417(t, slicesOf(pngs)...)
		for _, p := range again {
			if r := zx[pngs[p]]; r.Symbols != 1 || !bytes.Equal(r.Bytes, teds[p]) {
				t.Errorf("%s: %d PDF417 symbols; decoded %q, want the document's TED %q", p, r.Symbols, r.Bytes, teds[p])
			}
		}
	}
	n := 0
	for _, fs := range bySchema {
		n += len(fs)
	}
	t.Logf("checked %d XML files (%d stamped documents) and %d PDFs in %d folders", n, len(stamped), len(pdfs), len(dirs))
}

func slicesOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
