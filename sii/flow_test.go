package sii_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// poll queries an envelope until its state is final or n polls were made,
// and returns the states seen.
func poll(t *testing.T, r *rig, track string, n int) ([]string, *sii.EnvelopeStatus) {
	t.Helper()
	var seen []string
	var s *sii.EnvelopeStatus
	for i := 0; i < n; i++ {
		var err error
		s, err = r.client.EnvelopeStatus(context.Background(), dtetest.EmisorRUT, track)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, s.Estado)
		if o := sii.EnvelopeOutcome(s, 0); o.Final() {
			break
		}
	}
	return seen, s
}

// upload sends env and requires STATUS 0.
func upload(t *testing.T, r *rig, env []byte) string {
	t.Helper()
	res, err := r.client.Upload(context.Background(), dtetest.EmisorRUT, env)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 0 {
		t.Fatalf("upload STATUS %d %v", res.Status, res.Errors)
	}
	return res.TrackID
}

// TestEnvelopeTerminals walks getEstUp to each final state: EPR accepted,
// with reparos, with a rejection, and the envelope rejections RSC, RFR and
// RCT (scripted, and provoked by a bad signature and a bad carátula).
func TestEnvelopeTerminals(t *testing.T) {
	cases := []struct {
		name    string
		outcome *siitest.Outcome
		opts    siitest.Options
		build   func(r *rig) []byte
		states  string
		estado  dte.Estado
		counts  sii.TypeCounts
	}{
		{name: "accepted", states: "SOK CRT FOK PDR EPR", estado: dte.EstadoAceptado,
			counts: sii.TypeCounts{Tipo: 33, Informados: 1, Aceptados: 1}},
		{name: "reparos", outcome: &siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"}, states: "SOK CRT FOK PDR EPR",
			estado: dte.EstadoConReparos, counts: sii.TypeCounts{Tipo: 33, Informados: 1, Reparos: 1}},
		{name: "rejected", outcome: &siitest.Outcome{Result: siitest.Rejected, Detail: "CAF-3-517"}, states: "SOK CRT FOK PDR EPR",
			estado: dte.EstadoRechazado, counts: sii.TypeCounts{Tipo: 33, Informados: 1, Rechazados: 1}},
		{name: "RSC scripted", outcome: &siitest.Outcome{Envelope: "RSC"}, states: "RSC", estado: dte.EstadoRechazado},
		{name: "RFR scripted", outcome: &siitest.Outcome{Envelope: "RFR"}, states: "SOK CRT RFR", estado: dte.EstadoRechazado},
		{name: "RCT scripted", outcome: &siitest.Outcome{Envelope: "RCT"}, states: "SOK RCT", estado: dte.EstadoRechazado},
		{name: "RFR from a broken signature", opts: siitest.Options{DeferRejections: true}, states: "SOK CRT RFR", estado: dte.EstadoRechazado,
			build: func(r *rig) []byte {
				env, _ := r.envelope(33)
				return bytes.Replace(env, []byte("<TmstFirmaEnv>2"), []byte("<TmstFirmaEnv>1"), 1)
			}},
		{name: "RCT from a carátula not sent by the certificate holder", states: "SOK RCT", estado: dte.EstadoRechazado,
			build: func(r *rig) []byte {
				x, _ := r.emit(33)
				env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: r.creds.Emisor, RutEnvia: "11111111-1"}, r.creds.Cert, x)
				if err != nil {
					t.Fatal(err)
				}
				return env
			}},
		{name: "custom timeline with -11", outcome: &siitest.Outcome{Steps: []string{"-11", "SOK", "PRD"}}, states: "-11 SOK PRD EPR",
			estado: dte.EstadoAceptado, counts: sii.TypeCounts{Tipo: 33, Informados: 1, Aceptados: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.opts, nil)
			var env []byte
			if tc.build != nil {
				env = tc.build(r)
			} else {
				var docs []*dte.Emitted
				env, docs = r.envelope(33)
				if tc.outcome != nil {
					r.fake.Script(dtetest.EmisorRUT, 33, docs[0].Folio, *tc.outcome)
				}
			}
			track := upload(t, r, env)
			seen, last := poll(t, r, track, 10)
			if got := strings.Join(seen, " "); got != tc.states {
				t.Fatalf("states %q, want %q", got, tc.states)
			}
			o := sii.EnvelopeOutcome(last, 33)
			if o.Estado != tc.estado {
				t.Errorf("outcome %+v, want %s", o, tc.estado)
			}
			if tc.counts.Tipo != 0 {
				if c, _ := last.CountsFor(33); c != tc.counts {
					t.Errorf("counts %+v, want %+v", c, tc.counts)
				}
			} else if len(last.Counts) != 0 {
				t.Errorf("an envelope rejection carries counts %+v", last.Counts)
			}
			if tc.estado == dte.EstadoRechazado && last.Estado == "EPR" && !o.Reconcile {
				t.Error("an EPR rejection does not ask for reconciliation")
			}
		})
	}
}

// TestEnvelopeCountsPerType checks an envelope with two types, one
// rejected document among them, and the per-type outcomes.
func TestEnvelopeCountsPerType(t *testing.T) {
	r := newRig(t, siitest.Options{Steps: []string{}}, nil)
	env, docs := r.envelope(33, 33, 34)
	r.fake.Script(dtetest.EmisorRUT, 33, docs[1].Folio, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})
	track := upload(t, r, env)
	_, s := poll(t, r, track, 1)
	if s.Estado != "EPR" || len(s.Counts) != 2 {
		t.Fatalf("status %+v", s)
	}
	if c, _ := s.CountsFor(33); c != (sii.TypeCounts{Tipo: 33, Informados: 2, Aceptados: 1, Rechazados: 1}) {
		t.Errorf("33: %+v", c)
	}
	if o := sii.EnvelopeOutcome(s, 34); o.Estado != dte.EstadoAceptado {
		t.Errorf("34 outcome %+v", o)
	}
	if o := sii.EnvelopeOutcome(s, 33); o.Estado != dte.EstadoRechazado {
		t.Errorf("33 outcome %+v", o)
	}
}

// TestSeedTimeout presents the signed seed after the seed's two minutes:
// the fake says TIME-OUT DEL SEED, and the client starts over once with a
// new seed; when that happens twice the error is a retryable AuthError.
func TestSeedTimeout(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	late := siitest.Fault{Kind: siitest.FaultLate, Late: 2*time.Minute + time.Second}
	r.fake.Inject(siitest.Token, late)
	if _, err := r.client.Token(context.Background()); err != nil {
		t.Fatalf("one late seed: %v", err)
	}
	toks := r.fake.Requests(siitest.Token)
	if len(toks) != 2 || toks[0].Result != "ESTADO 08" || toks[1].Result != "ESTADO 00" || len(r.fake.Requests(siitest.Seed)) != 2 {
		t.Errorf("token requests %+v, want a refused one then a new seed and a good one", toks)
	}

	r = newRig(t, siitest.Options{}, func(c *sii.Config) { c.Retries = -1 })
	r.fake.Inject(siitest.Token, late, late)
	_, err := r.client.Token(context.Background())
	var ae *sii.AuthError
	if !errors.As(err, &ae) || ae.Estado != "08" || !strings.Contains(ae.Glosa, "TIME-OUT DEL SEED") || !sii.IsRetryable(err) {
		t.Errorf("two late seeds: %v, want a retryable AuthError 08 TIME-OUT DEL SEED", err)
	}
}

// TestAuthErrors checks the token refusals that need the user: an
// unregistered RUT (-07) is not retryable; a seed ESTADO -2 is.
func TestAuthErrors(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	other, err := siitestCert("11111111-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sii.New(sii.Config{Endpoints: r.fake.Endpoints(), Certificate: other, RetryPause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Token(context.Background())
	var ae *sii.AuthError
	if !errors.As(err, &ae) || ae.Estado != "-07" || sii.IsRetryable(err) {
		t.Errorf("unregistered RUT: %v, want a final AuthError -07", err)
	}
	r.fake.Inject(siitest.Seed, siitest.Fault{Kind: siitest.FaultEstado, Code: "-2"})
	r.client, _ = sii.New(sii.Config{Endpoints: r.fake.Endpoints(), Certificate: r.creds.Cert, Retries: -1})
	_, err = r.client.Token(context.Background())
	if !errors.As(err, &ae) || ae.Estado != "-2" || !sii.IsRetryable(err) {
		t.Errorf("seed ESTADO -2: %v", err)
	}
}

// TestTokenExpiryMidRun lets the fake's token expire between two uploads:
// the second upload gets STATUS 5, the client gets one new token and
// retries once, and the token is otherwise reused.
func TestTokenExpiryMidRun(t *testing.T) {
	r := newRig(t, siitest.Options{TokenTTL: 10 * time.Minute}, func(c *sii.Config) { c.TokenTTL = time.Hour })
	env1, _ := r.envelope(33)
	env2, _ := r.envelope(33)
	env3, _ := r.envelope(33)
	upload(t, r, env1)
	upload(t, r, env2)
	r.clock.Advance(11 * time.Minute)
	track := upload(t, r, env3)
	ups := r.fake.Requests(siitest.Upload)
	if len(ups) != 4 {
		t.Fatalf("%d uploads, want 4 (two, then a refused one and its retry)", len(ups))
	}
	if ups[0].Token != ups[1].Token || ups[2].Token != ups[0].Token || ups[3].Token == ups[2].Token {
		t.Errorf("tokens %s %s %s %s: want the first reused until refused, then a new one", ups[0].Token, ups[1].Token, ups[2].Token, ups[3].Token)
	}
	if ups[2].Result != "STATUS 5" || !strings.HasPrefix(ups[3].Result, "STATUS 0") {
		t.Errorf("results %q, %q", ups[2].Result, ups[3].Result)
	}
	if n := len(r.fake.Requests(siitest.Token)); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}
	// getEstUp with a revoked token: ESTADO 001, one refresh, one retry.
	r.fake.RevokeTokens()
	s, err := r.client.EnvelopeStatus(context.Background(), dtetest.EmisorRUT, track)
	if err != nil || s.Estado != "SOK" {
		t.Fatalf("status after revocation: %+v, %v", s, err)
	}
	qs := r.fake.Requests(siitest.EstUp)
	if len(qs) != 2 || qs[0].Result != "ESTADO 001" || qs[1].Result != "ESTADO SOK" {
		t.Errorf("getEstUp log %+v", qs)
	}
	// The boleta API answers 401 to a revoked token: same recovery.
	benv, _ := r.envelope(39)
	if _, err := r.client.Upload(context.Background(), dtetest.EmisorRUT, benv); err != nil {
		t.Fatal(err)
	}
	r.fake.RevokeTokens()
	if _, err := r.client.Upload(context.Background(), dtetest.EmisorRUT, benv); err != nil {
		t.Fatalf("boleta upload after revocation: %v", err)
	}
	bu := r.fake.Requests(siitest.BoletaUpload)
	if len(bu) != 3 || bu[1].Result != "HTTP 401" {
		t.Errorf("boleta uploads %+v", bu)
	}
}

// TestTransportFaults injects HTML 503 pages, "Error 500", SOAP faults,
// resets and HTML with status 200, and checks the typed errors and the
// retries of idempotent calls (never of uploads).
func TestTransportFaults(t *testing.T) {
	faults := []struct {
		fault siitest.Fault
		kind  sii.TransportKind
		code  int
	}{
		{siitest.Fault{Kind: siitest.FaultHTML503}, sii.KindHTML, 503},
		{siitest.Fault{Kind: siitest.FaultHTML200}, sii.KindHTML, 200},
		{siitest.Fault{Kind: siitest.FaultError500}, sii.KindError500, 500},
		{siitest.Fault{Kind: siitest.FaultSOAP}, sii.KindFault, 500},
		{siitest.Fault{Kind: siitest.FaultReset}, sii.KindNetwork, 0},
	}
	for _, f := range faults {
		t.Run(string(f.kind)+"/"+strings.ReplaceAll(time.Duration(f.code).String(), "ns", ""), func(t *testing.T) {
			// Without retries: the typed error.
			r := newRig(t, siitest.Options{}, func(c *sii.Config) { c.Retries = -1 })
			env, _ := r.envelope(33)
			track := upload(t, r, env)
			r.fake.Inject(siitest.EstUp, f.fault)
			_, err := r.client.EnvelopeStatus(context.Background(), dtetest.EmisorRUT, track)
			var te *sii.TransportError
			if !errors.As(err, &te) || te.Kind != f.kind || te.StatusCode != f.code || !sii.IsRetryable(err) || te.Op != "getEstUp" {
				t.Errorf("getEstUp: %v, want a %s TransportError with HTTP %d", err, f.kind, f.code)
			}
			// With retries: the next attempt succeeds.
			r2 := newRig(t, siitest.Options{}, nil)
			track = upload(t, r2, env)
			r2.fake.Inject(siitest.EstUp, f.fault)
			if s, err := r2.client.EnvelopeStatus(context.Background(), dtetest.EmisorRUT, track); err != nil || s.Estado != "SOK" {
				t.Errorf("getEstUp with retries: %+v, %v", s, err)
			}
			if n := len(r2.fake.Requests(siitest.EstUp)); n != 2 {
				t.Errorf("%d getEstUp calls, want 2", n)
			}
			// An upload is never repeated on a transport error.
			r2.fake.Inject(siitest.Upload, f.fault)
			env2, _ := r2.envelope(33)
			_, err = r2.client.Upload(context.Background(), dtetest.EmisorRUT, env2)
			if !errors.As(err, &te) || te.Kind != f.kind {
				t.Errorf("upload: %v, want %s", err, f.kind)
			}
			if n := len(r2.fake.Requests(siitest.Upload)); n != 2 {
				t.Errorf("%d uploads, want 2 (one good, one faulted, no retry)", n)
			}
			// Seed and token are retried too.
			r3 := newRig(t, siitest.Options{}, nil)
			r3.fake.Inject(siitest.Seed, f.fault)
			r3.fake.Inject(siitest.Token, f.fault)
			if _, err := r3.client.Token(context.Background()); err != nil {
				t.Errorf("token with a fault on seed and token: %v", err)
			}
		})
	}
}

// TestTimeoutAfterAcceptance: the fake accepts an upload and never answers;
// the client times out, the caller resends, the resend's document is
// rejected as a duplicate (DTE-3-100), and getEstDte shows the document
// accepted through the first copy.
func TestTimeoutAfterAcceptance(t *testing.T) {
	r := newRig(t, siitest.Options{StepEvery: 10 * time.Second}, func(c *sii.Config) { c.Timeout = 300 * time.Millisecond })
	ctx := context.Background()
	env, docs := r.envelope(33)
	if _, err := r.client.Token(ctx); err != nil { // so the timeout applies to the upload alone
		t.Fatal(err)
	}
	r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
	_, err := r.client.Upload(ctx, dtetest.EmisorRUT, env)
	var te *sii.TransportError
	if !errors.As(err, &te) || te.Kind != sii.KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("upload into a hang: %v, want a timeout", err)
	}
	if n := len(r.fake.Envelopes()); n != 1 {
		t.Fatalf("the fake holds %d envelopes after the hang, want 1 (accepted)", n)
	}
	track := upload(t, r, env) // the blind resend
	r.clock.Advance(time.Minute)
	_, s := poll(t, r, track, 1)
	o := sii.EnvelopeOutcome(s, 33)
	if s.Estado != "EPR" || o.Estado != dte.EstadoRechazado || !o.Reconcile {
		t.Fatalf("resend: %+v → %+v, want an EPR rejection to reconcile", s, o)
	}
	e, _ := r.fake.Envelope(track)
	if e.Docs[0].Detail != "DTE-3-100" {
		t.Errorf("duplicate detail %q, want DTE-3-100", e.Docs[0].Detail)
	}
	ds, err := r.client.DocumentStatus(ctx, query(docs[0], "76086428-5"))
	if err != nil {
		t.Fatal(err)
	}
	if d := sii.DocumentOutcome(ds); ds.Estado != "DOK" || d.Estado != dte.EstadoAceptado {
		t.Errorf("getEstDte %+v → %+v, want DOK → aceptado", ds, d)
	}
}

// TestFAUBeforeProcessing: getEstDte says FAU while the envelope is not
// processed, and for a document the SII never got.
func TestFAUBeforeProcessing(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	env, docs := r.envelope(33)
	upload(t, r, env)
	ds, err := r.client.DocumentStatus(context.Background(), query(docs[0], "76086428-5"))
	if err != nil || ds.Estado != "FAU" || sii.DocumentOutcome(ds).Final() {
		t.Errorf("getEstDte before EPR: %+v, %v; want FAU, not final", ds, err)
	}
	r.fake.Deauthorize(dtetest.EmisorRUT)
	ds, err = r.client.DocumentStatus(context.Background(), query(docs[0], "76086428-5"))
	if err != nil || ds.Estado != "EMP" || sii.DocumentOutcome(ds).Estado != dte.EstadoRechazado {
		t.Errorf("getEstDte for an unauthorised company: %+v, %v", ds, err)
	}
}

// TestForeignTrack: a track id of another company gives -11 with ERR_CODE 1.
func TestForeignTrack(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	s, err := r.client.EnvelopeStatus(context.Background(), "96790240-3", "0000009999")
	if err != nil || s.Estado != "-11" || s.ErrCode != "1" || sii.EnvelopeOutcome(s, 0).Estado != dte.EstadoProcesando {
		t.Errorf("foreign track: %+v, %v", s, err)
	}
}

// TestQuirks reads answers with the return element prefixed, in CDATA, and
// in ISO-8859-1 bytes declared UTF-8.
func TestQuirks(t *testing.T) {
	for _, q := range []siitest.Quirks{{PrefixedReturn: true}, {CDATA: true}, {Latin1: true}, {PrefixedReturn: true, CDATA: true, Latin1: true}} {
		r := newRig(t, siitest.Options{Quirks: q}, nil)
		env, docs := r.envelope(33)
		r.fake.Script(dtetest.EmisorRUT, 33, docs[0].Folio, siitest.Outcome{Envelope: "RCT"})
		track := upload(t, r, env)
		_, s := poll(t, r, track, 5)
		if s.Estado != "RCT" || s.Glosa != "Rechazado por Error en Carátula" {
			t.Errorf("quirks %+v: ESTADO %q GLOSA %q", q, s.Estado, s.Glosa)
		}
	}
}

// TestConcurrentTokenReuse: concurrent uploads share one token.
func TestConcurrentTokenReuse(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	envs := make([][]byte, 6)
	for i := range envs {
		envs[i], _ = r.envelope(33)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(envs))
	for _, env := range envs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := r.client.Upload(context.Background(), dtetest.EmisorRUT, env)
			if err == nil && res.Status != 0 {
				err = errors.New(res.File + " STATUS not 0")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(r.fake.Requests(siitest.Seed)); n != 1 {
		t.Errorf("%d seeds for %d concurrent uploads, want 1", n, len(envs))
	}
	tok := ""
	for _, u := range r.fake.Requests(siitest.Upload) {
		if tok != "" && u.Token != tok {
			t.Errorf("uploads used tokens %s and %s", tok, u.Token)
		}
		tok = u.Token
	}
}

// TestSchemaRejection: an envelope whose signature still holds but whose
// root breaks the official schema (version="2.0") is refused with STATUS 7
// by the fake's xmllint check, and accepted by a fake without the check.
func TestSchemaRejection(t *testing.T) {
	r := newRig(t, siitest.Options{Schema: xmllintSchema(t)}, nil)
	env, _ := r.envelope(33)
	bad := bytes.Replace(env, []byte(`version="1.0">`), []byte(`version="2.0">`), 1)
	if bytes.Equal(bad, env) {
		t.Fatal("no version attribute to change")
	}
	res, err := r.client.Upload(context.Background(), dtetest.EmisorRUT, bad)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 7 || len(res.Errors) == 0 || !strings.Contains(strings.Join(res.Errors, " "), "version") {
		t.Errorf("STATUS %d errors %v, want 7 naming the version attribute", res.Status, res.Errors)
	}
	r2 := newRig(t, siitest.Options{}, nil)
	if res, err := r2.client.Upload(context.Background(), dtetest.EmisorRUT, bad); err != nil || res.Status != 0 {
		t.Errorf("without the schema check: %+v, %v", res, err)
	}
}

// TestTokenFault: the RCV-style fault "TOKEN invalido" gets a new token and
// one more call, not transport retries with the old token.
func TestTokenFault(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	env, _ := r.envelope(33)
	track := upload(t, r, env)
	r.fake.Inject(siitest.EstUp, siitest.Fault{Kind: siitest.FaultSOAP, Code: "Error de Autenticacion: TOKEN invalido"})
	s, err := r.client.EnvelopeStatus(context.Background(), dtetest.EmisorRUT, track)
	if err != nil || s.Estado != "SOK" {
		t.Fatalf("after a token fault: %+v, %v", s, err)
	}
	qs := r.fake.Requests(siitest.EstUp)
	if len(qs) != 2 || qs[0].Token == qs[1].Token {
		t.Errorf("getEstUp calls %+v: want two, the second with a new token", qs)
	}
	if n := len(r.fake.Requests(siitest.Token)); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}
}
