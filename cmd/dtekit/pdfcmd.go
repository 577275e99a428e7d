package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/pdf"
)

const pdfUsage = `usage: dtekit pdf DTE.xml [--cedible] [--format carta|80mm] [-o OUT.pdf]
                  [--emisor EMISOR.json | --resolucion N --fecha-resolucion YYYY-MM-DD]
                  [--oficina NAME] [--doc N] [--trust KEY.pem]... [--no-verify]

Renders the printed representation of a signed DTE: letter paper (carta) for
every type, or 80 mm continuous paper (80mm) for types 33, 34, 39 and 41.
--cedible renders the transferable copy (33, 34, 43, 46 and 52; other types
are refused). The input may also be an EnvioDTE or EnvioBOLETA: --doc N picks
its N-th document (default 1).

The document is verified before it is printed, as "dtekit verify" does: its
signature, its TED (with the CAF's FRMA checked against the SII's keys or a
--trust key) and its totals recomputed from its lines. A document that fails
is not printed (DOCUMENT_NOT_VERIFIED) unless --no-verify is given.

The stamp's "Res. N° X de YYYY" line comes from --resolucion and
--fecha-resolucion, else from --emisor (numero_resolucion, fecha_resolucion,
oficina_sii), else from the envelope's Carátula; without any of them it prints
the certification value (resolution 0 of the document's year) and says so.
The SII office under the red box comes from --oficina or the emisor's
oficina_sii; without one the PDF says that it was not given.

The PDF goes to OUT.pdf ("-" for standard output; default: the input's name
with .pdf, or -cedible.pdf for the cedible copy). Errors go to standard
error with their code (FILE_UNREADABLE, INVALID_DTE, DOCUMENT_NOT_VERIFIED,
INVALID_EMISOR, INVALID_TRUSTED_KEY, OUTPUT_FAILED) and exit status 1; a
wrong command line exits 2.
`

// maxPDFInputBytes bounds the XML read by "dtekit pdf".
const maxPDFInputBytes = 64 << 20

// runPDF implements "dtekit pdf".
func runPDF(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "pdf"
	fs := newFlagSet(env, cmd)
	cedible := fs.Bool("cedible", false, "render the cedible copy")
	format := fs.String("format", "carta", "paper: carta or 80mm")
	out := fs.String("o", "", "output file (\"-\" for standard output; default the input's name with .pdf)")
	emisorPath := fs.String("emisor", "", "issuer JSON with numero_resolucion, fecha_resolucion and oficina_sii")
	resol := fs.Int("resolucion", -1, "SII resolution number")
	fechaResol := fs.String("fecha-resolucion", "", "SII resolution date, YYYY-MM-DD")
	oficina := fs.String("oficina", "", "SII office printed under the red box (default the emisor's oficina_sii)")
	docN := fs.Int("doc", 1, "document of an envelope to print (1-based)")
	noVerify := fs.Bool("no-verify", false, "print the document even if its signature, TED or totals do not verify")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	pos, code, ok := parseFlags(env, fs, pdfUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one DTE.xml argument, got %d", len(pos))
	}
	input := pos[0]
	f, err := pdf.ParseFormat(*format)
	if err != nil {
		return usageError(env, cmd, "--format %q: want carta or 80mm", *format)
	}
	if (*resol >= 0) != (*fechaResol != "") {
		return usageError(env, cmd, "--resolucion and --fecha-resolucion go together")
	}
	if *docN < 1 {
		return usageError(env, cmd, "--doc %d: documents are numbered from 1", *docN)
	}
	// Standard output may be the PDF: failures go to standard error only.
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	keys, cerr := loadTrust(trust)
	if cerr != nil {
		return fail(cerr)
	}
	data, err := readPDFInput(ctx, env, input)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	doc, caratula, err := pdfDocument(data, *docN)
	if err != nil {
		return fail(newError(codeInvalidDTE, input, err))
	}
	if !*noVerify {
		if cerr := verifyForUse(data, input, *docN, keys); cerr != nil {
			return fail(cerr)
		}
	}

	opts := pdf.Options{Format: f, Cedible: *cedible, OficinaSII: *oficina}
	guessed := false
	switch {
	case *resol >= 0:
		opts.Resolucion = pdf.Resolucion{Numero: *resol, Fecha: *fechaResol}
	case *emisorPath != "":
		e, cerr := loadEmisor(*emisorPath)
		if cerr != nil {
			return fail(cerr)
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
		return fail(newError(codeInvalidDTE, input, err))
	}
	if guessed {
		line, _ := opts.Resolucion.Text()
		fmt.Fprintf(env.stderr, "dtekit pdf: warning: no --emisor or --resolucion given; printing the certification value %q\n", line)
	}
	if strings.TrimSpace(opts.OficinaSII) == "" {
		fmt.Fprintln(env.stderr, "dtekit pdf: warning: no --oficina or emisor oficina_sii given; the PDF says the SII office was not given")
	}
	if err := ctx.Err(); err != nil {
		return fail(newError(codeOutputFailed, "", err))
	}
	dest := *out
	if dest == "" {
		dest = defaultPDFName(input, *cedible)
	}
	if dest == "-" {
		if _, err := env.stdout.Write(b); err != nil {
			return fail(newError(codeOutputFailed, "standard output", err))
		}
		return exitOK
	}
	if err := writeFileAtomic(dest, b, true); err != nil {
		return fail(newError(codeOutputFailed, "", err))
	}
	copyKind := ""
	if *cedible {
		copyKind = ", cedible"
	}
	fmt.Fprintf(env.stdout, "%s: %s N° %d, %s%s, %d bytes\n", dest, doc.Tipo.Name(), doc.Folio, f, copyKind, len(b))
	return exitOK
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
