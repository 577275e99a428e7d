package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// submitRig is a service on SQLite submitting to a fake SII with short
// schedules, its runner started.
type submitRig struct {
	s    *Service
	emp  *api.Empresa
	fake *siitest.Fake
}

func newSubmitRig(t *testing.T, opts siitest.Options, timeout time.Duration) *submitRig {
	return newSubmitRigOn(t, backends[0], opts, timeout)
}

// newSubmitRigOn is newSubmitRig on a chosen backend.
func newSubmitRigOn(t *testing.T, b backend, opts siitest.Options, timeout time.Duration) *submitRig {
	return newSubmitRigOver(t, b, opts, timeout, nil)
}

// newSubmitRigOver is newSubmitRigOn with the service over wrap(the
// store) when wrap is not nil.
func newSubmitRigOver(t *testing.T, b backend, opts siitest.Options, timeout time.Duration, wrap func(store.Store) store.Store) *submitRig {
	return newSubmitRigVia(t, b, opts, timeout, wrap, nil)
}

// newSubmitRigVia is newSubmitRigOver reaching the fake at via(fake)'s
// addresses when via is not nil.
func newSubmitRigVia(t *testing.T, b backend, opts siitest.Options, timeout time.Duration, wrap func(store.Store) store.Store,
	via func(*siitest.Fake) sii.Endpoints) *submitRig {
	t.Helper()
	return newSubmitRigTuned(t, b, opts, timeout, wrap, via, nil)
}

// newSubmitRigTuned is newSubmitRigVia with the submission settings
// changed by tune when it is not nil.
func newSubmitRigTuned(t *testing.T, b backend, opts siitest.Options, timeout time.Duration, wrap func(store.Store) store.Store,
	via func(*siitest.Fake) sii.Endpoints, tune func(*SubmitConfig)) *submitRig {
	t.Helper()
	creds(t)
	fake := siitest.New(opts).Start()
	t.Cleanup(fake.Close)
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	endpoints := fake.Endpoints()
	if via != nil {
		endpoints = via(fake)
	}
	fast := []time.Duration{0}
	cfg := Config{Submission: &SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return endpoints },
		UploadBackoff: fast, PollBackoff: fast, Timeout: timeout, BoletaCheckDelay: rigBoletaCheck, BoletaSafetyDelay: rigBoletaCheck}}
	if tune != nil {
		tune(cfg.Submission)
	}
	var s *Service
	if wrap == nil {
		s = newService(t, b.name, b.dsn(t), cfg)
	} else {
		st, err := openStore(context.Background(), b.name, b.dsn(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		kek, _ := ParseKEK(testKEK)
		if cfg.Keyring, err = NewKeyring(kek); err != nil {
			t.Fatal(err)
		}
		cfg.Store, cfg.TrustedKeys = wrap(st), credsVal.Keys
		if s, err = New(cfg); err != nil {
			t.Fatal(err)
		}
	}
	emp := setupEmpresa(t, s, true)
	if _, err := s.CAFs.Register(context.Background(), emp.ID, api.CAFInput{TipoDTE: 39, CAFXML: string(creds(t).CAFFiles[39])}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
	return &submitRig{s: s, emp: emp, fake: fake}
}

// rigBoletaCheck is the rig's BoletaCheckDelay and BoletaSafetyDelay:
// longer than the fake's review of an envelope with the rigs' steps
// (four steps of 200 ms at most), so the arrival check finds a boleta the
// fake filed.
const rigBoletaCheck = 2 * time.Second

// submitBody is a factura (or a boleta) request with auto_send as given.
func submitBody(tipo int, autoSend bool) []byte {
	rec := `{"rut":"77.777.777-7","razon_social":"Pérez & Hijos Ltda.","giro":"Comercio","direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"}`
	extra := ""
	if tipo == 39 {
		rec, extra = `{"rut":"66666666-6","razon_social":"Consumidor final"}`, `"ind_servicio":3,`
	}
	return []byte(fmt.Sprintf(`{"tipo_dte":%d,"receptor":%s,%s"detalle":[{"nombre":"Artículo Ñandú","cantidad":2,"precio":1990}],"auto_send":%v}`,
		tipo, rec, extra, autoSend))
}

// waitFinal waits until the document reaches a final state.
func (r *submitRig) waitFinal(t *testing.T, id string) *api.DTE {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := r.s.Documents.Get(context.Background(), r.emp.ID, id, api.DTEGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Estado.Final() {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("DTE %s still %s after 20 s (tracking %+v)", id, d.Estado, d.Tracking)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// allEvents returns every event of the company, newest first.
func (r *submitRig) allEvents(t *testing.T) []store.Event {
	t.Helper()
	var out []store.Event
	cursor := ""
	for {
		page, err := r.s.st.ListEvents(context.Background(), r.emp.ID, store.ListFilter{Cursor: cursor, Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Items...)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
}

// events returns the event types of one document, oldest first.
func (r *submitRig) events(t *testing.T, id string) []string {
	t.Helper()
	all := r.allEvents(t)
	var out []string
	for i := len(all) - 1; i >= 0; i-- {
		if strings.Contains(string(all[i].Payload), id) {
			out = append(out, all[i].Type)
		}
	}
	return out
}

// TestSubmitAccepted: auto_send factura and boleta reach aceptado through
// the fake, with tracking, sii_status and one event per transition.
func TestSubmitAccepted(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testSubmitAccepted(t, b) })
	}
}

func testSubmitAccepted(t *testing.T, b backend) {
	r := newSubmitRigOn(t, b, siitest.Options{}, 0)
	for _, tipo := range []int{33, 39} {
		res := emitOK(t, r.s, r.emp.ID, submitBody(tipo, true))
		d := r.waitFinal(t, res.ID)
		if d.Estado != dte.EstadoAceptado {
			t.Fatalf("tipo %d: %s, want aceptado (tracking %+v)", tipo, d.Estado, d.Tracking)
		}
		tr := d.Tracking
		if tr == nil || !regexp.MustCompile(`^[0-9]+$`).MatchString(deref(tr.TrackID)) || deref(tr.Intentos) != 1 ||
			deref(tr.Informados) != 1 || deref(tr.Aceptados) != 1 || deref(tr.EstadoEnvio) != "EPR" || deref(tr.EnvioID) == "" {
			t.Errorf("tipo %d tracking %+v", tipo, tr)
		}
		if tipo == 33 && len(deref(tr.TrackID)) != 10 {
			t.Errorf("track id %q is not the zero-padded 10 digits the SII wrote", deref(tr.TrackID))
		}
		if d.SIIStatus == nil || deref(d.SIIStatus.EstadoSII) != "EPR" || d.SIIStatus.CheckedAt == nil {
			t.Errorf("tipo %d sii_status %+v", tipo, d.SIIStatus)
		}
		if ev := strings.Join(r.events(t, res.ID), ","); ev != "dte.created,dte.accepted" {
			t.Errorf("tipo %d events %s", tipo, ev)
		}
	}
	if n := len(r.fake.Requests(siitest.Upload)); n != 1 {
		t.Errorf("%d DTEUploads, want 1", n)
	}
	if n := len(r.fake.Requests(siitest.BoletaUpload)); n != 1 {
		t.Errorf("%d boleta uploads, want 1", n)
	}
	if n := len(r.fake.Requests(siitest.Seed)); n != 1 {
		t.Errorf("%d SOAP seeds, want 1", n)
	}
}

// TestSubmitOutcomes: scripted reparo, rejection, envelope rejection and
// an upload-time rejection land in their states with their events.
func TestSubmitOutcomes(t *testing.T) {
	t.Parallel()
	r := newSubmitRig(t, siitest.Options{}, 0)
	cases := []struct {
		script *siitest.Outcome
		fault  *siitest.Fault
		estado dte.Estado
		event  string
		code   string
	}{
		{&siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"}, nil, dte.EstadoConReparos, "dte.repaired", "EPR"},
		{&siitest.Outcome{Result: siitest.Rejected, Detail: "CAF-3-517"}, nil, dte.EstadoRechazado, "dte.rejected", "EPR"},
		{&siitest.Outcome{Envelope: "RFR"}, nil, dte.EstadoRechazado, "dte.rejected", "RFR"},
		{nil, &siitest.Fault{Kind: siitest.FaultStatus, Code: "7"}, dte.EstadoRechazado, "dte.rejected", "7"},
	}
	for i, tc := range cases {
		if tc.fault != nil {
			r.fake.Inject(siitest.Upload, *tc.fault)
		}
		if tc.script != nil {
			// The next folio of tipo 33 is i+1: script it before emitting.
			r.fake.Script(dtetest.EmisorRUT, 33, int64(i+1), *tc.script)
		}
		res := emitOK(t, r.s, r.emp.ID, submitBody(33, true))
		if res.Folio != int64(i+1) {
			t.Fatalf("folio %d, want %d", res.Folio, i+1)
		}
		d := r.waitFinal(t, res.ID)
		if d.Estado != tc.estado || deref(d.Tracking.CodigoSII) != tc.code {
			t.Errorf("case %d: %s codigo %q, want %s %s (tracking %+v)", i, d.Estado, deref(d.Tracking.CodigoSII), tc.estado, tc.code, d.Tracking)
		}
		if ev := strings.Join(r.events(t, res.ID), ","); ev != "dte.created,"+tc.event {
			t.Errorf("case %d events %s", i, ev)
		}
	}
}

// TestSubmitTransportFaultsAndReconcile: an HTML 503 on upload is retried;
// a timeout after the fake accepted a factura is followed by getEstDteAv,
// which gives back the envelope's track id, and nothing is sent again; a
// boleta (no such query) is sent again after the same timeout, and the
// resend's duplicate rejection is reconciled to aceptado through the
// per-document status.
func TestSubmitTransportFaultsAndReconcile(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testSubmitTransportFaultsAndReconcile(t, b) })
	}
}

func testSubmitTransportFaultsAndReconcile(t *testing.T, b backend) {
	r := newSubmitRigOn(t, b, siitest.Options{StepEvery: 200 * time.Millisecond}, 500*time.Millisecond)
	r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultHTML503})
	res := emitOK(t, r.s, r.emp.ID, submitBody(33, true))
	d := r.waitFinal(t, res.ID)
	if d.Estado != dte.EstadoAceptado || deref(d.Tracking.Intentos) != 2 {
		t.Errorf("after an HTML 503: %s, intentos %d", d.Estado, deref(d.Tracking.Intentos))
	}
	if n := len(r.fake.Requests(siitest.EstDteAv)); n != 0 {
		t.Errorf("%d getEstDteAv queries after an HTML page, want none (the SII refused the upload)", n)
	}

	r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
	res = emitOK(t, r.s, r.emp.ID, submitBody(33, true))
	d = r.waitFinal(t, res.ID)
	envs := r.fake.Envelopes()
	last := envs[len(envs)-1]
	if d.Estado != dte.EstadoAceptado || len(envs) != 2 || deref(d.Tracking.TrackID) != last.TrackID || deref(d.Tracking.Intentos) != 1 {
		t.Errorf("after a timeout: %s, %d envelopes at the fake, track id %q (the hung upload's %s), intentos %d; want aceptado through the one envelope",
			d.Estado, len(envs), deref(d.Tracking.TrackID), last.TrackID, deref(d.Tracking.Intentos))
	}
	// (Its ESTADO is FAU or DOK, depending on how far the review went.)
	if q := r.fake.Requests(siitest.EstDteAv); len(q) != 1 || !strings.HasPrefix(q[0].Result, "RECIBIDO SI TRACKID "+last.TrackID+" ") {
		t.Errorf("%d getEstDteAv queries, want one answered with the track id %s", len(q), last.TrackID)
		for _, x := range q {
			t.Logf("getEstDteAv: %s", x.Result)
		}
	}
	if ev := strings.Join(r.events(t, res.ID), ","); ev != "dte.created,dte.accepted" {
		t.Errorf("events %s", ev)
	}

	r.fake.Inject(siitest.BoletaUpload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
	res = emitOK(t, r.s, r.emp.ID, submitBody(39, true))
	d = r.waitFinal(t, res.ID)
	envs = r.fake.Envelopes()
	last = envs[len(envs)-1]
	// The boleta's own status (the arrival check, after the check delay)
	// finds it: settled from its code, without a track id, never sent
	// again.
	if d.Estado != dte.EstadoAceptado || deref(d.Tracking.CodigoSII) != "DOK" || d.Tracking.TrackID != nil || deref(d.Tracking.Intentos) != 1 {
		t.Errorf("boleta after a timeout: %s codigo %q track id %v intentos %d; want aceptado through DOK, no track id, one upload",
			d.Estado, deref(d.Tracking.CodigoSII), d.Tracking.TrackID, deref(d.Tracking.Intentos))
	}
	if len(envs) != 3 || !last.Boleta || len(r.fake.Requests(siitest.BoletaUpload)) != 1 {
		t.Errorf("fake envelopes %d (last boleta %v), boleta uploads %d; want the boleta filed once", len(envs), last.Boleta,
			len(r.fake.Requests(siitest.BoletaUpload)))
	}
	if d.SIIStatus == nil || d.SIIStatus.Source != "boleta.dte" || deref(d.SIIStatus.EstadoSII) != "DOK" {
		t.Errorf("boleta sii_status %+v, want the per-boleta status DOK", d.SIIStatus)
	}
	if ev := strings.Join(r.events(t, res.ID), ","); ev != "dte.created,dte.accepted" {
		t.Errorf("boleta events %s", ev)
	}
}

// TestSubmitLostAnswer: the fake accepts a factura's upload and never
// answers; the client times out. getEstDteAv names the envelope, and its
// review decides: accepted with reparos ends con_reparos with
// dte.repaired, a document or envelope the review rejected ends rechazado
// with dte.rejected; each tracked with that first envelope's track id, and
// uploaded once.
func TestSubmitLostAnswer(t *testing.T) {
	t.Parallel()
	r := newSubmitRig(t, siitest.Options{StepEvery: 200 * time.Millisecond}, 500*time.Millisecond)
	cases := []struct {
		script siitest.Outcome
		estado dte.Estado
		event  string
	}{
		{siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"}, dte.EstadoConReparos, "dte.repaired"},
		{siitest.Outcome{Result: siitest.Rejected, Detail: "CAF-3-517"}, dte.EstadoRechazado, "dte.rejected"},
		{siitest.Outcome{Envelope: "RCT"}, dte.EstadoRechazado, "dte.rejected"},
	}
	for i, tc := range cases {
		folio := int64(i + 1)
		r.fake.Script(dtetest.EmisorRUT, 33, folio, tc.script)
		r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
		uploads := len(r.fake.Requests(siitest.Upload))
		res := emitOK(t, r.s, r.emp.ID, submitBody(33, true))
		if res.Folio != folio {
			t.Fatalf("folio %d, want %d", res.Folio, folio)
		}
		d := r.waitFinal(t, res.ID)
		var carried []string
		for _, e := range r.fake.Envelopes() {
			for _, ed := range e.Docs {
				if ed.Tipo == 33 && ed.Folio == folio {
					carried = append(carried, e.TrackID)
				}
			}
		}
		if n := len(r.fake.Requests(siitest.Upload)) - uploads; n != 1 || len(carried) != 1 {
			t.Fatalf("case %d: %d uploads, the folio in envelopes %v; want one", i, n, carried)
		}
		if d.Estado != tc.estado || deref(d.Tracking.TrackID) != carried[0] {
			t.Errorf("case %d: %s track id %q, want %s with %s (tracking %+v)", i, d.Estado, deref(d.Tracking.TrackID), tc.estado, carried[0], d.Tracking)
		}
		if ev := strings.Join(r.events(t, res.ID), ","); ev != "dte.created,"+tc.event {
			t.Errorf("case %d events %s, want dte.created,%s", i, ev, tc.event)
		}
	}
	if n := len(r.fake.Requests(siitest.EstDteAv)); n != len(cases) {
		t.Errorf("%d getEstDteAv queries, want %d", n, len(cases))
	}
}

// TestSubmitLater: a document emitted without auto_send waits in firmado
// until SubmitDTE, which answers its envelope; the same key answers it
// again; another key is a conflict, as is another company's id (not
// found).
func TestSubmitLater(t *testing.T) {
	t.Parallel()
	r := newSubmitRig(t, siitest.Options{}, 0)
	ctx := context.Background()
	res := emitOK(t, r.s, r.emp.ID, submitBody(33, false))
	time.Sleep(200 * time.Millisecond)
	if d, _ := r.s.Documents.Get(ctx, r.emp.ID, res.ID, api.DTEGetParams{}); d.Estado != dte.EstadoFirmado {
		t.Fatalf("auto_send false: %s, want firmado", d.Estado)
	}
	key := newKey()
	e, replayed, err := r.s.Envelopes.Submit(ctx, r.emp.ID, res.ID, api.SubmitParams{IdempotencyKey: key})
	if err != nil || replayed || len(e.Documentos) != 1 || e.Documentos[0].DTEID != res.ID || e.Tipo != "EnvioDTE" || e.Ambiente != "certificacion" {
		t.Fatalf("SubmitDTE = %+v, %v, %v", e, replayed, err)
	}
	d := r.waitFinal(t, res.ID)
	if d.Estado != dte.EstadoAceptado || deref(d.Tracking.EnvioID) != e.ID {
		t.Errorf("submitted later: %s in envelope %q, want aceptado in %s", d.Estado, deref(d.Tracking.EnvioID), e.ID)
	}
	again, replayed, err := r.s.Envelopes.Submit(ctx, r.emp.ID, res.ID, api.SubmitParams{IdempotencyKey: key})
	if err != nil || !replayed || again.ID != e.ID || again.Estado != e.Estado {
		t.Errorf("the same key again: %+v, %v, %v; want the first answer replayed", again, replayed, err)
	}
	if _, _, err := r.s.Envelopes.Submit(ctx, r.emp.ID, res.ID, api.SubmitParams{IdempotencyKey: newKey()}); fault.KindOf(err) != fault.KindConflict {
		t.Errorf("second submission: %v, want a conflict", err)
	}
	if _, _, err := r.s.Envelopes.Submit(ctx, "otra-empresa", res.ID, api.SubmitParams{IdempotencyKey: newKey()}); fault.KindOf(err) != fault.KindNotFound {
		t.Errorf("another company's document: %v, want not found", err)
	}
	got, err := r.s.Envelopes.Get(ctx, r.emp.ID, e.ID)
	if err != nil || got.Estado != api.EnvioProcesado || got.TrackID == nil || got.Intentos != 1 || got.Documentos[0].Estado != dte.EstadoAceptado {
		t.Errorf("GetEnvio = %+v, %v; want procesado with its track id and the document aceptado", got, err)
	}
}

// TestSubmitMixed: documents of four types (48; 24 under -short), each
// with a scripted review, all reach the scripted state with tracking
// filled and exactly one event per transition. The script repeats every
// six folios, so 48 documents give each type every review twice (24:
// once); the 200 this test once emitted proved nothing more and cost a
// minute under -race.
func TestSubmitMixed(t *testing.T) {
	t.Parallel()
	n := 48
	if testing.Short() {
		n = 24
	}
	r := newSubmitRig(t, siitest.Options{Steps: []string{"SOK", "FOK"}}, 0)
	ctx := context.Background()
	for _, tipo := range []dte.TipoDTE{34, 41} {
		if _, err := r.s.CAFs.Register(ctx, r.emp.ID, api.CAFInput{TipoDTE: tipo, CAFXML: string(creds(t).CAFFiles[tipo])}); err != nil {
			t.Fatal(err)
		}
	}
	tipos := []int{33, 34, 39, 41}
	script := func(folio int64) (siitest.Outcome, dte.Estado, string) {
		switch folio % 6 {
		case 1:
			return siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"}, dte.EstadoConReparos, "dte.repaired"
		case 2:
			return siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"}, dte.EstadoRechazado, "dte.rejected"
		case 3:
			return siitest.Outcome{Envelope: "RSC"}, dte.EstadoRechazado, "dte.rejected"
		case 4:
			return siitest.Outcome{Envelope: "RCT"}, dte.EstadoRechazado, "dte.rejected"
		}
		return siitest.Outcome{}, dte.EstadoAceptado, "dte.accepted"
	}
	for _, tipo := range tipos {
		for f := int64(1); f <= int64(n/len(tipos)); f++ {
			o, _, _ := script(f)
			r.fake.Script(dtetest.EmisorRUT, tipo, f, o)
		}
	}
	type want struct {
		folio  int64
		estado dte.Estado
		event  string
	}
	wants := map[string]want{}
	for i := 0; i < n; i++ {
		tipo := tipos[i%len(tipos)]
		body := submitBody(tipo, true)
		res, err := emitBody(r.s, ctx, r.emp.ID, newKey(), body)
		if err != nil {
			t.Fatalf("emitting tipo %d: %v", tipo, err)
		}
		var resp api.EmitResponse
		if err := json.Unmarshal(res.Body, &resp); err != nil {
			t.Fatal(err)
		}
		_, estado, event := script(resp.Folio)
		wants[resp.ID] = want{resp.Folio, estado, event}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for id, w := range wants {
		for {
			d, err := r.s.Documents.Get(ctx, r.emp.ID, id, api.DTEGetParams{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Estado.Final() {
				if d.Estado != w.estado {
					t.Errorf("tipo %d folio %d: %s, want %s (tracking %+v)", d.TipoDTE, w.folio, d.Estado, w.estado, d.Tracking)
				}
				if d.Tracking == nil || deref(d.Tracking.TrackID) == "" || deref(d.Tracking.CodigoSII) == "" || d.SIIStatus == nil {
					t.Errorf("tipo %d folio %d: tracking %+v sii_status %+v", d.TipoDTE, w.folio, d.Tracking, d.SIIStatus)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tipo %d folio %d still %s", d.TipoDTE, w.folio, d.Estado)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// One event per transition: count them all at once.
	counts := map[string]map[string]int{}
	for _, e := range r.allEvents(t) {
		for id := range wants {
			if strings.Contains(string(e.Payload), id) {
				if counts[id] == nil {
					counts[id] = map[string]int{}
				}
				counts[id][e.Type]++
			}
		}
	}
	for id, w := range wants {
		if c := counts[id]; len(c) != 2 || c["dte.created"] != 1 || c[w.event] != 1 {
			t.Errorf("folio %d events %v, want dte.created and %s once each", w.folio, c, w.event)
		}
	}
	if n := len(r.fake.Envelopes()); n != len(wants) {
		t.Errorf("the fake received %d envelopes for %d documents", n, len(wants))
	}
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// rerunStore runs every write function twice: once in a transaction it
// then rolls back, and again in one that commits, as a store may after a
// serialization failure or a failed savepoint. between, when set, runs
// after the rollback, before the second run.
type rerunStore struct {
	store.Store
	between func(ctx context.Context) error
}

var errRerun = errors.New("rolled back to run again")

func (r rerunStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	err := r.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return errRerun
	})
	if !errors.Is(err, errRerun) {
		return err
	}
	if r.between != nil {
		if err := r.between(ctx); err != nil {
			return err
		}
	}
	return r.Store.Write(ctx, fn)
}

// rerunAfterSetup is a rerunStore from the moment on is set (after the
// company's setup), for the writes of emission and submission.
type rerunAfterSetup struct {
	store.Store
	on atomic.Bool
}

// SerialWrites forwards the wrapped store's answer, so the service groups
// its transactions as it would on that store.
func (r *rerunAfterSetup) SerialWrites() bool {
	sw, ok := r.Store.(store.SerialWriter)
	return ok && sw.SerialWrites()
}

func (r *rerunAfterSetup) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if !r.on.Load() {
		return r.Store.Write(ctx, fn)
	}
	return rerunStore{Store: r.Store}.Write(ctx, fn)
}

// TestSubmitWritesRunTwice submits through a store that runs every write
// function twice (the first run rolled back): the result is the same as
// with one run — one attempt counted, one envelope, accepted.
func TestSubmitWritesRunTwice(t *testing.T) {
	t.Parallel()
	var rs *rerunAfterSetup
	r := newSubmitRigOver(t, backends[0], siitest.Options{}, 0, func(st store.Store) store.Store {
		rs = &rerunAfterSetup{Store: st}
		return rs
	})
	rs.on.Store(true)
	for _, tipo := range []int{33, 39} {
		res := emitOK(t, r.s, r.emp.ID, submitBody(tipo, true))
		d := r.waitFinal(t, res.ID)
		if d.Estado != dte.EstadoAceptado {
			t.Fatalf("tipo %d: estado %s, want aceptado (tracking %+v)", tipo, d.Estado, d.Tracking)
		}
		if tr := d.Tracking; tr == nil || deref(tr.Intentos) != 1 || deref(tr.EnvioID) == "" {
			t.Errorf("tipo %d: tracking %+v, want one attempt and its envelope", tipo, tr)
		}
	}
	if n := len(r.fake.Requests(siitest.Upload)); n != 1 {
		t.Errorf("%d DTEUploads, want 1", n)
	}
	if n := len(r.fake.Requests(siitest.BoletaUpload)); n != 1 {
		t.Errorf("%d boleta uploads, want 1", n)
	}
}

// TestSubmitQueuedByAProcessThatDoesNotSubmit: a service without
// Config.Submission still queues a document for submission (the
// submission queue is declared with no workers in this process), and its
// runner leaves the job alone for the processes that submit: after a
// second of the runner the document is still firmado and its job waits,
// available and never attempted.
func TestSubmitQueuedByAProcessThatDoesNotSubmit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backends[0], true)
	ctx := context.Background()
	res := emitOK(t, f.s, f.emp.ID, facturaBody(1))
	if _, _, err := f.s.Envelopes.Submit(ctx, f.emp.ID, res.ID, api.SubmitParams{IdempotencyKey: newKey()}); err != nil {
		t.Fatal(err)
	}
	// The job's id: the store numbers jobs from 1 in a new database.
	var job *store.JobInfo
	for id := int64(1); id <= 20 && job == nil; id++ {
		if info, err := f.s.st.Jobs().Job(ctx, id); err == nil && info.Kind == "dte.sii" {
			job = info
		}
	}
	if job == nil {
		t.Fatal("no dte.sii job among the first 20")
	}
	if err := f.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.s.Stop(ctx)
	time.Sleep(time.Second) // ten polls of the runner
	d, err := f.s.Documents.Get(ctx, f.emp.ID, res.ID, api.DTEGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.s.st.Jobs().Job(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Estado != dte.EstadoEnviando || info.State != store.JobAvailable || info.Attempt != 0 || len(info.Errors) != 0 {
		t.Errorf("DTE %s, its job %+v; want enviando (its envelope pending) and the job available, never attempted", d.Estado, info)
	}
}
