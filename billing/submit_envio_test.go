package billing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// TestEnvelopeReviewOfSeveral: an EnvioDTE of three facturas whose review
// mixes results within tipo 33 (getEstUp counts them, names none): each
// document's own status (getEstDte) settles it. The rejected one (FAU)
// is rechazado; the two the SII has are con_reparos, since the type has
// both plain acceptances and reparos and the SII's web services do not say
// which had them, and their text says so. A factura of tipo 34 alone in
// the same envelope, accepted, is aceptado by its type's counts.
func TestEnvelopeReviewOfSeveral(t *testing.T) {
	t.Parallel()
	r := newSubmitRig(t, siitest.Options{StepEvery: 100 * time.Millisecond}, 0)
	ctx := context.Background()
	if _, err := r.s.CAFs.Register(ctx, r.emp.ID, api.CAFInput{TipoDTE: 34, CAFXML: string(creds(t).CAFFiles[34])}); err != nil {
		t.Fatal(err)
	}
	r.fake.Script(dtetest.EmisorRUT, 33, 2, siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"})
	r.fake.Script(dtetest.EmisorRUT, 33, 3, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})
	var ids []string
	for range 3 {
		ids = append(ids, emitOK(t, r.s, r.emp.ID, submitBody(33, false)).ID)
	}
	exenta := []byte(`{"tipo_dte":34,"receptor":{"rut":"77.777.777-7","razon_social":"Pérez & Hijos Ltda.","giro":"Comercio","direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"},"detalle":[{"nombre":"Curso","cantidad":1,"precio":50000}],"auto_send":false}`)
	ids = append(ids, emitOK(t, r.s, r.emp.ID, exenta).ID)
	e, _, err := r.s.Envelopes.Create(ctx, r.emp.ID, api.EnvioRequest{IdempotencyKey: newKey(), DTEIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	got := r.waitEnvio(t, e.ID)
	want := []dte.Estado{dte.EstadoConReparos, dte.EstadoConReparos, dte.EstadoRechazado, dte.EstadoAceptado}
	for i, d := range got.Documentos {
		if d.Estado != want[i] {
			t.Errorf("document %d (tipo %d folio %d): %s, want %s (glosa %q)", i, d.TipoDTE, d.Folio, d.Estado, want[i], deref(d.GlosaSII))
		}
	}
	if g := deref(got.Documentos[0].GlosaSII); !strings.Contains(g, "do not say which") || !strings.Contains(g, "1 aceptados, 1 con reparos, 1 rechazados") {
		t.Errorf("the accepted factura's glosa %q does not say why it reads con_reparos", g)
	}
	if n := len(r.fake.Envelopes()); n != 1 || len(r.fake.Envelopes()[0].Docs) != 4 {
		t.Errorf("the fake filed %d envelopes, want one of 4 documents", n)
	}
	if q := r.fake.Requests(siitest.EstDte); len(q) != 3 {
		t.Errorf("%d getEstDte queries, want one per factura of the mixed type", len(q))
	}
}

// legacyArgs is a submission job as versions before envelopes of several
// documents queued it: by document.
type legacyArgs struct {
	EmpresaID string `json:"empresa_id"`
	DTEID     string `json:"dte_id"`
	Step      string `json:"step"`
	N         int    `json:"n"`
}

func (legacyArgs) Kind() string           { return "dte.sii" }
func (legacyArgs) JobOpts() store.JobOpts { return store.JobOpts{Queue: submission.Queue} }

// TestSubmitCarriesOnEarlierJobs: a document an earlier version was
// sending when the process was upgraded (its envelope without an
// environment or results, its upload to try again, its job naming the
// document) is carried on: the job continues as its envelope's, the same
// envelope bytes go, and it ends aceptado; its envelope reads with the
// environment and the result of its document.
func TestSubmitCarriesOnEarlierJobs(t *testing.T) {
	t.Parallel()
	r := newSubmitRig(t, siitest.Options{StepEvery: 100 * time.Millisecond}, 0)
	ctx := context.Background()
	res := emitOK(t, r.s, r.emp.ID, submitBody(33, false))
	d, err := r.s.st.GetDTE(ctx, r.emp.ID, res.ID)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := r.s.signingCert(ctx, r.emp.ID)
	if err != nil {
		t.Fatal(err)
	}
	emisor, err := issuerOf(d)
	if err != nil {
		t.Fatal(err)
	}
	xml, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor}, cert, d.XML)
	if err != nil {
		t.Fatal(err)
	}
	legacy := &store.Envio{EmpresaID: r.emp.ID, DTEIDs: []string{d.ID}, Estado: "reintentar", Attempts: 1, XML: xml}
	if err := r.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEnvio(ctx, legacy); err != nil {
			return err
		}
		cur, err := tx.GetDTEForUpdate(ctx, r.emp.ID, d.ID)
		if err != nil {
			return err
		}
		tr := outbox.TrackingOf(cur)
		tr.EnvioID, tr.Intentos = &legacy.ID, ptrTo(1)
		if err := outbox.SetTracking(cur, tr); err != nil {
			return err
		}
		cur.Estado = string(dte.EstadoEnviando)
		if err := tx.UpdateDTE(ctx, cur); err != nil {
			return err
		}
		_, err = tx.Enqueue(ctx, legacyArgs{EmpresaID: r.emp.ID, DTEID: d.ID, Step: "upload", N: 1}, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := r.waitFinal(t, d.ID)
	if got.Estado != dte.EstadoAceptado || deref(got.Tracking.EnvioID) != legacy.ID || deref(got.Tracking.Intentos) != 2 {
		t.Errorf("the earlier version's document: %s tracking %+v; want aceptado in its envelope after a second attempt", got.Estado, got.Tracking)
	}
	envs := r.fake.Envelopes()
	if len(envs) != 1 || string(envs[0].Raw) != string(xml) {
		t.Errorf("the fake filed %d envelopes; want the stored envelope's bytes once", len(envs))
	}
	e, err := r.s.Envelopes.Get(ctx, r.emp.ID, legacy.ID)
	if err != nil || e.Ambiente != "certificacion" || e.Estado != api.EnvioProcesado || len(e.Documentos) != 1 || e.Documentos[0].Estado != dte.EstadoAceptado {
		t.Errorf("the earlier version's envelope: %+v, %v", e, err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestBoletaVOF: a boleta envelope the SII reports VOF (a state no source
// confirms: some clients read it as the SII's own error) is asked again a
// bounded number of times, then believed as a rejection.
func TestBoletaVOF(t *testing.T) {
	t.Parallel()
	r := newSubmitRig(t, siitest.Options{Steps: []string{}}, 0)
	r.fake.Script(dtetest.EmisorRUT, 39, 1, siitest.Outcome{Envelope: "VOF"})
	res := emitOK(t, r.s, r.emp.ID, submitBody(39, true))
	d := r.waitFinal(t, res.ID)
	if d.Estado != dte.EstadoRechazado || deref(d.Tracking.CodigoSII) != "VOF" {
		t.Errorf("after VOF: %s codigo %q, want rechazado VOF", d.Estado, deref(d.Tracking.CodigoSII))
	}
	vof := 0
	for _, q := range r.fake.Requests(siitest.BoletaStatus) {
		if q.Result == "estado VOF" {
			vof++
		}
	}
	if vof != 6 {
		t.Errorf("%d polls answered VOF, want 6 (five asked again, the sixth believed)", vof)
	}
}
