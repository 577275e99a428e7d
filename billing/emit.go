package billing

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/groupcommit"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// pesoCL is the SII's name of the Chilean peso (TpoMoneda).
const pesoCL = "PESO CL"

// totalsOf is what a DTE row keeps of a document's computed totals: its
// Montos (see there for export documents in another currency).
func totalsOf(t *dte.Totals) api.Montos {
	tt := t.Totales
	out := api.Montos{MontoNeto: optInt(tt.MntNeto), MontoExento: optInt(tt.MntExe), TasaIVA: tt.TasaIVA,
		IVA: optInt(tt.IVA), MontoTotal: montoCLP(t)}
	if tt.TpoMoneda != "" && tt.TpoMoneda != pesoCL {
		m := &api.MontosMoneda{TpoMoneda: tt.TpoMoneda, MontoExento: tt.MntExe, MontoTotal: tt.MntTotal}
		out.MontoExento = nil
		if om := t.OtraMoneda; om != nil && om.TpoMoneda == pesoCL {
			m.TpoCambio = om.TpoCambio
			out.MontoExento = optInt(om.MntExeOtrMnda)
		}
		out.MontosMonedaExtranjera = m
	}
	return out
}

// optInt returns d rounded to a whole number, nil when absent.
func optInt(d dte.Decimal) *int64 {
	if d == "" {
		return nil
	}
	n := roundInt(d)
	return &n
}

// roundInt rounds a decimal amount half away from zero to an integer.
func roundInt(d dte.Decimal) int64 {
	if n, ok := d.Int64(); ok {
		return n
	}
	r := d.Rat()
	if r == nil {
		return 0
	}
	n, _ := dte.DecimalFromRat(r, 0).Int64()
	return n
}

// montoCLP is the document total in pesos: MntTotal, or for an export
// document in another currency its total converted to pesos when the
// document carries the conversion (OtraMoneda in PESO CL), else 0 (there
// is no peso amount; MontosMonedaExtranjera has the document's own).
func montoCLP(t *dte.Totals) int64 {
	if cur := t.Totales.TpoMoneda; cur == "" || cur == pesoCL {
		return roundInt(t.Totales.MntTotal)
	}
	if om := t.OtraMoneda; om != nil && om.TpoMoneda == pesoCL {
		return roundInt(om.MntTotOtrMnda)
	}
	return 0
}

// emission is what transaction 1 keeps in a DTE row's issuer snapshot
// (store.DTE.Emisor): the company as it was at emission and the
// Idempotency-Key, which the recovery job needs to finish the key too.
type emission struct {
	Empresa        api.Empresa `json:"empresa"`
	IdempotencyKey string      `json:"idempotency_key,omitempty"`
}

// recoverArgs is a recovery job: it finishes every DTE of the company
// still pendiente that was created before Before (Unix microseconds).
// Jobs enqueued by earlier versions name their emissions in Items
// instead.
type recoverArgs struct {
	EmpresaID string        `json:"empresa_id,omitempty"`
	Before    int64         `json:"before,omitempty"`
	Items     []recoverItem `json:"items,omitempty"`
}

// recoverItem names one emission to recover (jobs of earlier versions).
type recoverItem struct {
	EmpresaID string `json:"empresa_id"`
	DTEID     string `json:"dte_id"`
}

// Kind names the recovery job.
func (recoverArgs) Kind() string { return "dte.recover" }

// Emit emits a document for the company from an emission request
// (p.Request: contract §2.3; read one strictly with dte.DecodeRequest)
// under an Idempotency-Key (p.IdempotencyKey), a UUID (see
// ParseIdempotencyKey: its spellings are one key).
//
// The first call with a key signs the document and answers its
// EmitResponse; a later call with the same key and the same request
// (compared by value, so the formatting of the JSON it came from does not
// matter) answers the first call's EmitResponse with replayed set, even
// if the document has moved on since. The same key with another request
// fails with fault.KindIdempotencyMismatch, and while the first call is
// still running with fault.KindIdempotencyInProgress. Invalid requests
// fail with fault.KindValidation, naming every field, and take no folio.
func (r *DocumentService) Emit(ctx context.Context, empresaID string, p api.EmitParams) (resp *api.EmitResponse, replayed bool, err error) {
	s, req := r.s, p.Request
	idempotencyKey, err := ParseIdempotencyKey(p.IdempotencyKey)
	if err != nil {
		return nil, false, err
	}
	if req == nil {
		return nil, false, fault.Invalid("body", dte.CodeRequired, "the emission request is missing")
	}
	if !s.emits.enter() {
		return nil, false, errStopped
	}
	defer s.emits.leave()
	// Announce transaction 1 now, so that a group forming meanwhile
	// waits for this request (see txGroup).
	tx1 := s.group.Announce()
	defer s.group.Withdraw(tx1)
	res, err := s.emit(ctx, tx1, empresaID, idempotencyKey, req)
	if err != nil {
		return nil, false, err
	}
	return res.resp, res.replayed, nil
}

// emitted is what emit answers: the response and whether it is a replay.
type emitted struct {
	resp     *api.EmitResponse
	replayed bool
}

func (s *Service) emit(ctx context.Context, tx1 *groupcommit.Arrival, empresaID, idempotencyKey string, req *dte.EmitirDTERequest) (*emitted, error) {
	canon, hashHex, err := requestHash(req)
	if err != nil {
		// A number the decoder kept as text but that is not a plain
		// decimal ("1e999999") cannot be re-encoded: the request is
		// invalid, and Validate names the field.
		var ve *dte.ValidationError
		if errors.As(req.Validate(), &ve) {
			return nil, fault.FromValidation(ve)
		}
		return nil, fault.Failed("hashing the request", err)
	}
	hash, _ := hex.DecodeString(hashHex)
	iss, err := s.issuer(ctx, empresaID)
	if err != nil {
		return s.answerKnownKey(ctx, empresaID, "", idempotencyKey, hash, err)
	}
	cert, em := iss.cert, iss.em
	// The key, the folio and the document belong to the company's
	// environment of the moment (checked again against the CAF the folio
	// comes from, in transaction 1).
	ambiente := iss.emp.Ambiente
	if now := s.now(); now.After(cert.NotAfter()) {
		return s.answerKnownKey(ctx, empresaID, ambiente, idempotencyKey, hash, &fault.Error{Kind: fault.KindValidation, Code: fault.CertificateRequired,
			Message: "the company's signing certificate expired on " + cert.NotAfter().UTC().Format(time.DateOnly) + "; upload a new one",
			Details: []dte.FieldError{{Field: "certificado", Code: fault.DetailCertExpired, Message: "the certificate has expired",
				Action: "upload the company's signing certificate"}}})
	}
	// The idempotency hash covers the request as sent; the document, and
	// the request stored for recovery and reading, are the request with
	// the company's records it names filled in.
	if resolved, err := s.resolveStored(ctx, empresaID, ambiente, req); err != nil {
		if fault.KindOf(err) == fault.KindValidation {
			return s.answerKnownKey(ctx, empresaID, ambiente, idempotencyKey, hash, err)
		}
		return nil, err
	} else if resolved != req {
		req = resolved
		if canon, _, err = requestHash(req); err != nil {
			return nil, fault.Failed("encoding the request", err)
		}
	}
	at := s.now().UTC().Truncate(time.Microsecond)
	prep, err := em.Prepare(req, at)
	if err != nil {
		var ve *dte.ValidationError
		if errors.As(err, &ve) {
			return s.answerKnownKey(ctx, empresaID, ambiente, idempotencyKey, hash, fault.FromValidation(ve))
		}
		return nil, fault.Failed("preparing the document", err)
	}
	emisorJSON, err := json.Marshal(emission{Empresa: *iss.emp, IdempotencyKey: idempotencyKey})
	if err != nil {
		return nil, fault.Failed("encoding the issuer", err)
	}
	var metadata []byte
	if req.Metadata != nil {
		if metadata, err = json.Marshal(req.Metadata); err != nil {
			return nil, fault.Failed("encoding metadata", err)
		}
	}
	rr := req.Receptor.Rut
	if r, err := dte.ParseRUT(rr); err == nil {
		rr = r.String()
	}
	row := &store.DTE{
		ID: newID(), EmpresaID: empresaID, Ambiente: ambiente, TipoDTE: int(req.TipoDTE), Estado: store.EstadoPendiente,
		RutReceptor: rr, RazonSocialReceptor: req.Receptor.RazonSocial, FechaEmision: prep.FechaEmision,
		MontoTotal: montoCLP(prep.Totals), AutoSend: req.AutoSend == nil || *req.AutoSend,
		Request: canon, Emisor: emisorJSON, EmittedAt: at, Metadata: metadata, CreatedAt: at, UpdatedAt: at,
	}
	var replay *emitted
	var cafRec *store.CAF
	// taken hears from transaction 1 which folio it took, before it commits.
	taken := make(chan takenFolio, 1)
	// Transaction 1: the key, the folio, the pending row, the recovery job.
	tx1Done := s.group.Start(ctx, tx1, func(ctx context.Context, tx store.Tx, gt *groupTx) error {
		replay, cafRec = nil, nil
		idem := &store.Idempotency{EmpresaID: empresaID, Ambiente: ambiente, Key: idempotencyKey, BodyHash: hash,
			State: store.IdempotencyInProgress, DTEID: row.ID, CreatedAt: at, UpdatedAt: at}
		if err := tx.InsertIdempotency(ctx, idem); err != nil {
			if store.ConflictOn(err) != store.ConstraintIdempotency {
				return err
			}
			rec, err := tx.GetIdempotency(ctx, empresaID, ambiente, idempotencyKey)
			if err != nil {
				return err
			}
			replay, err = idempotentAnswer(rec, hash)
			return err
		}
		c, folio, err := s.takeFolio(ctx, tx, em, prep, ambiente)
		if err != nil {
			return err
		}
		if c.Ambiente != ambiente {
			// The company moved between the read of its records and this
			// transaction: the key was recorded in the other environment.
			// The cached company goes, as on the no-folio path.
			s.issuers.Delete(empresaID)
			return fault.Clash(fault.Conflict, fmt.Sprintf("the company moved to %s during the emission; send the request again", c.Ambiente))
		}
		cafRec = c
		row.Folio, row.CAFID = folio, c.ID
		if err := tx.InsertDTE(ctx, row); err != nil {
			return err
		}
		gt.addRecovery(empresaID)
		select { // a run after a rollback finds the channel read or full
		case taken <- takenFolio{folio: folio, caf: c}:
		default:
		}
		return nil
	})
	// Outside any transaction: TED and signature. They start as soon as
	// transaction 1 has taken its folio, while its group finishes and
	// commits, so the commit's fsync overlaps the RSA work instead of
	// delaying it. No transaction waits for the signature, and the signed
	// document is kept only if transaction 1 committed the folio it
	// carries: if the group ran again after a rollback, the committed folio
	// may be another one, and the document is signed again for it.
	var signed takenFolio
	var out *dte.Emitted
	var stampErr error
	// A caller signing announces transaction 2, so that the group then
	// forming waits for it (outside any transaction, up to the linger).
	var tx2 *groupcommit.Arrival
	select {
	case signed = <-taken:
		tx2 = s.finishes.Announce()
		defer s.finishes.Withdraw(tx2)
		out, stampErr = s.stamp(ctx, em, prep, signed)
		err = <-tx1Done
	case err = <-tx1Done:
	}
	if err != nil {
		return nil, storeErr(err, "taking a folio", "empresa", empresaID)
	}
	if replay != nil {
		return replay, nil
	}
	if signed.caf == nil || signed.folio != row.Folio || signed.caf.ID != cafRec.ID {
		out, stampErr = s.stamp(ctx, em, prep, takenFolio{folio: row.Folio, caf: cafRec})
	}
	if stampErr != nil {
		// The folio stays pending; the recovery job retries it.
		return nil, stampErr
	}
	res, err := s.finish(ctx, tx2, row, idempotencyKey, out)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// takenFolio is a folio and the CAF it belongs to.
type takenFolio struct {
	folio int64
	caf   *store.CAF
}

// stamp builds the TED and signs the document for the folio t.
func (s *Service) stamp(ctx context.Context, em *dte.Emitter, prep *dte.Prepared, t takenFolio) (*dte.Emitted, error) {
	c, err := s.parsedCAF(ctx, s.st, t.caf)
	if err != nil {
		return nil, err
	}
	out, err := em.Stamp(prep, t.folio, c)
	if err != nil {
		return nil, fault.Failed(fmt.Sprintf("stamping folio %d", t.folio), err)
	}
	return out, nil
}

// maxExpiredCAFs bounds how many expired CAFs one emission retires before
// giving up.
const maxExpiredCAFs = 16

// takeFolio takes the next folio of the company's active CAF for the
// document's type inside transaction 1, and checks, before the folio is
// committed, that Stamp will accept it: a CAF found expired is retired
// (is_active false) and the next one tried; any other CAF problem (a
// document dated before the CAF's authorization) refuses the request, and
// the rollback gives the folio back. So a committed folio always signs.
func (s *Service) takeFolio(ctx context.Context, tx store.Tx, em *dte.Emitter, prep *dte.Prepared, ambiente string) (*store.CAF, int64, error) {
	for range maxExpiredCAFs {
		rec, folio, err := tx.TakeFolio(ctx, em.Emisor.ID, int(prep.Tipo))
		if errors.Is(err, store.ErrNoFolios) || errors.Is(err, store.ErrNoCAF) {
			// TakeFolio looked in the company's environment as this
			// transaction reads it: name that one (another process may
			// have moved the company since its data was cached).
			if emp, err := tx.GetEmpresa(ctx, em.Emisor.ID); err == nil && emp.Ambiente != ambiente {
				ambiente = emp.Ambiente
				s.issuers.Delete(em.Emisor.ID)
			}
			return nil, 0, noFoliosError(err, prep.Tipo, ambiente)
		}
		if err != nil {
			return nil, 0, err
		}
		c, err := s.parsedCAF(ctx, tx, rec)
		if err != nil {
			return nil, 0, err
		}
		if c.CheckUsable(prep.At) != nil && c.CheckFolio(folio) == nil {
			if err := tx.SetCAFActive(ctx, rec.EmpresaID, rec.ID, false); err != nil {
				return nil, 0, err
			}
			s.log.Warn("billing: retired an expired CAF", "empresa_id", rec.EmpresaID, "caf_id", rec.ID, "tipo", rec.TipoDTE)
			continue
		}
		if err := em.CheckCAF(prep, folio, c); err != nil {
			if !errors.Is(err, caf.ErrNotYetValid) {
				return nil, 0, fault.Failed(fmt.Sprintf("checking the CAF of folio %d", folio), err)
			}
			return nil, 0, &fault.Error{Kind: fault.KindValidation, Code: fault.Validation, Message: "the active CAF cannot stamp this document",
				Details: []dte.FieldError{{Field: "fecha_emision", Code: fault.DetailCAFNotUsable,
					Message: fmt.Sprintf("the document date %s is before %s, the authorization date of the active CAF of tipo %d (folios %d to %d)",
						prep.FechaEmision, c.FA, c.Tipo, c.Desde, c.Hasta),
					Action: "leave fecha_emision out to emit today, or give a date on or after " + c.FA}}, Err: err}
		}
		if err := s.alerts.CheckLowStock(ctx, tx, rec); err != nil {
			return nil, 0, err
		}
		return rec, folio, nil
	}
	return nil, 0, fault.Clash(fault.NoFolios, fmt.Sprintf("every CAF of tipo %d tried has expired", prep.Tipo))
}

// recoveryWindow is the span of time one recovery job covers per company
// (at most; RecoveryAfter when shorter).
const recoveryWindow = time.Second

// enqueueRecovery is the group transaction's last step: it makes sure a
// recovery job covers every emission whose folio the transaction took. A
// job covers a company's emissions created before its Before instant and
// runs RecoveryAfter later, or groupTimeout when longer (finding them
// signed, normally, and doing nothing). Instead of one job per
// transaction, a busy company gets one job per recoveryWindow: the
// transaction enqueues a job whose Before is the end of the current
// window, unless a committed transaction already enqueued a job reaching
// that far (s.recoveryUntil, filled once a transaction commits, so a job
// the transaction rolled back never counts). Rows of this transaction were
// created before now, hence before the end of the window; the transaction
// commits within groupTimeout of now, so before any job covering them
// runs.
func (s *Service) enqueueRecovery(ctx context.Context, tx store.Tx, gt *groupTx) error {
	if len(gt.recover) == 0 {
		return nil
	}
	window := min(recoveryWindow, s.recAge)
	now := s.now()
	before := now.Truncate(window).Add(window)
	for empresaID := range gt.recover {
		if until, ok := s.recoveryUntil.Load(empresaID); ok && !until.(time.Time).Before(before) {
			continue
		}
		if _, err := tx.Enqueue(ctx, recoverArgs{EmpresaID: empresaID, Before: before.UnixMicro()},
			&store.JobOpts{ScheduledAt: before.Add(s.recDelay), MaxAttempts: 50}); err != nil {
			return err
		}
		gt.onCommit(func() { s.noteRecoveryUntil(empresaID, before) })
	}
	return nil
}

// noteRecoveryUntil records that a committed recovery job covers the
// company's emissions created before until.
func (s *Service) noteRecoveryUntil(empresaID string, until time.Time) {
	for {
		old, loaded := s.recoveryUntil.LoadOrStore(empresaID, until)
		if !loaded || !old.(time.Time).Before(until) || s.recoveryUntil.CompareAndSwap(empresaID, old, until) {
			return
		}
	}
}

// answerKnownKey answers a request that failed before its first
// transaction: with the recorded answer when its key is already known (a
// replay must not depend on whether the request would still be valid
// now), else with the failure.
// ambiente is the company's environment, "" when not read yet.
func (s *Service) answerKnownKey(ctx context.Context, empresaID, ambiente, key string, hash []byte, failure error) (*emitted, error) {
	if ambiente == "" {
		emp, err := s.st.GetEmpresa(ctx, empresaID)
		if err != nil {
			return nil, failure
		}
		ambiente = emp.Ambiente
	}
	rec, err := s.st.GetIdempotency(ctx, empresaID, ambiente, key)
	if err != nil {
		return nil, failure
	}
	return idempotentAnswer(rec, hash)
}

// idempotentAnswer answers a request whose key is already recorded.
func idempotentAnswer(rec *store.Idempotency, hash []byte) (*emitted, error) {
	if !bytes.Equal(rec.BodyHash, hash) {
		return nil, &fault.Error{Kind: fault.KindIdempotencyMismatch, Code: fault.IdempotencyMismatch,
			Message: "this Idempotency-Key was used with a different request body"}
	}
	if rec.State != store.IdempotencyDone {
		return nil, &fault.Error{Kind: fault.KindIdempotencyInProgress, Code: fault.IdempotencyInProgress,
			Message: "the first request with this Idempotency-Key is still being processed; retry later"}
	}
	resp, err := storedResponse(rec)
	if err != nil {
		return nil, err
	}
	return &emitted{resp: resp, replayed: true}, nil
}

// storedResponse decodes the response an idempotency record keeps.
func storedResponse(rec *store.Idempotency) (*api.EmitResponse, error) {
	var resp api.EmitResponse
	if err := json.Unmarshal(rec.ResponseBody, &resp); err != nil {
		return nil, fault.Failed("reading the stored response of DTE "+rec.DTEID, err)
	}
	return &resp, nil
}

// finish runs transaction 2 for a signed document: XML, totals, firmado,
// the idempotency response, the dte.created event and, through the hooks,
// submission. When the row is no longer pending (another process finished
// it), it answers what that process stored.
func (s *Service) finish(ctx context.Context, a *groupcommit.Arrival, row *store.DTE, key string, out *dte.Emitted) (*emitted, error) {
	tot, err := json.Marshal(totalsOf(out.Totals))
	if err != nil {
		return nil, fault.Failed("encoding totals", err)
	}
	resp := &api.EmitResponse{ID: row.ID, Folio: row.Folio, TipoDTE: dte.TipoDTE(row.TipoDTE),
		Estado: dte.EstadoFirmado, MontoTotal: row.MontoTotal, CreatedAt: row.CreatedAt.UTC(), Advertencias: out.Warnings}
	respJSON, err := json.Marshal(resp)
	if err != nil {
		return nil, fault.Failed("encoding the response", err)
	}
	var res *emitted
	err = s.finishes.Do(ctx, a, func(ctx context.Context, tx store.Tx, _ *groupTx) error {
		res = nil
		// The row as transaction 1 wrote it, signed, on condition that it
		// is still pendiente: one statement, no read. Every column is
		// written from transaction 1's copy, which is right only because
		// nothing but this and the recovery job writes a pendiente row; a
		// new writer of pendiente rows must re-read here instead.
		d := *row
		d.Estado, d.XML, d.Totals = string(dte.EstadoFirmado), out.XML, tot
		signed, err := tx.UpdateDTEIf(ctx, &d, store.EstadoPendiente)
		if err != nil {
			return err
		}
		if !signed {
			// Another process (or the recovery job) finished it first.
			cur, err := tx.GetDTEForUpdate(ctx, row.EmpresaID, row.ID)
			if err != nil {
				return err
			}
			idem, err := idempotencyRecord(ctx, tx, cur.EmpresaID, cur.Ambiente, key)
			if err != nil {
				return err
			}
			res = &emitted{resp: resp}
			if idem != nil && idem.State == store.IdempotencyDone {
				first, err := storedResponse(idem)
				if err != nil {
					return err
				}
				res.resp = first
			}
			return nil
		}
		if key != "" {
			// The record is known without reading it; a purged one (not
			// found) needs no answer any more.
			idem := &store.Idempotency{EmpresaID: d.EmpresaID, Ambiente: d.Ambiente, Key: key, State: store.IdempotencyDone, DTEID: d.ID,
				ResponseBody: respJSON}
			if err := tx.UpdateIdempotency(ctx, idem); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if err := s.outbox.PublishDTE(ctx, tx, &d, webhook.EventDTECreated); err != nil {
			return err
		}
		for _, h := range s.onSigned {
			if err := h(ctx, tx, &d); err != nil {
				return err
			}
		}
		res = &emitted{resp: resp}
		return nil
	})
	if err != nil {
		return nil, storeErr(err, "storing the signed document", "dte", row.ID)
	}
	return res, nil
}

// idempotencyRecord reads the record of key, nil when there is no key or
// it was purged.
func idempotencyRecord(ctx context.Context, tx store.Tx, empresaID, ambiente, key string) (*store.Idempotency, error) {
	if key == "" {
		return nil, nil
	}
	rec, err := tx.GetIdempotency(ctx, empresaID, ambiente, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // purged
	}
	return rec, err
}

// parsedCAF returns the parsed CAF of a stored record, its private key
// unsealed, from the cache. A record without its document (TakeFolio
// leaves it out) has it read through r the first time; a CAF's document
// and key never change.
func (s *Service) parsedCAF(ctx context.Context, r store.Reader, rec *store.CAF) (*caf.CAF, error) {
	if v, ok := s.cafs.Load(rec.ID); ok {
		return v.(*caf.CAF), nil
	}
	if rec.XML == nil {
		full, err := r.GetCAF(ctx, rec.EmpresaID, rec.ID)
		if err != nil {
			return nil, fault.Failed("reading stored CAF "+rec.ID, err)
		}
		rec = full
	}
	c, err := openCAF(s.keys, rec)
	if err != nil {
		return nil, fault.Failed("reading stored CAF "+rec.ID, err)
	}
	s.cafs.Store(rec.ID, c)
	return c, nil
}

// recoverDTE finishes an emission left pendiente by a process that died
// between its two transactions: same folio, same CAF, same instant, so the
// same document.
func (s *Service) recoverDTE(ctx context.Context, empresaID, id string) error {
	d, err := s.st.GetDTE(ctx, empresaID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // rolled back: transaction 1 never committed
	}
	if err != nil {
		return err
	}
	if d.Estado != store.EstadoPendiente {
		return nil
	}
	var snap emission
	if err := json.Unmarshal(d.Emisor, &snap); err != nil {
		return fmt.Errorf("billing: recover DTE %s: issuer snapshot: %w", id, err)
	}
	var req dte.EmitirDTERequest
	if err := json.Unmarshal(d.Request, &req); err != nil {
		return fmt.Errorf("billing: recover DTE %s: request: %w", id, err)
	}
	cert, err := s.signingCert(ctx, empresaID)
	if err != nil {
		return fmt.Errorf("billing: recover DTE %s: %w", id, err)
	}
	cafRec, err := s.st.GetCAF(ctx, empresaID, d.CAFID)
	if err != nil {
		return fmt.Errorf("billing: recover DTE %s: CAF %s: %w", id, d.CAFID, err)
	}
	c, err := s.parsedCAF(ctx, s.st, cafRec)
	if err != nil {
		return err
	}
	// Finishing: a rule that came into force since the folio was taken
	// (the transport data of Res. Ex. SII 154/2025) warns instead of
	// leaving the folio unused.
	em := &dte.Emitter{Emisor: snap.Empresa.Emisor(), Cert: cert, Finishing: true}
	prep, err := em.Prepare(&req, d.EmittedAt.UTC())
	if err != nil {
		return fmt.Errorf("billing: recover DTE %s: %w", id, err)
	}
	out, err := em.Stamp(prep, d.Folio, c)
	if err != nil {
		return fmt.Errorf("billing: recover DTE %s: %w", id, err)
	}
	if _, err := s.finish(ctx, nil, d, snap.IdempotencyKey, out); err != nil {
		return err
	}
	s.log.Info("billing: recovered a pending emission", "empresa_id", empresaID, "dte_id", id, "tipo", d.TipoDTE, "folio", d.Folio)
	return nil
}
