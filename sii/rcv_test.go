package sii_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// Company B, the receptor of the rig's documents, and its signer.
const (
	rcvCompanyB = "76086428-5"
	rcvSignerB  = "11111111-1"
)

// rcvClient returns a client for B's signer (registered for B) on the
// rig's fake, with the rig's clock.
func rcvClient(t *testing.T, r *rig, signer string, companies ...string) *sii.Client {
	t.Helper()
	cert, err := siitestCert(signer)
	if err != nil {
		t.Fatal(err)
	}
	r.fake.Register(signer, companies...)
	c, err := sii.New(sii.Config{Endpoints: r.fake.Endpoints(), Certificate: cert, Clock: r.clock.Now,
		RetryPause: time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// uploadFactura has company A send a factura addressed to B through the
// fake (whose review is immediate) and returns it as the registry names
// it, with the instant of the upload.
func uploadFactura(t *testing.T, r *rig) (sii.RCVDocument, *dte.Emitted, time.Time) {
	t.Helper()
	env, ems := r.envelope(33)
	at := r.clock.Now()
	upload(t, r, env)
	if d, err := dte.ParseDTE(ems[0].XML); err != nil || d.Receptor.Rut != rcvCompanyB {
		t.Fatalf("the rig's factura does not go to B: %v", err)
	}
	return sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: ems[0].Folio}, ems[0], at
}

// ans is a history's answer (nil for no history).
func ans(h *sii.RCVHistory) *sii.RCVAnswer {
	if h == nil {
		return nil
	}
	return &h.RCVAnswer
}

// want checks an answer's code and outcome.
func want(t *testing.T, what string, a *sii.RCVAnswer, err error, code int, o sii.RCVOutcome) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if a.Code != code || a.Outcome != o {
		t.Fatalf("%s: codResp %d %q (%s), want %d (%s)", what, a.Code, a.Desc, a.Outcome, code, o)
	}
}

// TestRCVRoundTrip: company A uploads a factura to B through the fake SII;
// B's registry calls move the document's RCV state: the reception date is
// the upload's, B accepts it, a second contradicting decision (a claim) is
// refused with the SII's code 11, the receipt of goods is recorded, and the
// history lists both events with their responsible and dates. A, the
// issuer, may read the history but not register; a third company may do
// neither. After 8 days nothing more can be registered.
func TestRCVRoundTrip(t *testing.T) {
	r := newRig(t, siitest.Options{Steps: []string{}}, nil)
	ctx := context.Background()
	doc, _, uploaded := uploadFactura(t, r)
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)

	rec, err := b.RCVReceptionDate(ctx, doc)
	if err != nil || !rec.Received || !rec.At.Equal(uploaded.Truncate(time.Second)) ||
		rec.Text != uploaded.In(chile.Location()).Format("02-01-2006 15:04:05") {
		t.Fatalf("reception date: %+v %v, want the upload's instant %s", rec, err, uploaded)
	}
	h, err := b.RCVEvents(ctx, doc)
	want(t, "events before any decision", ans(h), err, 16, sii.RCVNoEvents)
	a, err := b.RCVCedible(ctx, doc)
	want(t, "cedible before any decision", a, err, 22, sii.RCVNotCedible)

	r.clock.Advance(time.Hour)
	a, err = b.RegisterRCV(ctx, doc, sii.RCVAccept)
	want(t, "ACD", a, err, 0, sii.RCVRecorded)
	if a.Desc != "Acción Completada OK" || a.Meaning() != a.Desc {
		t.Errorf("descResp %q, meaning %q", a.Desc, a.Meaning())
	}
	a, err = b.RegisterRCV(ctx, doc, sii.RCVAccept)
	want(t, "ACD again", a, err, 7, sii.RCVAlreadyRecorded)
	a, err = b.RegisterRCV(ctx, doc, sii.RCVClaimContent)
	want(t, "RCD after ACD", a, err, 11, sii.RCVConflict)
	if a.Outcome.Settled() {
		t.Error("a refused claim reads as settled")
	}
	r.clock.Advance(time.Hour)
	a, err = b.RegisterRCV(ctx, doc, sii.RCVReceipt)
	want(t, "ERM after ACD", a, err, 0, sii.RCVRecorded)
	a, err = b.RegisterRCV(ctx, doc, sii.RCVClaimTotal)
	want(t, "RFT after ACD and ERM", a, err, 11, sii.RCVConflict)

	h, err = b.RCVEvents(ctx, doc)
	want(t, "events", ans(h), err, 15, sii.RCVEventsListed)
	if len(h.Events) != 2 || h.Events[0].Action != sii.RCVAccept || h.Events[1].Action != sii.RCVReceipt {
		t.Fatalf("events %+v, want ACD then ERM", h.Events)
	}
	for i, e := range h.Events {
		at := uploaded.Add(time.Duration(i+1) * time.Hour)
		if e.RutResponsable != rcvSignerB || !e.At.Equal(at) || e.Desc != e.Action.Description() {
			t.Errorf("event %d: %+v, want %s by %s at %s", i, e, e.Action, rcvSignerB, at)
		}
	}
	if got := r.fake.RCVHistory(dtetest.EmisorRUT, 33, doc.Folio); len(got) != 2 {
		t.Errorf("the fake's history has %d events", len(got))
	}
	a, err = b.RCVCedible(ctx, doc)
	want(t, "cedible after ERM", a, err, 23, sii.RCVCedible)

	// The issuer reads the history, but registering is the receptor's.
	h, err = r.client.RCVEvents(ctx, doc)
	want(t, "the issuer's query", ans(h), err, 15, sii.RCVEventsListed)
	a, err = r.client.RegisterRCV(ctx, doc, sii.RCVAccept)
	want(t, "the issuer registers", a, err, 17, sii.RCVNotAuthorized)
	// A third company sees nothing.
	c := rcvClient(t, r, "22222222-2", "96874030-K")
	h, err = c.RCVEvents(ctx, doc)
	want(t, "a third company's query", ans(h), err, 14, sii.RCVNotAuthorized)
	a, err = c.RegisterRCV(ctx, doc, sii.RCVClaimContent)
	want(t, "a third company's claim", a, err, 17, sii.RCVNotAuthorized)
	if rec, err := c.RCVReceptionDate(ctx, doc); err != nil || rec.Received {
		t.Errorf("a third company's reception date: %+v %v", rec, err)
	}

	// Past the 8 days, even a new decision is too late.
	r.clock.Set(uploaded.Add(sii.RCVWindow + time.Second))
	a, err = b.RegisterRCV(ctx, doc, sii.RCVClaimContent)
	want(t, "a claim after 8 days", a, err, 8, sii.RCVWindowClosed)
	if !a.Outcome.Settled() {
		t.Error("a closed window is not settled")
	}
}

// TestRCVCreditNote: an annulling credit note A sends within the 8 days
// appears in B's history as NCA and makes the factura not cedible (21);
// another note refers to it as ENC.
func TestRCVCreditNote(t *testing.T) {
	r := newRig(t, siitest.Options{Steps: []string{}}, nil)
	ctx := context.Background()
	doc, fac, _ := uploadFactura(t, r)
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)
	note := func(codRef int) {
		t.Helper()
		res, err := r.em.Emit(ctx, &dte.EmitirDTERequest{TipoDTE: 61, Receptor: dte.Receptor{Rut: rcvCompanyB, RazonSocial: "Comercial Ñandú & Cía.",
			Giro: "Venta al por mayor", Direccion: "Av. Libertador 1449", Comuna: "Santiago", Ciudad: "Santiago"},
			Detalle: []dte.LineaDetalle{{Nombre: "Devolución", Cantidad: "1", Precio: "1000"}},
			Referencias: []dte.Referencia{{TipoDocRef: dte.RefTipo(33), FolioRef: doc.Folio, FechaRef: fac.FechaEmision,
				CodigoRef: &codRef, RazonRef: "Referencia"}}})
		if err != nil {
			t.Fatal(err)
		}
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: r.creds.Emisor}, r.creds.Cert, res.XML)
		if err != nil {
			t.Fatal(err)
		}
		upload(t, r, env)
	}
	r.clock.Advance(time.Hour)
	note(3)
	h, err := b.RCVEvents(ctx, doc)
	want(t, "events after a note", ans(h), err, 15, sii.RCVEventsListed)
	if len(h.Events) != 1 || h.Events[0].Action != sii.RCVCreditNote || h.Events[0].RutResponsable != dtetest.SignerRUT {
		t.Fatalf("events %+v, want one ENC by %s", h.Events, dtetest.SignerRUT)
	}
	a, err := b.RCVCedible(ctx, doc)
	want(t, "cedible after ENC", a, err, 22, sii.RCVNotCedible)
	r.clock.Advance(time.Hour)
	note(1)
	a, err = b.RCVCedible(ctx, doc)
	want(t, "cedible after NCA", a, err, 21, sii.RCVNotCedible)
	h, err = b.RCVEvents(ctx, doc)
	if err != nil || len(h.Events) != 2 || h.Events[1].Action != sii.RCVCreditNoteAnnuls {
		t.Fatalf("events %+v %v, want ENC then NCA", h.Events, err)
	}
	// NCA and ENC are not the receptor's to register, and do not block
	// its decisions.
	a, err = b.RegisterRCV(ctx, doc, sii.RCVAccept)
	want(t, "ACD after NCA", a, err, 0, sii.RCVRecorded)
	if _, err := b.RegisterRCV(ctx, doc, sii.RCVCreditNoteAnnuls); err == nil {
		t.Error("the client sent NCA as an action")
	}
}

// TestRCVStateMachine runs every cell of the registration table of the
// protocol notes (sii-wave3-notes.md §2.3) on seeded documents: what is on
// record, the new action, the SII's code.
func TestRCVStateMachine(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	ctx := context.Background()
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)
	now := r.clock.Now()
	const (
		ACD, RCD, ERM, RFP, RFT, NCA = sii.RCVAccept, sii.RCVClaimContent, sii.RCVReceipt, sii.RCVClaimPartial, sii.RCVClaimTotal, sii.RCVCreditNoteAnnuls
	)
	cases := []struct {
		prior  []sii.RCVAction
		action sii.RCVAction
		code   int
		xxx    string // the event descResp names
	}{
		// Nothing, or only events that are not decisions: recorded.
		{nil, ACD, 0, ""}, {nil, ERM, 0, ""}, {nil, RCD, 0, ""}, {nil, RFP, 0, ""}, {nil, RFT, 0, ""},
		{[]sii.RCVAction{NCA}, ACD, 0, ""}, {[]sii.RCVAction{NCA}, ERM, 0, ""}, {[]sii.RCVAction{NCA}, RFT, 0, ""},
		// A claim: no acceptance (12), no receipt (6); the same claim is
		// 7, a different one is recorded.
		{[]sii.RCVAction{RCD}, ACD, 12, "RCD"}, {[]sii.RCVAction{RFP}, ACD, 12, "RFP"}, {[]sii.RCVAction{RFT}, ACD, 12, "RFT"},
		{[]sii.RCVAction{RCD}, ERM, 6, "RCD"}, {[]sii.RCVAction{RFP}, ERM, 6, "RFP"}, {[]sii.RCVAction{RFT}, ERM, 6, "RFT"},
		{[]sii.RCVAction{RCD}, RCD, 7, ""}, {[]sii.RCVAction{RFP}, RFP, 7, ""}, {[]sii.RCVAction{RFT}, RFT, 7, ""},
		{[]sii.RCVAction{RCD}, RFP, 0, ""}, {[]sii.RCVAction{RFP}, RFT, 0, ""}, {[]sii.RCVAction{RFT}, RCD, 0, ""},
		// ACD: again is 7, a receipt is recorded, a claim is refused (11).
		{[]sii.RCVAction{ACD}, ACD, 7, ""}, {[]sii.RCVAction{ACD}, ERM, 0, ""},
		{[]sii.RCVAction{ACD}, RCD, 11, ""}, {[]sii.RCVAction{ACD}, RFP, 11, ""}, {[]sii.RCVAction{ACD}, RFT, 11, ""},
		// ERM: an acceptance is recorded, again is 7, a claim is refused (13).
		{[]sii.RCVAction{ERM}, ACD, 0, ""}, {[]sii.RCVAction{ERM}, ERM, 7, ""},
		{[]sii.RCVAction{ERM}, RCD, 13, ""}, {[]sii.RCVAction{ERM}, RFP, 13, ""}, {[]sii.RCVAction{ERM}, RFT, 13, ""},
		// Both decisions: the first one names the refusal.
		{[]sii.RCVAction{ERM, ACD}, RCD, 13, ""}, {[]sii.RCVAction{ACD, ERM}, RFP, 11, ""},
		// Two claims: the first one is named.
		{[]sii.RCVAction{RFP, RCD}, ACD, 12, "RFP"},
	}
	for i, c := range cases {
		folio := int64(5000 + i)
		var prior []sii.RCVEvent
		for j, a := range c.prior {
			prior = append(prior, sii.RCVEvent{Action: a, RutResponsable: rcvSignerB, At: now.Add(time.Duration(j-10) * time.Minute)})
		}
		r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: dtetest.EmisorRUT, RutReceptor: rcvCompanyB, Tipo: 33, Folio: folio,
			Received: now.Add(-time.Hour), Events: prior})
		name := fmt.Sprintf("%v then %s", c.prior, c.action)
		a, err := b.RegisterRCV(ctx, sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: folio}, c.action)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Code != c.code {
			t.Errorf("%s: codResp %d %q, want %d", name, a.Code, a.Desc, c.code)
			continue
		}
		if c.xxx != "" && !strings.HasSuffix(a.Desc, " por "+c.xxx) {
			t.Errorf("%s: descResp %q does not name %s", name, a.Desc, c.xxx)
		}
		got := r.fake.RCVHistory(dtetest.EmisorRUT, 33, folio)
		wantLen := len(c.prior)
		if c.code == 0 {
			wantLen++
		}
		if len(got) != wantLen || (c.code == 0 && got[len(got)-1].Action != c.action) {
			t.Errorf("%s: history %+v", name, got)
		}
	}
}

// TestRCVRefusals: the codes that refuse a request before the state
// machine: the type (3), an unknown document (18), one received before
// 2017-01-14 (10), a caller who is not the receptor (17), a document paid
// in cash or free (27, while crédito is fine), and the 8-day window at its
// edge (8×24 h is still inside).
func TestRCVRefusals(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	ctx := context.Background()
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)
	now := r.clock.Now()
	seed := func(folio int64, s siitest.RCVSeed) sii.RCVDocument {
		s.RutEmisor, s.Tipo, s.Folio = dtetest.EmisorRUT, 33, folio
		if s.RutReceptor == "" {
			s.RutReceptor = rcvCompanyB
		}
		r.fake.SeedRCV(s)
		return sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: folio}
	}
	reg := func(what string, doc sii.RCVDocument, code int, o sii.RCVOutcome) {
		t.Helper()
		a, err := b.RegisterRCV(ctx, doc, sii.RCVAccept)
		want(t, what, a, err, code, o)
	}
	seed(1, siitest.RCVSeed{})
	reg("tipo 61", sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 61, Folio: 1}, 3, sii.RCVInvalid)
	reg("an unknown folio", sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: 2}, 18, sii.RCVUnknownDocument)
	reg("another issuer", sii.RCVDocument{RutEmisor: "96874030-K", Tipo: 33, Folio: 1}, 18, sii.RCVUnknownDocument)
	reg("received in 2016", seed(3, siitest.RCVSeed{Received: time.Date(2016, 12, 30, 12, 0, 0, 0, time.UTC)}), 10, sii.RCVUnknownDocument)
	reg("addressed to another company", seed(4, siitest.RCVSeed{RutReceptor: "96874030-K"}), 17, sii.RCVNotAuthorized)
	reg("paid in cash", seed(5, siitest.RCVSeed{FmaPago: 1}), 27, sii.RCVNotApplicable)
	reg("free", seed(6, siitest.RCVSeed{FmaPago: 3}), 27, sii.RCVNotApplicable)
	reg("on credit", seed(7, siitest.RCVSeed{FmaPago: 2}), 0, sii.RCVRecorded)
	reg("exactly 8 days after reception", seed(8, siitest.RCVSeed{Received: now.Add(-sii.RCVWindow)}), 0, sii.RCVRecorded)
	reg("8 days and a second after", seed(9, siitest.RCVSeed{Received: now.Add(-sii.RCVWindow - time.Second)}), 8, sii.RCVWindowClosed)
}

// TestRCVCedible: consultarDocDteCedible from the events and the clock:
// 20 for a type the registry does not cover, 22 while nothing is on
// record, 23 with a receipt, 24 with a claim, 25 once 8 days passed
// without either, 21 for an annulling credit note within the 8 days (and
// not for one after them).
func TestRCVCedible(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	ctx := context.Background()
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)
	now := r.clock.Now()
	ev := func(a sii.RCVAction, at time.Time) []sii.RCVEvent {
		return []sii.RCVEvent{{Action: a, RutResponsable: rcvSignerB, At: at}}
	}
	cases := []struct {
		name     string
		received time.Time
		events   []sii.RCVEvent
		code     int
		o        sii.RCVOutcome
	}{
		{"nothing yet", now.Add(-time.Hour), nil, 22, sii.RCVNotCedible},
		{"only ACD", now.Add(-time.Hour), ev(sii.RCVAccept, now), 22, sii.RCVNotCedible},
		{"a receipt", now.Add(-time.Hour), ev(sii.RCVReceipt, now), 23, sii.RCVCedible},
		{"a claim", now.Add(-time.Hour), ev(sii.RCVClaimPartial, now), 24, sii.RCVNotCedible},
		{"8 days passed", now.Add(-sii.RCVWindow - time.Second), nil, 25, sii.RCVCedible},
		{"a claim, 8 days passed", now.Add(-9 * 24 * time.Hour), ev(sii.RCVClaimContent, now.Add(-8*24*time.Hour)), 24, sii.RCVNotCedible},
		{"NCA on day 2", now.Add(-3 * 24 * time.Hour), ev(sii.RCVCreditNoteAnnuls, now.Add(-24*time.Hour)), 21, sii.RCVNotCedible},
		{"NCA on day 9", now.Add(-10 * 24 * time.Hour), ev(sii.RCVCreditNoteAnnuls, now.Add(-24*time.Hour)), 25, sii.RCVCedible},
	}
	for i, c := range cases {
		folio := int64(7000 + i)
		r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: dtetest.EmisorRUT, RutReceptor: rcvCompanyB, Tipo: 33, Folio: folio,
			Received: c.received, Events: c.events})
		a, err := b.RCVCedible(ctx, sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: folio})
		want(t, c.name, a, err, c.code, c.o)
	}
	a, err := b.RCVCedible(ctx, sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 61, Folio: 7000})
	want(t, "a credit note", a, err, 20, sii.RCVNotCedible)
}

// rawRCV posts a hand-written registry call to the fake and returns the
// body: for the checks the client's own validation never lets through.
func rawRCV(t *testing.T, r *rig, cookie, op, parts string) string {
	t.Helper()
	body := `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:ws="` + sii.RCVNamespace +
		`"><soapenv:Body><ws:` + op + `>` + parts + `</ws:` + op + `></soapenv:Body></soapenv:Envelope>`
	req, err := http.NewRequest(http.MethodPost, r.fake.Endpoints().RCV+sii.PathRCVCert, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return string(out)
}

// TestRCVFakeParameters: the parameter checks the client never lets a
// caller reach (a check digit that does not match or a lower-case k, a
// RUT body under 1000, a folio that is not a positive number, an unknown
// action), and the token accepted only as the TOKEN cookie.
func TestRCVFakeParameters(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	token, err := r.client.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: "96874030-K", RutReceptor: dtetest.EmisorRUT, Tipo: 33, Folio: 1})
	parts := func(rut, dv, tipo, folio, accion string) string {
		return "<rutEmisor>" + rut + "</rutEmisor><dvEmisor>" + dv + "</dvEmisor><tipoDoc>" + tipo + "</tipoDoc><folio>" + folio +
			"</folio><accionDoc>" + accion + "</accionDoc>"
	}
	code := regexp.MustCompile(`<codResp>(-?[0-9]+)</codResp>`)
	for _, c := range []struct {
		parts string
		want  string
	}{
		{parts("96874030", "K", "33", "1", "ACD"), "0"},
		{parts("96874030", "k", "33", "1", "ACD"), "1"},
		{parts("96874030", "9", "33", "1", "ACD"), "1"},
		{parts("999", "7", "33", "1", "ACD"), "1"},
		{parts("96874030", "K", "52", "1", "ACD"), "3"},
		{parts("96874030", "K", "33", "0", "ACD"), "2"},
		{parts("96874030", "K", "33", "1a", "ACD"), "2"},
		{parts("96874030", "K", "33", "1", "NCA"), "4"},
		{parts("96874030", "K", "33", "1", ""), "4"},
	} {
		out := rawRCV(t, r, "TOKEN="+token, "ingresarAceptacionReclamoDoc", c.parts)
		if m := code.FindStringSubmatch(out); m == nil || m[1] != c.want {
			t.Errorf("%s: %s, want codResp %s", c.parts, out, c.want)
		}
	}
	// The token as a part, not as the cookie, is refused like no token.
	out := rawRCV(t, r, "", "listarEventosHistDoc", "<rutEmisor>96874030</rutEmisor><dvEmisor>K</dvEmisor><tipoDoc>33</tipoDoc><folio>1</folio><token>"+token+"</token>")
	if !strings.Contains(out, "TOKEN invalido") || strings.Contains(out, "codResp") {
		t.Errorf("a token outside the cookie: %s", out)
	}
	if out := rawRCV(t, r, "TOKEN=nope", "listarEventosHistDoc", ""); !strings.Contains(out, "TOKEN invalido") {
		t.Errorf("an unknown token: %s", out)
	}
	if out := rawRCV(t, r, "TOKEN="+token, "borrarTodo", ""); !strings.Contains(out, "Fault") {
		t.Errorf("an unknown operation: %s", out)
	}
}

// TestRCVTokenAndHosts: the client takes the RCV token from
// Endpoints.RCVAuth (here the fake; the classic services point at a fake
// that does not know the signer, so a token from there would fail), sends
// it only as the cookie, reuses it, gets a new one once after the "TOKEN
// invalido" fault, and posts to the certification path in certificación
// and the production path in producción. The SII's own defaults put the
// registry on ws2/ws1 and its tokens on palena.
func TestRCVTokenAndHosts(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	stranger := siitest.New(siitest.Options{}).Start()
	defer stranger.Close()
	cert, err := siitestCert(rcvSignerB)
	if err != nil {
		t.Fatal(err)
	}
	r.fake.Register(rcvSignerB, rcvCompanyB)
	r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: dtetest.EmisorRUT, RutReceptor: rcvCompanyB, Tipo: 34, Folio: 9})
	doc := sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 34, Folio: 9}
	for _, env := range []sii.Environment{sii.Certificacion, sii.Produccion} {
		ep := sii.SingleHost(stranger.Endpoints().Classic)
		ep.RCV, ep.RCVAuth = r.fake.Endpoints().RCV, r.fake.Endpoints().RCVAuth
		c, err := sii.New(sii.Config{Environment: env, Endpoints: ep, Certificate: cert, RetryPause: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		before := len(r.fake.Requests(siitest.RCVEvents))
		for range 2 {
			h, err := c.RCVEvents(context.Background(), doc)
			want(t, string(env), ans(h), err, 16, sii.RCVNoEvents)
		}
		reqs := r.fake.Requests(siitest.RCVEvents)[before:]
		path := map[sii.Environment]string{sii.Certificacion: sii.PathRCVCert, sii.Produccion: sii.PathRCV}[env]
		if len(reqs) != 2 || reqs[0].Path != path || reqs[0].Token == "" || reqs[0].Token != reqs[1].Token ||
			!strings.Contains(reqs[0].Header.Get("Cookie"), "TOKEN="+reqs[0].Token) {
			t.Errorf("%s: requests %+v", env, reqs)
		}
		if len(stranger.Requests("")) != 0 {
			t.Errorf("%s: the classic host was asked %d times", env, len(stranger.Requests("")))
		}
	}
	// A revoked token: the fault, a new token, the answer.
	c, err := sii.New(sii.Config{Endpoints: r.fake.Endpoints(), Certificate: cert, RetryPause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RCVEvents(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	r.fake.RevokeTokens()
	tokens := len(r.fake.Requests(siitest.Token))
	h, err := c.RCVEvents(context.Background(), doc)
	want(t, "after revocation", ans(h), err, 16, sii.RCVNoEvents)
	if n := len(r.fake.Requests(siitest.Token)) - tokens; n != 1 {
		t.Errorf("%d new tokens after the fault, want 1", n)
	}
	// The SII's addresses.
	for env, host := range map[sii.Environment]string{sii.Certificacion: "https://ws2.sii.cl", sii.Produccion: "https://ws1.sii.cl"} {
		ep, err := sii.EndpointsFor(env)
		if err != nil || ep.RCV != host || ep.RCVAuth != "https://palena.sii.cl" {
			t.Errorf("%s: %+v %v", env, ep, err)
		}
	}
}

// TestRCVFaults: an HTML page is retried and then answered; -1 is the
// outcome RCVRetry; a persisting fault is a *TransportError; Latin-1
// bytes under a UTF-8 declaration read right; a forgotten answer of the
// reception date is an empty date, not an error.
func TestRCVFaults(t *testing.T) {
	r := newRig(t, siitest.Options{Quirks: siitest.Quirks{Latin1: true}}, nil)
	ctx := context.Background()
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)
	r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: dtetest.EmisorRUT, RutReceptor: rcvCompanyB, Tipo: 33, Folio: 1})
	doc := sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: 1}

	r.fake.Inject(siitest.RCVRegister, siitest.Fault{Kind: siitest.FaultHTML503})
	a, err := b.RegisterRCV(ctx, doc, sii.RCVReceipt)
	want(t, "after an HTML page", a, err, 0, sii.RCVRecorded)
	if a.Desc != "Acción Completada OK" {
		t.Errorf("Latin-1 descResp read as %q", a.Desc)
	}
	if n := len(r.fake.Requests(siitest.RCVRegister)); n != 2 {
		t.Errorf("%d requests, want 2 (one retry)", n)
	}
	// A repeat after a lost answer finds the event on record.
	r.fake.Inject(siitest.RCVRegister, siitest.Fault{Kind: siitest.FaultError500})
	a, err = b.RegisterRCV(ctx, doc, sii.RCVReceipt)
	want(t, "a repeat", a, err, 7, sii.RCVAlreadyRecorded)

	r.fake.Inject(siitest.RCVEvents, siitest.Fault{Kind: siitest.FaultEstado, Code: "-1"})
	h, err := b.RCVEvents(ctx, doc)
	want(t, "-1", ans(h), err, -1, sii.RCVRetry)
	if !h.Outcome.Retryable() || h.Outcome.Settled() {
		t.Errorf("-1: %+v", h.Outcome)
	}
	r.fake.Inject(siitest.RCVCedible, siitest.Fault{Kind: siitest.FaultSOAP, Code: "java.lang.NullPointerException"},
		siitest.Fault{Kind: siitest.FaultSOAP}, siitest.Fault{Kind: siitest.FaultSOAP})
	_, err = b.RCVCedible(ctx, doc)
	var te *sii.TransportError
	if !errors.As(err, &te) || te.Kind != sii.KindFault || !sii.IsRetryable(err) {
		t.Errorf("persisting faults: %v", err)
	}
	r.fake.Inject(siitest.RCVReception, siitest.Fault{Kind: siitest.FaultEstado, Code: "31-02-2026 99:00:00"})
	if _, err := b.RCVReceptionDate(ctx, doc); !errors.As(err, &te) || te.Kind != sii.KindMalformed {
		t.Errorf("a date that is not one: %v", err)
	}
	if rec, err := b.RCVReceptionDate(ctx, sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 33, Folio: 2}); err != nil || rec.Received {
		t.Errorf("an unknown document's date: %+v %v", rec, err)
	}
	// The client refuses what it cannot send.
	for _, d := range []sii.RCVDocument{{RutEmisor: "76192083-0", Tipo: 33, Folio: 1}, {RutEmisor: dtetest.EmisorRUT, Tipo: 33},
		{RutEmisor: dtetest.EmisorRUT, Folio: 1}} {
		if _, err := b.RCVEvents(ctx, d); err == nil {
			t.Errorf("%+v sent", d)
		}
	}
	if _, err := b.RegisterRCV(ctx, doc, "acd"); err == nil || !strings.Contains(err.Error(), "accionDoc") {
		t.Errorf("action acd: %v", err)
	}
}

// TestRCVCodesAgainstNotes checks the codResp table against the protocol
// notes (sii-wave3-notes.md): the same codes as §2.4's table with §2.2's
// cedibility codes, each meaning carrying the notes' Spanish text (a
// "…" there skips words), each cedibility code read as the notes' English
// says, and the codes the notes count as done (0, 7, 8, 27) the only
// settled ones.
func TestRCVCodesAgainstNotes(t *testing.T) {
	notes, err := os.ReadFile(oracle.SharedFile(t, "docs", "sii-wave3-notes.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := func(head string) string {
		s := string(notes)
		i := strings.Index(s, head)
		if i < 0 {
			t.Fatalf("the notes have no %q", head)
		}
		s = s[i+len(head):]
		if j := strings.Index(s, "\n### "); j >= 0 {
			s = s[:j]
		}
		return s
	}
	row := regexp.MustCompile(`(?m)^ *\| (\*\*)?(−?-?[0-9]+)(–([0-9]+))?(\*\*)?( \(undocumented\))? \| (.*?) \|$`)
	table := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(section("### 2.4 codResp table"), -1) {
		from, _ := strconv.Atoi(strings.Replace(m[2], "−", "-", 1))
		to := from
		if m[4] != "" {
			to, _ = strconv.Atoi(m[4])
		}
		for c := from; c <= to; c++ {
			table[c] = m[7]
		}
	}
	cedible := map[int]string{}
	for _, m := range row.FindAllStringSubmatch(section("### 2.2 Operations"), -1) {
		c, _ := strconv.Atoi(m[2])
		if c >= 20 {
			cedible[c] = m[7]
		}
	}
	if len(table) != 28 || len(cedible) != 6 {
		t.Fatalf("read %d codes from §2.4 and %d from §2.2; the notes' tables changed shape", len(table), len(cedible))
	}
	var ours []int
	for _, c := range sii.RCVCodes() {
		ours = append(ours, c.Code)
		if c.Meaning == "" || c.Source == "" || c.Outcome == "" {
			t.Errorf("code %d is incomplete: %+v", c.Code, c)
		}
	}
	var theirs []int
	for c := range table {
		theirs = append(theirs, c)
	}
	slices.Sort(theirs)
	if !slices.Equal(ours, theirs) {
		t.Fatalf("codes %v, the notes list %v", ours, theirs)
	}
	norm := strings.NewReplacer("*", "", "\"", "").Replace
	for code, text := range table {
		entry, ok := sii.LookupRCVCode(code)
		if !ok {
			t.Fatalf("LookupRCVCode(%d) not found", code)
		}
		if en, ok := cedible[code]; ok {
			want := sii.RCVNotCedible
			if strings.HasPrefix(en, "cedible") || strings.HasPrefix(en, "**cedible") {
				want = sii.RCVCedible
			}
			if entry.Outcome != want {
				t.Errorf("code %d (%q in the notes): outcome %s, want %s", code, en, entry.Outcome, want)
			}
			continue
		}
		text, _, _ = strings.Cut(norm(text), " [") // the citation
		rest := entry.Meaning
		for _, piece := range strings.Split(text, "…") {
			piece = strings.TrimSpace(piece)
			i := strings.Index(rest, piece)
			if i < 0 {
				t.Errorf("code %d: %q does not carry the notes' %q", code, entry.Meaning, piece)
				break
			}
			rest = rest[i+len(piece):]
		}
	}
	for _, c := range sii.RCVCodes() {
		if got, want := c.Outcome.Settled(), slices.Contains([]int{0, 7, 8, 27}, c.Code); got != want {
			t.Errorf("code %d: settled %v, want %v", c.Code, got, want)
		}
	}
	if c, ok := sii.LookupRCVCode(26); ok || c.Outcome != sii.RCVUnknownCode {
		t.Errorf("code 26: %+v %v", c, ok)
	}
}

// TestRCVListShapes: one event and many read the same way, and a
// history's events keep the order listed.
func TestRCVListShapes(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	b := rcvClient(t, r, rcvSignerB, rcvCompanyB)
	now := r.clock.Now()
	for n := 1; n <= 3; n++ {
		var events []sii.RCVEvent
		for i := range n {
			events = append(events, sii.RCVEvent{Action: []sii.RCVAction{sii.RCVClaimContent, sii.RCVClaimPartial, sii.RCVClaimTotal}[i],
				RutResponsable: rcvSignerB, At: now.Add(time.Duration(i-5) * time.Minute)})
		}
		r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: dtetest.EmisorRUT, RutReceptor: rcvCompanyB, Tipo: 43, Folio: int64(n), Events: events})
		h, err := b.RCVEvents(context.Background(), sii.RCVDocument{RutEmisor: dtetest.EmisorRUT, Tipo: 43, Folio: int64(n)})
		want(t, fmt.Sprint(n, " events"), ans(h), err, 15, sii.RCVEventsListed)
		if len(h.Events) != n {
			t.Fatalf("%d events read, want %d", len(h.Events), n)
		}
		for i, e := range h.Events {
			if e.Action != events[i].Action || !e.At.Equal(events[i].At) || e.RutResponsable != rcvSignerB {
				t.Errorf("event %d of %d: %+v, want %+v", i, n, e, events[i])
			}
		}
		if !bytes.Contains(h.Raw, []byte("listaEventosDoc")) {
			t.Errorf("Raw holds no events: %s", h.Raw)
		}
	}
}
