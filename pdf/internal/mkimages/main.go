// Command mkimages regenerates the pictures of the printed representation
// shown in the README, from the project's own output: it emits the sample
// factura and boleta of testdata/requests with the test credentials
// (dte/dtetest, the demo company), renders them with package pdf
// (the factura on letter paper, the boleta on 80 mm paper) and rasterizes
// the PDFs with pdftoppm (poppler-utils).
//
// Run it from the repository root:
//
//	go run ./pdf/internal/mkimages
//
// It writes docs/images/factura-carta.png and docs/images/boleta-80mm.png
// (and, with -keep-pdf, the PDFs beside them).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/pdf"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "images"), "output directory")
	requests := flag.String("requests", filepath.Join("testdata", "requests"), "directory of the sample requests")
	letterDPI := flag.Int("letter-dpi", 100, "resolution of the letter picture")
	rollDPI := flag.Int("roll-dpi", 150, "resolution of the 80 mm picture")
	keep := flag.Bool("keep-pdf", false, "keep the PDFs next to the pictures")
	flag.Parse()
	if err := run(context.Background(), *out, *requests, *letterDPI, *rollDPI, *keep); err != nil {
		fmt.Fprintf(os.Stderr, "mkimages: %v\n", err)
		os.Exit(1)
	}
}

// picture is one image to produce.
type picture struct {
	request string
	name    string
	format  pdf.Format
	dpi     int
}

func run(ctx context.Context, out, requests string, letterDPI, rollDPI int, keep bool) error {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		return fmt.Errorf("pdftoppm not found (apt-get install poppler-utils): %w", err)
	}
	// A fixed clock after the samples' dates, so the pictures only change
	// when the code or the samples do (keys and signatures still vary).
	now := time.Date(2025, 6, 3, 10, 30, 0, 0, time.UTC)
	creds, err := dtetest.NewWith(dtetest.Options{Now: now, FechaAutorizacion: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return err
	}
	em, err := creds.Emitter(func() time.Time { return now })
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, p := range []picture{
		{"factura", "factura-carta", pdf.Carta, letterDPI},
		{"boleta", "boleta-80mm", pdf.Termica80, rollDPI},
	} {
		data, err := os.ReadFile(filepath.Join(requests, p.request+".json"))
		if err != nil {
			return err
		}
		var req dte.EmitirDTERequest
		if err := json.Unmarshal(data, &req); err != nil {
			return fmt.Errorf("%s.json: %w", p.request, err)
		}
		res, err := em.Emit(ctx, &req)
		if err != nil {
			return fmt.Errorf("emitting %s: %w", p.request, err)
		}
		doc, err := dte.ParseDTE(res.XML)
		if err != nil {
			return err
		}
		opts := pdf.OptionsFor(creds.Emisor)
		opts.Format = p.format
		b, err := pdf.RenderBytes(doc, opts)
		if err != nil {
			return err
		}
		pdfPath := filepath.Join(out, p.name+".pdf")
		if err := os.WriteFile(pdfPath, b, 0o644); err != nil {
			return err
		}
		root := filepath.Join(out, p.name)
		cmd := exec.CommandContext(ctx, "pdftoppm", "-r", strconv.Itoa(p.dpi), "-png", "-singlefile", "-f", "1", "-l", "1", pdfPath, root)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("pdftoppm %s: %v: %s", pdfPath, err, strings.TrimSpace(string(msg)))
		}
		if !keep {
			if err := os.Remove(pdfPath); err != nil {
				return err
			}
		}
		fmt.Printf("%s.png: %s N° %d (%s, %d dpi)\n", root, doc.Tipo.Name(), doc.Folio, p.format, p.dpi)
	}
	return nil
}
