package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
)

// codeAECRejected fails "cesion estado" when the registry's review
// rejected the AEC (RSC, RFS, RCR, RDC, RCS, EAN). Beside it the commands
// use UPLOAD_REFUSED (certificacion enviar's) for an upload the registry
// did not take, and the rcv commands' SII_UNAVAILABLE and SII_AUTH_FAILED.
const codeAECRejected = "AEC_REJECTED"

// codeRTCRefused fails a query the registry answered without what was
// asked: a data error, no information (an unknown track id), a company not
// linked to the document (RESP_HDR ESTADO 1, 2, -15).
const codeRTCRefused = "RTC_REFUSED"

// cesionConnHelp describes the connection flags of enviar and estado.
const cesionConnHelp = `The registry is the SII's of --env (certificacion: maullin.sii.cl;
produccion: palena.sii.cl; --ambiente is the same flag), or the test server
of --url, whose default is $DTEKIT_SII_URL (for example "dtekit sii fake").
The certificate's holder must act for the company at the SII; its password
is read from --cert-password-file, else $DTEKIT_CERT_PASSWORD, else
--cert-password.
`

const cesionEnviarUsage = `usage: dtekit cesion enviar AEC.xml --cert CERT.p12 [--cert-password-file FILE] [--email EMAIL]
                           [--env certificacion|produccion | --url URL] [--trust KEY.pem]... [--json]

Uploads an AEC to the SII's Registro Público Electrónico de Transferencia de
Créditos (RTCAnotEnvio.cgi) for its cedente (the carátula's RutCedente) and
prints the track id the registry gives it: one line, so that
TRACK=$(dtekit cesion enviar …) works; --json prints the whole answer. The
registry then reviews the file (schema, signatures, carátula, the document,
the cesiones) and e-mails its result to --email, by default the e-mail the
last cesión gives its cedente; follow it with "dtekit cesion estado --track".

The AEC is first verified as "dtekit cesion leer" does (test CAFs need
--trust), so that a file the registry would reject is not sent; --no-verify
sends it anyway.

` + cesionConnHelp + `
Example:

  dtekit cesion enviar AEC-33-120.xml --cert firma.p12 --cert-password-file clave.txt --env produccion

Exit status 0 when the registry gave a track id; 1 on UPLOAD_REFUSED (its
STATUS 1, 2, 4 or 6, named), SII_AUTH_FAILED, SII_UNAVAILABLE (no answer,
or its internal error: the file may have arrived, so ask "cesion estado"
about the document before sending it again), AEC_REFUSED, INVALID_AEC,
FILE_UNREADABLE, CERTIFICATE_PASSWORD or INVALID_CERTIFICATE; 2 on a wrong
command line.
`

// defineCesionConn registers the connection flags, with --ambiente as
// another name of --env.
func defineCesionConn(env *cmdEnv, fs *flag.FlagSet, conn *siiConn) {
	defURL := ""
	if env.getenv != nil {
		defURL = env.getenv(siiURLEnv)
	}
	conn.define(fs, defURL)
	fs.StringVar(&conn.environment, "ambiente", string(sii.Certificacion), "the same as --env")
}

// cesionFailed reports an error of the sii client: a refused
// authentication, the SII out of reach, or (before anything was sent) a
// wrong value, named by flag.
func cesionFailed(env *cmdEnv, cmd, where string, err error, flags map[string]string) int {
	var ae *sii.AuthError
	switch {
	case errors.As(err, &ae):
		return report(env, cmd, false, newError(codeSIIAuth, where, err))
	case sii.IsRetryable(err):
		e := newError(codeSIIUnavailable, where, err)
		if sii.MayHaveArrived(err) {
			e.err = fmt.Errorf("%w (the registry may have received it)", err)
		}
		return report(env, cmd, false, e)
	}
	// The client names its parameter after the operation
	// ("getEstCesion: RutEmisor: RUT …"): the flag takes their place.
	msg := plainReason(err.Error())
	for field, flag := range flags {
		if i := strings.Index(msg, field); i >= 0 {
			msg = flag + msg[i+len(field):]
			break
		}
	}
	return usageError(env, cmd, "%s", msg)
}

// runCesionEnviar implements "dtekit cesion enviar".
func runCesionEnviar(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "cesion enviar"
	fs := newFlagSet(env, cmd)
	var conn siiConn
	defineCesionConn(env, fs, &conn)
	email := fs.String("email", "", "where the registry e-mails its result (default the last cedente's e-mail in the file)")
	var trust stringList
	fs.Var(&trust, "trust", trustUsage)
	noVerify := fs.Bool("no-verify", false, "send the AEC without verifying it first")
	asJSON := fs.Bool("json", false, "print the registry's whole answer as JSON")
	pos, code, ok := parseFlags(env, fs, cesionEnviarUsage, args, "cert")
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one AEC.xml argument, got %d", len(pos))
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	keys, cerr := loadTrust(trust)
	if cerr != nil {
		return fail(cerr)
	}
	file := pos[0]
	data, err := readInput(ctx, env, file, cesion.MaxBytes)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	rep, err := cesion.Verify(data, cesion.VerifyOptions{DTE: dte.VerifyOptions{Keys: keys}})
	switch {
	case rep == nil:
		return fail(aecError(file, "", err))
	case err != nil && !*noVerify:
		e := aecError(file, "", err)
		e.err = fmt.Errorf("%w (a test CAF needs --trust with its authority's key; --no-verify sends it anyway)", e.err)
		return fail(e)
	}
	if *email == "" && len(rep.Cesiones) > 0 {
		*email = rep.Cesiones[len(rep.Cesiones)-1].Cedente.Email
	}
	client, code, ok := conn.openClient(env, fs, cmd)
	if !ok {
		return code
	}
	res, err := client.UploadAEC(ctx, rep.RutCedente, *email, data)
	if err != nil {
		return cesionFailed(env, cmd, file, err, map[string]string{"emailNotif": "--email"})
	}
	o := sii.AECUploadOutcome(res)
	if *asJSON {
		if c := siiPrint(env, map[string]any{"status": res.Status, "trackid": res.TrackID, "rut_sender": res.RUTSender,
			"rut_company": res.RUTCompany, "file": res.File, "timestamp": res.Timestamp, "outcome": cesionOutcomeJSON(o)}); c != exitOK {
			return c
		}
	}
	if !res.Accepted() {
		code := codeUploadRefused
		if o.Kind == sii.CesionFailure {
			code = codeSIIUnavailable
		}
		return fail(newError(code, file, fmt.Errorf("the registry answered STATUS %d: %s", res.Status, o.Message)))
	}
	if !*asJSON {
		fmt.Fprintln(env.stdout, res.TrackID)
	}
	return exitOK
}

// cesionOutcomeJSON is the printed form of a registry outcome.
func cesionOutcomeJSON(o sii.CesionOutcome) map[string]any {
	return map[string]any{"resultado": o.Kind.String(), "codigo": o.Code, "glosa": o.Message}
}

const cesionEstadoUsage = `usage: dtekit cesion estado --track TRACKID --cert CERT.p12 [--esperar 2m] [--intervalo 10s] [conn]
       dtekit cesion estado --emisor RUT --tipo N --folio N [--id-cesion CLAVE | --empresa RUT]
                            --cert CERT.p12 [conn]

Asks the SII's registry of credit transfers (wsRPETCConsulta):

  --track TRACKID      how the review of an upload stands (getEstEnvio):
                       RCP, SOK, FSO, COK, VDC, VCS while in process; EOK
                       when the cesión is recorded; RSC (schema), RFS (the
                       file's signature), RCR (carátula), RDC (the document),
                       RCS (the cesiones) or EAN (annulled) when rejected.
                       --esperar keeps asking every --intervalo until the
                       state is final or that time is up.
  --emisor, --tipo, --folio
                       whether the document is ceded (getEstCesion); with
                       --id-cesion (the holder's access key the registry
                       gives) also who holds it and since when; with
                       --empresa RUT (getEstCesionRelac) the same, for a
                       company linked to the document as its holder or
                       receptor.

` + cesionConnHelp + `
Examples:

  dtekit cesion estado --track 0000038936 --esperar 5m --cert firma.p12 --env produccion
  dtekit cesion estado --emisor 76192083-9 --tipo 33 --folio 120 --empresa 96790240-3 --cert firma.p12

The answer is one line (--json prints it whole). Exit status 0 when the
registry answered: a review in process or accepted, a document ceded or not;
1 on AEC_REJECTED (the review rejected the AEC, its state named),
RTC_REFUSED (the registry's RESP_HDR ESTADO 1 data error, 2 no information,
for instance an unknown track id or one another company sent, or -15 a
company not linked to the document), SII_AUTH_FAILED (ESTADO 3, 4, 5, 9 or
10: the token, or the certificate's holder has no permission in the
company), SII_UNAVAILABLE (no answer, or an internal error),
CERTIFICATE_PASSWORD or INVALID_CERTIFICATE; 2 on a wrong command line.
`

// runCesionEstado implements "dtekit cesion estado".
func runCesionEstado(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "cesion estado"
	fs := newFlagSet(env, cmd)
	var conn siiConn
	defineCesionConn(env, fs, &conn)
	track := fs.String("track", "", "the track id \"cesion enviar\" printed")
	esperar := fs.Duration("esperar", 0, "with --track: keep asking until the state is final, at most this long")
	intervalo := fs.Duration("intervalo", 10*time.Second, "with --esperar: the pause between questions")
	emisor := fs.String("emisor", "", "the document's issuer (RUT with check digit)")
	tipo := fs.Int("tipo", 0, "the document's type: 33, 34, 43 or 46")
	folio := fs.Int64("folio", 0, "the document's folio")
	idCesion := fs.String("id-cesion", "", "the holder's access key to the cesión (getEstCesion)")
	empresa := fs.String("empresa", "", "a company linked to the document, as holder or receptor (getEstCesionRelac)")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	pos, code, ok := parseFlags(env, fs, cesionEstadoUsage, args, "cert")
	if !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	doc := set["emisor"] || set["tipo"] || set["folio"] || set["id-cesion"] || set["empresa"]
	switch {
	case len(pos) != 0:
		return usageError(env, cmd, "unexpected arguments %q", pos)
	case set["track"] == doc:
		return usageError(env, cmd, "give --track TRACKID, or --emisor, --tipo and --folio")
	case doc && (*emisor == "" || *tipo == 0 || *folio == 0):
		return usageError(env, cmd, "a document is named by --emisor, --tipo and --folio together")
	case set["id-cesion"] && set["empresa"]:
		return usageError(env, cmd, "give --id-cesion or --empresa, not both")
	case *esperar < 0 || *intervalo <= 0:
		return usageError(env, cmd, "--esperar must not be negative and --intervalo must be positive")
	case set["esperar"] && !set["track"]:
		return usageError(env, cmd, "--esperar goes with --track")
	}
	client, code, ok := conn.openClient(env, fs, cmd)
	if !ok {
		return code
	}
	if set["track"] {
		return estadoEnvio(ctx, env, client, *track, *esperar, *intervalo, *asJSON)
	}
	q := sii.CesionQuery{RutEmisor: *emisor, TipoDoc: *tipo, Folio: *folio, IdCesion: *idCesion}
	where := fmt.Sprintf("--emisor %s --tipo %d --folio %d", q.RutEmisor, q.TipoDoc, q.Folio)
	var s *sii.CesionStatus
	var err error
	if *empresa != "" {
		s, err = client.CesionStatusRelac(ctx, q, *empresa)
	} else {
		s, err = client.CesionStatus(ctx, q)
	}
	if err != nil {
		return cesionFailed(env, cmd, where, err, map[string]string{"RutEmisor": "--emisor", "TipoDoc": "--tipo", "Folio": "--folio",
			"IdCesion": "--id-cesion", "rutEmpresa": "--empresa"})
	}
	h := s.Header
	if *asJSON {
		out := map[string]any{"estado": h.Estado, "glosa": h.Glosa, "cedido": s.Cedido, "rut_tenedor": s.RutTenedor,
			"rut_cobranza": s.RutCobranza, "dir_cobranza": s.DirCobranza, "dec_jurada": s.DecJurada}
		if !s.FechaUltAnot.IsZero() {
			out["fecha_ult_anot"] = s.FechaUltAnot
		}
		if c := siiPrint(env, out); c != exitOK {
			return c
		}
	}
	// ESTADO 0 is an answer; 2 (no information) says the registry has no
	// cesión of the document; any other is a failure of the query.
	if h.Estado != 0 && h.Estado != 2 {
		return headerFailed(env, cmd, where, h)
	}
	if *asJSON {
		return exitOK
	}
	name := fmt.Sprintf("%s %d folio %d of %s", strings.ToLower(dte.TipoDTE(q.TipoDoc).Name()), q.TipoDoc, q.Folio, q.RutEmisor)
	if !s.Cedido {
		fmt.Fprintf(env.stdout, "%s: not ceded (the registry: %d %s)\n", name, h.Estado, oneLine(h.Glosa))
		return exitOK
	}
	line := name + ": ceded"
	if s.RutTenedor != "" {
		line += ", held by " + s.RutTenedor
	}
	if !s.FechaUltAnot.IsZero() {
		line += ", last recorded " + s.FechaUltAnot.Format("2006-01-02 15:04:05")
	}
	if s.RutCobranza != "" {
		line += ", in collection by " + s.RutCobranza
		if s.DirCobranza != "" {
			line += " (" + oneLine(s.DirCobranza) + ")"
		}
	}
	if s.DecJurada != "" {
		line += ", sworn declaration " + s.DecJurada
	}
	if s.RutTenedor == "" && h.Glosa != "" {
		line += " (the registry: " + oneLine(h.Glosa) + ")"
	}
	fmt.Fprintln(env.stdout, line)
	return exitOK
}

// headerFailed reports a RESP_HDR ESTADO that is not an answer.
func headerFailed(env *cmdEnv, cmd, where string, h sii.RTCHeader) int {
	code := codeSIIUnavailable
	switch h.Estado {
	case 3, 4, 5, 9, 10:
		code = codeSIIAuth
	case 1, 2, -15:
		code = codeRTCRefused
	}
	meaning := h.Glosa
	for _, c := range sii.CesionCodes() {
		if c.Code == "HDR-"+strconv.Itoa(h.Estado) {
			meaning = c.Message
			if h.Glosa != "" {
				meaning += ": " + h.Glosa
			}
		}
	}
	return report(env, cmd, false, newError(code, where, fmt.Errorf("the registry answered ESTADO %d: %s", h.Estado, oneLine(meaning))))
}

// estadoEnvio asks getEstEnvio for track, again every intervalo while the
// state is not final and esperar lasts, and prints the last answer.
func estadoEnvio(ctx context.Context, env *cmdEnv, client *sii.Client, track string, esperar, intervalo time.Duration, asJSON bool) int {
	const cmd = "cesion estado"
	where := "--track " + track
	deadline := time.Now().Add(esperar)
	var s *sii.AECStatus
	var o sii.CesionOutcome
	for {
		var err error
		s, err = client.AECStatus(ctx, track)
		if err != nil {
			return cesionFailed(env, cmd, where, err, map[string]string{"trackID": "--track"})
		}
		o = sii.AECStatusOutcome(s)
		if o.Kind != sii.CesionPending || esperar == 0 || time.Now().Add(intervalo).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return report(env, cmd, false, newError(codeSIIUnavailable, where, ctx.Err()))
		case <-time.After(intervalo):
		}
	}
	if asJSON {
		if c := siiPrint(env, map[string]any{"trackid": s.TrackID, "estado_envio": s.Estado, "desc_estado": s.Descripcion,
			"estado": s.Header.Estado, "glosa": s.Header.Glosa, "outcome": cesionOutcomeJSON(o)}); c != exitOK {
			return c
		}
	} else if s.Header.Estado == 0 {
		fmt.Fprintf(env.stdout, "TRACKID %s: %s %s (%s)\n", track, s.Estado, oneLine(o.Message), o.Kind)
	}
	switch {
	case s.Header.Estado != 0:
		return headerFailed(env, cmd, where, s.Header)
	case o.Kind == sii.CesionRejected:
		detail := o.Message
		if s.Descripcion != "" && s.Descripcion != o.Message {
			detail += " (" + oneLine(s.Descripcion) + ")"
		}
		return report(env, cmd, false, newError(codeAECRejected, where, fmt.Errorf("the registry rejected the AEC: %s %s", s.Estado, detail)))
	case o.Kind == sii.CesionFailure:
		return report(env, cmd, false, newError(codeSIIUnavailable, where, fmt.Errorf("the registry answered %s: %s", o.Code, oneLine(o.Message))))
	}
	return exitOK
}
