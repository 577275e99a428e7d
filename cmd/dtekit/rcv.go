package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dtekit/dtekit/sii"
)

const rcvUsage = `usage: dtekit rcv COMMAND --emisor-rut RUT --tipo N --folio N --cert CERT.p12 [flags]

Registers a decision about a document your company received in the SII's
registry of acceptances and claims (Registro de Aceptación o Reclamo, RCV),
or asks the registry about one.

  dtekit rcv aceptar          accept the document's content (ACD)
  dtekit rcv reclamar --motivo contenido|falta-parcial|falta-total
                              claim against its content (RCD), or a partial
                              (RFP) or total (RFT) lack of the goods
  dtekit rcv recibo           give the receipt of goods or services of
                              Ley 19.983 (ERM)
  dtekit rcv eventos          list the document's events
  dtekit rcv fecha-recepcion  when the SII received it (the 8 days run from then)
  dtekit rcv cedible          whether it may be assigned (factoring)

--emisor-rut, --tipo (33, 34 or 43) and --folio name the document as its
issuer numbered it. The certificate's holder must act for the receptor at
the SII. Only the receptor registers decisions, within 8 days of the SII's
reception; the first decision stands (a claim after an acceptance or a
receipt is refused, and so is an acceptance or a receipt after a claim).

The SII is the one of --env (certificacion: ws2.sii.cl, with a token from
palena.sii.cl; produccion: ws1.sii.cl), or the test server of --url, whose
default is $DTEKIT_SII_URL (for example "dtekit sii fake").

The answer is printed as JSON: the SII's codResp and descResp, the code's
meaning and outcome, the events or the date. Exit status: 0 when the
decision is on record (codResp 0, or 7 when it was already) or the query was
answered; also for aceptar and recibo when nothing is left to register (8:
the 8 days have passed, and the document counts as accepted and its goods
as received; 27: paid in cash or free, the registry takes no events); 1
when the SII refused, with a line naming its code, or could not be reached;
2 for a wrong command line.
`

// CLI error codes of the rcv commands.
const (
	codeRCVRefused     = "RCV_REFUSED"     // the registry answered, but not what was asked
	codeSIIUnavailable = "SII_UNAVAILABLE" // no answer from the SII, or its internal error: try again later
	codeSIIAuth        = "SII_AUTH_FAILED" // the SII refused the certificate's authentication
)

// rcvActions maps the decision commands to the registry's actions.
var rcvActions = map[string]sii.RCVAction{"aceptar": sii.RCVAccept, "recibo": sii.RCVReceipt}

// rcvMotivos maps reclamar's --motivo to the claims (the codes are
// accepted as well).
var rcvMotivos = map[string]sii.RCVAction{
	"contenido": sii.RCVClaimContent, "falta-parcial": sii.RCVClaimPartial, "falta-total": sii.RCVClaimTotal,
	"RCD": sii.RCVClaimContent, "RFP": sii.RCVClaimPartial, "RFT": sii.RCVClaimTotal,
}

// runRCV implements "dtekit rcv".
func runRCV(ctx context.Context, env *cmdEnv, args []string) int {
	subs := map[string]subcommand{}
	for _, name := range []string{"aceptar", "reclamar", "recibo", "eventos", "fecha-recepcion", "cedible"} {
		subs[name] = func(ctx context.Context, env *cmdEnv, args []string) int { return rcvCommand(ctx, env, name, args) }
	}
	return runGroup(ctx, env, "rcv", rcvUsage, args, subs)
}

// rcvCommand runs one rcv command.
func rcvCommand(ctx context.Context, env *cmdEnv, name string, args []string) int {
	cmd := "rcv " + name
	fs := newFlagSet(env, cmd)
	var conn siiConn
	defURL := ""
	if env.getenv != nil {
		defURL = env.getenv(siiURLEnv)
	}
	conn.define(fs, defURL)
	emisor := fs.String("emisor-rut", "", "the document's issuer (RUT with check digit)")
	tipo := fs.Int("tipo", 0, "the document's type: 33, 34 or 43")
	folio := fs.Int64("folio", 0, "the document's folio")
	motivo := ""
	if name == "reclamar" {
		fs.StringVar(&motivo, "motivo", "", "the claim: contenido (RCD), falta-parcial (RFP) or falta-total (RFT)")
	}
	required := []string{"emisor-rut", "tipo", "folio", "cert"}
	if name == "reclamar" {
		required = append(required, "motivo")
	}
	pos, code, ok := parseFlags(env, fs, rcvUsage, args, required...)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		return usageError(env, cmd, "unexpected arguments %q", pos)
	}
	action, decides := rcvActions[name]
	if name == "reclamar" {
		if action, decides = rcvMotivos[motivo], true; action == "" {
			return usageError(env, cmd, "--motivo %q is not contenido, falta-parcial or falta-total", motivo)
		}
	}
	doc := sii.RCVDocument{RutEmisor: *emisor, Tipo: *tipo, Folio: *folio}
	client, code, ok := conn.openClient(env, fs, cmd)
	if !ok {
		return code
	}
	docName := fmt.Sprintf("--emisor-rut %s --tipo %d --folio %d", doc.RutEmisor, doc.Tipo, doc.Folio)
	failed := func(err error) int {
		code := codeSIIUnavailable
		var ae *sii.AuthError
		switch {
		case errors.As(err, &ae):
			code = codeSIIAuth
		case !sii.IsRetryable(err):
			// The client refused the document before sending it.
			return usageError(env, cmd, "%s", plainReason(err.Error()))
		}
		return report(env, cmd, false, newError(code, docName, err))
	}
	switch name {
	case "fecha-recepcion":
		r, err := client.RCVReceptionDate(ctx, doc)
		if err != nil {
			return failed(err)
		}
		out := map[string]any{"operacion": "consultarFechaRecepcionSii", "recibido": r.Received, "fecha_recepcion_sii": r.Text}
		if r.Received {
			out["fecha_recepcion"] = r.At
			out["plazo_hasta"] = r.WindowEnds()
		}
		if c := siiPrint(env, out); c != exitOK || r.Received {
			return c
		}
		return report(env, cmd, false, newError(codeRCVRefused, docName,
			errors.New("the SII gives no reception date: it has not received this document, or it is not addressed to your company")))
	case "eventos":
		h, err := client.RCVEvents(ctx, doc)
		if err != nil {
			return failed(err)
		}
		events := []map[string]any{}
		for _, e := range h.Events {
			ev := map[string]any{"cod_evento": e.Action, "desc_evento": e.Desc, "rut_responsable": e.RutResponsable, "fecha_evento_sii": e.AtText}
			if !e.At.IsZero() {
				ev["fecha_evento"] = e.At
			}
			events = append(events, ev)
		}
		out := rcvAnswerJSON("listarEventosHistDoc", "", &h.RCVAnswer)
		out["eventos"] = events
		return rcvFinish(env, cmd, docName, out, &h.RCVAnswer, h.Outcome == sii.RCVEventsListed || h.Outcome == sii.RCVNoEvents)
	case "cedible":
		a, err := client.RCVCedible(ctx, doc)
		if err != nil {
			return failed(err)
		}
		out := rcvAnswerJSON("consultarDocDteCedible", "", a)
		out["cedible"] = a.Outcome == sii.RCVCedible
		return rcvFinish(env, cmd, docName, out, a, a.Outcome == sii.RCVCedible || a.Outcome == sii.RCVNotCedible)
	}
	if !decides {
		return exitUsage
	}
	a, err := client.RegisterRCV(ctx, doc, action)
	if err != nil {
		return failed(err)
	}
	done := a.Outcome == sii.RCVRecorded || a.Outcome == sii.RCVAlreadyRecorded
	if action == sii.RCVAccept || action == sii.RCVReceipt {
		// Past the window the law counts the document as accepted and its
		// goods as received; a cash or free sale takes no events: nothing
		// is left to do for an acceptance or a receipt.
		done = done || a.Outcome == sii.RCVWindowClosed || a.Outcome == sii.RCVNotApplicable
	}
	return rcvFinish(env, cmd, docName, rcvAnswerJSON("ingresarAceptacionReclamoDoc", action, a), a, done)
}

// rcvAnswerJSON is the printed form of an answer.
func rcvAnswerJSON(op string, action sii.RCVAction, a *sii.RCVAnswer) map[string]any {
	out := map[string]any{"operacion": op, "cod_resp": a.Code, "desc_resp": a.Desc, "significado": a.Meaning(), "resultado": a.Outcome}
	if action != "" {
		out["accion"] = action
	}
	return out
}

// rcvFinish prints an answer and, unless ok, the line that names the
// SII's refusal; it returns the exit status.
func rcvFinish(env *cmdEnv, cmd, docName string, out map[string]any, a *sii.RCVAnswer, ok bool) int {
	if c := siiPrint(env, out); c != exitOK || ok {
		return c
	}
	code := codeRCVRefused
	if a.Outcome.Retryable() {
		code = codeSIIUnavailable
	}
	text := a.Desc
	if text == "" {
		text = a.Meaning()
	}
	text = strings.TrimSpace(text)
	return report(env, cmd, false, newError(code, docName, fmt.Errorf("the SII answered codResp %d (%s): %s", a.Code, a.Outcome, text)))
}
