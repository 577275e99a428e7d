package billing

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// rutB is the receptor of submitBody's facturas: the second company the
// inbox tests host.
const rutB = "77777777-7"

// addCompanyB creates the receptor company on r's service, with the demo
// certificate, registered at the fake for the registry.
func (r *submitRig) addCompanyB(t *testing.T) *api.Empresa {
	t.Helper()
	ctx := context.Background()
	in := demoEmpresa()
	in.Rut, in.RazonSocial = rutB, "Pérez & Hijos Ltda."
	b, err := r.s.Company.Create(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.Company.UploadCertificate(ctx, b.ID, api.CertificadoUpload{File: creds(t).P12, Password: creds(t).Password, RutFirmante: dtetest.SignerRUT}); err != nil {
		t.Fatal(err)
	}
	r.fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT, rutB)
	return b
}

// emitToB emits a factura of A to B (sent to the SII when autoSend) and
// returns it with the EnvioDTE A would mail B.
func (r *submitRig) emitToB(t *testing.T, autoSend bool) (*api.DTE, []byte) {
	t.Helper()
	ctx := context.Background()
	req, err := dte.DecodeRequest(strings.NewReader(string(submitBody(33, autoSend))))
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := r.s.Documents.Emit(ctx, r.emp.ID, api.EmitParams{IdempotencyKey: newID(), Request: req})
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.s.documentMail(ctx, r.emp.ID, res.ID, "b@example.cl")
	if err != nil || o == nil {
		t.Fatalf("the document's mail: %v, %v", o, err)
	}
	d, err := r.s.Documents.Get(ctx, r.emp.ID, res.ID, api.DTEGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	return d, o.Attachments[0].Data
}

// eventsOf returns the company's events of one type.
func eventsOf(t *testing.T, s *Service, empresaID string, typ webhook.EventType) []store.Event {
	t.Helper()
	var out []store.Event
	page, err := s.st.ListEvents(context.Background(), empresaID, store.ListFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range page.Items {
		if e.Type == string(typ) {
			out = append(out, e)
		}
	}
	return out
}

// TestReceiveUpload: a supplier's EnvioDTE uploaded twice is one file and
// one document; the same document in another file is not recorded again;
// a broken file and a tampered document are kept, rejected, with their
// reports.
func TestReceiveUpload(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newSubmitRigOn(t, b, siitest.Options{}, 5*time.Second)
			ctx := context.Background()
			compB := r.addCompanyB(t)
			d, env := r.emitToB(t, false)

			first, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: env, CorreoEmisor: "a@example.cl"})
			if err != nil {
				t.Fatal(err)
			}
			if first.Estado != "conforme" || first.Duplicado || len(first.Recibidos) != 1 || first.Numero != 1 {
				t.Fatalf("first intake: %+v", first)
			}
			again, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: env})
			if err != nil {
				t.Fatal(err)
			}
			if !again.Duplicado || again.ID != first.ID || len(again.Recibidos) != 1 || again.Recibidos[0] != first.Recibidos[0] {
				t.Errorf("the same file again: %+v, want the first (%s) marked duplicado", again, first.ID)
			}
			rec, err := r.s.Received.Get(ctx, compB.ID, first.Recibidos[0])
			if err != nil {
				t.Fatal(err)
			}
			if rec.Estado != "pendiente" || rec.RutEmisor != dtetest.EmisorRUT || rec.TipoDTE != 33 || rec.Folio != d.Folio ||
				rec.MontoTotal != d.MontoTotal || rec.CorreoEmisor == nil || *rec.CorreoEmisor != "a@example.cl" {
				t.Errorf("recibido: %+v (DTE %d folio %d total %d)", rec, d.TipoDTE, d.Folio, d.MontoTotal)
			}
			if string(rec.Verificacion) == "null" {
				t.Error("the recibido has no verification report")
			}
			// The same document in another envelope (signed again: other
			// bytes) is the same record.
			_, env2 := r.emitToBAgain(t, d.ID)
			other, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: env2})
			if err != nil {
				t.Fatal(err)
			}
			if other.ID == first.ID || other.Duplicado || len(other.Recibidos) != 1 || other.Recibidos[0] != first.Recibidos[0] {
				t.Errorf("the same document in another file: %+v, want a new file naming recibido %s", other, first.Recibidos[0])
			}
			page, err := r.s.Received.List(ctx, compB.ID, api.RecibidoListParams{})
			if err != nil {
				t.Fatal(err)
			}
			if page.TotalCount != 1 {
				t.Errorf("%d recibidos, want 1", page.TotalCount)
			}
			if n := len(eventsOf(t, r.s, compB.ID, webhook.EventRecibidoCreated)); n != 1 {
				t.Errorf("%d recibido.created events, want 1", n)
			}
			// A file that is not an envelope is kept, rejected, with a report.
			bad, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: []byte("<EnvioDTE><SetDTE>roto")})
			if err != nil {
				t.Fatal(err)
			}
			if bad.Estado != "rechazada" || len(bad.Recibidos) != 0 || string(bad.Reporte) == "null" {
				t.Errorf("a broken file: %+v", bad)
			}
			// A tampered document: recorded, rejected, never acceptable.
			tampered := []byte(strings.Replace(string(env), "<MntTotal>", "<MntTotal>1", 1))
			tr, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: tampered})
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Recibidos) != 1 {
				t.Fatalf("a tampered file: %+v", tr)
			}
			tRec, err := r.s.Received.Get(ctx, compB.ID, tr.Recibidos[0])
			if err != nil {
				t.Fatal(err)
			}
			if tRec.Estado != "rechazado" || tRec.ID == first.Recibidos[0] {
				t.Errorf("a tampered document: %+v, want a rechazado record of its own", tRec)
			}
			if _, err := r.s.Received.Decide(ctx, compB.ID, tRec.ID, api.DecisionInput{Accion: "ACD"}); fault.As(err).Code != fault.InvalidState {
				t.Errorf("accepting a tampered document: %v, want INVALID_STATE", err)
			}
			// Tenancy: A sees nothing of B's.
			if _, err := r.s.Received.Get(ctx, r.emp.ID, first.Recibidos[0]); fault.KindOf(err) != fault.KindNotFound {
				t.Errorf("another company's recibido: %v, want not found", err)
			}
			if _, err := r.s.Received.Decide(ctx, r.emp.ID, first.Recibidos[0], api.DecisionInput{Accion: "ACD"}); fault.KindOf(err) != fault.KindNotFound {
				t.Errorf("deciding on another company's recibido: %v, want not found", err)
			}
		})
	}
}

// emitToBAgain packs the signed document id again in a new envelope.
func (r *submitRig) emitToBAgain(t *testing.T, id string) (string, []byte) {
	t.Helper()
	time.Sleep(1100 * time.Millisecond) // another TmstFirmaEnv: other bytes
	o, err := r.s.documentMail(context.Background(), r.emp.ID, id, "b@example.cl")
	if err != nil {
		t.Fatal(err)
	}
	return id, o.Attachments[0].Data
}

// TestDecisions: documents the SII accepted are accepted, claimed and
// received in the registry (the fake's history records each action), the
// window is read from the registry, and a second decision is refused.
func TestDecisions(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			r := newSubmitRigOn(t, b, siitest.Options{}, 5*time.Second)
			ctx := context.Background()
			compB := r.addCompanyB(t)
			var ids []string
			var docs []*api.DTE
			for range 3 {
				d, env := r.emitToB(t, true)
				if got := r.waitFinal(t, d.ID); got.Estado != dte.EstadoAceptado {
					t.Fatalf("the SII's review: %s", got.Estado)
				}
				rec, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: env})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, rec.Recibidos[0])
				docs = append(docs, d)
			}
			if err := r.s.Received.Refresh(ctx, compB.ID); err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				rec, err := r.s.Received.Get(ctx, compB.ID, id)
				if err != nil {
					t.Fatal(err)
				}
				if rec.FechaRecepcionSII == nil || rec.PlazoVence == nil || rec.PlazoVence.Sub(*rec.FechaRecepcionSII) != 8*24*time.Hour ||
					rec.DiasRestantes == nil || *rec.DiasRestantes != 7 || rec.RCV == nil {
					t.Errorf("after a refresh: %+v", rec)
				}
			}
			acc, err := r.s.Received.Decide(ctx, compB.ID, ids[0], api.DecisionInput{Accion: "acd"})
			if err != nil {
				t.Fatal(err)
			}
			if acc.Estado != "aceptado" || acc.Respuestas.Decision == nil || acc.Respuestas.Decision.Accion != "ACD" ||
				*acc.Respuestas.Decision.RCVCodigo != 0 {
				t.Errorf("accepted: %+v", acc)
			}
			if _, err := r.s.Received.Decide(ctx, compB.ID, ids[1], api.DecisionInput{Accion: "RCD"}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("a claim without a reason: %v, want a validation error", err)
			}
			cl, err := r.s.Received.Decide(ctx, compB.ID, ids[1], api.DecisionInput{Accion: "RCD", Motivo: "Precio distinto al pactado"})
			if err != nil {
				t.Fatal(err)
			}
			if cl.Estado != "reclamado" {
				t.Errorf("claimed: %+v", cl)
			}
			erm, err := r.s.Received.Decide(ctx, compB.ID, ids[2], api.DecisionInput{Accion: "ERM"})
			if err != nil {
				t.Fatal(err)
			}
			if !erm.MercaderiasRecibidas || erm.Estado != "aceptado" {
				t.Errorf("goods received: %+v", erm)
			}
			for i, want := range []string{"ACD", "RCD", "ERM"} {
				h := r.fake.RCVHistory(dtetest.EmisorRUT, 33, docs[i].Folio)
				if len(h) != 1 || string(h[0].Action) != want {
					t.Errorf("the registry's history of folio %d: %+v, want %s", docs[i].Folio, h, want)
				}
			}
			if _, err := r.s.Received.Decide(ctx, compB.ID, ids[0], api.DecisionInput{Accion: "RCD", Motivo: "tarde"}); fault.As(err).Code != fault.InvalidState {
				t.Errorf("a claim after the acceptance: %v, want INVALID_STATE", err)
			}
		})
	}
}

// TestWindowWarning: a pending document whose window closes within a day
// is warned about once.
func TestWindowWarning(t *testing.T) {
	t.Parallel()
	clock := time.Now()
	r := newSubmitRigOn(t, backends[0], siitest.Options{}, 5*time.Second)
	ctx := context.Background()
	compB := r.addCompanyB(t)
	_, env := r.emitToB(t, false)
	rec, err := r.s.Received.Receive(ctx, compB.ID, api.ReceiveParams{XML: env})
	if err != nil {
		t.Fatal(err)
	}
	// The SII received it 7 days and 2 hours ago (seeded): 22 hours left.
	got, _ := r.s.Received.Get(ctx, compB.ID, rec.Recibidos[0])
	r.fake.SeedRCV(siitest.RCVSeed{RutEmisor: dtetest.EmisorRUT, RutReceptor: rutB, Tipo: 33, Folio: got.Folio, Received: clock.Add(-(7*24 + 2) * time.Hour)})
	for range 2 {
		if err := r.s.Received.Refresh(ctx, compB.ID); err != nil {
			t.Fatal(err)
		}
	}
	ev := eventsOf(t, r.s, compB.ID, webhook.EventRecibidoPlazoPorVencer)
	if len(ev) != 1 {
		t.Fatalf("%d recibido.plazo_por_vencer events, want 1", len(ev))
	}
	var e webhook.Event
	if err := json.Unmarshal(ev[0].Payload, &e); err != nil {
		t.Fatal(err)
	}
	data, err := e.Recibido()
	if err != nil || data.ID != rec.Recibidos[0] || data.PlazoVence == nil {
		t.Errorf("the warning: %+v, %v", data, err)
	}
	soon := 0
	page, err := r.s.Received.List(ctx, compB.ID, api.RecibidoListParams{DiasRestantes: &soon})
	if err != nil || page.TotalCount != 1 {
		t.Errorf("dias_restantes=0: %+v, %v", page, err)
	}
}
