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
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/signer"
)

// Detail codes of the CLI's own inputs (beside the validation codes of dte).
const (
	codeInvalidEmisor = "INVALID_EMISOR"
	codeInvalidCAF    = "INVALID_CAF"
	codeInvalidCert   = "INVALID_CERTIFICATE"
	codeInvalidFlag   = "INVALID_FLAG"
	codeInvalidDTE    = "INVALID_DTE"
	codeEmitFailed    = "EMISSION_FAILED"
)

// atLayout is the --at format: Chile local time without offset.
const atLayout = "2006-01-02T15:04:05"

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// parseInterspersed parses flags that may come before, between or after the
// positional arguments, and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// envelopeFail prints a VALIDATION_ERROR envelope with one detail on
// standard output (and a one-line reason on standard error) and returns 1.
func envelopeFail(env *cmdEnv, cmd, field, code string, err error) int {
	fmt.Fprintf(env.stderr, "dtekit %s: %s: %v\n", cmd, field, err)
	ve := &dte.ValidationError{Details: []dte.FieldError{{Field: field, Code: dte.DetailCode(code), Message: err.Error()}}}
	if werr := totalsWriteJSON(env.stdout, ve.Envelope()); werr != nil {
		fmt.Fprintf(env.stderr, "dtekit %s: %v\n", cmd, werr)
	}
	return 1
}

// loadEmisor reads and checks an EMISOR.json file (contract §2.6 fields
// plus acteco and sucursal_sii).
func loadEmisor(path string) (dte.Emisor, error) {
	var e dte.Emisor
	data, err := readFile(path, maxSmallFile)
	if err != nil {
		return e, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, fmt.Errorf("%s: %v", path, err)
	}
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"rut", e.Rut}, {"razon_social", e.RazonSocial}, {"giro", e.Giro}, {"direccion", e.Direccion},
		{"comuna", e.Comuna}, {"ciudad", e.Ciudad}, {"ambiente", e.Ambiente}, {"fecha_resolucion", e.FechaResolucion},
	} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return e, fmt.Errorf("%s: missing %s", path, strings.Join(missing, ", "))
	}
	r, err := dte.ParseRUT(e.Rut)
	if err != nil {
		return e, fmt.Errorf("%s: rut: %v", path, err)
	}
	e.Rut = r.String()
	if e.Ambiente != dte.AmbienteCertificacion && e.Ambiente != dte.AmbienteProduccion {
		return e, fmt.Errorf("%s: ambiente %q must be %q or %q", path, e.Ambiente, dte.AmbienteCertificacion, dte.AmbienteProduccion)
	}
	if _, err := time.Parse("2006-01-02", e.FechaResolucion); err != nil {
		return e, fmt.Errorf("%s: fecha_resolucion %q is not a YYYY-MM-DD date", path, e.FechaResolucion)
	}
	if len(e.Acteco) == 0 {
		return e, fmt.Errorf("%s: acteco needs at least one SII activity code", path)
	}
	return e, nil
}

// loadCert reads a PKCS#12 file.
func loadCert(path, password string) (*signer.Certificate, error) {
	data, err := readFile(path, maxSmallFile)
	if err != nil {
		return nil, err
	}
	c, err := signer.Load(data, password)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// trustedKeys returns the SII's CAF keys plus each --trust PEM public key.
// A --trust key is trusted for certification CAFs only (IDK 100): a test
// authority must never make a CAF pass as a production one.
func trustedKeys(paths []string) (caf.TrustedKeys, error) {
	keys := caf.SIIKeys()
	for _, p := range paths {
		data, err := readFile(p, maxSmallFile)
		if err != nil {
			return nil, err
		}
		pub, err := smallrsa.ParsePublicKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		keys = keys.With(caf.IDKCertificacion, pub)
	}
	return keys, nil
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

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a failure never leaves a half-written file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dtekit-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

const emitUsage = `usage: dtekit emit --emisor EMISOR.json --caf CAF.xml --cert CERT.p12 --cert-password PASS
                  --folio N [--at YYYY-MM-DDTHH:MM:SS] [--trust SII_KEY.pem]... [--out DIR] REQUEST.json

Validates the request, computes its totals, stamps the TED with the CAF and
signs the DTE, then writes DIR/DTE-<tipo>-<folio>.xml (ISO-8859-1) and prints
{"tipo_dte":…,"folio":…,"monto_total":…,"file":…}. The CAF's SII signature is
checked against the SII's keys plus any --trust key (for test CAFs). --at fixes
the clock (Chile local time) for TSTED, TmstFirma and the default fecha_emision.
On bad input it prints the contract's error envelope, writes nothing and exits 1.
`

// runEmit implements "dtekit emit".
func runEmit(ctx context.Context, env *cmdEnv, args []string) int {
	fs := flag.NewFlagSet("emit", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, emitUsage) }
	emisorPath := fs.String("emisor", "", "issuer JSON (contract §2.6 + acteco)")
	cafPath := fs.String("caf", "", "CAF file (XML or base64)")
	certPath := fs.String("cert", "", "PKCS#12 signing certificate")
	certPass := fs.String("cert-password", "", "PKCS#12 password")
	folio := fs.Int64("folio", 0, "folio to use (inside the CAF's range)")
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS")
	outDir := fs.String("out", ".", "output directory")
	var trust stringList
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM); repeatable")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 || *emisorPath == "" || *cafPath == "" || *certPath == "" || *folio <= 0 {
		fmt.Fprint(env.stderr, emitUsage)
		return 2
	}
	now, err := parseAt(*at)
	if err != nil {
		return envelopeFail(env, "emit", "at", codeInvalidFlag, err)
	}
	emisor, err := loadEmisor(*emisorPath)
	if err != nil {
		return envelopeFail(env, "emit", "emisor", codeInvalidEmisor, err)
	}
	keys, err := trustedKeys(trust)
	if err != nil {
		return envelopeFail(env, "emit", "trust", codeInvalidFlag, err)
	}
	cafData, err := readFile(*cafPath, maxSmallFile)
	if err != nil {
		return envelopeFail(env, "emit", "caf", codeInvalidCAF, err)
	}
	c, err := caf.Parse(cafData)
	if err != nil {
		return envelopeFail(env, "emit", "caf", codeInvalidCAF, err)
	}
	cert, err := loadCert(*certPath, *certPass)
	if err != nil {
		return envelopeFail(env, "emit", "cert", codeInvalidCert, err)
	}
	data, err := readRequestInput(ctx, env, pos[0])
	if err != nil {
		return envelopeFail(env, "emit", "request", string(dte.CodeInvalidJSON), err)
	}
	req, verr := decodeRequest(data)
	if verr != nil {
		return printValidation(env, "emit", pos[0], verr)
	}
	em := &dte.Emitter{Emisor: emisor, Cert: cert, Folios: &oneFolio{folio: *folio, caf: c}, Now: now, TrustedKeys: keys}
	out, err := em.Emit(ctx, req)
	if err != nil {
		if ve, ok := dte.AsValidationError(err); ok {
			return printValidation(env, "emit", pos[0], ve)
		}
		field := "request"
		var ee *dte.EmitError
		if errors.As(err, &ee) {
			switch ee.Step {
			case dte.StepFolio, dte.StepCAF, dte.StepTED:
				field = "caf"
			case dte.StepSign:
				field = "cert"
			}
		}
		return envelopeFail(env, "emit", field, codeEmitFailed, err)
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return envelopeFail(env, "emit", "out", codeInvalidFlag, err)
	}
	file := filepath.Join(*outDir, fmt.Sprintf("DTE-%d-%d.xml", out.Tipo, out.Folio))
	if err := writeFileAtomic(file, out.XML); err != nil {
		return envelopeFail(env, "emit", "out", codeInvalidFlag, err)
	}
	_ = totalsWriteJSON(env.stdout, map[string]any{
		"tipo_dte": out.Tipo, "folio": out.Folio, "monto_total": out.MontoTotal, "file": file,
	})
	return 0
}

// printValidation prints a validation failure as the contract's envelope.
func printValidation(env *cmdEnv, cmd, input string, ve *dte.ValidationError) int {
	fmt.Fprintf(env.stderr, "dtekit %s: %s: %v\n", cmd, input, ve)
	if err := totalsWriteJSON(env.stdout, ve.Envelope()); err != nil {
		fmt.Fprintf(env.stderr, "dtekit %s: %v\n", cmd, err)
	}
	return 1
}

const envioUsage = `usage: dtekit envio --emisor EMISOR.json --cert CERT.p12 --cert-password PASS
                   [--at YYYY-MM-DDTHH:MM:SS] [--rut-receptor RUT] [--rut-envia RUT] DTE.xml... > ENVIO.xml

Packs signed DTEs into a signed envelope on standard output: EnvioBOLETA when
all are boletas (39, 41), EnvioDTE otherwise (mixing both is refused).
--rut-receptor defaults to the SII (60803000-K); --rut-envia to the RUT in the
certificate.
`

// runEnvio implements "dtekit envio".
func runEnvio(ctx context.Context, env *cmdEnv, args []string) int {
	fs := flag.NewFlagSet("envio", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, envioUsage) }
	emisorPath := fs.String("emisor", "", "issuer JSON")
	certPath := fs.String("cert", "", "PKCS#12 signing certificate")
	certPass := fs.String("cert-password", "", "PKCS#12 password")
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS")
	rutReceptor := fs.String("rut-receptor", "", "envelope receptor (default the SII, 60803000-K)")
	rutEnvia := fs.String("rut-envia", "", "sender's RUT (default the certificate's)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) == 0 || *emisorPath == "" || *certPath == "" {
		fmt.Fprint(env.stderr, envioUsage)
		return 2
	}
	now, err := parseAt(*at)
	if err != nil {
		return envelopeFail(env, "envio", "at", codeInvalidFlag, err)
	}
	emisor, err := loadEmisor(*emisorPath)
	if err != nil {
		return envelopeFail(env, "envio", "emisor", codeInvalidEmisor, err)
	}
	cert, err := loadCert(*certPath, *certPass)
	if err != nil {
		return envelopeFail(env, "envio", "cert", codeInvalidCert, err)
	}
	docs := make([][]byte, 0, len(pos))
	for _, p := range pos {
		b, err := readFile(p, maxXMLFile)
		if err != nil {
			return envelopeFail(env, "envio", p, codeInvalidDTE, err)
		}
		docs = append(docs, b)
	}
	out, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor, RutEnvia: *rutEnvia, RutReceptor: *rutReceptor, At: now()}, cert, docs...)
	if err != nil {
		return envelopeFail(env, "envio", "dte", codeInvalidDTE, err)
	}
	if _, err := env.stdout.Write(out); err != nil {
		fmt.Fprintf(env.stderr, "dtekit envio: %v\n", err)
		return 1
	}
	return 0
}

const verifyUsage = `usage: dtekit verify [--trust KEY.pem]... [--json] FILE.xml...

Verifies a signed DTE, EnvioDTE or EnvioBOLETA: every XML signature, every TED
(FRMT with the CAF's key, the CAF's FRMA with the SII's keys or a --trust key,
the stamp's data against the document, MNT = MntTotal) and every document's
totals recomputed from its lines. Prints a report per document and exits 1
when anything fails.
`

// runVerify implements "dtekit verify".
func runVerify(ctx context.Context, env *cmdEnv, args []string) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, verifyUsage) }
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var trust stringList
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM); repeatable")
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
		fmt.Fprintf(env.stderr, "dtekit verify: --trust: %v\n", err)
		return 2
	}
	code := 0
	for _, p := range pos {
		data, err := readFile(p, maxXMLFile)
		if err != nil {
			fmt.Fprintf(env.stderr, "dtekit verify: %v\n", err)
			code = 1
			continue
		}
		rep, err := dte.Verify(data, keys)
		if rep == nil {
			fmt.Fprintf(env.stderr, "dtekit verify: %s: %v\n", p, err)
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

// printReport writes a verification report as text, a line per document.
func printReport(w io.Writer, file string, rep *dte.VerifyReport) {
	verdict := "OK"
	if !rep.OK() {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "%s: %s (%s, %d document(s))\n", file, verdict, rep.Kind, len(rep.Documents))
	if rep.Envelope != nil {
		fmt.Fprintf(w, "  envelope signature: %s\n", checkText(*rep.Envelope))
	}
	for _, d := range rep.Documents {
		fmt.Fprintf(w, "  %s tipo %d folio %d total %s: signature %s; TED %s; totals %s\n",
			d.ID, d.Tipo, d.Folio, d.MntTotal, checkText(d.Signature), checkText(d.TED), checkText(d.Totals))
	}
}

func checkText(c dte.Check) string {
	if c.OK {
		return "ok"
	}
	return "FAILED (" + c.Error + ")"
}

const cafUsage = `usage: dtekit caf inspect [--trust KEY.pem]... [--at YYYY-MM-DDTHH:MM:SS] CAF.xml

Prints a JSON summary of a CAF (raw XML or base64): issuer, type, folio range,
authorization date, IDK and environment, and the outcome of each check (the
SII's FRMA signature with the SII's keys or a --trust key, RSASK matching
RSAPK, the six-month rule at --at or now). Exits 1 when a check fails.
`

// runCAF implements "dtekit caf".
func runCAF(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 || args[0] != "inspect" {
		fmt.Fprint(env.stderr, cafUsage)
		return 2
	}
	fs := flag.NewFlagSet("caf inspect", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() { fmt.Fprint(env.stderr, cafUsage) }
	at := fs.String("at", "", "reference time for the six-month rule")
	var trust stringList
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM); repeatable")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprint(env.stderr, cafUsage)
		return 2
	}
	now, err := parseAt(*at)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit caf inspect: %v\n", err)
		return 2
	}
	keys, err := trustedKeys(trust)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit caf inspect: --trust: %v\n", err)
		return 2
	}
	data, err := readFile(pos[0], maxSmallFile)
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit caf inspect: %v\n", err)
		return 1
	}
	c, err := caf.Parse(data)
	if err != nil {
		return envelopeFail(env, "caf inspect", "caf", codeInvalidCAF, err)
	}
	sum := cafSummary(c, keys, now())
	_ = totalsWriteJSON(env.stdout, sum)
	if !sum.Valid {
		return 1
	}
	return 0
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
