package submission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// upload runs the upload step of an envelope: it builds and signs the
// envelope (once: a later attempt reuses the stored bytes), marks it and
// its documents enviando, uploads it, and records the answer with the
// next step. An attempt left open (no answer) is reconciled first.
func (sb *Submitter) upload(ctx context.Context, a submitArgs) error {
	e, err := sb.st.GetEnvio(ctx, a.EmpresaID, a.EnvioID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if e.Estado == envioPolling || EnvioFinished(e.Estado) {
		return nil // already past this step (a duplicate job, or a rescued one)
	}
	env, err := sb.envelopeEnv(ctx, e)
	if err != nil {
		return sb.uploadFailed(ctx, a, err, false)
	}
	client, emp, err := sb.client(ctx, a.EmpresaID, env)
	if err != nil {
		return sb.uploadFailed(ctx, a, err, false)
	}
	if e.Estado == envioSending && e.XML != nil {
		// The last attempt got no answer (a crash between marking it and
		// recording the answer, or an answer lost on the way back): the
		// SII may hold the envelope already.
		if done, err := sb.interrupted(ctx, a, client, emp, e); done || err != nil {
			return err
		}
	}
	var built []byte
	if e.XML == nil {
		if built, err = sb.build(ctx, e); err != nil {
			return sb.uploadFailed(ctx, a, err, false)
		}
	}
	// Transaction A: enviando, one more attempt, the envelope's bytes
	// kept (those built now, unless another run stored its own first).
	// The function reads everything again: the store may run it twice.
	skip := false
	err = sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, docs, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
		if err != nil {
			return err
		}
		if skip = cur.Estado == envioPolling || EnvioFinished(cur.Estado) || (cur.XML == nil && built == nil); skip {
			return nil
		}
		if cur.XML == nil {
			cur.XML = built
		}
		cur.Attempts++
		cur.Estado = envioSending
		for _, d := range docs {
			if !inFlight(d, cur) {
				continue
			}
			t := outbox.TrackingOf(d)
			t.Intentos = ptr(cur.Attempts)
			if err := outbox.SetTracking(d, t); err != nil {
				return err
			}
			d.Estado, d.UpdatedAt = string(dte.EstadoEnviando), time.Time{}
			if err := tx.UpdateDTE(ctx, d); err != nil {
				return err
			}
		}
		if err := saveEnvelope(ctx, tx, cur, docs); err != nil {
			return err
		}
		e = cur
		return nil
	})
	if err != nil || skip {
		return err
	}
	res, err := client.Upload(ctx, emp.Rut, e.XML)
	if err != nil {
		// An answer lost on the way back leaves the attempt open, as a
		// crash does: the next run reconciles before sending again.
		return sb.uploadFailed(ctx, a, err, sii.MayHaveArrived(err))
	}
	o := sii.UploadOutcome(res)
	var settled map[string]sii.Outcome
	if o.Reconcile {
		// "Already received" (STATUS 99): a document the SII has is
		// settled from its own status; the others are sent again.
		settled = sb.received(ctx, client, emp.Rut, e)
	}
	estadoEnvio := ""
	if res.Boleta {
		estadoEnvio = res.Estado
	}
	return sb.answered(ctx, a, o, res.TrackID, estadoEnvio, res.Raw, settled)
}

// build packs an envelope's documents, in its order, and signs it: an
// EnvioBOLETA of boletas, an EnvioDTE of the others. Its Caratula carries
// the issuer of the document emitted last (its resolution is the latest
// the company had in the documents' environment).
func (sb *Submitter) build(ctx context.Context, e *store.Envio) ([]byte, error) {
	docs, err := sb.readDocs(ctx, e)
	if err != nil {
		return nil, err
	}
	latest := docs[0]
	xmls := make([][]byte, len(docs))
	for i, d := range docs {
		xmls[i] = d.XML
		if d.EmittedAt.After(latest.EmittedAt) {
			latest = d
		}
	}
	emisor, err := sb.cfg.Documents.Emisor(latest)
	if err != nil {
		return nil, fmt.Errorf("billing: envelope %s: the issuer snapshot of DTE %s: %w", e.ID, latest.ID, err)
	}
	cert, err := sb.cfg.Tenants.SigningCert(ctx, e.EmpresaID)
	if err != nil {
		return nil, err
	}
	xml, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor, At: sb.now()}, cert, xmls...)
	if err != nil {
		return nil, fmt.Errorf("billing: envelope %s: building it: %w", e.ID, err)
	}
	return xml, nil
}

// answered records an upload's answer (or the track id getEstDteAv gave
// back after a lost one) with the next step, in one transaction
// ("transaction B"): procesando with the track id and a poll, enviando
// with another upload, or every document's final state with its event.
// settled holds documents already settled from their own status (by id):
// they take that outcome, and an envelope whose documents all have one is
// done.
func (sb *Submitter) answered(ctx context.Context, a submitArgs, o sii.Outcome, trackID, estadoEnvio string, raw []byte, settled map[string]sii.Outcome) error {
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		e, docs, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
		if err != nil {
			return err
		}
		if e.Estado != envioSending {
			return nil
		}
		e.Response = raw
		switch o.Estado {
		case dte.EstadoProcesando:
			e.TrackID, e.Estado = trackID, envioPolling
		case dte.EstadoEnviando:
			e.Estado = envioRetry
		default:
			e.Estado = envioDone
		}
		left := 0
		for _, d := range docs {
			if !inFlight(d, e) {
				continue
			}
			if so, ok := settled[d.ID]; ok && so.Final() {
				if err := sb.settle(ctx, tx, d, so, nil); err != nil {
					return err
				}
				continue
			}
			if o.Final() {
				if err := sb.settle(ctx, tx, d, o, nil); err != nil {
					return err
				}
				continue
			}
			left++
			t := outbox.TrackingOf(d)
			t.CodigoSII, t.GlosaSII = ptr(o.Code), ptr(o.Glosa)
			if o.Estado == dte.EstadoProcesando {
				t.TrackID = ptr(trackID)
				if estadoEnvio != "" {
					t.EstadoEnvio = ptr(estadoEnvio)
				}
				d.Estado = string(dte.EstadoProcesando)
			}
			if err := outbox.SetTracking(d, t); err != nil {
				return err
			}
			d.UpdatedAt = time.Time{}
			if err := tx.UpdateDTE(ctx, d); err != nil {
				return err
			}
		}
		if left == 0 {
			e.Estado = envioDone
		}
		if err := saveEnvelope(ctx, tx, e, docs); err != nil {
			return err
		}
		switch {
		case e.Estado == envioPolling:
			return sb.next(ctx, tx, a, stepPoll, 0)
		case e.Estado == envioRetry:
			return sb.next(ctx, tx, a, stepUpload, a.N+1)
		}
		return stepDone(ctx, tx)
	})
}

// settle records a document's final outcome in tx: its code and text in
// the tracking, the status query behind it when given, the state and its
// event.
func (sb *Submitter) settle(ctx context.Context, tx store.Tx, d *store.DTE, o sii.Outcome, status *api.SIIStatus) error {
	t := outbox.TrackingOf(d)
	t.CodigoSII, t.GlosaSII = ptr(o.Code), ptr(o.Glosa)
	if err := outbox.SetTracking(d, t); err != nil {
		return err
	}
	if status != nil {
		raw, err := json.Marshal(status)
		if err != nil {
			return err
		}
		d.SIIStatus = raw
	}
	return sb.transition(ctx, tx, d, o.Estado)
}

// uploadFailed records a failed attempt (no answer from the SII, or no
// client, or no envelope) and schedules the next one. lost keeps the
// attempt open (the envelope may be at the SII): the next run goes
// through interrupted.
func (sb *Submitter) uploadFailed(ctx context.Context, a submitArgs, cause error, lost bool) error {
	sb.log.Warn("billing: SII upload failed; will retry", "empresa_id", a.EmpresaID, "envio_id", a.EnvioID, "attempt", a.N+1, "answer_lost", lost, "error", cause.Error())
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		e, docs, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
		if err != nil {
			return err
		}
		if e.Estado == envioPolling || EnvioFinished(e.Estado) {
			return nil
		}
		if e.Estado == envioSending && !lost {
			e.Estado = envioRetry
		}
		for _, d := range docs {
			if !inFlight(d, e) {
				continue
			}
			t := outbox.TrackingOf(d)
			t.GlosaSII = ptr(cause.Error())
			if err := outbox.SetTracking(d, t); err != nil {
				return err
			}
			d.UpdatedAt = time.Time{}
			if err := tx.UpdateDTE(ctx, d); err != nil {
				return err
			}
		}
		if err := saveEnvelope(ctx, tx, e, docs); err != nil {
			return err
		}
		return sb.next(ctx, tx, a, stepUpload, a.N+1)
	})
}

// interrupted handles an envelope whose last upload got no answer: a
// crash cut it short, or the answer was lost on the way back. It reports
// done when it settled the step (or scheduled the next one) without
// sending; done false means send the envelope again, the same bytes.
//
// An EnvioDTE is looked for with getEstDteAv and the signature of its
// first document in flight (every document of the envelope travels with
// it). When the SII received it, the track id of the envelope that
// carried it is recorded as the upload's answer would have recorded it,
// and the envelope goes to procesando and its poll: its review decides,
// and nothing is sent again. When the SII did not receive it (or the
// query fails), the upload step is tried again later without sending,
// until ReconcileWindow has passed since the attempt; then the envelope is
// sent again.
//
// An EnvioBOLETA has no such query: see boletaArrival.
func (sb *Submitter) interrupted(ctx context.Context, a submitArgs, client *sii.Client, emp *store.Empresa, e *store.Envio) (done bool, err error) {
	docs, err := sb.readDocs(ctx, e)
	if err != nil {
		return true, err
	}
	var first *store.DTE
	for _, d := range docs {
		if inFlight(d, e) {
			first = d
			break
		}
	}
	if first == nil {
		return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			cur, ds, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
			if err != nil || cur.Estado != envioSending {
				return err
			}
			cur.Estado = envioDone
			if err := saveEnvelope(ctx, tx, cur, ds); err != nil {
				return err
			}
			return stepDone(ctx, tx)
		})
	}
	if isBoleta(first) {
		return sb.boletaArrival(ctx, a, client, e, docs)
	}
	doc, perr := dte.ParseDTE(first.XML)
	switch {
	case perr != nil || doc.SignatureValue == "":
		sb.log.Error("billing: the stored DTE's signature is unreadable; the envelope is sent again after the reconcile window",
			"empresa_id", a.EmpresaID, "envio_id", e.ID, "dte_id", first.ID, "error", fmt.Sprint(perr))
	default:
		av, err := client.DocumentStatusAdvanced(ctx, sb.query(e, first, emp.Rut), doc.SignatureValue)
		if err != nil {
			sb.log.Warn("billing: getEstDteAv failed; will ask again", "empresa_id", a.EmpresaID, "envio_id", e.ID, "error", err.Error())
		} else if track := av.Envelope(); track != "" {
			o := sii.Outcome{Estado: dte.EstadoProcesando, Code: av.Estado,
				Glosa: "getEstDteAv: received in the envelope with track id " + track + ": " + av.Glosa}
			return true, sb.answered(ctx, a, o, track, "", av.Raw, nil)
		}
	}
	if sb.now().Sub(e.UpdatedAt) >= sb.cfg.ReconcileWindow {
		return false, nil
	}
	return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return sb.next(ctx, tx, a, stepUpload, a.N+1)
	})
}

// boletaArrival is interrupted for an EnvioBOLETA, whose lost track id no
// query gives back: the rule of the protocol notes (sii-protocol.md,
// addendum). Until BoletaCheckDelay has passed since the attempt, it waits.
// Then it asks the per-boleta status of every boleta of the envelope, with
// the four parameters taken from the envelope's XML, and reads each answer
// with sii.BoletaArrival:
//
//   - any answer unknown (FNA, EMP, plain text, non-JSON, 4xx/5xx, a
//     timeout): nothing is decided; ask again later;
//   - every boleta received: each is settled from its own code (DOK →
//     aceptado; DNK → aceptado, the query's data at fault, logged; FAN and
//     the codes of a later note → aceptado with the code recorded), with
//     no track id, and the envelope is done;
//   - some received and some FAU: the envelope arrived and the SII
//     refused those: they are rechazado ("not registered by the SII") and
//     never sent again; the others are settled as above;
//   - every boleta FAU: the envelope may not have arrived. Once every
//     boleta still reads FAU BoletaSafetyDelay after the first such
//     reading, the same bytes are sent again (done false).
func (sb *Submitter) boletaArrival(ctx context.Context, a submitArgs, client *sii.Client, e *store.Envio, docs []*store.DTE) (done bool, err error) {
	now := sb.now()
	if check := e.UpdatedAt.Add(sb.cfg.BoletaCheckDelay); now.Before(check) {
		return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return sb.nextAt(ctx, tx, a, stepUpload, a.N, check)
		})
	}
	var flying []*store.DTE
	for _, d := range docs {
		if inFlight(d, e) {
			flying = append(flying, d)
		}
	}
	queries := xmlQueries(e.XML)
	statuses := make([]*sii.DocumentStatus, len(flying))
	arrivals := make([]sii.Arrival, len(flying))
	forEach(ctx, len(flying), func(i int) bool {
		q, ok := queries[docKey{flying[i].TipoDTE, flying[i].Folio}]
		if !ok {
			sb.log.Error("billing: a boleta is not in its stored envelope; the arrival check cannot ask about it",
				"empresa_id", a.EmpresaID, "envio_id", e.ID, "dte_id", flying[i].ID)
			return false
		}
		ds, err := client.BoletaStatus(ctx, q)
		if err != nil {
			sb.log.Warn("billing: the per-boleta status gave no answer; will ask again", "empresa_id", a.EmpresaID,
				"envio_id", e.ID, "dte_id", flying[i].ID, "error", err.Error())
			return false
		}
		statuses[i], arrivals[i] = ds, sii.BoletaArrival(ds.Estado)
		if arrivals[i] == sii.ArrivalUnknown {
			sb.log.Warn("billing: the per-boleta status answered a code that says nothing of the boleta's arrival; will ask again",
				"empresa_id", a.EmpresaID, "envio_id", e.ID, "dte_id", flying[i].ID, "codigo", ds.Estado)
			return false
		}
		return true
	})
	received, notReceived := 0, 0
	for i := range flying {
		switch {
		case statuses[i] == nil || arrivals[i] == sii.ArrivalUnknown:
			// Unknown: ask again later, deciding nothing.
			return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return sb.next(ctx, tx, a, stepUpload, a.N+1)
			})
		case arrivals[i] == sii.ArrivalReceived:
			received++
		default:
			notReceived++
		}
	}
	if received == 0 && notReceived > 0 {
		if a.FAUAt == nil {
			a.FAUAt = &now
		}
		if resend := a.FAUAt.Add(sb.cfg.BoletaSafetyDelay); now.Before(resend) {
			return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return sb.nextAt(ctx, tx, a, stepUpload, a.N+1, resend)
			})
		}
		sb.log.Warn("billing: no boleta of an envelope whose upload got no answer reached the SII; sending the same envelope again",
			"empresa_id", a.EmpresaID, "envio_id", e.ID, "boletas", notReceived)
		return false, nil
	}
	// The envelope arrived: settle every boleta from its own code.
	outcomes := map[string]sii.Outcome{}
	checked := map[string]*api.SIIStatus{}
	at := now.UTC()
	for i, d := range flying {
		ds := statuses[i]
		o := sii.Outcome{Estado: dte.EstadoAceptado, Code: ds.Estado, Glosa: ds.GlosaEstado + " (its envelope's track id is unknown: the upload's answer was lost)"}
		switch {
		case arrivals[i] == sii.ArrivalNotReceived:
			o = sii.Outcome{Estado: dte.EstadoRechazado, Code: ds.Estado,
				Glosa: "not registered by the SII: the envelope arrived (other boletas of it were received) and this boleta reads " + ds.Estado}
		case ds.Estado == "DNK":
			sb.log.Error("billing: the SII has a boleta but not with the data asked about (DNK): the query's data are at fault",
				"empresa_id", a.EmpresaID, "envio_id", e.ID, "dte_id", d.ID)
		}
		outcomes[d.ID] = o
		checked[d.ID] = &api.SIIStatus{Source: "boleta.dte", EstadoSII: ptr(ds.Estado), GlosaEstado: ptr(ds.GlosaEstado),
			CheckedAt: &at, RawXML: ptr(string(ds.Raw))}
	}
	return true, sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, ds, err := lockEnvelope(ctx, tx, a.EmpresaID, a.EnvioID)
		if err != nil {
			return err
		}
		if cur.Estado != envioSending {
			return nil
		}
		for _, d := range ds {
			o, ok := outcomes[d.ID]
			if !ok || !inFlight(d, cur) {
				continue
			}
			if err := sb.settle(ctx, tx, d, o, checked[d.ID]); err != nil {
				return err
			}
		}
		cur.Estado = envioDone
		if err := saveEnvelope(ctx, tx, cur, ds); err != nil {
			return err
		}
		return stepDone(ctx, tx)
	})
}

// received asks each document in flight of an envelope the SII answered
// "already received" about, and returns the outcomes of those the SII has.
func (sb *Submitter) received(ctx context.Context, client *sii.Client, rutEmisor string, e *store.Envio) map[string]sii.Outcome {
	docs, err := sb.readDocs(ctx, e)
	if err != nil {
		return nil
	}
	out := make([]*sii.Outcome, len(docs))
	forEach(ctx, len(docs), func(i int) bool {
		if !inFlight(docs[i], e) {
			return true
		}
		ds, err := sb.documentStatus(ctx, client, e, docs[i], rutEmisor)
		if err == nil && sii.DocumentOutcome(ds).Estado == dte.EstadoAceptado {
			out[i] = &sii.Outcome{Estado: dte.EstadoAceptado, Code: ds.Estado, Glosa: ds.GlosaEstado}
		}
		return true
	})
	m := map[string]sii.Outcome{}
	for i, o := range out {
		if o != nil {
			m[docs[i].ID] = *o
		}
	}
	return m
}

// docKey names a document of an envelope by type and folio.
type docKey struct {
	tipo  int
	folio int64
}

// xmlQueries reads an envelope's documents into the per-document status
// queries that identify them, every parameter as the XML the SII received
// has it; nil when the envelope cannot be read.
func xmlQueries(envelope []byte) map[docKey]sii.DocumentQuery {
	env, err := dte.ParseEnvio(envelope)
	if err != nil {
		return nil
	}
	out := make(map[docKey]sii.DocumentQuery, len(env.Documentos))
	for _, d := range env.Documentos {
		monto, _ := d.Totales.MntTotal.Int64()
		rec := d.Receptor.Rut
		if rec == "" {
			rec = "66666666-6"
		}
		out[docKey{int(d.Tipo), d.Folio}] = sii.DocumentQuery{RutEmisor: d.Emisor.Rut, RutReceptor: rec, Tipo: int(d.Tipo),
			Folio: d.Folio, FechaEmision: d.FechaEmision, Monto: monto}
	}
	return out
}

// query identifies a stored document of envelope e to the SII's
// per-document queries: from the envelope's XML, or from its row when the
// XML does not have it.
func (sb *Submitter) query(e *store.Envio, d *store.DTE, rutEmisor string) sii.DocumentQuery {
	if q, ok := xmlQueries(e.XML)[docKey{d.TipoDTE, d.Folio}]; ok {
		return q
	}
	rec := d.RutReceptor
	if rec == "" {
		rec = "66666666-6"
	}
	return sii.DocumentQuery{RutEmisor: rutEmisor, RutReceptor: rec, Tipo: d.TipoDTE, Folio: d.Folio, FechaEmision: d.FechaEmision, Monto: d.MontoTotal}
}

// documentStatus asks the SII about one document of envelope e (getEstDte,
// or the boleta API's per-boleta status).
func (sb *Submitter) documentStatus(ctx context.Context, c *sii.Client, e *store.Envio, d *store.DTE, rutEmisor string) (*sii.DocumentStatus, error) {
	q := sb.query(e, d, rutEmisor)
	if isBoleta(d) {
		return c.BoletaStatus(ctx, q)
	}
	return c.DocumentStatus(ctx, q)
}

// statusWorkers is how many per-document status queries one step asks at
// once.
const statusWorkers = 8

// forEach runs fn(0) … fn(n-1), statusWorkers at a time, and stops
// starting new ones once one returns false or ctx ends.
func forEach(ctx context.Context, n int, fn func(i int) bool) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		stop bool
		next int
	)
	for range min(statusWorkers, n) {
		wg.Go(func() {
			for {
				mu.Lock()
				if stop || next >= n || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if !fn(i) {
					mu.Lock()
					stop = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
}
