package billing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// uploadRecorder stands between the service and the fake's boleta upload
// host: it notes when each upload arrived and the SHA-256 of the envelope
// it carried, then hands it to the fake.
type uploadRecorder struct {
	srv *httptest.Server

	mu      sync.Mutex
	digests []string
	at      []time.Time
}

func newUploadRecorder(t *testing.T, next http.Handler) *uploadRecorder {
	u := &uploadRecorder{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		u.mu.Lock()
		u.digests = append(u.digests, archivoDigest(r.Header.Get("Content-Type"), body))
		u.at = append(u.at, time.Now())
		u.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// uploads returns the digests and arrival times so far.
func (u *uploadRecorder) uploads() ([]string, []time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.digests...), append([]time.Time(nil), u.at...)
}

// archivoDigest is the hex SHA-256 of an upload's archivo part.
func archivoDigest(contentType string, body []byte) string {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			return ""
		}
		if p.FormName() == "archivo" {
			b, _ := io.ReadAll(p)
			sum := sha256.Sum256(b)
			return hex.EncodeToString(sum[:])
		}
	}
}

// boletaRig is a submit rig whose boleta uploads go through a recorder.
func boletaRig(t *testing.T, b backend) (*submitRig, *uploadRecorder) {
	return boletaRigTuned(t, b, siitest.Options{}, nil)
}

// boletaRigTuned is boletaRig with the fake's options (its StepEvery is
// the rig's) and the submission settings changed by tune.
func boletaRigTuned(t *testing.T, b backend, opts siitest.Options, tune func(*SubmitConfig)) (*submitRig, *uploadRecorder) {
	var rec *uploadRecorder
	opts.StepEvery = 200 * time.Millisecond
	r := newSubmitRigTuned(t, b, opts, 500*time.Millisecond, nil, func(f *siitest.Fake) sii.Endpoints {
		rec = newUploadRecorder(t, f.Handler())
		ep := f.Endpoints()
		ep.BoletaUpload = rec.srv.URL
		return ep
	}, tune)
	return r, rec
}

// heldEnvelope emits two boletas with auto_send false and sends them in
// one envelope; it returns their ids and the envelope's.
func (r *submitRig) heldEnvelope(t *testing.T) ([]string, *api.Envio) {
	t.Helper()
	ids := []string{emitOK(t, r.s, r.emp.ID, submitBody(39, false)).ID, emitOK(t, r.s, r.emp.ID, submitBody(39, false)).ID}
	e, _, err := r.s.Envelopes.Create(context.Background(), r.emp.ID, api.EnvioRequest{IdempotencyKey: newKey(), DTEIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	return ids, e
}

// waitEnvio waits until an envelope is procesado.
func (r *submitRig) waitEnvio(t *testing.T, id string) *api.Envio {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		e, err := r.s.Envelopes.Get(context.Background(), r.emp.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Estado == api.EnvioProcesado {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("envelope %s still %s after 30 s: %+v", id, e.Estado, e)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBoletaLostAnswer: an EnvioBOLETA whose upload got no answer follows
// the rule of the protocol notes' addendum, on both backends.
//
//   - The upload never reached the SII (the fake hangs without filing
//     it): every boleta's own status reads FAU at the first check
//     (BoletaCheckDelay after the attempt) and still after
//     BoletaSafetyDelay; only then is the envelope sent again, the same
//     bytes, and its review settles both boletas.
//   - The SII filed it and its review refused one boleta: one reads DOK,
//     the other FAU. The envelope arrived: the first is aceptado, the
//     second rechazado as not registered by the SII, and nothing is sent
//     again.
func TestBoletaLostAnswer(t *testing.T) {
	t.Parallel() // mostly waiting for the check and safety delays
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testBoletaLostAnswer(t, b)
		})
	}
}

func testBoletaLostAnswer(t *testing.T, b backend) {
	r, rec := boletaRig(t, b)
	ctx := context.Background()

	// Dropped: sent again after the check and the safety delay.
	r.fake.Inject(siitest.BoletaUpload, siitest.Fault{Kind: siitest.FaultHang})
	ids, e := r.heldEnvelope(t)
	got := r.waitEnvio(t, e.ID)
	digests, at := rec.uploads()
	if len(digests) != 2 || digests[0] != digests[1] || digests[0] == "" {
		t.Fatalf("uploads %v; want the envelope twice, the same bytes", digests)
	}
	if gap := at[1].Sub(at[0]); gap < 2*rigBoletaCheck {
		t.Errorf("sent again %s after the first attempt; want at least the check delay and the safety delay (%s)", gap, 2*rigBoletaCheck)
	}
	var before []string
	for _, q := range r.fake.Requests(siitest.BoletaDTE) {
		if q.At.Before(at[1]) {
			before = append(before, q.Result)
		}
	}
	if len(before) < 4 || strings.Count(strings.Join(before, ","), "codigo FAU") != len(before) {
		t.Errorf("the arrival checks before the resend answered %v; want two readings of FAU for both boletas", before)
	}
	envs := r.fake.Envelopes()
	if len(envs) != 1 || len(envs[0].Docs) != 2 {
		t.Fatalf("the fake filed %d envelopes, want the resend alone with both boletas", len(envs))
	}
	if got.TrackID == nil || strings.TrimLeft(*got.TrackID, "0") != strings.TrimLeft(envs[0].TrackID, "0") || got.Intentos != 2 {
		t.Errorf("the envelope %+v; want the resend's track id %s after two attempts", got, envs[0].TrackID)
	}
	for _, id := range ids {
		if d := r.waitFinal(t, id); d.Estado != dte.EstadoAceptado {
			t.Errorf("boleta %s: %s, want aceptado", id, d.Estado)
		}
	}

	// Filed, one refused: settled from the arrival check, never resent.
	folio := func(id string) int64 {
		d, err := r.s.Documents.Get(ctx, r.emp.ID, id, api.DTEGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Folio
	}
	ids = []string{emitOK(t, r.s, r.emp.ID, submitBody(39, false)).ID, emitOK(t, r.s, r.emp.ID, submitBody(39, false)).ID}
	r.fake.Script(dtetest.EmisorRUT, 39, folio(ids[1]), siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-103"})
	r.fake.Inject(siitest.BoletaUpload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
	e, _, err := r.s.Envelopes.Create(ctx, r.emp.ID, api.EnvioRequest{IdempotencyKey: newKey(), DTEIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	got = r.waitEnvio(t, e.ID)
	if got.TrackID != nil || got.Intentos != 1 || got.Documentos[0].Estado != dte.EstadoAceptado || got.Documentos[1].Estado != dte.EstadoRechazado ||
		deref(got.Documentos[0].CodigoSII) != "DOK" || deref(got.Documentos[1].CodigoSII) != "FAU" ||
		!strings.Contains(deref(got.Documentos[1].GlosaSII), "not registered by the SII") {
		t.Errorf("one boleta refused: %+v; want the first aceptado (DOK), the second rechazado (FAU, not registered by the SII), no track id, one attempt", got)
	}
	if digests, _ := rec.uploads(); len(digests) != 3 || len(r.fake.Envelopes()) != 2 {
		t.Errorf("%d boleta uploads, %d envelopes filed; want the envelope sent once", len(digests)-2, len(r.fake.Envelopes())-1)
	}
	if ev := strings.Join(r.events(t, ids[1]), ","); ev != "dte.created,dte.rejected" {
		t.Errorf("the refused boleta's events: %s", ev)
	}
}

// TestBoletaArrivalUnknownAnswers: the SII filed an EnvioBOLETA whose
// upload's answer was lost and accepted both its boletas, but one answer
// of the arrival check tells nothing (FNA, plain text, "Error 500"; and
// without -short EMP, a JSON without codigo, an HTML page, a timeout):
// nothing is decided on it (read as FAU it would make that boleta
// rechazado beside the other's DOK), the check asks again, and both end
// aceptado from DOK, the envelope uploaded once. (On SQLite: the reading
// of the answers does not depend on the store.)
func TestBoletaArrivalUnknownAnswers(t *testing.T) {
	t.Parallel() // mostly waiting for the check delay
	r, rec := boletaRig(t, backends[0])
	unknown := []siitest.Fault{
		{Kind: siitest.FaultCodigo, Code: "FNA"},
		{Kind: siitest.FaultPlainText, Code: "falta monto"},
		{Kind: siitest.FaultError500},
	}
	if !testing.Short() {
		unknown = append(unknown,
			siitest.Fault{Kind: siitest.FaultCodigo, Code: "EMP"},
			siitest.Fault{Kind: siitest.FaultPlainText, Code: `{"descripcion":"Documento no recibido"}`},
			siitest.Fault{Kind: siitest.FaultHTML503},
			siitest.Fault{Kind: siitest.FaultHang})
	}
	for _, f := range unknown {
		uploads, _ := rec.uploads()
		r.fake.Inject(siitest.BoletaUpload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
		r.fake.Inject(siitest.BoletaDTE, f)
		ids, e := r.heldEnvelope(t)
		got := r.waitEnvio(t, e.ID)
		if now, _ := rec.uploads(); len(now) != len(uploads)+1 {
			t.Errorf("fault %+v: %d uploads, want one", f, len(now)-len(uploads))
		}
		for i, d := range got.Documentos {
			if d.Estado != dte.EstadoAceptado || deref(d.CodigoSII) != "DOK" || d.DTEID != ids[i] {
				t.Errorf("fault %+v: boleta %d %s codigo %q; want aceptado (DOK), the unknown answer asked again", f, i, d.Estado, deref(d.CodigoSII))
			}
		}
	}
}

// TestBoletaRepeatedAfterResend: an EnvioBOLETA's upload reached the SII
// but its answer was lost, and the SII's review of it outlasts the
// arrival check and the safety delay (the fake's ReviewDelay), so the
// same envelope is sent again and its review refuses both boletas as
// "DTE Repetido" (RCH, error 100), while their own status still reads FAU
// after the reconcile window. A repeat after a resend proves the first
// copy arrived: the boletas stay procesando, never rechazado, and are
// settled from their own status once the first review ends (DOK:
// aceptado), with no third upload. On both backends.
func TestBoletaRepeatedAfterResend(t *testing.T) {
	t.Parallel() // mostly waiting for the delays
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			const review = 15 * time.Second
			r, rec := boletaRigTuned(t, b, siitest.Options{ReviewDelay: review},
				func(c *SubmitConfig) {
					c.ReconcileWindow, c.BoletaCheckDelay, c.BoletaSafetyDelay = 500*time.Millisecond, 500*time.Millisecond, 500*time.Millisecond
				})
			r.fake.Inject(siitest.BoletaUpload, siitest.Fault{Kind: siitest.FaultAcceptThenHang})
			ids, e := r.heldEnvelope(t)
			for deadline := time.Now().Add(10 * time.Second); len(r.fake.Envelopes()) == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the fake filed no envelope")
				}
			}
			r.fake.SetReviewDelay(0) // the resend is reviewed at once
			got := r.waitEnvio(t, e.ID)
			envs := r.fake.Envelopes()
			if digests, _ := rec.uploads(); len(digests) != 2 || len(envs) != 2 || envs[1].Docs[0].Detail != "DTE-3-100" {
				t.Fatalf("%d uploads, %d envelopes filed; want the envelope twice, the second refused as a repeat", len(digests), len(envs))
			}
			if time.Since(envs[0].Received) < review {
				t.Errorf("settled %s after the first upload, before the first review ended (%s)", time.Since(envs[0].Received), review)
			}
			for i, d := range got.Documentos {
				if d.Estado != dte.EstadoAceptado || deref(d.CodigoSII) != "DOK" {
					t.Errorf("boleta %d: %s codigo %q glosa %q; want aceptado (DOK) from its own status", i, d.Estado, deref(d.CodigoSII), deref(d.GlosaSII))
				}
			}
			for _, id := range ids {
				if ev := strings.Join(r.events(t, id), ","); ev != "dte.created,dte.accepted" {
					t.Errorf("boleta %s: events %s, want dte.created,dte.accepted", id, ev)
				}
			}
		})
	}
}
