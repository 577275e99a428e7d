package submission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// maxVOFPolls is how many polls in a row a boleta envelope may read VOF
// (a state whose meaning no source confirms; some clients read it as an
// SII error) before it is believed as a rejection.
const maxVOFPolls = 5

// docPoll is what one poll found for one document of the envelope.
type docPoll struct {
	o      sii.Outcome
	status api.SIIStatus
}

// poll runs the status step: it asks for the envelope's state and, for
// each document still waiting, settles it (with its event) or records
// what the SII said, with the next poll while any waits.
func (sb *Submitter) poll(ctx context.Context, a submitArgs) error {
	e, err := sb.st.GetEnvio(ctx, a.EmpresaID, a.EnvioID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if e.Estado != envioPolling || e.TrackID == "" {
		return nil
	}
	docs, err := sb.readDocs(ctx, e)
	if err != nil {
		return err
	}
	var flying []*store.DTE
	for _, d := range docs {
		if inFlight(d, e) {
			flying = append(flying, d)
		}
	}
	if len(flying) == 0 {
		return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return sb.finish(ctx, tx, a) })
	}
	boleta := isBoleta(flying[0])
	var client *sii.Client
	var emp *store.Empresa
	var st *sii.EnvelopeStatus
	env, err := sb.envelopeEnv(ctx, e)
	if err == nil {
		client, emp, err = sb.client(ctx, a.EmpresaID, env)
	}
	if err == nil {
		if boleta {
			st, err = client.BoletaEnvelopeStatus(ctx, emp.Rut, e.TrackID)
		} else {
			st, err = client.EnvelopeStatus(ctx, emp.Rut, e.TrackID)
		}
	}
	if err != nil {
		sb.log.Warn("billing: SII status query failed; will ask again", "empresa_id", a.EmpresaID, "envio_id", e.ID, "error", err.Error())
		return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return sb.next(ctx, tx, a, stepPoll, a.N+1) })
	}
	vof := false
	if boleta && st.Estado == "VOF" && a.VOF < maxVOFPolls {
		vof, a.VOF = true, a.VOF+1
	} else if st.Estado != "VOF" {
		a.VOF = 0
	}
	now := sb.now()
	at := now.UTC()
	source := "getEstUp"
	if boleta {
		source = "boleta.estado"
	}
	base := api.SIIStatus{Source: source, TrackID: ptr(e.TrackID), EstadoSII: ptr(st.Estado), Glosa: ptr(st.Glosa),
		NumAtencion: ptr(st.NumAtencion), CheckedAt: &at, RawXML: ptr(string(st.Raw))}
	if st.ErrCode != "" {
		base.ErrCode = ptr(st.ErrCode)
	}
	found := make([]docPoll, len(flying))
	forEach(ctx, len(flying), func(i int) bool {
		found[i] = sb.pollDoc(ctx, client, emp.Rut, e, flying[i], st, base, vof)
		return true
	})
	// A rejection that may hide an earlier copy the SII is still
	// reviewing is believed only after ReconcileWindow, for an envelope
	// uploaded more than once.
	waiting := false
	for i := range found {
		if found[i].o.Estado == dte.EstadoRechazado && found[i].o.Reconcile && e.Attempts > 1 {
			if a.RejectedAt == nil {
				a.RejectedAt = &now
			}
			if now.Sub(*a.RejectedAt) < sb.cfg.ReconcileWindow {
				found[i].o = sii.Outcome{Estado: dte.EstadoProcesando, Code: found[i].o.Code, Glosa: found[i].o.Glosa}
				waiting = true
			}
		}
	}
	if !waiting {
		a.RejectedAt = nil
	}
	byID := make(map[string]docPoll, len(flying))
	for i, d := range flying {
		byID[d.ID] = found[i]
	}
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, docs, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
		if err != nil {
			return err
		}
		if cur.Estado != envioPolling {
			return nil
		}
		left := 0
		for _, d := range docs {
			p, ok := byID[d.ID]
			if !ok || !inFlight(d, cur) {
				continue
			}
			t := outbox.TrackingOf(d)
			t.EstadoEnvio, t.GlosaSII = ptr(st.Estado), ptr(st.Glosa)
			if c, ok := st.CountsFor(d.TipoDTE); ok {
				t.Informados, t.Aceptados, t.Rechazados, t.Reparos = ptr(c.Informados), ptr(c.Aceptados), ptr(c.Rechazados), ptr(c.Reparos)
			}
			if err := outbox.SetTracking(d, t); err != nil {
				return err
			}
			if p.o.Final() {
				status := p.status
				if err := sb.settle(ctx, tx, d, p.o, &status); err != nil {
					return err
				}
				continue
			}
			left++
			if d.SIIStatus, err = json.Marshal(p.status); err != nil {
				return err
			}
			d.UpdatedAt = time.Time{}
			if err := tx.UpdateDTE(ctx, d); err != nil {
				return err
			}
		}
		if left == 0 {
			cur.Estado = envioDone
		}
		if err := saveEnvelope(ctx, tx, cur, docs); err != nil {
			return err
		}
		if left == 0 {
			return stepDone(ctx, tx)
		}
		return sb.next(ctx, tx, a, stepPoll, a.N+1)
	})
}

// pollDoc reads one document's outcome from its envelope's status st,
// asking its own status where st does not tell it apart from the others
// of its type, or where st rejects it (a duplicate upload is rejected even
// when the SII has the first copy: a received document wins). A rejection
// as a repeat (sii.Repeated) of an envelope uploaded more than once is
// never believed: the document stays procesando until its own status
// settles it.
func (sb *Submitter) pollDoc(ctx context.Context, client *sii.Client, rutEmisor string, e *store.Envio, d *store.DTE,
	st *sii.EnvelopeStatus, base api.SIIStatus, vof bool) docPoll {
	p := docPoll{status: base}
	if vof {
		p.o = sii.Outcome{Estado: dte.EstadoProcesando, Code: st.Estado, Glosa: st.Glosa}
		return p
	}
	o, ok := sii.EnvelopeDocument(st, d.TipoDTE, d.Folio)
	p.o = o
	if ok && !(o.Estado == dte.EstadoRechazado && o.Reconcile) {
		return p
	}
	// "DTE Repetido" for an envelope sent again after a lost answer is
	// proof that the first copy arrived: the document waits for its own
	// status, however long the first review takes, and is never
	// rejected for having arrived twice.
	repeated := ok && e.Attempts > 1 && sii.Repeated(o.Code)
	if repeated {
		p.o = sii.Outcome{Estado: dte.EstadoProcesando, Code: o.Code,
			Glosa: o.Glosa + ": the envelope was sent again after a lost answer, so the SII holds the first copy; waiting for the document's own status"}
	}
	ds, err := sb.documentStatus(ctx, client, e, d, rutEmisor)
	if err != nil {
		sb.log.Warn("billing: the document's own status gave no answer; will ask again", "empresa_id", e.EmpresaID,
			"envio_id", e.ID, "dte_id", d.ID, "error", err.Error())
		if !ok {
			p.o = sii.Outcome{Estado: dte.EstadoProcesando, Code: st.Estado, Glosa: st.Glosa}
		}
		return p
	}
	source := "getEstDte"
	if isBoleta(d) {
		source = "boleta.dte"
	}
	p.status = api.SIIStatus{Source: source, TrackID: base.TrackID, EstadoSII: ptr(ds.Estado), GlosaEstado: ptr(ds.GlosaEstado),
		ErrCode: ptr(ds.ErrCode), GlosaErr: ptr(ds.GlosaErr), NumAtencion: ptr(ds.NumAtencion), CheckedAt: base.CheckedAt,
		RawXML: ptr(string(ds.Raw))}
	received := sii.DocumentOutcome(ds).Estado == dte.EstadoAceptado
	if isBoleta(d) {
		received = sii.BoletaArrival(ds.Estado) == sii.ArrivalReceived
	}
	if ok { // a rejection to check
		switch {
		case received:
			p.o = sii.Outcome{Estado: dte.EstadoAceptado, Code: ds.Estado, Glosa: ds.GlosaEstado}
		case repeated && !isBoleta(d) && sii.DocumentOutcome(ds).Estado == dte.EstadoRechazado:
			p.o = sii.DocumentOutcome(ds) // its own status settles it (FNA, FAN, EMP)
		}
		return p
	}
	p.o = mixedOutcome(st, d, ds, received)
	return p
}

// mixedOutcome settles a document of a type whose review mixes results
// without naming documents, from its own status ds: received is accepted
// when the type has no reparos, con_reparos when it has no plain
// acceptances, and con_reparos too when it has both (the SII's web
// services do not say which documents had the reparos; the text says so);
// not received (FAU) is rechazado when the type has rejections; an
// answer of getEstDte that settles the document by itself (FNA, FAN, EMP)
// is taken as the per-document mapping says; anything else waits (for a
// boleta, every code the arrival check reads as unknown).
func mixedOutcome(st *sii.EnvelopeStatus, d *store.DTE, ds *sii.DocumentStatus, received bool) sii.Outcome {
	c, _ := st.CountsFor(d.TipoDTE)
	counts := fmt.Sprintf("the envelope's review of tipo %d: %d informados, %d aceptados, %d con reparos, %d rechazados",
		d.TipoDTE, c.Informados, c.Aceptados, c.Reparos, c.Rechazados)
	switch {
	case received && c.Reparos == 0:
		return sii.Outcome{Estado: dte.EstadoAceptado, Code: ds.Estado, Glosa: ds.GlosaEstado}
	case received && c.Aceptados == 0:
		return sii.Outcome{Estado: dte.EstadoConReparos, Code: st.Estado, Glosa: counts + "; this document: " + ds.Estado}
	case received:
		return sii.Outcome{Estado: dte.EstadoConReparos, Code: st.Estado,
			Glosa: counts + "; the SII has this document (" + ds.Estado + ") but its services do not say which ones had reparos"}
	case !isBoleta(d) && sii.DocumentOutcome(ds).Estado == dte.EstadoRechazado:
		return sii.DocumentOutcome(ds)
	case ds.Estado == "FAU" && c.Rechazados > 0:
		return sii.Outcome{Estado: dte.EstadoRechazado, Code: ds.Estado,
			Glosa: counts + "; the SII does not have this document (" + ds.Estado + "): one of those rejected"}
	}
	return sii.Outcome{Estado: dte.EstadoProcesando, Code: st.Estado, Glosa: st.Glosa}
}

// finish ends an envelope none of whose documents waits any more.
func (sb *Submitter) finish(ctx context.Context, tx store.Tx, a submitArgs) error {
	e, docs, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
	if err != nil {
		return err
	}
	if !EnvioFinished(e.Estado) {
		e.Estado = envioDone
		if err := saveEnvelope(ctx, tx, e, docs); err != nil {
			return err
		}
	}
	return stepDone(ctx, tx)
}
