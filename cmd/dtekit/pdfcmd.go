package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/pdf"
)

const pdfUsage = `usage: dtekit pdf DTE.xml [--cedible] [--format carta|80mm] [-o OUT.pdf]
                  [--emisor EMISOR.json | --resolucion N --fecha-resolucion YYYY-MM-DD]
                  [--oficina NAME] [--doc N]

Renders the printed representation of a signed DTE: letter paper (carta) for
every type, or 80 mm continuous paper (80mm) for types 33, 34, 39 and 41.
--cedible renders the transferable copy (33, 34, 43, 46 and 52; other types
are refused). The input may also be an EnvioDTE or EnvioBOLETA: --doc N picks
its N-th document (default 1).

The stamp's "Res. N° X de YYYY" line comes from --resolucion and
--fecha-resolucion, else from --emisor (numero_resolucion, fecha_resolucion,
oficina_sii), else from the envelope's Carátula; without any of them it prints
the certification value (resolution 0 of the document's year) and says so.
--oficina names the SII office under the red box (default SANTIAGO CENTRO).

The PDF goes to OUT.pdf ("-" for standard output; default: the input's name
with .pdf, or -cedible.pdf for the cedible copy). Exit status 1 on an
unreadable input or a document that cannot be printed, 2 on bad usage.
`

// maxPDFInputBytes bounds the XML read by "dtekit pdf".
const maxPDFInputBytes = 64 << 20

// runPDF implements "dtekit pdf".
func runPDF(ctx context.Context, env *cmdEnv, args []string) int {
	fs := flag.NewFlagSet("pdf", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, pdfUsage) }
	cedible := fs.Bool("cedible", false, "render the cedible copy")
	format := fs.String("format", "carta", "paper: carta or 80mm")
	out := fs.String("o", "", "output file (\"-\" for standard output)")
	emisorPath := fs.String("emisor", "", "issuer JSON with numero_resolucion, fecha_resolucion and oficina_sii")
	resol := fs.Int("resolucion", -1, "SII resolution number")
	fechaResol := fs.String("fecha-resolucion", "", "SII resolution date, YYYY-MM-DD")
	oficina := fs.String("oficina", "", "SII office printed under the red box")
	docN := fs.Int("doc", 1, "document of an envelope to print (1-based)")
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "help" {
			fmt.Fprint(env.stdout, pdfUsage)
			return 0
		}
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprint(env.stderr, pdfUsage)
		return 2
	}
	input := pos[0]
	f, err := pdf.ParseFormat(*format)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit pdf: --format %q: want carta or 80mm\n", *format)
		return 2
	}
	if (*resol >= 0) != (*fechaResol != "") {
		fmt.Fprintln(env.stderr, "dtekit pdf: --resolucion and --fecha-resolucion go together")
		return 2
	}
	if *docN < 1 {
		fmt.Fprintf(env.stderr, "dtekit pdf: --doc %d: documents are numbered from 1\n", *docN)
		return 2
	}

	data, err := readPDFInput(ctx, env, input)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit pdf: %v\n", err)
		return 1
	}
	doc, caratula, err := pdfDocument(data, *docN)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit pdf: %s: %v\n", input, err)
		return 1
	}

	opts := pdf.Options{Format: f, Cedible: *cedible, OficinaSII: *oficina}
	guessed := false
	switch {
	case *resol >= 0:
		opts.Resolucion = pdf.Resolucion{Numero: *resol, Fecha: *fechaResol}
	case *emisorPath != "":
		e, err := loadEmisor(*emisorPath)
		if err != nil {
			fmt.Fprintf(env.stderr, "dtekit pdf: --emisor: %v\n", err)
			return 1
		}
		if e.Rut != doc.Emisor.Rut {
			fmt.Fprintf(env.stderr, "dtekit pdf: warning: %s is issuer %s but the document's issuer is %s\n", *emisorPath, e.Rut, doc.Emisor.Rut)
		}
		opts.Resolucion = pdf.Resolucion{Numero: e.NumeroResolucion, Fecha: e.FechaResolucion}
		if opts.OficinaSII == "" {
			opts.OficinaSII = e.OficinaSII
		}
	case caratula != nil && caratula.FchResol != "":
		opts.Resolucion = pdf.Resolucion{Numero: caratula.NroResol, Fecha: caratula.FchResol}
	default:
		opts.Resolucion = pdf.Resolucion{Numero: 0, Fecha: doc.FechaEmision}
		if _, err := opts.Resolucion.Year(); err != nil {
			opts.Resolucion.Fecha = "2000"
		}
		guessed = true
	}

	b, err := pdf.RenderBytes(doc, opts)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit pdf: %s: %v\n", input, err)
		return 1
	}
	if guessed {
		line, _ := opts.Resolucion.Text()
		fmt.Fprintf(env.stderr, "dtekit pdf: warning: no --emisor or --resolucion given; printing the certification value %q\n", line)
	}
	if err := ctx.Err(); err != nil {
		fmt.Fprintf(env.stderr, "dtekit pdf: %v\n", err)
		return 1
	}
	dest := *out
	if dest == "" {
		dest = defaultPDFName(input, *cedible)
	}
	if dest == "-" {
		if _, err := env.stdout.Write(b); err != nil {
			fmt.Fprintf(env.stderr, "dtekit pdf: writing standard output: %v\n", err)
			return 1
		}
		return 0
	}
	if err := writeFileAtomic(dest, b); err != nil {
		fmt.Fprintf(env.stderr, "dtekit pdf: %v\n", err)
		return 1
	}
	copyKind := ""
	if *cedible {
		copyKind = ", cedible"
	}
	fmt.Fprintf(env.stdout, "%s: %s N° %d, %s%s, %d bytes\n", dest, doc.Tipo.Name(), doc.Folio, f, copyKind, len(b))
	return 0
}

// readPDFInput reads the XML file, or standard input for "-".
func readPDFInput(ctx context.Context, env *cmdEnv, path string) ([]byte, error) {
	return readInput(ctx, env, path, maxPDFInputBytes)
}

// pdfDocument reads a DTE, or the n-th document of an envelope together
// with the envelope's Carátula.
func pdfDocument(data []byte, n int) (*dte.Document, *dte.Caratula, error) {
	root, err := dte.RootName(data)
	if err != nil {
		return nil, nil, err
	}
	switch root {
	case "DTE":
		if n != 1 {
			return nil, nil, fmt.Errorf("--doc %d: the file holds a single DTE", n)
		}
		doc, err := dte.ParseDTE(data)
		return doc, nil, err
	case "EnvioDTE", "EnvioBOLETA":
		env, err := dte.ParseEnvio(data)
		if err != nil {
			return nil, nil, err
		}
		if n > len(env.Documentos) {
			return nil, nil, fmt.Errorf("--doc %d: the envelope holds %d documents", n, len(env.Documentos))
		}
		return env.Documentos[n-1], &env.Caratula, nil
	}
	return nil, nil, fmt.Errorf("root element <%s> is not a DTE, EnvioDTE or EnvioBOLETA", root)
}

// defaultPDFName is the input's path with .pdf (or -cedible.pdf); standard
// input defaults to standard output.
func defaultPDFName(input string, cedible bool) string {
	if input == "-" {
		return "-"
	}
	base := strings.TrimSuffix(input, filepath.Ext(input))
	if cedible {
		base += "-cedible"
	}
	return base + ".pdf"
}
