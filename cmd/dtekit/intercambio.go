package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
)

// Codes of the intercambio commands' own failures.
const (
	codeUnknownEmitter  = "UNKNOWN_EMITTER"   // the envelope is too damaged to name whom to answer
	codeNothingToAnswer = "NOTHING_TO_ANSWER" // no document of the envelope can be named in the answer asked for
	codeInvalidAnswer   = "INVALID_ANSWER"    // an answer cannot be read, or a signature of it does not verify
	codeAnswerNotForUs  = "ANSWER_NOT_FOR_US" // an answer addressed to another company
	codeSignerRefused   = "SIGNER_REFUSED"    // an answer's signer fails the --signer policy
)

const intercambioUsage = `usage: dtekit intercambio responder|leer ...

The exchange of DTEs between companies: answer an EnvioDTE a supplier sent
us, or read the answer a customer sent about ours.

  dtekit intercambio responder --empresa-rut RUT --cert CERT.p12 [--cert-password-file FILE]
                               [--trust KEY.pem]... [--signer EMISOR=RUT]... (--acuse | --aceptar |
                               --rechazar MOTIVO | --recibo --recinto LUGAR) [--out DIR] ENVIO.xml
  dtekit intercambio leer [--empresa-rut RUT] [--signer RECEPTOR=RUT]... [--json] RESPUESTA.xml

Both take the signer policy of "dtekit verify": --signer (the RUTs that may
sign for a company; every other signer, and every company without an entry,
is refused), --valid-at-signing and, for envelopes, --signer-is-rut-envia.

Run "dtekit intercambio responder --help" or "dtekit intercambio leer --help"
for their flags.
`

// runIntercambio implements "dtekit intercambio".
func runIntercambio(ctx context.Context, env *cmdEnv, args []string) int {
	return runGroup(ctx, env, "intercambio", intercambioUsage, args, map[string]subcommand{
		"responder": runResponder, "leer": runLeer,
	})
}

const responderUsage = `usage: dtekit intercambio responder --empresa-rut RUT --cert CERT.p12 [--cert-password-file FILE]
                               [--trust KEY.pem]... [--signer EMISOR=RUT]... [--signer-is-rut-envia]
                               [--valid-at-signing] (--acuse | --aceptar | --rechazar MOTIVO |
                               --recibo --recinto LUGAR) [--rut-emisor RUT] [--cod-envio N]
                               [--id-respuesta N] [--at YYYY-MM-DDTHH:MM:SS] [--out DIR] [--force]
                               ENVIO.xml

Answers an EnvioDTE addressed to our company (--empresa-rut) as the SII's
exchange format asks, and prints what it decided for the envelope and each
document. The envelope is verified first: its shape, every signature, every
stamp (the CAF's FRMA with the SII's keys or a --trust key) and every
document's totals, and that it and its documents are addressed to us; the
codes follow the SII's tables (EstadoRecepEnv, EstadoRecepDTE).

A signature proves a document intact, not that its signer may sign for the
emisor: state who may with --signer EMISOR=RUT (repeatable; a document or
envelope signed by anyone else, or from an emisor without an entry, is not
received: EstadoRecepDTE 99 or EstadoRecepEnv 2), --signer-is-rut-envia and
--valid-at-signing, as "dtekit verify" takes them.

Every run writes the acuse de recibo, DIR/RecepcionEnvio-<CodEnvio>.xml (a
RespuestaDTE), whatever the envelope holds: a file that cannot be read or
does not verify is answered with the code that says so. Then:

  --acuse             nothing more;
  --aceptar           DIR/ResultadoDTE-<CodEnvio>.xml accepting every document
                      received (EstadoDTE 0) and rejecting the others;
  --rechazar MOTIVO   the same file rejecting every document (EstadoDTE 2,
                      CodRchDsc -1) for MOTIVO, which Ley 19.983 wants stated
                      clearly;
  --recibo --recinto LUGAR
                      DIR/EnvioRecibos-<CodEnvio>.xml, the Ley 19.983 receipt
                      of the goods or services of every document received,
                      signed by the certificate's holder (RutFirma); it may
                      go with --aceptar.

The answers are ISO-8859-1, signed with the certificate, and go to the
envelope's emitter (by e-mail, to its intercambio address). Documents of the
types RespuestaDTE cannot name (43, 110-112) are reported but left out of
the answers. The legal acceptance or claim is registered in the SII's
registry (dtekit rcv), not by these files.

--cod-envio numbers the envelope for us (default: the clock's Unix seconds);
--id-respuesta numbers the acuse (default the same), the resultado taking the
next number. --at fixes the clock (Chile local time) for the reception and
signing times. An existing answer file is never replaced unless --force is
given, and nothing is written when one exists.

Exit status 0 when the answers were written, whatever they say; 1 on
FILE_UNREADABLE, CERTIFICATE_PASSWORD, INVALID_CERTIFICATE,
INVALID_TRUSTED_KEY, UNKNOWN_EMITTER (an unreadable file: give --rut-emisor),
NOTHING_TO_ANSWER (the acuse was written, but no document can be accepted,
rejected or receipted), OUTPUT_EXISTS or OUTPUT_FAILED; 2 on a wrong command
line.
`

// runResponder implements "dtekit intercambio responder".
func runResponder(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "intercambio responder"
	fs := newFlagSet(env, cmd)
	empresa := fs.String("empresa-rut", "", "our company's RUT: the envelope and its documents must be addressed to it")
	var cf certFlags
	cf.define(fs)
	var trust stringList
	fs.Var(&trust, "trust", "extra trusted CAF-authority public key (PEM), for test CAFs; repeatable")
	var policy signerPolicy
	policy.define(fs, "EMISOR", true)
	acuse := fs.Bool("acuse", false, "write only the acuse de recibo")
	aceptar := fs.Bool("aceptar", false, "also accept every document received (ResultadoDTE)")
	rechazar := fs.String("rechazar", "", "also reject every document, for this `MOTIVO` (ResultadoDTE)")
	recibo := fs.Bool("recibo", false, "also write the Ley 19.983 receipt of goods or services (EnvioRecibos); needs --recinto")
	recinto := fs.String("recinto", "", "where the goods or services were received (`LUGAR`, at most 80 characters)")
	rutEmisor := fs.String("rut-emisor", "", "the emitter expected: others' documents are refused, and an unreadable file is answered to it")
	codEnvio := fs.Int64("cod-envio", 0, "our number for this envelope, 1 to 9999999999 (default the clock's Unix seconds)")
	idRespuesta := fs.Int64("id-respuesta", 0, "the acuse's IdRespuesta, 1 to 9999999999 (default as --cod-envio); the resultado takes the next")
	at := fs.String("at", "", "clock, Chile local time YYYY-MM-DDTHH:MM:SS (default now)")
	outDir := fs.String("out", ".", "directory the answers are written to")
	force := fs.Bool("force", false, "replace existing answer files")
	pos, code, ok := parseFlags(env, fs, responderUsage, args, "empresa-rut", "cert")
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one ENVIO.xml argument, got %d", len(pos))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	modes := 0
	for _, m := range []bool{*acuse, *aceptar, set["rechazar"], *recibo} {
		if m {
			modes++
		}
	}
	switch {
	case modes == 0:
		return usageError(env, cmd, "say what to answer: --acuse, --aceptar, --rechazar MOTIVO or --recibo --recinto LUGAR")
	case modes > 1 && !(modes == 2 && *aceptar && *recibo):
		return usageError(env, cmd, "give one of --acuse, --aceptar, --rechazar and --recibo (only --aceptar and --recibo go together)")
	case set["rechazar"] && strings.TrimSpace(*rechazar) == "":
		return usageError(env, cmd, "--rechazar needs the reason (MOTIVO)")
	case *recibo && strings.TrimSpace(*recinto) == "":
		return usageError(env, cmd, "--recibo needs --recinto LUGAR, where the goods or services were received")
	case !*recibo && set["recinto"]:
		return usageError(env, cmd, "--recinto goes with --recibo")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"cod-envio", *codEnvio}, {"id-respuesta", *idRespuesta}} {
		if set[f.name] && (f.v < 1 || f.v > intercambio.MaxCodigo-1) {
			return usageError(env, cmd, "--%s %d: want a number from 1 to %d", f.name, f.v, int64(intercambio.MaxCodigo-1))
		}
	}
	now, err := parseAt(*at)
	if err != nil {
		return usageError(env, cmd, "%v", err)
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
	cert, usage, cerr := cf.load(env, fs)
	if usage {
		return usageError(env, cmd, "%v", cerr)
	}
	if cerr != nil {
		return fail(cerr)
	}
	// An envelope larger than the package reads is still answered (99):
	// reading stops one byte past the limit.
	data, err := readUpTo(ctx, env, pos[0], dte.MaxEnvioBytes+1)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	t := now()
	if *codEnvio == 0 {
		*codEnvio = t.Unix()
	}
	if *idRespuesta == 0 {
		*idRespuesta = *codEnvio
	}
	vo.Keys = keys
	rec, err := intercambio.Receive(data, intercambio.Options{Empresa: *empresa, Verify: vo,
		RutEmisor: *rutEmisor, NmbEnvio: filepath.Base(pos[0]), CodEnvio: *codEnvio, At: t})
	if err != nil {
		return usageError(env, cmd, "%s", plainReason(err.Error()))
	}
	opts := intercambio.AnswerOptions{IdRespuesta: *idRespuesta, At: t}
	type answer struct {
		file string
		data []byte
	}
	var answers []answer
	name := func(kind string) string { return filepath.Join(*outDir, fmt.Sprintf("%s-%d.xml", kind, rec.CodEnvio)) }
	ack, err := rec.Acuse(cert, opts)
	if errors.Is(err, intercambio.ErrUnknownEmitter) {
		printRecepcion(env.stdout, pos[0], rec, nil, nil)
		return fail(newError(codeUnknownEmitter, pos[0], fmt.Errorf("%s, and the emitter to answer cannot be read from it: give --rut-emisor", rec.Glosa)))
	}
	if err != nil {
		return fail(newError(codeInvalidCert, "--cert "+cf.path, err))
	}
	answers = append(answers, answer{name("RecepcionEnvio"), ack})
	var nothing error
	var results []intercambio.ResultadoDTE
	if *aceptar || set["rechazar"] {
		decision := intercambio.Decision{Estado: intercambio.DTEAceptadoOK}
		if set["rechazar"] {
			decision = intercambio.Decision{Estado: intercambio.DTERechazado, Motivo: *rechazar}
		}
		o := opts
		o.IdRespuesta++
		res, rs, err := rec.Resultado(cert, o, intercambio.Todos(decision))
		switch {
		case errors.Is(err, intercambio.ErrNoDocuments):
			nothing = errors.New("no document of the envelope can be accepted or rejected")
		case err != nil && set["rechazar"]:
			return usageError(env, cmd, "--rechazar: %s", plainReason(err.Error()))
		case err != nil:
			return fail(newError(codeInvalidCert, "--cert "+cf.path, err))
		default:
			answers = append(answers, answer{name("ResultadoDTE"), res})
			results = rs
		}
	}
	var receipted []intercambio.DocRef
	if *recibo {
		res, refs, err := rec.Recibos(cert, opts, *recinto)
		switch {
		case errors.Is(err, intercambio.ErrNoDocuments):
			nothing = errors.New("no document of the envelope was received, so none can be receipted")
		case err != nil && strings.Contains(err.Error(), "Recinto"):
			return usageError(env, cmd, "--recinto: %s", plainReason(err.Error()))
		case err != nil:
			return fail(newError(codeInvalidCert, "--cert "+cf.path, err))
		default:
			answers = append(answers, answer{name("EnvioRecibos"), res})
			receipted = refs
		}
	}
	if !*force {
		for _, a := range answers {
			if _, err := os.Lstat(a.file); err == nil {
				return fail(newError(codeOutputExists, "", fmt.Errorf("%s already exists; give another --out or --cod-envio, or --force to replace it", a.file)))
			}
		}
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return fail(newError(codeOutputFailed, "--out", err))
	}
	printRecepcion(env.stdout, pos[0], rec, results, receipted)
	for _, a := range answers {
		if err := writeFileAtomic(a.file, a.data, *force); err != nil {
			if errors.Is(err, os.ErrExist) {
				return fail(newError(codeOutputExists, "", err))
			}
			return fail(newError(codeOutputFailed, "", err))
		}
		fmt.Fprintf(env.stdout, "wrote %s\n", a.file)
	}
	if nothing != nil {
		return fail(newError(codeNothingToAnswer, pos[0], nothing))
	}
	return exitOK
}

// readUpTo reads a file, or standard input for "-", stopping after limit
// bytes without error.
func readUpTo(ctx context.Context, env *cmdEnv, path string, limit int64) ([]byte, error) {
	r, name, err := openInput(ctx, env, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, limit))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}

// printRecepcion prints what was decided: the envelope, then a line per
// document with its reception, the commercial decision and the receipt.
func printRecepcion(w io.Writer, file string, r *intercambio.Recepcion, results []intercambio.ResultadoDTE, receipted []intercambio.DocRef) {
	from := r.RutEmisor
	if from == "" {
		from = "an unknown emitter"
	}
	fmt.Fprintf(w, "%s: envelope %q from %s, CodEnvio %d: %d %s\n", file, r.EnvioDTEID, from, r.CodEnvio, int(r.Estado), r.Glosa)
	for _, d := range r.Documentos {
		line := fmt.Sprintf("  tipo %d folio %d: %d %s", d.Tipo, d.Folio, int(d.Estado), d.Glosa)
		if !d.Respondible {
			line += " (not named in the answers: RespuestaDTE has no tipo " + d.Tipo.String() + ")"
		}
		for _, res := range results {
			if res.DocRef == d.DocRef {
				line += fmt.Sprintf("; EstadoDTE %d %s", int(res.Estado), res.Glosa)
			}
		}
		for _, ref := range receipted {
			if ref == d.DocRef {
				line += "; receipt of goods or services"
			}
		}
		fmt.Fprintln(w, line)
	}
}

const leerUsage = `usage: dtekit intercambio leer [--empresa-rut RUT] [--signer RECEPTOR=RUT]... [--valid-at-signing]
                          [--json] RESPUESTA.xml

Reads an answer a customer sent about our documents: a RespuestaDTE (acuse
de recibo or commercial result) or an EnvioRecibos (Ley 19.983 receipt).
Every signature is verified, and must cover the element the schema signs;
then each document the answer names is printed with what the customer says
of it: recibido, recibido_con_reparos (refused at reception, with the
reason), aceptado, aceptado_con_discrepancias, rechazado (with the reason)
or mercaderias_recibidas. With --empresa-rut the answer must be addressed to
that company and name only its documents. --json prints the whole answer as
JSON.

A signature proves the answer intact, not that its signer speaks for the
company answering (RutResponde): state who may with --signer RECEPTOR=RUT
(repeatable; any other signer, or a receptor without an entry, is refused)
and --valid-at-signing, as "dtekit verify" takes them. A receipt's RutFirma
must be the RUT of the certificate that signed it, whatever the policy.

The answers have no legal effect: the acceptance or claim that counts is the
one in the SII's registry (dtekit rcv).

Exit status 0 when the answer was read and its signatures verified; 1 on
FILE_UNREADABLE, INVALID_ANSWER (unreadable, or a signature that does not
verify), ANSWER_NOT_FOR_US or SIGNER_REFUSED (a signer the policy refuses);
2 on a wrong command line.
`

// runLeer implements "dtekit intercambio leer".
func runLeer(ctx context.Context, env *cmdEnv, args []string) int {
	const cmd = "intercambio leer"
	fs := newFlagSet(env, cmd)
	empresa := fs.String("empresa-rut", "", "our company's RUT: the answer must be addressed to it")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	var policy signerPolicy
	policy.define(fs, "RECEPTOR", false)
	pos, code, ok := parseFlags(env, fs, leerUsage, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageError(env, cmd, "want one RESPUESTA.xml argument, got %d", len(pos))
	}
	vo, err := policy.options()
	if err != nil {
		return usageError(env, cmd, "%v", err)
	}
	if *empresa != "" {
		if _, err := dte.ParseRUT(*empresa); err != nil {
			return usageError(env, cmd, "--empresa-rut: %s", plainReason(err.Error()))
		}
	}
	fail := func(e *cliError) int { return report(env, cmd, false, e) }
	data, err := readInput(ctx, env, pos[0], intercambio.MaxRespuestaBytes)
	if err != nil {
		return fail(newError(codeFileUnreadable, "", err))
	}
	res, err := intercambio.Read(data, intercambio.ReadOptions{Empresa: *empresa})
	switch {
	case errors.Is(err, intercambio.ErrNotForUs):
		return fail(newError(codeAnswerNotForUs, pos[0], err))
	case err != nil:
		return fail(newError(codeInvalidAnswer, pos[0], err))
	}
	if err := res.CheckSigners(vo); err != nil {
		return fail(newError(codeSignerRefused, pos[0], err))
	}
	if *asJSON {
		_ = totalsWriteJSON(env.stdout, res)
		return exitOK
	}
	id := ""
	if res.IdRespuesta != 0 {
		id = fmt.Sprintf(" (IdRespuesta %d)", res.IdRespuesta)
	}
	fmt.Fprintf(env.stdout, "%s: %s from %s to %s%s, signed by %s\n", pos[0], res.Kind, res.RutResponde, res.RutRecibe, id, res.Firmante)
	for _, e := range res.Envios {
		fmt.Fprintf(env.stdout, "  envelope %q, CodEnvio %d: %d %s\n", e.EnvioDTEID, e.CodEnvio, int(e.Estado), e.Glosa)
	}
	for _, d := range res.Documentos {
		line := fmt.Sprintf("  tipo %d folio %d of %s: %s", d.Tipo, d.Folio, d.RUTEmisor, d.Outcome)
		if d.Motivo != "" {
			line += ": " + d.Motivo
		}
		if d.Outcome == intercambio.MercaderiasRecibidas {
			line += fmt.Sprintf(" at %q, signed by %s on %s", d.Recinto, d.RutFirma, d.TmstFirmaRecibo)
		}
		fmt.Fprintln(env.stdout, line)
	}
	for _, a := range res.Avisos {
		fmt.Fprintf(env.stdout, "  warning: %s\n", a)
	}
	return exitOK
}
