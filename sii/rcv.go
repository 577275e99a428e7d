package sii

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// The registry of acceptances and claims (Registro de Aceptación o Reclamo
// de un DTE, "RCV" for short here), web service registroreclamodteservice.
//
// What comes from the SII's manual (Web Service de Consulta y Registro de
// Aceptación/Reclamo a DTE recibido, v1.2, 2017): the four operations and
// their parts (rutEmisor, dvEmisor, tipoDoc, folio, accionDoc), the five
// actions, the codResp values and their texts, the hosts, and the rules of
// who may register what and when. What comes from third-party clients
// (devlas-cl/dte-sii, LibreDTE, Odoo), because the WSDL itself was not at
// hand: the namespace RCVNamespace with unqualified parts, the answer
// wrapped in <opResponse><return> holding codResp, descResp and repeated
// listaEventosDoc, consultarFechaRecepcionSii's bare string return, the
// token as the TOKEN cookie only, the production token the certification
// host requires (Endpoints.RCVAuth), the undocumented codResp 27, and the
// DD-MM-YYYY HH:MM:SS dates.

// RCVNamespace is the namespace of the registry's operation elements
// (taken from third-party clients that read the WSDL).
const RCVNamespace = "http://ws.registroreclamodte.diii.sdi.sii.cl"

// RCVDateLayout is how the registry writes dates (event dates, the
// reception date): DD-MM-YYYY HH:MM:SS, in Chile's time (time.Format
// layout). The registry of credit transfers writes RECEPCIONAEC's
// TIMESTAMP the same way.
const RCVDateLayout = "02-01-2006 15:04:05"

// Bounds on the registry's answers: they come from the network and are
// read as hostile input.
const (
	// MaxRCVEvents bounds the events of one listarEventosHistDoc answer.
	MaxRCVEvents = 1000
	// maxRCVText bounds each text field of an answer, in bytes.
	maxRCVText = 1024
)

// RCVAction is an event of the registry: one of the five a receptor
// registers (ACD, RCD, ERM, RFP, RFT), or one the SII records itself and
// lists in a document's history (NCA, ENC).
type RCVAction string

// The registry's events.
const (
	// RCVAccept (ACD) accepts the document's content.
	RCVAccept RCVAction = "ACD"
	// RCVClaimContent (RCD) claims against the document's content.
	RCVClaimContent RCVAction = "RCD"
	// RCVReceipt (ERM) gives the receipt of goods or services of Ley
	// 19.983.
	RCVReceipt RCVAction = "ERM"
	// RCVClaimPartial (RFP) claims a partial lack of the goods.
	RCVClaimPartial RCVAction = "RFP"
	// RCVClaimTotal (RFT) claims a total lack of the goods.
	RCVClaimTotal RCVAction = "RFT"
	// RCVCreditNoteAnnuls (NCA) is listed when the SII received a credit
	// note that annuls the document; it cannot be registered.
	RCVCreditNoteAnnuls RCVAction = "NCA"
	// RCVCreditNote (ENC) is listed when the SII received another credit
	// note referring to the document; it cannot be registered.
	RCVCreditNote RCVAction = "ENC"
)

// rcvActionText is each event's description. The five actions' texts are
// the manual's; the SII's texts for NCA and ENC are not known here, and
// these two are our own wording.
var rcvActionText = map[RCVAction]string{
	RCVAccept:           "Acepta Contenido del Documento",
	RCVClaimContent:     "Reclamo al Contenido",
	RCVReceipt:          "Otorga Recibo de Mercaderías o Servicios",
	RCVClaimPartial:     "Reclamo por Falta Parcial",
	RCVClaimTotal:       "Reclamo por Falta Total",
	RCVCreditNoteAnnuls: "Recepción de NC de anulación que referencia al documento",
	RCVCreditNote:       "Recepción de NC que referencia al documento",
}

// Registrable reports whether a receptor may register a: ACD, RCD, ERM,
// RFP or RFT.
func (a RCVAction) Registrable() bool {
	switch a {
	case RCVAccept, RCVClaimContent, RCVReceipt, RCVClaimPartial, RCVClaimTotal:
		return true
	}
	return false
}

// Claim reports whether a is a claim: RCD, RFP or RFT.
func (a RCVAction) Claim() bool {
	return a == RCVClaimContent || a == RCVClaimPartial || a == RCVClaimTotal
}

// Description is the event's text ("" for a code this package does not
// know).
func (a RCVAction) Description() string { return rcvActionText[a] }

// RCVDocument identifies a document in the registry: its issuer, type and
// folio (the receptor is the caller's company).
type RCVDocument struct {
	// RutEmisor is the issuer's RUT ("76192083-9").
	RutEmisor string
	// Tipo is the document type; the registry covers 33, 34 and 43.
	Tipo int
	// Folio is the document's folio.
	Folio int64
}

// params checks d and returns the four parts every operation takes.
func (d RCVDocument) params(op string) ([]soapParam, error) {
	rut, err := dte.ParseRUT(d.RutEmisor)
	if err != nil {
		return nil, fmt.Errorf("sii: %s: RutEmisor: %w", op, err)
	}
	if d.Tipo <= 0 {
		return nil, fmt.Errorf("sii: %s: Tipo %d is not a document type", op, d.Tipo)
	}
	if d.Folio <= 0 {
		return nil, fmt.Errorf("sii: %s: Folio %d is not a folio (it must be 1 or more)", op, d.Folio)
	}
	return []soapParam{{"rutEmisor", strconv.Itoa(rut.Number)}, {"dvEmisor", strings.ToUpper(string(rut.DV))},
		{"tipoDoc", strconv.Itoa(d.Tipo)}, {"folio", strconv.FormatInt(d.Folio, 10)}}, nil
}

// RCVAnswer is the registry's answer to an action or a query: its
// codResp, descResp and their typed reading.
type RCVAnswer struct {
	// Code is codResp.
	Code int
	// Desc is descResp, as the SII wrote it.
	Desc string
	// Outcome is the code's typed reading (LookupRCVCode).
	Outcome RCVOutcome
	// Raw is the SOAP answer as received.
	Raw []byte
}

// Meaning returns the table's text for the answer's code ("" for a code
// outside the table).
func (a *RCVAnswer) Meaning() string {
	c, _ := LookupRCVCode(a.Code)
	return c.Meaning
}

// RCVEvent is one event of a document's history.
type RCVEvent struct {
	// Action is codEvento (ACD, RCD, ERM, RFP, RFT, NCA, ENC, or a code
	// this package does not know).
	Action RCVAction
	// Desc is descEvento.
	Desc string
	// RutResponsable is who registered it ("12345678-5"), from
	// rutResponsable and dvResponsable.
	RutResponsable string
	// At is fechaEvento in Chile's time; zero when the SII wrote something
	// that is not a DD-MM-YYYY HH:MM:SS date.
	At time.Time
	// AtText is fechaEvento as written.
	AtText string
}

// RCVHistory is listarEventosHistDoc's answer.
type RCVHistory struct {
	RCVAnswer
	// Events are the document's events in the order listed.
	Events []RCVEvent
}

// RCVReception is consultarFechaRecepcionSii's answer: when the SII
// received the document, the start of the 8-day window.
type RCVReception struct {
	// Received is false when the SII answered no date: it does not have
	// the document, or the caller may not ask about it.
	Received bool
	// At is the reception instant, in Chile's time.
	At time.Time
	// Text is the answer as written (DD-MM-YYYY HH:MM:SS).
	Text string
	// Raw is the SOAP answer as received.
	Raw []byte
}

// WindowEnds returns when the 8 calendar days to accept or claim the
// document end (8×24 hours after reception).
func (r *RCVReception) WindowEnds() time.Time { return r.At.Add(RCVWindow) }

// RCVWindow is how long after the SII's reception a receptor may register
// events (Ley 19.983 art. 3 as amended by Ley 20.956: 8 calendar days).
const RCVWindow = 8 * 24 * time.Hour

// RegisterRCV registers action (ACD, RCD, ERM, RFP or RFT) on doc in the
// registry (ingresarAceptacionReclamoDoc), as the receptor. The answer's
// Outcome says what happened; an error means no answer. Transport errors
// are retried per Config.Retries, which is safe: a repeat of an event
// that did land answers codResp 7 (RCVAlreadyRecorded).
func (c *Client) RegisterRCV(ctx context.Context, doc RCVDocument, action RCVAction) (*RCVAnswer, error) {
	const op = "ingresarAceptacionReclamoDoc"
	if !action.Registrable() {
		return nil, fmt.Errorf("sii: %s: accionDoc %q is not one of ACD, RCD, ERM, RFP, RFT", op, action)
	}
	a, _, err := c.askRCV(ctx, op, doc, soapParam{"accionDoc", string(action)})
	return a, err
}

// RCVEvents lists doc's events (listarEventosHistDoc): codResp 15 with the
// events, 16 when there are none, or another code that says why not.
// Transport errors are retried per Config.Retries.
func (c *Client) RCVEvents(ctx context.Context, doc RCVDocument) (*RCVHistory, error) {
	a, events, err := c.askRCV(ctx, "listarEventosHistDoc", doc)
	if err != nil {
		return nil, err
	}
	return &RCVHistory{RCVAnswer: *a, Events: events}, nil
}

// RCVCedible asks whether doc may be assigned (consultarDocDteCedible):
// Outcome RCVCedible (23, 25) or RCVNotCedible (20, 21, 22, 24), or
// another code that says why the SII did not tell. Transport errors are
// retried per Config.Retries.
func (c *Client) RCVCedible(ctx context.Context, doc RCVDocument) (*RCVAnswer, error) {
	a, _, err := c.askRCV(ctx, "consultarDocDteCedible", doc)
	return a, err
}

// askRCV calls an operation that answers a codResp about doc, with extra
// parts after the document's, and reads the answer.
func (c *Client) askRCV(ctx context.Context, op string, doc RCVDocument, extra ...soapParam) (*RCVAnswer, []RCVEvent, error) {
	params, err := doc.params(op)
	if err != nil {
		return nil, nil, err
	}
	ret, raw, err := c.callRCV(ctx, op, append(params, extra...)...)
	if err != nil {
		return nil, nil, err
	}
	a, events, err := readRCVReturn(op, ret)
	if err != nil {
		return nil, nil, c.rcvMalformed(op, err)
	}
	a.Raw = raw
	return a, events, nil
}

// RCVReceptionDate asks when the SII received doc
// (consultarFechaRecepcionSii); the 8-day window runs from that instant,
// not from the document's date. An empty answer is Received false.
// Transport errors are retried per Config.Retries.
func (c *Client) RCVReceptionDate(ctx context.Context, doc RCVDocument) (*RCVReception, error) {
	const op = "consultarFechaRecepcionSii"
	params, err := doc.params(op)
	if err != nil {
		return nil, err
	}
	ret, raw, err := c.callRCV(ctx, op, params...)
	if err != nil {
		return nil, err
	}
	r, err := readRCVReception(ret)
	if err != nil {
		return nil, c.rcvMalformed(op, err)
	}
	r.Raw = raw
	return r, nil
}

// rcvURL is the registry's address for the client's environment.
func (c *Client) rcvURL() string {
	if c.cfg.Environment == Produccion {
		return c.ep.RCV + PathRCV
	}
	return c.ep.RCV + PathRCVCert
}

// rcvMalformed reports an answer that is SOAP but not the registry's.
func (c *Client) rcvMalformed(op string, err error) error {
	return &TransportError{Op: op, URL: c.rcvURL(), Kind: KindMalformed, Detail: err.Error()}
}

// callRCV posts one registry operation with the RCV token as the cookie
// and returns the answer's <return> element and the raw body. Transport
// errors are retried; a fault saying the token is invalid gets a new
// token and one more call.
func (c *Client) callRCV(ctx context.Context, op string, params ...soapParam) (*xmlflat.Node, []byte, error) {
	url := c.rcvURL()
	body := soapEnvelope(rcvLiteral, op, params...)
	var ret *xmlflat.Node
	var raw []byte
	err := c.withToken(ctx, rcvToken, func(token string) (bool, error) {
		var err error
		raw, err = retry(ctx, c, func() ([]byte, error) {
			res, err := c.postSOAP(ctx, url, op, body, token)
			if err != nil {
				return nil, err
			}
			ret, err = parseRCVReturn(op, res.status, res.header, res.body)
			if te, ok := err.(*TransportError); ok {
				te.URL = url
			}
			return res.body, err
		})
		return isTokenFault(err), err
	})
	if err != nil {
		return nil, nil, err
	}
	return ret, raw, nil
}

// parseRCVReturn reads a registry answer and returns its <return> element
// (the child of <opResponse>; prefixes are ignored). Every failure is a
// *TransportError: no body, HTML, "Error 500", a SOAP fault, no return,
// or an HTTP status other than 200.
func parseRCVReturn(op string, status int, header http.Header, body []byte) (*xmlflat.Node, error) {
	bodyEl, err := soapBody(op, status, header, body)
	if err != nil {
		return nil, err
	}
	var ret *xmlflat.Node
	for _, k := range bodyEl.Kids {
		if k.Name == op+"Response" {
			for _, r := range k.Kids {
				if r.Name == "return" {
					ret = r
					break
				}
			}
		}
	}
	if ret == nil {
		return nil, &TransportError{Op: op, Kind: KindMalformed, StatusCode: status, Detail: fmt.Sprintf("SOAP Body without <%sResponse><return>", op)}
	}
	if status != http.StatusOK {
		return nil, &TransportError{Op: op, Kind: KindHTTP, StatusCode: status, Detail: "a SOAP answer with an error status"}
	}
	return ret, nil
}

// readRCVReturn reads codResp, descResp and the listaEventosDoc elements
// of a <return>. A missing or non-numeric codResp, an over-long text or
// more than MaxRCVEvents events is an error.
func readRCVReturn(op string, ret *xmlflat.Node) (*RCVAnswer, []RCVEvent, error) {
	text := func(n *xmlflat.Node, name string) (string, error) {
		var v string
		for _, k := range n.Kids {
			if k.Name == name {
				v = strings.TrimSpace(k.Text)
				break
			}
		}
		if len(v) > maxRCVText {
			return "", fmt.Errorf("%s: <%s> is longer than %d bytes", op, name, maxRCVText)
		}
		return v, nil
	}
	codeText, err := text(ret, "codResp")
	if err != nil {
		return nil, nil, err
	}
	code, err := strconv.Atoi(codeText)
	if err != nil || code < -999 || code > 999 {
		return nil, nil, fmt.Errorf("%s: codResp %q is not a response code", op, snippet([]byte(codeText)))
	}
	desc, err := text(ret, "descResp")
	if err != nil {
		return nil, nil, err
	}
	entry, _ := LookupRCVCode(code)
	a := &RCVAnswer{Code: code, Desc: desc, Outcome: entry.Outcome}
	items := ret.Children("listaEventosDoc")
	if len(items) > MaxRCVEvents {
		return nil, nil, fmt.Errorf("%s: %d events, more than %d", op, len(items), MaxRCVEvents)
	}
	var events []RCVEvent
	for _, it := range items {
		var f [5]string
		for i, name := range []string{"codEvento", "descEvento", "rutResponsable", "dvResponsable", "fechaEvento"} {
			if f[i], err = text(it, name); err != nil {
				return nil, nil, err
			}
		}
		ev := RCVEvent{Action: RCVAction(strings.ToUpper(f[0])), Desc: f[1], AtText: f[4]}
		if f[2] != "" {
			ev.RutResponsable = f[2] + "-" + strings.ToUpper(f[3])
		}
		if t, err := time.ParseInLocation(RCVDateLayout, f[4], chile.Location()); err == nil {
			ev.At = t
		}
		events = append(events, ev)
	}
	return a, events, nil
}

// readRCVReception reads consultarFechaRecepcionSii's bare string: empty
// (the SII has no date for the caller), or DD-MM-YYYY HH:MM:SS.
func readRCVReception(ret *xmlflat.Node) (*RCVReception, error) {
	if len(ret.Kids) > 0 {
		return nil, fmt.Errorf("consultarFechaRecepcionSii: <return> holds elements, not a date")
	}
	s := strings.TrimSpace(ret.Text)
	if s == "" {
		return &RCVReception{}, nil
	}
	t, err := time.ParseInLocation(RCVDateLayout, s, chile.Location())
	if err != nil {
		return nil, fmt.Errorf("consultarFechaRecepcionSii: %q is not a DD-MM-YYYY HH:MM:SS date", snippet([]byte(s)))
	}
	return &RCVReception{Received: true, At: t, Text: s}, nil
}
