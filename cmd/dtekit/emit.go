package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
)

// atLayout is the --at format: Chile local time without offset.
const atLayout = "2006-01-02T15:04:05"

// loadIssuer reads what emit and envio check before they sign: the
// --emisor file and the --trust keys.
func loadIssuer(emisorPath string, trust []string) (dte.Emisor, caf.TrustedKeys, *cliError) {
	emisor, cerr := loadEmisor(emisorPath)
	if cerr != nil {
		return emisor, nil, cerr
	}
	keys, cerr := loadTrust(trust)
	return emisor, keys, cerr
}

// loadEmisor reads an EMISOR.json file (contract §2.6 fields plus acteco
// and sucursal_sii) and checks it with dte.Emisor.Validate.
func loadEmisor(path string) (dte.Emisor, *cliError) {
	var e dte.Emisor
	data, err := readFile(path, maxSmallFile)
	if err != nil {
		return e, newError(codeFileUnreadable, "--emisor", err)
	}
	bad := func(format string, args ...any) (dte.Emisor, *cliError) {
		return e, newError(codeInvalidEmisor, "--emisor "+path, fmt.Errorf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return bad("%v", err)
	}
	var ve *dte.ValidationError
	if errors.As(e.Validate(), &ve) {
		msgs := make([]string, len(ve.Details))
		for i, d := range ve.Details {
			msgs[i] = d.Message
			if !strings.HasPrefix(d.Message, d.Field) {
				msgs[i] = d.Field + ": " + d.Message
			}
		}
		return bad("%s", strings.Join(msgs, "; "))
	}
	r, _ := dte.ParseRUT(e.Rut)
	e.Rut = r.String()
	return e, nil
}

// parseAt reads --at as Chile local time; empty means the real clock.
func parseAt(s string) (func() time.Time, error) {
	if s == "" {
		return time.Now, nil
	}
	t, err := time.ParseInLocation(atLayout, s, dte.SantiagoLocation())
	if err != nil {
		return nil, fmt.Errorf("--at %q must be YYYY-MM-DDTHH:MM:SS (Chile local time)", s)
	}
	return func() time.Time { return t }, nil
}

// oneFolio is the FolioSource of "dtekit emit": the single folio given on
// the command line, from the given CAF.
type oneFolio struct {
	folio int64
	caf   *caf.CAF
	used  bool
}

func (o *oneFolio) NextFolio(ctx context.Context, tipo dte.TipoDTE) (int64, *caf.CAF, error) {
	if o.used {
		return 0, nil, errors.New("the folio given with --folio was already used")
	}
	if int(tipo) != o.caf.Tipo {
		return 0, nil, fmt.Errorf("the CAF is for tipo %d, the request is tipo %d", o.caf.Tipo, tipo)
	}
	o.used = true
	return o.folio, o.caf, nil
}

// cafProblem reports whether err is one of the CAF's own checks (trust,
// key pair, dates, folio range) rather than a failure of the emission.
func cafProblem(err error) bool {
	for _, target := range []error{caf.ErrUntrustedIDK, caf.ErrSignature, caf.ErrNoPrivateKey, caf.ErrKeyMismatch,
		caf.ErrFolioOutOfRange, caf.ErrNotYetValid, caf.ErrExpired} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

const emitUsage = `usage: dtekit emit --emisor EMISOR.json --caf CAF.xml --cert CERT.p12 --folio N
                  [--cert-password-file FILE] [--trust KEY.pem]... [--at YYYY-MM-DDTHH:MM:SS]
                  [--out DIR] [--force] REQUEST.json

Validates an emission request (contract §2.3; "-" reads standard input),
computes its totals, stamps the TED with the CAF and signs the DTE, then
writes DIR/DTE-<tipo>-<folio>.xml (ISO-8859-1) and prints
{"tipo_dte":…,"folio":…,"monto_total":…,"file":…} on standard output. An
existing file is never replaced unless --force is given. What the request
lacks without being refused (a certificación guía, or a factura that goes
with the goods, without the transport data of Res. Ex. SII 154/2025) is
added as "advertencias" and said on standard error as a warning.

The certificate's password is read from --cert-password-file, else
$DTEKIT_CERT_PASSWORD, else --cert-password. The CAF's SII signature is
checked against the SII's keys plus any --trust key (for test CAFs, such as
the demo's). --at fixes the clock (Chile local time) for TSTED, TmstFirma and
the default fecha_emision.

On failure nothing is written and the exit status is 1, with a line on
standard error and the contract's error envelope on standard output: code
VALIDATION_ERROR with one detail per field for an invalid request, or
FILE_UNREADABLE, INVALID_EMISOR, INVALID_CAF, CAF_TIPO_MISMATCH,
CAF_NOT_USABLE, CERTIFICATE_PASSWORD, INVALID_CERTIFICATE,
INVALID_TRUSTED_KEY, OUTPUT_EXISTS, OUTPUT_FAILED or EMISSION_FAILED. A wrong
command line exits 2.
`

// runEmit implements "dtekit emit".
func runEmit(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "emit"
	fs := newFlagSet(env, cmd)
	emisorPath := fs.String("emisor", "", "issuer JSON (contract §2.6 plus acteco)")
	cafPath := fs.String("caf", "", "CAF of the request's document type (XML or base64)")
	var cf certFlags
	cf.define(fs)
	folio := fs.Int64("folio", 0, "folio to use, inside the CAF's range")
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS (default now)")
	outDir := fs.String("out", ".", "directory the DTE is written to")
	force := fs.Bool("force", false, "replace an existing DTE-<tipo>-<folio>.xml")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	pos, code, ok := parseFlags(env, fs, emitUsage, args, "emisor", "caf", "cert", "folio")
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one REQUEST.json argument, got %d", len(pos))
	}
	if *folio <= 0 {
		return usageError(env, cmd, "--folio %d: folios start at 1", *folio)
	}
	now, err := parseAt(*at)
	if err != nil {
		return usageError(env, cmd, "%v", err)
	}
	fail := func(e *cliError) int { return report(env, cmd, true, e) }

	emisor, keys, cerr := loadIssuer(*emisorPath, trust)
	if cerr != nil {
		return fail(cerr)
	}
	cafData, cerr := readArg("--caf", *cafPath, maxSmallFile)
	if cerr != nil {
		return fail(cerr)
	}
	c, err := caf.Parse(cafData)
	if err != nil {
		return fail(newError(codeInvalidCAF, "--caf "+*cafPath, err))
	}
	cert, usage, cerr := cf.load(env, fs)
	if usage {
		return usageError(env, cmd, "%v", cerr)
	}
	if cerr != nil {
		return fail(cerr)
	}
	data, err := readInput(ctx, env, pos[0], maxRequestJSONBytes)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	req, verr := decodeRequest(data)
	if verr != nil {
		return reportValidation(env, cmd, pos[0], true, verr)
	}
	if int(req.TipoDTE) != c.Tipo {
		return fail(newError(codeCAFTipo, "--caf "+*cafPath, fmt.Errorf(
			"the CAF authorizes tipo %d but the request (%s) is tipo %d: give the CAF for tipo %d", c.Tipo, pos[0], req.TipoDTE, req.TipoDTE)))
	}
	file := filepath.Join(*outDir, fmt.Sprintf("DTE-%d-%d.xml", req.TipoDTE, *folio))
	if _, err := os.Lstat(file); err == nil && !*force {
		return fail(newError(codeOutputExists, "", fmt.Errorf("%s already exists; give another --folio or --out, or --force to replace it", file)))
	}
	em := &dte.Emitter{Emisor: emisor, Cert: cert, Folios: &oneFolio{folio: *folio, caf: c}, Now: now, TrustedKeys: keys}
	out, err := em.Emit(ctx, req)
	if err != nil {
		if ve, ok := dte.AsValidationError(err); ok {
			return reportValidation(env, cmd, pos[0], true, ve)
		}
		if cafProblem(err) {
			if errors.Is(err, caf.ErrNotYetValid) {
				err = fmt.Errorf("%w (give a fecha_emision on or after the CAF's FA %s, or leave it out to emit today)", err, c.FA)
			}
			return fail(newError(codeCAFUnusable, "--caf "+*cafPath, err))
		}
		return fail(newError(codeEmitFailed, "", err))
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fail(newError(codeOutputFailed, "--out", err))
	}
	if err := writeFileAtomic(file, out.XML, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fail(newError(codeOutputExists, "", err))
		}
		return fail(newError(codeOutputFailed, "", err))
	}
	summary := map[string]any{"tipo_dte": out.Tipo, "folio": out.Folio, "monto_total": out.MontoTotal, "file": file}
	if len(out.Warnings) > 0 {
		summary["advertencias"] = out.Warnings
		for _, w := range out.Warnings {
			fmt.Fprintf(env.stderr, "dtekit emit: warning: %s\n", w.Message)
		}
	}
	_ = totalsWriteJSON(env.stdout, summary)
	return exitOK
}

const envioUsage = `usage: dtekit envio --emisor EMISOR.json --cert CERT.p12 [--cert-password-file FILE]
                   [--trust KEY.pem]... [--at YYYY-MM-DDTHH:MM:SS] [--rut-receptor RUT]
                   [--rut-envia RUT] [--no-verify] DTE.xml... > ENVIO.xml

Packs signed DTEs into a signed envelope written to standard output:
EnvioBOLETA when all are boletas (39, 41), EnvioDTE otherwise (mixing both is
refused). --rut-receptor defaults to the SII (60803000-K); --rut-envia to the
RUT in the certificate. The certificate's password is read from
--cert-password-file, else $DTEKIT_CERT_PASSWORD, else --cert-password.

Every DTE is first verified as "dtekit verify" does: its signature, its TED
(with the CAF's FRMA checked against the SII's keys or a --trust key) and its
totals recomputed from its lines. A document that fails is not packed
(DOCUMENT_NOT_VERIFIED) unless --no-verify is given.

Errors go to standard error only, with their code (FILE_UNREADABLE,
INVALID_EMISOR, CERTIFICATE_PASSWORD, INVALID_CERTIFICATE,
INVALID_TRUSTED_KEY, DOCUMENT_NOT_VERIFIED, INVALID_DTE), and exit status 1;
a wrong command line exits 2.
`

// runEnvio implements "dtekit envio".
func runEnvio(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "envio"
	fs := newFlagSet(env, cmd)
	emisorPath := fs.String("emisor", "", "issuer JSON (contract §2.6 plus acteco)")
	var cf certFlags
	cf.define(fs)
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS (default now)")
	rutReceptor := fs.String("rut-receptor", "", "envelope receptor (default the SII, 60803000-K)")
	rutEnvia := fs.String("rut-envia", "", "sender's RUT (default the certificate's)")
	noVerify := fs.Bool("no-verify", false, "pack documents even if their signature, TED or totals do not verify")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	pos, code, ok := parseFlags(env, fs, envioUsage, args, "emisor", "cert")
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageError(env, cmd, "want at least one DTE.xml argument")
	}
	now, err := parseAt(*at)
	if err != nil {
		return usageError(env, cmd, "%v", err)
	}
	// Standard output is the envelope: failures go to standard error only.
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	emisor, keys, cerr := loadIssuer(*emisorPath, trust)
	if cerr != nil {
		return fail(cerr)
	}
	cert, usage, cerr := cf.load(env, fs)
	if usage {
		return usageError(env, cmd, "%v", cerr)
	}
	if cerr != nil {
		return fail(cerr)
	}
	docs := make([][]byte, 0, len(pos))
	for _, p := range pos {
		b, cerr := readArg("", p, maxXMLFile)
		if cerr != nil {
			return fail(cerr)
		}
		if !*noVerify {
			if cerr := verifyForUse(b, p, 0, keys); cerr != nil {
				return fail(cerr)
			}
		}
		docs = append(docs, b)
	}
	out, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor, RutEnvia: *rutEnvia, RutReceptor: *rutReceptor, At: now()}, cert, docs...)
	if err != nil {
		return fail(newError(codeInvalidDTE, "", err))
	}
	if _, err := env.stdout.Write(out); err != nil {
		return fail(newError(codeOutputFailed, "standard output", err))
	}
	return exitOK
}

// verifyForUse verifies a DTE or envelope before a command prints or packs
// it: the signature, the TED and the totals of document n (1-based; 0 means
// every document) must pass. The error lists what failed and how to
// proceed.
func verifyForUse(data []byte, name string, n int, keys caf.TrustedKeys) *cliError {
	rep, err := dte.Verify(data, keys)
	if rep == nil {
		return newError(codeInvalidDTE, name, err)
	}
	var failed []string
	for i, d := range rep.Documents {
		if n != 0 && i != n-1 {
			continue
		}
		for _, c := range []struct {
			what  string
			check dte.Check
		}{{"signature", d.Signature}, {"TED", d.TED}, {"totals", d.Totals}} {
			if !c.check.OK {
				failed = append(failed, fmt.Sprintf("%s tipo %d folio %d: %s: %s", d.ID, d.Tipo, d.Folio, c.what, c.check.Error))
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return newError(codeNotVerified, name, fmt.Errorf("%s (for a test CAF give --trust with its authority's key; --no-verify uses the document anyway)",
		strings.Join(failed, "; ")))
}

const verifyUsage = `usage: dtekit verify [--trust KEY.pem]... [--signer EMISOR=RUT]... [--signer-is-rut-envia]
                     [--valid-at-signing] [--policy registry|strict] [--json] FILE.xml...

Verifies a signed DTE, EnvioDTE or EnvioBOLETA: the shape of its signed parts,
every XML signature (each over the element beside it), every TED (FRMT with the
CAF's key, the CAF's FRMA with the SII's keys or a --trust key, the stamp's data
against the document, MNT = MntTotal, the CAF's dates) and every document's
totals recomputed from its lines. Prints a report per document with who signed
it, and exits 1 when anything fails. A signed libro (LibroCompraVenta,
LibroGuia) or RCOF (ConsumoFolios) is checked likewise: its shape, its one
signature over EnvioLibro (DocumentoConsumoFolios) and the signer policy below,
the emisor being the carátula's. An Archivo Electrónico de Cesión (AEC, the
file of a factura's cesión to a factoring company) is verified and summarized
as "dtekit cesion leer" does: every signature, the ceded DTE (stamp, CAF,
totals) and the chain of cesiones, under --policy (registry, the default,
warns of an inner signature the SII's portal writes unverifiable; strict
refuses it); a refused AEC prints its summary, then one line on standard
error naming each problem and its code (AEC_REFUSED, INVALID_AEC).

A signature proves the document is intact and was signed by the certificate
beside it, not that its holder may sign for the emisor: state that with
--signer (the RUTs authorized for an emisor), --signer-is-rut-envia (in an
envelope, every signer is the Carátula's RutEnvia) and --valid-at-signing (each
certificate valid at the signing time the document states). For an AEC,
--signer names who may sign for each party: the emisor for the ceded
document, each cedente for its cesión and the last cedente for the file.

Exit status 0 when every file verified, 1 when one did not or could not be
read, 2 on a wrong command line.
`

// runVerify implements "dtekit verify".
func runVerify(ctx context.Context, env *cmdEnv, args []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, verifyUsage) }
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var trust stringList
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM); repeatable")
	var policy signerPolicy
	policy.define(fs, "EMISOR", true)
	var pol policyFlag
	fs.Var(&pol, "policy", policyUsage+", for an AEC")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) == 0 {
		fmt.Fprint(env.stderr, verifyUsage)
		return 2
	}
	keys, err := trustedKeys(trust)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit verify: --trust: %s\n", errLine(err))
		return 2
	}
	opts, err := policy.options()
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit verify: %v\n", err)
		return 2
	}
	opts.Keys = keys
	code := 0
	for _, p := range pos {
		data, err := readFile(p, maxXMLFile)
		if err != nil {
			fmt.Fprintf(env.stderr, "dtekit verify: %s\n", errLine(err))
			code = 1
			continue
		}
		switch root := rootElement(data); {
		case isLibro(root):
			code = max(code, verifyLibro(env, p, data, opts, *asJSON))
			continue
		case root == "AEC":
			code = max(code, readAEC(env, "verify", p, data, opts, pol, *asJSON))
			continue
		}
		rep, err := dte.VerifyWith(data, opts)
		if rep == nil {
			fmt.Fprintf(env.stderr, "dtekit verify: %s: %s\n", p, errLine(err))
			code = 1
			continue
		}
		if err != nil {
			code = 1
		}
		if *asJSON {
			_ = totalsWriteJSON(env.stdout, map[string]any{"file": p, "ok": rep.OK(), "report": rep})
			continue
		}
		printReport(env.stdout, p, rep)
	}
	return code
}

// printReport writes a verification report as text, a line per document
// and one for who signed it.
func printReport(w io.Writer, file string, rep *dte.VerifyReport) {
	verdict := "OK"
	if !rep.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "%s: %s (%s, %d document(s))\n", file, verdict, rep.Kind, len(rep.Documents))
	if rep.Envelope != nil {
		fmt.Fprintf(w, "  envelope signature: %s\n", checkText(*rep.Envelope))
		fmt.Fprintf(w, "    signed by %s\n", rep.EnvelopeSigner)
	}
	for _, d := range rep.Documents {
		fmt.Fprintf(w, "  %s tipo %d folio %d total %s: signature %s; signer policy %s; TED %s; totals %s\n",
			d.ID, d.Tipo, d.Folio, d.MntTotal, checkText(d.Signature), checkText(d.Policy), checkText(d.TED), checkText(d.Totals))
		caf := ""
		if d.CAFAmbiente != "" {
			caf = fmt.Sprintf("; CAF %s of %s", d.CAFAmbiente, d.CAFFecha)
		}
		fmt.Fprintf(w, "    signed by %s%s\n", d.Signer, caf)
	}
}

func checkText(c dte.Check) string {
	if c.OK {
		return "ok"
	}
	return "FAILED (" + oneLine(c.Error) + ")"
}

const cafUsage = `usage: dtekit caf inspect [--trust KEY.pem]... [--at YYYY-MM-DDTHH:MM:SS] CAF.xml

Prints a JSON summary of a CAF (raw XML or base64): issuer, type, folio range,
authorization date, IDK and environment, and the outcome of each check (the
SII's FRMA signature with the SII's keys or a --trust key, RSASK matching
RSAPK, the six-month rule at --at or now). Exits 1 when a check fails or the
file cannot be read (FILE_UNREADABLE) or is not a CAF (INVALID_CAF), 2 on a
wrong command line.
`

// runCAF implements "dtekit caf".
func runCAF(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) > 0 && wantsHelp(args[:1]) {
		fmt.Fprint(env.stdout, cafUsage)
		return exitOK
	}
	if len(args) == 0 || args[0] != "inspect" {
		fmt.Fprint(env.stderr, cafUsage)
		return exitUsage
	}
	const cmd = "caf inspect"
	fs := newFlagSet(env, cmd)
	at := fs.String("at", "", "reference time for the six-month rule, Chile local time YYYY-MM-DDTHH:MM:SS (default now)")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	pos, code, ok := parseFlags(env, fs, cafUsage, args[1:])
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one CAF.xml argument, got %d", len(pos))
	}
	now, err := parseAt(*at)
	if err != nil {
		return usageError(env, cmd, "%v", err)
	}
	fail := func(e *cliError) int { return report(env, cmd, true, e) }
	keys, cerr := loadTrust(trust)
	if cerr != nil {
		return fail(cerr)
	}
	data, cerr := readArg("", pos[0], maxSmallFile)
	if cerr != nil {
		return fail(cerr)
	}
	c, err := caf.Parse(data)
	if err != nil {
		return fail(newError(codeInvalidCAF, pos[0], err))
	}
	sum := cafSummary(c, keys, now())
	_ = totalsWriteJSON(env.stdout, sum)
	if !sum.Valid {
		return exitFail
	}
	return exitOK
}

// cafInfo is the JSON summary printed by "dtekit caf inspect".
type cafInfo struct {
	RutEmisor         string `json:"rut_emisor"`
	RazonSocial       string `json:"razon_social"`
	TipoDTE           int    `json:"tipo_dte"`
	FolioDesde        int64  `json:"folio_desde"`
	FolioHasta        int64  `json:"folio_hasta"`
	Folios            int64  `json:"folios"`
	FechaAutorizacion string `json:"fecha_autorizacion"`
	Vence             string `json:"vence,omitempty"`
	IDK               int    `json:"idk"`
	Ambiente          string `json:"ambiente"`
	ClavePrivada      bool   `json:"clave_privada"`
	ModuloBits        int    `json:"modulo_bits"`
	Firma             Check  `json:"firma_sii"`
	Claves            Check  `json:"claves_coinciden"`
	Vigencia          Check  `json:"vigente"`
	Valid             bool   `json:"valido"`
}

// Check mirrors dte.Check for the CAF summary.
type Check = dte.Check

func toCheck(err error) Check {
	if err != nil {
		return Check{Error: err.Error()}
	}
	return Check{OK: true}
}

func cafSummary(c *caf.CAF, keys caf.TrustedKeys, now time.Time) cafInfo {
	s := cafInfo{
		RutEmisor: c.RutEmisor, RazonSocial: c.RazonSocial, TipoDTE: c.Tipo,
		FolioDesde: c.Desde, FolioHasta: c.Hasta, Folios: c.Hasta - c.Desde + 1,
		FechaAutorizacion: c.FA, IDK: c.IDK, Ambiente: c.Ambiente(),
		ClavePrivada: c.PrivateKey != nil,
		Firma:        toCheck(c.Verify(keys)),
		Claves:       toCheck(c.CheckKeyPair()),
		Vigencia:     toCheck(c.CheckUsable(now)),
	}
	if c.PublicKey != nil {
		s.ModuloBits = c.PublicKey.N.BitLen()
	}
	if exp, ok := c.ExpiresAt(); ok {
		s.Vence = dte.ChileTime(exp).Format("2006-01-02")
	}
	s.Valid = s.Firma.OK && s.Claves.OK && s.Vigencia.OK
	return s
}
