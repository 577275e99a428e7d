package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/signer"
)

// Codes of the cesion commands' own failures.
const (
	codeInvalidAEC = "INVALID_AEC" // the file is not an AEC that can be read
	codeAECRefused = "AEC_REFUSED" // the AEC was read, but a signature, the DTE or the chain fails
)

const cesionUsage = `usage: dtekit cesion ceder|enviar|estado|leer ...

Cesión electrónica (factoring): a company cedes a factura to a factoring
company by recording an Archivo Electrónico de Cesión (AEC) in the SII's
Registro Público Electrónico de Transferencia de Créditos (RTC).

  dtekit cesion ceder DTE.xml|AEC.xml --cesionario RUT --cesionario-nombre NOMBRE
                      --cesionario-direccion DIRECCION --cesionario-email EMAIL
                      --cert CERT.p12 [--email EMAIL] [--monto N] [--vencimiento YYYY-MM-DD]
                      [--out AEC.xml]
                      build and sign the AEC: a first cesión of a signed DTE, or
                      a re-cession of an AEC you received
  dtekit cesion enviar AEC.xml --cert CERT.p12 [--email EMAIL] [--env produccion|--url URL]
                      upload the AEC to the registry and print its TRACKID
  dtekit cesion estado --track N --cert CERT.p12
                      the registry's review of an upload (getEstEnvio)
  dtekit cesion estado --emisor RUT --tipo 33 --folio N [--id-cesion CLAVE | --empresa RUT]
                      --cert CERT.p12
                      whether a document is ceded and who holds it
                      (getEstCesion, getEstCesionRelac)
  dtekit cesion leer AEC.xml [--policy registry|strict] [--trust KEY.pem]... [--json]
                      verify an AEC and summarize it

For example, a company that issued factura 33 folio 120 and cedes it to
Factoring S.A.:

  dtekit cesion ceder DTE-33-120.xml --cesionario 96790240-3 \
      --cesionario-nombre "Factoring S.A." --cesionario-direccion "Av. Apoquindo 3000, Las Condes" \
      --cesionario-email cesiones@factoring.cl --email finanzas@miempresa.cl \
      --cert firma.p12 --cert-password-file clave.txt --out AEC-33-120.xml
  dtekit cesion leer AEC-33-120.xml
  dtekit cesion enviar AEC-33-120.xml --cert firma.p12 --cert-password-file clave.txt --env produccion
  dtekit cesion estado --track 0000038936 --cert firma.p12 --cert-password-file clave.txt --env produccion

Run "dtekit cesion COMMAND --help" for a command's flags.
`

// runCesion implements "dtekit cesion".
func runCesion(ctx context.Context, env *cmdEnv, args []string) int {
	return runGroup(ctx, env, "cesion", cesionUsage, args, map[string]subcommand{
		"ceder": runCesionCeder, "leer": runCesionLeer, "enviar": runCesionEnviar, "estado": runCesionEstado,
	})
}

const cederUsage = `usage: dtekit cesion ceder DTE.xml --cesionario RUT --cesionario-nombre NOMBRE
                          --cesionario-direccion DIRECCION --cesionario-email EMAIL
                          --cert CERT.p12 [--cert-password-file FILE] [--email EMAIL]
                          [--monto N] [--vencimiento YYYY-MM-DD] [--out AEC.xml] [flags]
       dtekit cesion ceder AEC.xml --cesionario RUT ... (a re-cession)

Builds the Archivo Electrónico de Cesión (AEC) by which the cedente transfers
the credit of a factura (types 33, 34, 43 and 46) to the cesionario, signed
at its three levels with --cert: the ceded document (for the emitter), the
cesión (by the person the certificate names, listed as RUTAutorizado) and the
whole file. The certificate's password is read from --cert-password-file,
else $DTEKIT_CERT_PASSWORD, else --cert-password.

  DTE.xml   the signed DTE as you issued it (not the EnvioDTE): a first
            cesión, whose cedente is the DTE's emisor (its RUT, name and
            address come from the DTE; --email is required).
  AEC.xml   an AEC you received as cesionario: a re-cession. The file is
            verified first (as "dtekit cesion leer" does); the ceded document
            and every earlier cesión are kept byte for byte, and the new
            cesión is appended. The cedente is the last cesionario, whose
            e-mail and address the file gives unless --email or --direccion
            say otherwise.

MontoCesion defaults to the document's total, and UltimoVencimiento
(--vencimiento, the last due date) to the issue date plus 30 days. When no
Ley 19.983 receipt travels with the document (--recibo), the SII's sworn
declaration (DeclaracionJurada) is written, filled with the parties' and the
debtor's names and RUTs; --declaracion replaces its text.

Before anything is written, the AEC is verified as the registry would: every
signature, the DTE's stamp against the SII's CAF keys (test CAFs need --trust
with their authority's key) and the chain of cesiones; --no-verify skips it.
The AEC (ISO-8859-1) goes to --out, which is never replaced unless --force is
given, or to standard output. Upload it with "dtekit cesion enviar".

Example:

  dtekit cesion ceder DTE-33-120.xml --cesionario 96790240-3 \
      --cesionario-nombre "Factoring S.A." --cesionario-direccion "Av. Apoquindo 3000, Las Condes" \
      --cesionario-email cesiones@factoring.cl --email finanzas@miempresa.cl \
      --cert firma.p12 --cert-password-file clave.txt --out AEC-33-120.xml

Exit status 0 when the AEC was written; 1 on VALIDATION_ERROR (the flag or
field at fault is named), FILE_UNREADABLE, CERTIFICATE_PASSWORD,
INVALID_CERTIFICATE, INVALID_TRUSTED_KEY, INVALID_DTE, INVALID_AEC,
AEC_REFUSED (the received AEC, or the one built, does not verify),
OUTPUT_EXISTS or OUTPUT_FAILED; 2 on a wrong command line.
`

// cederFlags names the flag that sets each field cesion.Ceder reports.
var cederFlags = map[string]string{
	"cesionario.rut": "--cesionario", "cesionario.razon_social": "--cesionario-nombre",
	"cesionario.direccion": "--cesionario-direccion", "cesionario.email": "--cesionario-email",
	"cedente.email": "--email", "cedente.direccion": "--direccion", "cedente.rut": "DTE.xml",
	"cedente.razon_social": "DTE.xml", "monto": "--monto", "ultimo_vencimiento": "--vencimiento",
	"declaracion_jurada": "--declaracion", "otras_condiciones": "--otras-condiciones",
	"email_deudor": "--email-deudor", "contacto.nombre": "--contacto-nombre",
	"contacto.fono": "--contacto-fono", "contacto.email": "--contacto-email",
	"firmantes": "--cert", "autorizados": "--cert", "dte_cedido.firmante": "--cert", "sender": "--cert",
	"recibos": "--recibo",
}

// fieldFlag returns the flag (or argument) behind a field cesion reports,
// "" when none sets it.
func fieldFlag(field string, flags map[string]string) string {
	if f, ok := flags[field]; ok {
		return f
	}
	// "autorizados[0].rut" and "recibos[2]" come from their list's flag.
	if i := strings.IndexByte(field, '['); i > 0 {
		return flags[field[:i]]
	}
	return ""
}

// validationLine is a validation failure in one line: each field with the
// flag that sets it, its message and its code.
func validationLine(ve *dte.ValidationError, flags map[string]string) string {
	parts := make([]string, 0, len(ve.Details))
	for _, d := range ve.Details {
		msg := oneLine(strings.TrimPrefix(d.Message, d.Field+": "))
		where := d.Field
		if f := fieldFlag(d.Field, flags); f != "" && f != d.Field {
			where = f + " (" + d.Field + ")"
		}
		if where == "" {
			parts = append(parts, fmt.Sprintf("%s [%s]", msg, d.Code))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %s [%s]", where, msg, d.Code))
	}
	return strings.Join(parts, "; ")
}

// policyFlag is --policy of the commands that verify an AEC.
type policyFlag struct{ p cesion.Policy }

func (f *policyFlag) String() string {
	if f.p == cesion.PolicyStrict {
		return "strict"
	}
	return "registry"
}

func (f *policyFlag) Set(v string) error {
	switch v {
	case "registry":
		f.p = cesion.PolicyRegistry
	case "strict":
		f.p = cesion.PolicyStrict
	default:
		return fmt.Errorf("%q is not registry or strict", v)
	}
	return nil
}

// policyUsage describes --policy.
const policyUsage = "signature `POLICY`: registry (the default: an inner signature that does not verify as the file stands is a warning, as the SII's registry accepts) or strict (every signature must verify)"

// runCesionCeder implements "dtekit cesion ceder".
func runCesionCeder(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "cesion ceder"
	fs := newFlagSet(env, cmd)
	var ces cesion.Cesion
	fs.StringVar(&ces.Cesionario.RUT, "cesionario", "", "the cesionario's RUT (the factoring company)")
	fs.StringVar(&ces.Cesionario.RazonSocial, "cesionario-nombre", "", "the cesionario's razón social (at most 100 characters)")
	fs.StringVar(&ces.Cesionario.Direccion, "cesionario-direccion", "", "the cesionario's address (5 to 60 characters)")
	fs.StringVar(&ces.Cesionario.Email, "cesionario-email", "", "the cesionario's e-mail (6 to 40 characters)")
	fs.StringVar(&ces.Cedente.Email, "email", "", "the cedente's e-mail (6 to 40 characters); required for a first cesión")
	fs.StringVar(&ces.Cedente.Direccion, "direccion", "", "the cedente's address (default the DTE's DirOrigen, or the last cesionario's)")
	var cf certFlags
	cf.define(fs)
	monto := fs.String("monto", "", "MontoCesion, `N` whole pesos (default the document's total)")
	fs.StringVar(&ces.UltimoVencimiento, "vencimiento", "", "UltimoVencimiento, the last due date `YYYY-MM-DD` (default the issue date plus 30 days)")
	var recibos stringList
	fs.Var(&recibos, "recibo", "a Ley 19.983 receipt of the document (`RECIBO.xml`, one signed Recibo element), first cesión only; repeatable")
	fs.StringVar(&ces.DeclaracionJurada, "declaracion", "", "the sworn declaration's text (default the SII's template when no receipt travels)")
	fs.StringVar(&ces.OtrasCondiciones, "otras-condiciones", "", "other conditions of the cesión (at most 512 characters)")
	fs.StringVar(&ces.EmailDeudor, "email-deudor", "", "the debtor's e-mail (at most 40 characters)")
	var o cesion.Options
	fs.StringVar(&o.NmbContacto, "contacto-nombre", "", "carátula: the contact's name (at most 40 characters)")
	fs.StringVar(&o.FonoContacto, "contacto-fono", "", "carátula: the contact's phone (at most 40 characters)")
	fs.StringVar(&o.MailContacto, "contacto-email", "", "carátula: the contact's e-mail (at most 40 characters)")
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS (default now)")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	var pol policyFlag
	fs.Var(&pol, "policy", policyUsage+" (for a received AEC)")
	noVerify := fs.Bool("no-verify", false, "write the AEC without verifying it (nor the received one)")
	out := fs.String("out", "", "write the AEC to this `FILE` (default standard output)")
	force := fs.Bool("force", false, "replace --out if it exists")
	pos, code, ok := parseFlags(env, fs, cederUsage, args, "cesionario", "cesionario-nombre", "cesionario-direccion", "cesionario-email", "cert")
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one DTE.xml or AEC.xml argument, got %d", len(pos))
	}
	if *monto != "" {
		n, err := strconv.ParseInt(strings.ReplaceAll(*monto, ".", ""), 10, 64)
		if err != nil || n <= 0 {
			return usageError(env, cmd, "--monto %q: want a whole amount over 0", *monto)
		}
		ces.Monto = n
	}
	now, err := parseAt(*at)
	if err != nil {
		return usageError(env, cmd, "%v", err)
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	keys, cerr := loadTrust(trust)
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
	input := pos[0]
	data, err := readInput(ctx, env, input, cesion.MaxBytes)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	ces.Firmantes = []*signer.Certificate{cert}
	o.At = now()
	vo := cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: keys}, Policy: pol.p, Now: o.At}
	var aec []byte
	switch root := rootElement(data); root {
	case "AEC":
		if len(recibos) > 0 {
			return usageError(env, cmd, "--recibo goes with a first cesión: a received AEC carries its receipts already")
		}
		if !*noVerify {
			if _, err := cesion.Verify(data, vo); err != nil {
				return fail(aecError(input, "the AEC received", err))
			}
		}
		aec, err = cesion.Receder(data, ces, o)
	case "DTE":
		if strings.TrimSpace(ces.Cedente.Email) == "" {
			return usageError(env, cmd, "missing required flag --email (the cedente's e-mail) for a first cesión")
		}
		var rs [][]byte
		for _, r := range recibos {
			b, cerr := readArg("--recibo", r, maxSmallFile)
			if cerr != nil {
				return fail(cerr)
			}
			rs = append(rs, b)
		}
		aec, err = cesion.Ceder(cesion.Cedido{DTE: data, Firmante: cert, Recibos: rs}, ces, o)
	case "EnvioDTE":
		return fail(newError(codeInvalidDTE, input, errors.New("an EnvioDTE: give the one signed DTE to cede, as you issued it")))
	case "":
		return fail(newError(codeInvalidDTE, input, errors.New("not an XML file")))
	default:
		return fail(newError(codeInvalidDTE, input, fmt.Errorf("the root element is %q: give a signed DTE (a first cesión) or an AEC (a re-cession)", root)))
	}
	var ve *dte.ValidationError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintf(env.stderr, "dtekit %s: %s: %s (%s)\n", cmd, input, validationLine(ve, cederFlags), fault.Validation)
		return exitFail
	case err != nil:
		return fail(newError(codeInvalidCert, "--cert "+cf.path, err))
	}
	rep, err := cesion.Verify(aec, vo)
	if err != nil && !*noVerify {
		e := aecError(input, "the AEC built from it", err)
		e.err = fmt.Errorf("%w (a test CAF needs --trust with its authority's key; --no-verify writes it anyway)", e.err)
		return fail(e)
	}
	if *out == "" {
		if _, err := env.stdout.Write(aec); err != nil {
			return fail(newError(codeOutputFailed, "standard output", err))
		}
		return exitOK
	}
	exists := fmt.Errorf("%s already exists; give --force to replace it", *out)
	if _, err := os.Lstat(*out); err == nil && !*force {
		return fail(newError(codeOutputExists, "--out", exists))
	}
	if err := writeFileAtomic(*out, aec, *force); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fail(newError(codeOutputExists, "--out", exists))
		}
		return fail(newError(codeOutputFailed, "--out", err))
	}
	if rep != nil && len(rep.Cesiones) > 0 {
		c := rep.Cesiones[len(rep.Cesiones)-1]
		fmt.Fprintf(env.stdout, "wrote %s: cesión %d, %s → %s, %s, last due %s, of %s\n", *out, c.Seq,
			c.Cedente.RUT, c.Cesionario.RUT, pesos(c.Monto), c.UltimoVencimiento, docLine(rep.Documento))
	} else {
		fmt.Fprintf(env.stdout, "wrote %s (not verified)\n", *out)
	}
	return exitOK
}

// aecError classifies cesion.Verify's error: a file that is not an AEC
// (INVALID_AEC) or one refused (AEC_REFUSED), in one line naming the
// fields.
func aecError(where, what string, err error) *cliError {
	var re *cesion.RefusedError
	var ve *dte.ValidationError
	switch {
	case errors.As(err, &re):
		msgs := make([]string, 0, len(re.Problems))
		for _, p := range re.Problems {
			msgs = append(msgs, p.Field+": "+oneLine(p.Message))
		}
		if what != "" {
			return newError(codeAECRefused, where, fmt.Errorf("%s is refused: %s", what, strings.Join(msgs, "; ")))
		}
		return newError(codeAECRefused, where, fmt.Errorf("refused: %s", strings.Join(msgs, "; ")))
	case errors.As(err, &ve):
		return newError(codeInvalidAEC, where, errors.New(validationLine(ve, nil)))
	}
	return newError(codeInvalidAEC, where, err)
}

// docLine names a document: "factura electrónica 33 folio 120 of 76192083-9
// to 76086428-5, issued 2026-03-02, total $11.900".
func docLine(d *dte.Document) string {
	if d == nil {
		return "the document"
	}
	total := string(d.Totales.MntTotal)
	if n, ok := d.Totales.MntTotal.Int64(); ok {
		total = pesos(n)
	}
	return fmt.Sprintf("%s %d folio %d of %s to %s, issued %s, total %s", strings.ToLower(d.Tipo.Name()), d.Tipo, d.Folio,
		d.Emisor.Rut, d.Receptor.Rut, d.FechaEmision, total)
}

// pesos writes an amount as Chile does: $1.234.567.
func pesos(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	return sign + "$" + string(chile.AppendThousands(nil, s))
}

const cesionLeerUsage = `usage: dtekit cesion leer [--policy registry|strict] [--trust KEY.pem]... [--signer PARTY=RUT]...
                         [--valid-at-signing] [--json] AEC.xml

Reads and verifies an Archivo Electrónico de Cesión (AEC), as a factoring
company does before paying for a factura, and summarizes it: the ceded
document; each cesión (its sequence, cedente → cesionario, amount, last due
date, when it was signed and by whom); every signature of the file with its
result; the policy applied, its warnings and, for a refused file, each
problem with the element at fault.

What is checked: the file's shape and bounds; every signature (the DTE's own,
each Ley 19.983 receipt's, the ceded document's, each cesión's, one per
RUTAutorizado in order, and the file's); the DTE's stamp with the SII's CAF
keys (test CAFs need --trust with their authority's key) and its totals; and
the chain: sequence 1..n, the first cedente the emisor, each next cedente the
previous cesionario, each amount at most the total, the due date not before
the issue date, no cesión dated in the future, the sworn declaration when no
receipt travels, and the carátula naming the last cesión's parties.

--policy registry (the default) accepts what the SII's registry records:
files made by the SII's portal carry inner signatures (over the ceded document
and the portal's cesión) that do not verify as the files stand, so such a
signature is a warning, as is a RUTAutorizado that names the company rather
than its signer. The file's own signature, the DTE and the chain must hold.
--policy strict refuses any signature that does not verify; every AEC dtekit
writes passes it.

A signature proves the file intact, not that its signer may act for the
company: state who may with --signer PARTY=RUT (repeatable; the emisor's
signers for the ceded document, each cedente's for its cesión and the last
cedente's for the file; a company without an entry is refused) and
--valid-at-signing, as "dtekit verify" takes them.

Examples:

  dtekit cesion leer AEC-33-120.xml
  dtekit cesion leer --policy strict --signer 76192083-9=12345678-5 --json AEC-33-120.xml

Exit status 0 when the AEC verified under the policy; 1 on AEC_REFUSED (the
summary is still printed, then the problems), INVALID_AEC (not an AEC that
can be read) or FILE_UNREADABLE; 2 on a wrong command line.
`

// cesionLeida is "cesion leer --json"'s output: the report with the file,
// the policy and the ceded document's identity.
type cesionLeida struct {
	File      string           `json:"file"`
	OK        bool             `json:"ok"`
	Policy    string           `json:"policy"`
	Documento *documentoCedido `json:"documento,omitempty"`
	Report    *cesion.Report   `json:"report"`
}

// documentoCedido names the ceded document in "cesion leer --json".
type documentoCedido struct {
	Tipo         dte.TipoDTE `json:"tipo_dte"`
	Folio        int64       `json:"folio"`
	RutEmisor    string      `json:"rut_emisor"`
	RutReceptor  string      `json:"rut_receptor"`
	FechaEmision string      `json:"fecha_emision"`
	MontoTotal   string      `json:"monto_total"`
}

// runCesionLeer implements "dtekit cesion leer".
func runCesionLeer(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "cesion leer"
	fs := newFlagSet(env, cmd)
	var pol policyFlag
	fs.Var(&pol, "policy", policyUsage)
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	var policy signerPolicy
	policy.define(fs, "PARTY", false)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	pos, code, ok := parseFlags(env, fs, cesionLeerUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one AEC.xml argument, got %d", len(pos))
	}
	vo, err := policy.options()
	if err != nil {
		return usageError(env, cmd, "%v", err)
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	keys, cerr := loadTrust(trust)
	if cerr != nil {
		return fail(cerr)
	}
	vo.Keys = keys
	file := pos[0]
	data, err := readInput(ctx, env, file, cesion.MaxBytes)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	return readAEC(env, cmd, file, data, vo, pol, *asJSON)
}

// readAEC verifies the AEC data read from file with cesion.Verify under
// the signer policy vo and the signature policy pol, prints its summary
// (printAEC) or, with asJSON, its report, and returns the exit code: 1
// with one line on standard error (AEC_REFUSED, INVALID_AEC) naming cmd
// when it is refused. "cesion leer" and "verify" both read an AEC with it.
func readAEC(env *cmdEnv, cmd, file string, data []byte, vo dte.VerifyOptions, pol policyFlag, asJSON bool) int {
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	rep, verr := cesion.Verify(data, cesion.VerifyOptions{DTE: vo, Policy: pol.p})
	if rep == nil {
		return fail(aecError(file, "", verr))
	}
	if asJSON {
		v := cesionLeida{File: file, OK: rep.OK(), Policy: pol.String(), Report: rep}
		if d := rep.Documento; d != nil {
			v.Documento = &documentoCedido{Tipo: d.Tipo, Folio: d.Folio, RutEmisor: d.Emisor.Rut, RutReceptor: d.Receptor.Rut,
				FechaEmision: d.FechaEmision, MontoTotal: string(d.Totales.MntTotal)}
		}
		if err := totalsWriteJSON(env.stdout, v); err != nil {
			return fail(newError(codeOutputFailed, "standard output", err))
		}
	} else {
		printAEC(env.stdout, file, rep, pol.String())
	}
	if verr != nil {
		return fail(aecError(file, "", verr))
	}
	return exitOK
}

// printAEC prints what "cesion leer" read and found.
func printAEC(w io.Writer, file string, r *cesion.Report, policy string) {
	state := "OK"
	if !r.OK() {
		state = "REFUSED"
	}
	fmt.Fprintf(w, "%s: %s (policy %s)\n", file, state, policy)
	fmt.Fprintf(w, "  document: %s\n", docLine(r.Documento))
	if r.Recibos > 0 {
		fmt.Fprintf(w, "  Ley 19.983 receipts: %d\n", r.Recibos)
	}
	for _, c := range r.Cesiones {
		fmt.Fprintf(w, "  cesión %d: %s %s → %s %s, %s, last due %s, signed %s\n", c.Seq, c.Cedente.RUT, quoteName(c.Cedente.RazonSocial),
			c.Cesionario.RUT, quoteName(c.Cesionario.RazonSocial), pesos(c.Monto), c.UltimoVencimiento, c.TmstCesion)
		for _, a := range c.Autorizados {
			fmt.Fprintf(w, "    authorized: %s %s\n", a.RUT, quoteName(a.Nombre))
		}
		if c.DeclaracionJurada != "" {
			fmt.Fprintln(w, "    with the sworn declaration (DeclaracionJurada)")
		}
	}
	fmt.Fprintf(w, "  carátula: %s → %s, sent %s\n", r.RutCedente, r.RutCesionario, r.TmstFirmaEnvio)
	fmt.Fprintln(w, "  signatures:")
	for _, s := range r.Firmas {
		res := "OK"
		switch {
		case !s.OK:
			res = "FAILED: " + oneLine(s.Error)
		case s.Standalone:
			res = "OK (with its parent cut out, as it was signed)"
		}
		fmt.Fprintf(w, "    %-10s %s, signed by %s\n", s.Nivel, res, signerName(s.Signer))
	}
	for _, m := range r.Warnings {
		fmt.Fprintf(w, "  warning: %s\n", oneLine(m))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  problem: %s: %s\n", p.Field, oneLine(p.Message))
	}
}

// signerName is a signer in a few words: its RUT and common name.
func signerName(s *dte.Signer) string {
	if s == nil {
		return "no certificate"
	}
	cn := ""
	for _, part := range strings.Split(s.Subject, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "CN="); ok {
			cn = v
		}
	}
	switch {
	case s.RUT == "" && cn == "":
		return s.Subject
	case s.RUT == "":
		return quoteName(cn)
	case cn == "":
		return s.RUT
	}
	return s.RUT + " " + quoteName(cn)
}

// quoteName quotes a name for the summary, nothing when empty.
func quoteName(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}
