package siitest

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/sii"
)

// The registry of acceptances and claims (registroreclamodteservice),
// served on sii.PathRCV and sii.PathRCVCert of the classic listener.
//
// It knows a document when one was seeded (SeedRCV) or when the fake
// received it in an EnvioDTE whose review accepted it (the envelope has
// reached EPR and the document was not rejected); its reception instant
// is then the envelope's upload. It answers only to a valid SOAP token
// sent as the TOKEN cookie (otherwise the SOAP fault "Error de
// Autenticacion: TOKEN invalido"), and checks, in this order:
//   - rutEmisor digits ≥ 1000 with its check digit in dvEmisor (an
//     upper-case K), else 1; tipoDoc 33, 34 or 43, else 3 (20 for
//     consultarDocDteCedible); folio a positive number, else 2;
//     accionDoc ACD, RCD, ERM, RFP or RFT, else 4;
//   - the document known, else 18; received from 2017-01-14 on, else 10;
//   - the caller's company (a company the token's certificate holder was
//     Registered for) the document's receptor for an action, else 17, or
//     its receptor or issuer for a query, else 14;
//   - for an action: FmaPago contado (1) or sin costo (3) gives 27 (the
//     code LibreDTE reports; the SII's manual is silent); more than 8×24
//     hours since reception gives 8; then the manual's state machine
//     (sii-wave3-notes.md §2.3): a claim on record refuses ACD (12) and
//     ERM (6), ACD or ERM on record refuses a claim (11, 13: the earlier
//     of the two decides), the same event again is 7, anything else is
//     recorded (0) and enters the history.
//
// listarEventosHistDoc answers 15 with every event on record, oldest
// first (those registered through the fake, those seeded, and an NCA or
// ENC for each accepted credit note of the issuer that refers to the
// document, CodRef 1 being NCA), or 16 when there are none.
// consultarDocDteCedible answers 21 for an NCA within the 8 days, 24 for
// a claim, 23 for a receipt (ERM), 25 once the 8 days have passed, and 22
// otherwise. consultarFechaRecepcionSii answers the reception instant as
// DD-MM-YYYY HH:MM:SS in Chile's time, or an empty string for a document
// it does not know or the caller may not see. Codes 5, 9 and 19 are never
// answered: the manual gives no rule that produces them. Fault injection
// works as for the other services (FaultEstado answers the codResp in
// Code). The fake does not reproduce the certification host's demand for
// a production token: it has one token namespace.

// The registry's operations, as endpoints for fault injection and
// request recording.
const (
	RCVRegister  Endpoint = "ingresarAceptacionReclamoDoc"
	RCVEvents    Endpoint = "listarEventosHistDoc"
	RCVCedible   Endpoint = "consultarDocDteCedible"
	RCVReception Endpoint = "consultarFechaRecepcionSii"
)

// rcvStart is the first day the registry covers (documents emitted and
// received from then on; codResp 10 before).
var rcvStart = time.Date(2017, 1, 14, 0, 0, 0, 0, chile.Location())

// RCVSeed is a document the registry knows without an upload.
type RCVSeed struct {
	// RutEmisor and RutReceptor are the issuer and the receptor.
	RutEmisor, RutReceptor string
	// Tipo and Folio identify the document.
	Tipo  int
	Folio int64
	// Received is the SII's reception instant (zero: the fake's clock
	// when seeded).
	Received time.Time
	// FmaPago is the document's payment form (1 contado, 2 crédito, 3 sin
	// costo; 0 when it has none).
	FmaPago int
	// Events are events already on record, oldest first (an NCA, or
	// decisions taken before the test starts).
	Events []sii.RCVEvent
}

// SeedRCV makes the registry know a document (replacing an earlier seed
// of the same issuer, type and folio, and forgetting the events
// registered on it).
func (f *Fake) SeedRCV(s RCVSeed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.RutEmisor, s.RutReceptor = strings.ToUpper(s.RutEmisor), strings.ToUpper(s.RutReceptor)
	if s.Received.IsZero() {
		s.Received = f.now()
	}
	events := make([]sii.RCVEvent, len(s.Events))
	for i, e := range s.Events {
		events[i] = rcvEvent(e.Action, e.RutResponsable, e.At)
	}
	s.Events = events
	k := docKey(s.RutEmisor, s.Tipo, s.Folio)
	f.rcvSeeds[k] = &s
	delete(f.rcvEvents, k)
}

// RCVHistory returns the events listarEventosHistDoc would list for a
// document, oldest first (nil for a document the registry does not know).
func (f *Fake) RCVHistory(rutEmisor string, tipo int, folio int64) []sii.RCVEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.rcvFind(strings.ToUpper(rutEmisor), tipo, folio)
	if d == nil {
		return nil
	}
	return f.rcvHistory(d)
}

// rcvDoc is a document as the registry sees it.
type rcvDoc struct {
	key              string
	emisor, receptor string
	tipo             int
	folio            int64
	received         time.Time
	fmaPago          int
	seeded           []sii.RCVEvent
}

// rcvFind looks a document up: seeded, or received in an envelope whose
// review accepted it. Call with f.mu held.
func (f *Fake) rcvFind(emisor string, tipo int, folio int64) *rcvDoc {
	k := docKey(emisor, tipo, folio)
	if s := f.rcvSeeds[k]; s != nil {
		return &rcvDoc{key: k, emisor: s.RutEmisor, receptor: s.RutReceptor, tipo: s.Tipo, folio: s.Folio,
			received: s.Received, fmaPago: s.FmaPago, seeded: s.Events}
	}
	for _, e := range f.envelopes {
		if e.Boleta || e.Final != "EPR" || f.state(e, false) != "EPR" {
			continue
		}
		for _, d := range e.Docs {
			if d.RutEmisor == emisor && d.Tipo == tipo && d.Folio == folio && d.Result != Rejected {
				return &rcvDoc{key: k, emisor: emisor, receptor: d.Receptor, tipo: tipo, folio: folio,
					received: e.Received, fmaPago: d.fmaPago}
			}
		}
	}
	return nil
}

// rcvHistory returns a document's events, oldest first: seeded, derived
// from the credit notes the fake accepted, and registered. Call with f.mu
// held.
func (f *Fake) rcvHistory(d *rcvDoc) []sii.RCVEvent {
	events := slices.Clone(d.seeded)
	for _, e := range f.envelopes {
		if e.Boleta || e.Final != "EPR" || f.state(e, false) != "EPR" {
			continue
		}
		for _, n := range e.Docs {
			if n.Tipo != 61 || n.RutEmisor != d.emisor || n.Result == Rejected {
				continue
			}
			for _, ref := range n.refs {
				if int(ref.TipoDocRef.Tipo) != d.tipo || ref.FolioRef != d.folio {
					continue
				}
				a := sii.RCVCreditNote
				if ref.CodigoRef != nil && *ref.CodigoRef == 1 {
					a = sii.RCVCreditNoteAnnuls
				}
				events = append(events, rcvEvent(a, e.Sender, e.Received))
				break
			}
		}
	}
	events = append(events, f.rcvEvents[d.key]...)
	slices.SortStableFunc(events, func(a, b sii.RCVEvent) int { return a.At.Compare(b.At) })
	return events
}

// rcvEvent builds an event as the registry lists it.
func rcvEvent(a sii.RCVAction, rut string, at time.Time) sii.RCVEvent {
	at = at.In(chile.Location()).Truncate(time.Second)
	return sii.RCVEvent{Action: a, Desc: a.Description(), RutResponsable: strings.ToUpper(rut), At: at,
		AtText: at.Format(sii.RCVDateLayout)}
}

// rcvCaller reports whether the holder of the token's certificate acts
// for one of companies. Call with f.mu held.
func (f *Fake) rcvCaller(signer string, companies ...string) bool {
	if f.opts.AnySigner {
		return true
	}
	for _, c := range companies {
		if f.signers[signer][c] {
			return true
		}
	}
	return false
}

// rcvQuery is a parsed request: the document and the action.
type rcvQuery struct {
	emisor string
	tipo   int
	folio  int64
	accion sii.RCVAction
}

// parseRCVQuery checks the parts every operation takes, returning the
// codResp that refuses them (0 when they pass). cedible answers 20 rather
// than 3 for a type outside the registry.
func parseRCVQuery(call soapCall, register, cedible bool) (rcvQuery, int) {
	var q rcvQuery
	body, dv := strings.TrimSpace(call["rutEmisor"]), strings.TrimSpace(call["dvEmisor"])
	n, err := strconv.Atoi(body)
	if err != nil || n < 1000 || strings.TrimLeft(body, "0123456789") != "" || len(dv) != 1 || dv[0] != chile.CheckDigit(n) {
		return q, 1
	}
	q.emisor = chile.FormatRUT(n, dv[0])
	q.tipo, err = strconv.Atoi(strings.TrimSpace(call["tipoDoc"]))
	if err != nil || (q.tipo != 33 && q.tipo != 34 && q.tipo != 43) {
		if cedible {
			return q, 20
		}
		return q, 3
	}
	folio := strings.TrimSpace(call["folio"])
	q.folio, err = strconv.ParseInt(folio, 10, 64)
	if err != nil || q.folio <= 0 || strings.TrimLeft(folio, "0123456789") != "" {
		return q, 2
	}
	if register {
		q.accion = sii.RCVAction(strings.TrimSpace(call["accionDoc"]))
		if !q.accion.Registrable() {
			return q, 4
		}
	}
	return q, 0
}

// rcvRegister decides an ingresarAceptacionReclamoDoc and records the
// event when it is accepted. It returns the codResp and the event that
// "XXX" stands for in the code's text. Call with f.mu held.
func (f *Fake) rcvRegister(q rcvQuery, signer string) (int, sii.RCVAction) {
	d := f.rcvFind(q.emisor, q.tipo, q.folio)
	switch {
	case d == nil:
		return 18, ""
	case d.received.Before(rcvStart):
		return 10, ""
	case !f.rcvCaller(signer, d.receptor):
		return 17, ""
	case d.fmaPago == 1 || d.fmaPago == 3:
		return 27, ""
	case f.now().Sub(d.received) > sii.RCVWindow:
		return 8, ""
	}
	var claim, decision sii.RCVAction // the first claim, the first ACD or ERM
	have := map[sii.RCVAction]bool{}
	for _, e := range f.rcvHistory(d) {
		have[e.Action] = true
		if e.Action.Claim() && claim == "" {
			claim = e.Action
		}
		if (e.Action == sii.RCVAccept || e.Action == sii.RCVReceipt) && decision == "" {
			decision = e.Action
		}
	}
	switch {
	case q.accion == sii.RCVAccept && claim != "":
		return 12, claim
	case q.accion == sii.RCVReceipt && claim != "":
		return 6, claim
	case q.accion.Claim() && decision == sii.RCVAccept:
		return 11, ""
	case q.accion.Claim() && decision == sii.RCVReceipt:
		return 13, ""
	case have[q.accion]:
		return 7, ""
	}
	ev := rcvEvent(q.accion, signer, f.now())
	f.rcvEvents[d.key] = append(f.rcvEvents[d.key], ev)
	f.journalEvent(d.key, ev)
	return 0, ""
}

// rcvSeen finds a document for a query by its issuer or receptor,
// returning the codResp that refuses it (0 when it may be answered).
// Call with f.mu held.
func (f *Fake) rcvSeen(q rcvQuery, signer string) (*rcvDoc, int) {
	d := f.rcvFind(q.emisor, q.tipo, q.folio)
	switch {
	case d == nil:
		return nil, 18
	case d.received.Before(rcvStart):
		return nil, 10
	case !f.rcvCaller(signer, d.receptor, d.emisor):
		return nil, 14
	}
	return d, 0
}

// rcvCedibleCode decides consultarDocDteCedible for a document the
// caller may see. Call with f.mu held.
func (f *Fake) rcvCedibleCode(d *rcvDoc) int {
	events := f.rcvHistory(d)
	has := func(ok func(sii.RCVEvent) bool) bool { return slices.ContainsFunc(events, ok) }
	switch {
	case has(func(e sii.RCVEvent) bool {
		return e.Action == sii.RCVCreditNoteAnnuls && e.At.Sub(d.received) <= sii.RCVWindow
	}):
		return 21
	case has(func(e sii.RCVEvent) bool { return e.Action.Claim() }):
		return 24
	case has(func(e sii.RCVEvent) bool { return e.Action == sii.RCVReceipt }):
		return 23
	case f.now().Sub(d.received) > sii.RCVWindow:
		return 25
	}
	return 22
}

// rcvOperation returns the local name of the SOAP Body's first element,
// or "" when the request is not a SOAP call.
func rcvOperation(data []byte) string {
	root, err := xmlflat.ParseDocument(data)
	if err != nil || root.Name != "Envelope" {
		return ""
	}
	for _, b := range root.Kids {
		if b.Name == "Body" && len(b.Kids) > 0 {
			return b.Kids[0].Name
		}
	}
	return ""
}

// serveRCV is registroreclamodteservice.
func (f *Fake) serveRCV(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	data, rerr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSOAPRequest))
	op := rcvOperation(data)
	ep := Endpoint(op)
	switch ep {
	case RCVRegister, RCVEvents, RCVCedible, RCVReception:
	default:
		ep = Endpoint("registroreclamodteservice")
	}
	token := cookieToken(r)
	idx, fault, done := f.begin(ep, w, r, nil, token)
	if done {
		return
	}
	call, perr := parseSOAPRequest(data, op)
	if rerr != nil || perr != nil || ep == "registroreclamodteservice" {
		f.result(idx, "fault bad request")
		f.writeFault(w, fmt.Sprintf("Cannot find dispatch method for {%s}%s", sii.RCVNamespace, op))
		return
	}
	signer, code := f.checkToken(token, false)
	if code != "" {
		f.result(idx, "fault token")
		f.writeFault(w, "Error de Autenticacion: TOKEN invalido")
		return
	}
	var inner string
	if ep == RCVReception {
		date := ""
		if q, c := parseRCVQuery(call, false, false); c == 0 {
			f.mu.Lock()
			if d, c := f.rcvSeen(q, signer); c == 0 {
				date = d.received.In(chile.Location()).Format(sii.RCVDateLayout)
			}
			f.mu.Unlock()
		}
		if fault.Kind == FaultEstado {
			date = fault.Code
		}
		f.result(idx, "fecha %q", date)
		var b strings.Builder
		xmlflat.EscapeText(&b, date)
		inner = b.String()
	} else {
		codResp, xxx, events := f.rcvAnswer(ep, call, signer)
		if fault.Kind == FaultEstado {
			codResp, _ = strconv.Atoi(fault.Code)
			xxx, events = "", nil
		}
		f.result(idx, "codResp %d", codResp)
		inner = rcvReturn(codResp, xxx, events)
	}
	f.reply(w, r, fault, f.rcvResponse(op, inner))
}

// rcvAnswer runs an action or a query other than the reception date.
func (f *Fake) rcvAnswer(ep Endpoint, call soapCall, signer string) (int, sii.RCVAction, []sii.RCVEvent) {
	q, c := parseRCVQuery(call, ep == RCVRegister, ep == RCVCedible)
	if c != 0 {
		return c, "", nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ep == RCVRegister {
		c, xxx := f.rcvRegister(q, signer)
		return c, xxx, nil
	}
	d, c := f.rcvSeen(q, signer)
	switch {
	case c != 0:
		return c, "", nil
	case ep == RCVCedible:
		return f.rcvCedibleCode(d), "", nil
	}
	events := f.rcvHistory(d)
	if len(events) == 0 {
		return 16, "", nil
	}
	return 15, "", events
}

// rcvReturn writes a <return>'s content: codResp, descResp (the table's
// text, "XXX" replaced by the event it names) and the events.
func rcvReturn(code int, xxx sii.RCVAction, events []sii.RCVEvent) string {
	entry, _ := sii.LookupRCVCode(code)
	desc := entry.Meaning
	if xxx != "" {
		desc = strings.ReplaceAll(desc, "XXX", string(xxx))
	}
	var b strings.Builder
	add := func(name, v string) {
		b.WriteString("<" + name + ">")
		xmlflat.EscapeText(&b, v)
		b.WriteString("</" + name + ">")
	}
	add("codResp", strconv.Itoa(code))
	add("descResp", desc)
	for _, e := range events {
		b.WriteString("<listaEventosDoc>")
		add("codEvento", string(e.Action))
		add("descEvento", e.Desc)
		rut, dv, _ := strings.Cut(e.RutResponsable, "-")
		add("rutResponsable", rut)
		add("dvResponsable", dv)
		add("fechaEvento", e.AtText)
		b.WriteString("</listaEventosDoc>")
	}
	return b.String()
}

// rcvResponse wraps a <return> in the JAX-WS answer the registry sends
// (in ISO-8859-1 bytes under a UTF-8 declaration with Quirks.Latin1).
func (f *Fake) rcvResponse(op, inner string) []byte {
	return f.encode(`<?xml version='1.0' encoding='UTF-8'?>` +
		`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>` +
		`<ns2:` + op + `Response xmlns:ns2="` + sii.RCVNamespace + `"><return>` + inner + `</return></ns2:` + op + `Response>` +
		`</S:Body></S:Envelope>`)
}
