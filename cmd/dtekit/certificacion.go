package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/certificacion"
	"github.com/dtekit/dtekit/dte"
)

// Error codes of "dtekit certificacion".
const (
	codeInvalidSet = "INVALID_SET_FILE"   // the set-of-tests file has a line the kit cannot read
	codeMissingCAF = "CAF_MISSING"        // no CAF (or too few folios) for a type the set needs
	codeWrongRUT   = "SET_FILE_OTHER_RUT" // the set file's name carries another company's RUT
)

const certificacionUsage = `usage: dtekit certificacion generar|enviar|estado|intercambio|simulacion [flags]

The SII certification kit. Subcommands:

  generar   emit every case of the SII's set-of-tests file, one envelope per
            set, the libros and the RCOF, the printed samples, a
            manifest.json and a LEEME.md
  enviar    upload the folder's envelopes and libros to the SII, in order,
            recording each track id in its manifest.json
  estado    ask the SII for their states and print the portal's table
  intercambio
            answer the EnvioDTE of the SII's intercambio step (acuse,
            resultado, recibos) into the folder
  simulacion
            ten or more real-like documents without the SET reference, in
            one envelope, into a folder like generar's

Run "dtekit certificacion SUBCOMMAND --help" for its flags.
`

const generarUsage = `usage: dtekit certificacion generar --set SET.txt --emisor EMISOR.json --cert CERT.p12
                  [--cert-password-file FILE] --caf CAF.xml [--caf CAF.xml]...
                  [--trust KEY.pem]... [--fecha YYYY-MM-DD] [--url-boletas URL]
                  [--forzar] --out DIR

Reads the set-of-tests file the SII handed the company (SIISetDePruebas<RUT>.txt,
or the boleta set; ISO-8859-1 or UTF-8, with or without headers), emits every
case exactly as the set asks (the SET reference "CASO <atención>-<n>", notes
pointing at the documents of the cases they name, items as given), signs one
envelope per set (the boleta set in one EnvioBOLETA; Carátula to the SII,
NroResol 0, the emisor's certification fecha_resolucion) and prints each
document as a letter PDF from its exact signed XML, with the cedible copy where
the type has one. DIR (absent or empty) receives:

  documentos/T<tipo>F<folio>.xml   the signed documents
  envios/NN-Envio….xml            one envelope per set, numbered in upload order
  libros/NN-Libro….xml            the signed Libro de Ventas (of the SET BASICO's
                                  documents, else SET FACTURA EXENTA's), Libro de
                                  Compras (of the set's table), Libro de Compras
                                  para Exentos (of its table), Libro de Guías (of
                                  the guía set) and the RCOF of the boleta set,
                                  as the file asks, numbered in upload order
  muestras/NNN-….pdf              the printed samples, numbered in upload order
  manifest.json                   sets (name, número de atención, envelope),
                                  cases (case id, tipo_dte, folio, file, monto_total)
                                  and libros (kind, file, set, número de atención)
  LEEME.md                        the whole certification, step by step, with
                                  the commands to run (enviar, estado, the
                                  simulación, intercambio), the portal's
                                  addresses and fields, re-written with the track
                                  ids and states by enviar and estado
  LEEME-BOLETAS.md                the boleta certification's guide (boleta set)

The set file is read by its structure: a line the kit does not understand is a
warning naming the line (printed on standard error, listed in manifest.json's
"advertencias" and in LEEME.md) and every case it can read is generated; a set
the kit does not know is listed in "no_generados" with the reason. The file is
refused only when a case's own data cannot be read (INVALID_SET_FILE naming the
line and the case).

The SII names the set file for the company it is issued to
(SIISetDePruebas<RUT>.txt): a file so named for another RUT than --emisor's is
refused (SET_FILE_OTHER_RUT) unless --forzar; a renamed file is accepted.

Folios are never used twice: the manifest.json of every folder beside DIR (and
of DIR) is the ledger of the folios it used, and each type starts above the
highest one used there (said on standard error and in LEEME.md). A DIR that
already holds a generation is refused (OUTPUT_EXISTS): give a new folder.

--url-boletas is the address where the company's customers check their boletas
(its own site), printed under the timbre of the boleta samples; required when
the set file has the boleta set.

To rehearse the whole certification with the company's own RUT before the SII
gives it CAFs, "dtekit dev credenciales --rut RUT --out DIR" writes test
credentials (not valid at the SII) to use against "dtekit sii fake".

--caf is repeatable: give one CAF per document type the set uses (several per
type are allowed). A type without a CAF, or without enough folios, is one
CAF_MISSING error listing every such type, before anything is signed or
written. --fecha is the emission date (default today in Chile; the SII wants
today's). The emisor must be registered for certification (numero_resolucion 0).
The certificate's password is read from --cert-password-file, else
$DTEKIT_CERT_PASSWORD, else --cert-password. CAF signatures are checked against
the SII's keys plus any --trust key.

On failure nothing is written and the exit status is 1, with a line on standard
error and its code: FILE_UNREADABLE, INVALID_SET_FILE (naming the line),
INVALID_EMISOR, INVALID_CAF, CAF_MISSING, CAF_NOT_USABLE, CERTIFICATE_PASSWORD,
INVALID_CERTIFICATE, INVALID_TRUSTED_KEY, SET_FILE_OTHER_RUT, OUTPUT_EXISTS,
OUTPUT_FAILED or EMISSION_FAILED. A wrong command line exits 2. On success a JSON
summary {"out":…,"sets":…,"documents":…,"libros":…,"samples":…,
"advertencias":[…],"no_generados":[…]} is printed on standard output. A libro set whose source set is not in the file (SET LIBRO DE VENTAS
without SET BASICO) is listed in LEEME.md and manifest.json's "pendientes".
`

// runCertificacion implements "dtekit certificacion".
func runCertificacion(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, certificacionUsage)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(env.stdout, certificacionUsage)
		return exitOK
	case "generar":
		return runGenerar(ctx, env, args[1:])
	case "enviar", "estado":
		return runCertificacionSII(ctx, env, args[0], args[1:])
	case "intercambio":
		return runCertificacionIntercambio(ctx, env, args[1:])
	case "simulacion":
		return runSimulacion(ctx, env, args[1:])
	}
	return usageError(env, "certificacion", "unknown subcommand %q (want generar, enviar, estado, intercambio or simulacion)", args[0])
}

// runGenerar implements "dtekit certificacion generar".
func runGenerar(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "certificacion generar"
	fs := newFlagSet(env, cmd)
	setPath := fs.String("set", "", "the SII's set-of-tests file")
	emisorPath := fs.String("emisor", "", "issuer JSON (contract §2.6 plus acteco), registered for certification")
	var cf certFlags
	cf.define(fs)
	var cafPaths, trust stringList
	fs.Var(&cafPaths, "caf", "CAF of a document type the set uses; repeatable")
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM), for test CAFs; repeatable")
	fecha := fs.String("fecha", "", "emission date YYYY-MM-DD (default today in Chile)")
	urlBoletas := fs.String("url-boletas", "", "where customers check their boletas, printed on the boleta samples")
	forzar := fs.Bool("forzar", false, "generate a set file named for another RUT than the emisor's")
	out := fs.String("out", "", "output directory (absent or empty)")
	pos, code, ok := parseFlags(env, fs, generarUsage, args, "set", "emisor", "cert", "caf", "out")
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, cmd, "unexpected arguments %q", pos)
	}
	if *fecha != "" {
		if _, err := time.Parse("2006-01-02", *fecha); err != nil {
			return usageError(env, cmd, "--fecha %q must be YYYY-MM-DD", *fecha)
		}
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }

	setData, cerr := readArg("--set", *setPath, maxSmallFile)
	if cerr != nil {
		return fail(cerr)
	}
	plan, err := certificacion.Parse(setData)
	if err != nil {
		return fail(newError(codeInvalidSet, "--set "+*setPath, err))
	}
	if len(*urlBoletas) > 100 || strings.ContainsAny(*urlBoletas, " \t\r\n") {
		return usageError(env, cmd, "--url-boletas %q: an address of at most 100 characters, without spaces", *urlBoletas)
	}
	if *urlBoletas == "" {
		for _, c := range plan.Cases() {
			if c.Tipo.IsBoleta() {
				return usageError(env, cmd, "the set file has the boleta set, whose samples print the address where customers check their boletas: give --url-boletas (for example www.suempresa.cl/boletas)")
			}
		}
	}
	emisor, keys, cafs, cerr := loadKitCAFs(*emisorPath, trust, cafPaths)
	if cerr != nil {
		return fail(cerr)
	}
	if rut, ok := certificacion.SetFileRUT(*setPath); ok {
		if em, err := dte.ParseRUT(emisor.Rut); err == nil && em.String() != rut && !*forzar {
			return fail(newError(codeWrongRUT, "--set "+*setPath, fmt.Errorf("the SII issued this set file to %s (its name says so), and --emisor is %s: a set is checked against the company it was issued to; give that company's emisor, or --forzar to generate it anyway", rut, em)))
		}
	}
	if err := plan.CheckCAFs(emisor, cafs); err != nil {
		var me *certificacion.MissingCAFError
		if errors.As(err, &me) {
			return fail(newError(codeMissingCAF, "--caf", err))
		}
		return fail(newError(codeCAFUnusable, "--caf", err))
	}
	cert, usage, cerr := cf.load(env, fs)
	if usage {
		return usageError(env, cmd, "%v", cerr)
	}
	if cerr != nil {
		return fail(cerr)
	}
	usados, cerr := kitLedger(env, cmd, *out, emisor)
	if cerr != nil {
		return fail(cerr)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(env.stderr, "dtekit %s: advertencia: %s\n", cmd, w)
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(env.stderr, "dtekit %s: no generado: %s\n", cmd, s)
	}
	res, err := certificacion.Generate(ctx, plan, certificacion.Config{
		Emisor: emisor, Cert: cert, CAFs: cafs, TrustedKeys: keys, Fecha: *fecha, FoliosUsados: usados, URLBoletas: *urlBoletas})
	var me *certificacion.MissingCAFError
	switch {
	case errors.As(err, &me):
		return fail(newError(codeMissingCAF, "--caf", fmt.Errorf("%w (counting only the folios above those earlier folders used)", err)))
	case err != nil && cafProblem(err):
		return fail(newError(codeCAFUnusable, "--caf", err))
	case err != nil:
		return fail(newError(codeEmitFailed, "", err))
	}
	reportSaltados(env, cmd, res)
	inv := kitInvocacion(*out, cf, cafPaths, trust)
	inv.Set, inv.Emisor, inv.URLBoletas = absPath(*setPath), absPath(*emisorPath), *urlBoletas
	m, cerr := writeKit(*out, res, emisor, inv)
	if cerr != nil {
		return fail(cerr)
	}
	docs := 0
	for _, s := range m.Sets {
		docs += len(s.Cases)
	}
	_ = totalsWriteJSON(env.stdout, map[string]any{"out": *out, "sets": len(m.Sets), "documents": docs, "libros": len(m.Libros), "samples": len(m.Muestras),
		"advertencias": orEmpty(m.Advertencias), "no_generados": orEmpty(m.NoGenerados)})
	return exitOK
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// kitLedger reads the folio ledgers (manifest.json) of the folders beside
// out and of out itself, and returns the highest folio of each type they
// used. A folder out that already holds a generation is refused: its
// folios are spent, and a new folder beside it starts above them.
func kitLedger(env *cmdEnv, cmd, out string, emisor dte.Emisor) (map[dte.TipoDTE]int64, *cliError) {
	dirs, err := certificacion.FoldersBeside(out)
	if err != nil {
		return nil, newError(codeFileUnreadable, "--out "+out, err)
	}
	if _, err := os.Stat(filepath.Join(out, certificacion.ManifestFile)); err == nil {
		l, err := certificacion.FoliosUsados(emisor.Rut, out)
		if err != nil {
			return nil, newError(codeFileUnreadable, "--out "+out, err)
		}
		used := "no folios"
		if len(l.Folders) > 0 {
			used = strings.TrimPrefix(l.Folders[0], out+": ")
		}
		return nil, newError(codeOutputExists, "--out "+out, fmt.Errorf("the folder already holds a generation (its manifest.json used %s): those folios are spent at the SII once sent; give a new folder beside it, and the kit starts above them", used))
	}
	l, err := certificacion.FoliosUsados(emisor.Rut, dirs...)
	if err != nil {
		return nil, newError(codeFileUnreadable, "--out "+out, err)
	}
	for _, f := range l.Folders {
		fmt.Fprintf(env.stderr, "dtekit %s: folios ya usados en %s\n", cmd, f)
	}
	return l.Usados, nil
}

// reportSaltados says where each type starts when earlier folders used
// its first folios.
func reportSaltados(env *cmdEnv, cmd string, res *certificacion.Result) {
	for _, f := range res.Saltados {
		fmt.Fprintf(env.stderr, "dtekit %s: %s\n", cmd, f)
	}
}

// kitInvocacion records the files a kit's folder was made with, as
// absolute paths, for the commands of its LEEME.md.
func kitInvocacion(out string, cf certFlags, cafPaths, trust stringList) *certificacion.Invocacion {
	inv := &certificacion.Invocacion{Carpeta: absPath(out), Cert: absPath(cf.path)}
	if cf.passwordFile != "" {
		inv.CertPasswordFile = absPath(cf.passwordFile)
	}
	for _, c := range cafPaths {
		inv.CAFs = append(inv.CAFs, absPath(c))
	}
	for _, t := range trust {
		inv.Trust = append(inv.Trust, absPath(t))
	}
	return inv
}

// absPath returns p as an absolute path (p itself when that fails).
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// loadKitCAFs reads the issuer, the trusted keys and the CAFs of
// "certificacion generar" and "simulacion", each CAF checked against the
// keys.
func loadKitCAFs(emisorPath string, trust, cafPaths stringList) (dte.Emisor, caf.TrustedKeys, []*caf.CAF, *cliError) {
	emisor, keys, cerr := loadIssuer(emisorPath, trust)
	if cerr != nil {
		return emisor, nil, nil, cerr
	}
	var cafs []*caf.CAF
	for _, p := range cafPaths {
		data, cerr := readArg("--caf", p, maxSmallFile)
		if cerr != nil {
			return emisor, nil, nil, cerr
		}
		c, err := caf.Parse(data)
		if err != nil {
			return emisor, nil, nil, newError(codeInvalidCAF, "--caf "+p, err)
		}
		if err := c.Verify(keys); err != nil {
			return emisor, nil, nil, newError(codeCAFUnusable, "--caf "+p, err)
		}
		cafs = append(cafs, c)
	}
	return emisor, keys, cafs, nil
}

// writeKit writes a kit's folder (certificacion.WriteDir) and says what
// failed as the commands report it.
func writeKit(out string, res *certificacion.Result, emisor dte.Emisor, inv *certificacion.Invocacion) (*certificacion.Manifest, *cliError) {
	m, err := certificacion.WriteDirWith(out, res, emisor, inv)
	switch {
	case errors.Is(err, certificacion.ErrOutputExists):
		return nil, newError(codeOutputExists, "--out "+out, errors.New("the folder exists and is not empty; give a new one"))
	case err != nil:
		return nil, newError(codeOutputFailed, "--out "+out, err)
	}
	return m, nil
}
