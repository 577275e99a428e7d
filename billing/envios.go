package billing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// Create packs held documents of the company (firmado, emitted with
// auto_send false) into one envelope and queues it for the SII, under an
// Idempotency-Key (req.IdempotencyKey) as an emission's: a later call with the same key and the same
// ids (in the same order) answers the first call's Envio with replayed
// set; the same key with other ids, or used for another operation, fails
// with fault.KindIdempotencyMismatch. Every document goes to enviando.
//
// Boletas travel in an EnvioBOLETA and the other types in an EnvioDTE, so
// a request mixing them is refused (not split: one request, one
// envelope, one track id), and so is one mixing environments. A request
// names at most dte.MaxEnvioDTE documents (dte.MaxEnvioBoleta boletas),
// each once, whose signed XML adds up to at most
// submission.MaxEnvioBytes. Invalid requests fail with
// fault.KindValidation naming each dte_ids[i] at fault; a document already
// sent or on its way is a conflict (INVALID_STATE). A process whose
// Config.Submission is set sends it.
func (r *EnvelopeService) Create(ctx context.Context, empresaID string, req api.EnvioRequest) (*api.Envio, bool, error) {
	s := r.s
	key, err := ParseIdempotencyKey(req.IdempotencyKey)
	if err != nil {
		return nil, false, err
	}
	ids, err := envioIDs(req.DTEIDs)
	if err != nil {
		return nil, false, err
	}
	return s.newEnvio(ctx, empresaID, key, opEnviosCreate, req.LegacyOperation, ids, "dte_ids")
}

// Submit sends one held document of the company (firmado, emitted with
// auto_send false) to the SII, in an envelope of its own, under an
// Idempotency-Key (p.IdempotencyKey) as Create's. A document already sent or on its way
// is a conflict (INVALID_STATE); one the company does not have is not
// found.
func (r *EnvelopeService) Submit(ctx context.Context, empresaID, id string, p api.SubmitParams) (*api.Envio, bool, error) {
	s := r.s
	key, err := ParseIdempotencyKey(p.IdempotencyKey)
	if err != nil {
		return nil, false, err
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, false, fault.Missing("DTE", id)
	}
	id = u.String()
	return s.newEnvio(ctx, empresaID, key, opDTEEnviar, p.LegacyOperation, []string{id}, "")
}

// envioIDs checks the ids of an envelope request: present, at most
// dte.MaxEnvioDTE, UUIDs (in canonical form, as kept), each once.
func envioIDs(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, fault.Invalid("dte_ids", dte.CodeRequired, "dte_ids names the documents to send: at least one")
	}
	if len(in) > dte.MaxEnvioDTE {
		return nil, fault.Invalid("dte_ids", dte.CodeTooMany,
			fmt.Sprintf("%d documents; an envelope carries at most %d (an EnvioBOLETA %d)", len(in), dte.MaxEnvioDTE, dte.MaxEnvioBoleta))
	}
	out := make([]string, len(in))
	seen := map[string]int{}
	var bad []dte.FieldError
	for i, id := range in {
		field := fmt.Sprintf("dte_ids[%d]", i)
		u, err := uuid.Parse(id)
		if err != nil {
			bad = append(bad, dte.FieldError{Field: field, Code: dte.CodeInvalidFormat, Message: "a DTE id is a UUID"})
			continue
		}
		out[i] = u.String()
		if j, ok := seen[out[i]]; ok {
			bad = append(bad, dte.FieldError{Field: field, Code: dte.CodeDuplicate,
				Message: fmt.Sprintf("DTE %s is named already, at dte_ids[%d]", out[i], j)})
			continue
		}
		seen[out[i]] = i
	}
	if len(bad) > 0 {
		return nil, &fault.Error{Kind: fault.KindValidation, Code: fault.Validation,
			Message: fmt.Sprintf("dte_ids has %d invalid entries", len(bad)), Details: bad}
	}
	return out, nil
}

// The operations an envelope's Idempotency-Key is recorded for: their
// names are billing's own (the routes that reach them are server's).
const (
	opEnviosCreate = "envios.create" // Envelopes.Create
	opDTEEnviar    = "dte.enviar"    // Envelopes.Submit
)

// envioFingerprint is the fingerprint an envelope request's key is
// recorded with: SHA-256 of the operation's name and the documents' ids,
// a line each.
func envioFingerprint(op string, ids []string) []byte {
	sum := sha256.Sum256([]byte(op + "\n" + strings.Join(ids, "\n")))
	return sum[:]
}

// newEnvio creates an envelope of ids under key in one transaction: the
// key is recorded with the answer, or its first answer is replayed. op
// names the operation in the key's fingerprint, so a key used for another
// operation (or another document) is a mismatch. legacyOp, when not "",
// is the name versions before operation names gave it (the route that
// reached it, which its caller, the server, knows): a key recorded then
// with legacyOp and the same ids matches too (see api.SubmitParams).
func (s *Service) newEnvio(ctx context.Context, empresaID, key, op, legacyOp string, ids []string, field string) (*api.Envio, bool, error) {
	hash := envioFingerprint(op, ids)
	var legacy []byte
	if legacyOp != "" {
		legacy = envioFingerprint(legacyOp, ids)
	}
	at := s.now().UTC().Truncate(time.Microsecond)
	id := newID()
	var out *api.Envio
	var replayed bool
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		out, replayed = nil, false
		// The key belongs to the company's environment of the moment, as
		// an emission's does.
		emp, err := tx.GetEmpresa(ctx, empresaID)
		if err != nil {
			return err
		}
		idem := &store.Idempotency{EmpresaID: empresaID, Ambiente: emp.Ambiente, Key: key, BodyHash: hash, State: store.IdempotencyInProgress, CreatedAt: at, UpdatedAt: at}
		if err := tx.InsertIdempotency(ctx, idem); err != nil {
			if store.ConflictOn(err) != store.ConstraintIdempotency {
				return err
			}
			rec, err := tx.GetIdempotency(ctx, empresaID, emp.Ambiente, key)
			if err != nil {
				return err
			}
			if !bytes.Equal(rec.BodyHash, hash) && (legacy == nil || !bytes.Equal(rec.BodyHash, legacy)) {
				return &fault.Error{Kind: fault.KindIdempotencyMismatch, Code: fault.IdempotencyMismatch,
					Message: "this Idempotency-Key was used with a different request"}
			}
			if rec.State != store.IdempotencyDone {
				return &fault.Error{Kind: fault.KindIdempotencyInProgress, Code: fault.IdempotencyInProgress,
					Message: "the first request with this Idempotency-Key is still being processed; retry later"}
			}
			var first api.Envio
			if err := json.Unmarshal(rec.ResponseBody, &first); err != nil {
				return fault.Failed("reading the stored response of envelope request "+key, err)
			}
			out, replayed = &first, true
			return nil
		}
		e, _, err := submission.Create(ctx, tx, s.ambienteOf, submission.NewEnvelope{ID: id, EmpresaID: empresaID, DTEIDs: ids, At: at, Field: field})
		if err != nil {
			return err
		}
		if out, err = s.envioFromStore(ctx, tx, e); err != nil {
			return err
		}
		body, err := json.Marshal(out)
		if err != nil {
			return err
		}
		idem.State, idem.ResponseBody, idem.UpdatedAt = store.IdempotencyDone, body, at
		return tx.UpdateIdempotency(ctx, idem)
	})
	if err != nil {
		what := "empresa"
		if field == "" {
			what = "dte"
		}
		return nil, false, storeErr(err, "creating the envelope", what, ids[0])
	}
	return out, replayed, nil
}

// Get returns one of the company's envelopes with each document's
// result.
func (r *EnvelopeService) Get(ctx context.Context, empresaID, id string) (*api.Envio, error) {
	s := r.s
	e, err := s.st.GetEnvio(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the envelope", "envio", id)
	}
	return s.envioFromStore(ctx, s.st, e)
}

// List lists the company's envelopes of one environment (or both),
// newest first (those of auto_send documents too, one document each).
func (r *EnvelopeService) List(ctx context.Context, empresaID string, p api.EnvioListParams) (*api.Page[api.Envio], error) {
	s := r.s
	n, verr := pageLimit(p.Limit)
	if verr != nil {
		return nil, verr
	}
	amb, err := s.listAmbiente(ctx, empresaID, p.Ambiente)
	if err != nil {
		return nil, err
	}
	page, err := s.st.ListEnvios(ctx, empresaID, store.EnvioFilter{Ambiente: amb, Cursor: p.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing envelopes", "empresa", empresaID)
	}
	out := &api.Page[api.Envio]{Data: make([]api.Envio, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		e, err := s.envioFromStore(ctx, s.st, &page.Items[i])
		if err != nil {
			return nil, err
		}
		out.Data = append(out.Data, *e)
	}
	return out, nil
}

// envioFromStore renders a stored envelope. An envelope of an earlier
// version (no results, no environment kept; one document) has them read
// from its documents.
func (s *Service) envioFromStore(ctx context.Context, r store.Reader, e *store.Envio) (*api.Envio, error) {
	results, err := submission.ParseResults(e.Results)
	if err != nil {
		return nil, unreadable("envio", e.ID, fmt.Errorf("stored results: %w", err))
	}
	ambiente := e.Ambiente
	if e.Results == nil || ambiente == "" {
		results = results[:0]
		for _, id := range e.DTEIDs {
			d, err := r.GetDTE(ctx, e.EmpresaID, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fault.Failed("reading envelope "+e.ID, err)
			}
			results = append(results, submission.ResultOf(d))
			if ambiente == "" {
				if ambiente, err = s.ambienteOf(ctx, r, d); err != nil {
					return nil, fault.Failed("reading envelope "+e.ID, err)
				}
			}
		}
	}
	out := &api.Envio{ID: e.ID, Tipo: "EnvioDTE", Ambiente: ambiente, Intentos: e.Attempts, CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
		Documentos: make([]api.EnvioDocumento, 0, len(results))}
	if e.TrackID != "" {
		out.TrackID = &e.TrackID
	}
	switch {
	case submission.EnvioFinished(e.Estado):
		out.Estado = api.EnvioProcesado
	case e.Estado == "procesando":
		out.Estado = api.EnvioProcesando
	case e.Estado == "enviando" || e.Estado == "reintentar":
		out.Estado = api.EnvioEnviando
	default:
		out.Estado = api.EnvioPendiente
	}
	for _, r := range results {
		if dte.TipoDTE(r.TipoDTE).IsBoleta() {
			out.Tipo = "EnvioBOLETA"
		}
		out.Documentos = append(out.Documentos, api.EnvioDocumento{DTEID: r.DTEID, TipoDTE: dte.TipoDTE(r.TipoDTE), Folio: r.Folio,
			Estado: apiEstado(r.Estado), CodigoSII: r.CodigoSII, GlosaSII: r.GlosaSII})
	}
	return out, nil
}

// ambienteOf returns a stored document's environment: that of the CAF
// its folio came from (a CAF is checked against its environment's SII key
// when registered, and TakeFolio draws from the company's environment of
// the moment), or the issuer snapshot's when the CAF is not known.
func (s *Service) ambienteOf(ctx context.Context, r store.Reader, d *store.DTE) (string, error) {
	if d.Ambiente != "" {
		return d.Ambiente, nil // kept since it was emitted (migration 00009)
	}
	if v, ok := s.cafs.Load(d.CAFID); ok {
		if a := v.(*caf.CAF).Ambiente(); a != "" {
			return a, nil
		}
	}
	if d.CAFID != "" {
		c, err := r.GetCAF(ctx, d.EmpresaID, d.CAFID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		if err == nil && c.Ambiente != "" {
			return c.Ambiente, nil
		}
	}
	var snap emission
	if err := json.Unmarshal(d.Emisor, &snap); err != nil {
		return "", fmt.Errorf("billing: DTE %s: issuer snapshot: %w", d.ID, err)
	}
	if snap.Empresa.Ambiente == "" {
		return "", fmt.Errorf("billing: DTE %s: no environment known", d.ID)
	}
	return snap.Empresa.Ambiente, nil
}
