package sii_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// signatureOf returns the SignatureValue of an emitted DTE, read back from
// its signed XML.
func signatureOf(t *testing.T, e *dte.Emitted) string {
	t.Helper()
	d, err := dte.ParseDTE(e.XML)
	if err != nil || d.SignatureValue == "" {
		t.Fatalf("reading the signature of folio %d: %v", e.Folio, err)
	}
	return d.SignatureValue
}

// TestDocumentStatusAdvanced: getEstDteAv names the envelope that carried
// a document from the moment it got its track id, including a document
// its review rejected; before the upload, or with another document's
// signature, the SII did not receive it. A revoked token is renewed once,
// and an HTML page is retried.
func TestDocumentStatusAdvanced(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	ctx := context.Background()
	env, docs := r.envelope(33, 33)
	r.fake.Script(dtetest.EmisorRUT, 33, docs[0].Folio, siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"})
	r.fake.Script(dtetest.EmisorRUT, 33, docs[1].Folio, siitest.Outcome{Result: siitest.Rejected, Detail: "CAF-3-517"})
	qa, qb := query(docs[0], "76086428-5"), query(docs[1], "76086428-5")
	sa, sb := signatureOf(t, docs[0]), signatureOf(t, docs[1])
	ask := func(q sii.DocumentQuery, sig string) *sii.AdvancedStatus {
		t.Helper()
		s, err := r.client.DocumentStatusAdvanced(ctx, q, sig)
		if err != nil {
			t.Fatal(err)
		}
		if s.HdrEstado != "0" || s.NumAtencion == "" || len(s.Raw) == 0 {
			t.Errorf("header %q %q, NUMATENCION %q", s.HdrEstado, s.HdrGlosa, s.NumAtencion)
		}
		return s
	}

	if s := ask(qa, sa); s.Recibido || s.Estado != "FAU" || s.Envelope() != "" {
		t.Errorf("before the upload: %+v, want RECIBIDO NO, FAU", s)
	}
	track := upload(t, r, env)
	// Received, in review: the track id, and getEstDte's FAU.
	if s := ask(qa, sa); !s.Recibido || s.TrackID != track || s.Envelope() != track || s.Estado != "FAU" {
		t.Errorf("in review: %+v, want RECIBIDO SI, TRACKID %s, FAU", s, track)
	}
	// The signature is split over lines as in a signed file: the client
	// removes the whitespace.
	if s := ask(qb, sb[:20]+"\n"+sb[20:]); !s.Recibido || s.TrackID != track {
		t.Errorf("signature with a newline: %+v", s)
	}
	if seen, _ := poll(t, r, track, 10); seen[len(seen)-1] != "EPR" {
		t.Fatalf("envelope states %v", seen)
	}
	if s := ask(qa, sa); !s.Recibido || s.TrackID != track || s.Estado != "DOK" {
		t.Errorf("accepted with reparos: %+v, want RECIBIDO SI, DOK", s)
	}
	if s := ask(qb, sb); !s.Recibido || s.TrackID != track || s.Estado != "FAU" {
		t.Errorf("rejected by the review: %+v, want RECIBIDO SI with the track id, FAU", s)
	}
	// Another document's signature: not this document.
	if s := ask(qa, sb); s.Recibido || s.Estado != "DNK" || s.TrackID != "" || s.Envelope() != "" {
		t.Errorf("wrong signature: %+v, want RECIBIDO NO, DNK", s)
	}
	// The right signature with a wrong amount: received, data do not match.
	wrong := qa
	wrong.Monto++
	if s := ask(wrong, sa); !s.Recibido || s.Estado != "DNK" || s.TrackID != track {
		t.Errorf("wrong amount: %+v, want RECIBIDO SI, DNK", s)
	}

	seeds := len(r.fake.Requests(siitest.Seed))
	r.fake.RevokeTokens()
	r.fake.Inject(siitest.EstDteAv, siitest.Fault{Kind: siitest.FaultHTML503})
	if s := ask(qa, sa); !s.Recibido || s.TrackID != track {
		t.Errorf("after a revoked token and an HTML page: %+v", s)
	}
	if n := len(r.fake.Requests(siitest.Seed)) - seeds; n != 1 {
		t.Errorf("%d new seeds after the token was revoked, want 1", n)
	}
	reqs := r.fake.Requests(siitest.EstDteAv)
	last := reqs[len(reqs)-3:] // the HTML page, ESTADO 001, the answer
	if last[0].Result != "fault html" || last[1].Result != "ESTADO 001" || last[2].Token == last[1].Token {
		t.Errorf("last requests %q %q (tokens %q %q)", last[0].Result, last[1].Result, last[1].Token, last[2].Token)
	}

	if _, err := r.client.DocumentStatusAdvanced(ctx, qa, " \n"); err == nil {
		t.Error("an empty signature was sent")
	}
	bad := qa
	bad.FechaEmision = "23-11-2026"
	if _, err := r.client.DocumentStatusAdvanced(ctx, bad, sa); err == nil {
		t.Error("a date not YYYY-MM-DD was sent")
	}
}

// TestDocumentStatusAdvancedUnauthorised: a company not authorised to
// issue gets EMP, not received.
func TestDocumentStatusAdvancedUnauthorised(t *testing.T) {
	r := newRig(t, siitest.Options{}, nil)
	env, docs := r.envelope(33)
	upload(t, r, env)
	r.fake.Deauthorize(dtetest.EmisorRUT)
	s, err := r.client.DocumentStatusAdvanced(context.Background(), query(docs[0], "76086428-5"), signatureOf(t, docs[0]))
	if err != nil || s.Recibido || s.Estado != "EMP" || s.Envelope() != "" {
		t.Errorf("unauthorised company: %+v, %v; want EMP, not received", s, err)
	}
}

// TestMayHaveArrived: an upload that timed out after the fake accepted it
// may have arrived; one refused with an HTML page, or sent to a closed
// port, did not.
func TestMayHaveArrived(t *testing.T) {
	r := newRig(t, siitest.Options{}, func(c *sii.Config) { c.Timeout = 300 * time.Millisecond })
	ctx := context.Background()
	env, _ := r.envelope(33)
	if _, err := r.client.Token(ctx); err != nil {
		t.Fatal(err)
	}
	r.fake.Inject(siitest.Upload, siitest.Fault{Kind: siitest.FaultAcceptThenHang}, siitest.Fault{Kind: siitest.FaultHTML503})
	if _, err := r.client.Upload(ctx, dtetest.EmisorRUT, env); err == nil || !sii.MayHaveArrived(err) {
		t.Errorf("timeout after acceptance: %v, MayHaveArrived false", err)
	}
	if _, err := r.client.Upload(ctx, dtetest.EmisorRUT, env); err == nil || sii.MayHaveArrived(err) {
		t.Errorf("HTML 503: %v, MayHaveArrived true", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	c, err := sii.New(sii.Config{Endpoints: sii.SingleHost(closed), Certificate: r.creds.Cert, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Upload(ctx, dtetest.EmisorRUT, env); err == nil || sii.MayHaveArrived(err) {
		t.Errorf("closed port: %v, MayHaveArrived true", err)
	}
	if sii.MayHaveArrived(errors.New("not a transport error")) {
		t.Error("MayHaveArrived true for a plain error")
	}
}
