package submission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
	"github.com/google/uuid"
)

// States of a store.Envio.
const (
	envioNew     = "nuevo"      // created; not uploaded yet (its XML may be built)
	envioSending = "enviando"   // an attempt is under way (or was cut short by a crash)
	envioRetry   = "reintentar" // the last attempt failed; send again
	envioPolling = "procesando" // the SII gave a track id; its review is asked
	envioDone    = "procesado"  // every document has its final state
)

// EnvioFinished reports whether a stored envelope state is final:
// procesado, or one of the documents' final states that earlier versions
// wrote for envelopes of one document.
func EnvioFinished(estado string) bool { return estado == envioDone || final(estado) }

// Limits of one envelope: the schemas' counts (dte.MaxEnvioDTE,
// dte.MaxEnvioBoleta) and MaxEnvioBytes.
const (
	// MaxEnvioBytes bounds the signed XML of an envelope's documents put
	// together. The SII publishes no byte limit (DTEUpload answers STATUS
	// 2 for a file it finds too large); this bound keeps an envelope, with
	// its Caratula and signature, well under what the fake SII accepts
	// (siitest.DefaultMaxUpload, 10 MiB).
	MaxEnvioBytes = 8 << 20
)

// DocResult is one document's line of an envelope's results, the JSON of
// store.Envio.Results: its state and the SII's code and text for it, as
// its own tracking says.
type DocResult struct {
	DTEID     string  `json:"dte_id"`
	TipoDTE   int     `json:"tipo_dte"`
	Folio     int64   `json:"folio"`
	Estado    string  `json:"estado"`
	CodigoSII *string `json:"codigo_sii,omitempty"`
	GlosaSII  *string `json:"glosa_sii,omitempty"`
}

// ParseResults decodes an envelope's results; empty ones are none.
func ParseResults(raw []byte) ([]DocResult, error) {
	var out []DocResult
	if len(raw) == 0 {
		return out, nil
	}
	err := json.Unmarshal(raw, &out)
	return out, err
}

// ResultOf is a document's line of its envelope's results.
func ResultOf(d *store.DTE) DocResult {
	t := outbox.TrackingOf(d)
	return DocResult{DTEID: d.ID, TipoDTE: d.TipoDTE, Folio: d.Folio, Estado: d.Estado, CodigoSII: t.CodigoSII, GlosaSII: t.GlosaSII}
}

// setResults writes the documents' results into the envelope (docs in
// envelope order).
func setResults(e *store.Envio, docs []*store.DTE) error {
	rs := make([]DocResult, len(docs))
	for i, d := range docs {
		rs[i] = ResultOf(d)
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return fmt.Errorf("billing: envelope %s: encoding its results: %w", e.ID, err)
	}
	e.Results = b
	return nil
}

// NewEnvelope asks Create for an envelope.
type NewEnvelope struct {
	// ID is the new envelope's id, EmpresaID its company.
	ID, EmpresaID string
	// DTEIDs are the documents, in envelope order, each once.
	DTEIDs []string
	// At is its creation time.
	At time.Time
	// Field names the request's list in errors ("dte_ids"); empty for a
	// request about one document, whose errors name no field.
	Field string
}

// Create records, in tx, an envelope of held documents of the company and
// queues its upload: each document must be firmado and in no envelope yet,
// all of them boletas or none, of one environment (ambiente tells each
// one's), and within one envelope's limits (MaxEnvioBytes, and the schema's
// count). Every document goes to enviando with its tracking naming the
// envelope. It answers a fault.Error naming the field of each document at
// fault: a validation error for a document the company does not have, a
// mix of kinds or environments or an envelope too large; a conflict
// (INVALID_STATE) for a document already sent or on its way. A process
// whose Submitter is registered on the store's job runner sends it.
func Create(ctx context.Context, tx store.Tx, ambiente AmbienteFunc, n NewEnvelope) (*store.Envio, []*store.DTE, error) {
	field := func(i int) string {
		if n.Field == "" {
			return ""
		}
		return fmt.Sprintf("%s[%d]", n.Field, i)
	}
	// Lock in sorted order (see sorted), then put back in request order.
	byID := map[string]*store.DTE{}
	for _, id := range sorted(n.DTEIDs) {
		d, err := tx.GetDTEForUpdate(ctx, n.EmpresaID, id)
		if errors.Is(err, store.ErrNotFound) {
			if n.Field == "" {
				return nil, nil, fault.Missing("DTE", id)
			}
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		byID[id] = d
	}
	var missing []dte.FieldError
	for i, id := range n.DTEIDs {
		if byID[id] == nil {
			missing = append(missing, dte.FieldError{Field: field(i), Code: fault.DetailNotFound,
				Message: fmt.Sprintf("the company has no DTE %q", id)})
		}
	}
	if len(missing) > 0 {
		return nil, nil, invalid(fmt.Sprintf("%d of the documents named are not the company's", len(missing)), missing)
	}
	docs := make([]*store.DTE, len(n.DTEIDs))
	for i, id := range n.DTEIDs {
		docs[i] = byID[id]
	}
	// One kind and one environment, within the limits. Documents of one
	// CAF share its environment: it is asked once per CAF.
	var bad []dte.FieldError
	envs := make([]string, len(docs))
	byCAF := map[string]string{}
	size := 0
	for i, d := range docs {
		env, ok := byCAF[d.CAFID]
		if !ok || d.CAFID == "" {
			var err error
			if env, err = ambiente(ctx, tx, d); err != nil {
				return nil, nil, fault.Failed("reading the environment of DTE "+d.ID, err)
			}
			byCAF[d.CAFID] = env
		}
		envs[i], size = env, size+len(d.XML)
		if i == 0 {
			continue
		}
		if isBoleta(d) != isBoleta(docs[0]) {
			bad = append(bad, dte.FieldError{Field: field(i), Code: fault.DetailTipoMismatch,
				Message: fmt.Sprintf("DTE %s is of tipo %d and DTE %s of tipo %d: boletas (39, 41) go in an EnvioBOLETA of their own, the other types in an EnvioDTE; send them in separate requests",
					d.ID, d.TipoDTE, docs[0].ID, docs[0].TipoDTE), Action: "send boletas and the other types in separate envelopes"})
		} else if env != envs[0] {
			bad = append(bad, dte.FieldError{Field: field(i), Code: fault.DetailAmbienteMismatch,
				Message: fmt.Sprintf("DTE %s was emitted in %s and DTE %s in %s: an envelope goes to one environment's SII", d.ID, env, docs[0].ID, envs[0]),
				Action:  "send the documents of each environment in separate envelopes"})
		}
	}
	max, kind := dte.MaxEnvioDTE, "EnvioDTE"
	if isBoleta(docs[0]) {
		max, kind = dte.MaxEnvioBoleta, "EnvioBOLETA"
	}
	if len(docs) > max {
		bad = append(bad, dte.FieldError{Field: n.Field, Code: dte.CodeTooMany,
			Message: fmt.Sprintf("%d documents; an %s carries at most %d", len(docs), kind, max)})
	}
	if size > MaxEnvioBytes {
		bad = append(bad, dte.FieldError{Field: n.Field, Code: dte.CodeTooLarge,
			Message: fmt.Sprintf("the documents' signed XML adds up to %d bytes; an envelope carries at most %d", size, MaxEnvioBytes),
			Action:  "split the documents into several envelopes"})
	}
	if len(bad) > 0 {
		return nil, nil, invalid("the documents cannot travel in one envelope", bad)
	}
	// Each one held: firmado and in no envelope.
	var busy []dte.FieldError
	for i, d := range docs {
		why := ""
		switch t := outbox.TrackingOf(d); {
		case d.Estado != string(dte.EstadoFirmado):
			why = fmt.Sprintf("the DTE is %s; only a firmado document can be sent", apiEstado(d.Estado))
		case t.EnvioID != nil:
			why = fmt.Sprintf("the DTE is on its way to the SII already, in envelope %s", *t.EnvioID)
		}
		if why != "" {
			busy = append(busy, dte.FieldError{Field: field(i), Code: fault.DetailInvalidState, Message: why})
		}
	}
	if len(busy) > 0 {
		if n.Field == "" {
			return nil, nil, fault.Clash(fault.InvalidState, busy[0].Message)
		}
		e := fault.Clash(fault.InvalidState, fmt.Sprintf("%d of the documents cannot be sent: already sent or on their way", len(busy)))
		e.Details = busy
		return nil, nil, e
	}
	e := &store.Envio{ID: n.ID, EmpresaID: n.EmpresaID, DTEIDs: n.DTEIDs, Ambiente: envs[0], Estado: envioNew,
		CreatedAt: n.At, UpdatedAt: n.At}
	for _, d := range docs {
		t := outbox.TrackingOf(d)
		t.EnvioID = ptr(e.ID)
		if err := outbox.SetTracking(d, t); err != nil {
			return nil, nil, err
		}
		d.Estado, d.UpdatedAt = string(dte.EstadoEnviando), time.Time{}
		if err := tx.UpdateDTE(ctx, d); err != nil {
			return nil, nil, err
		}
	}
	if err := setResults(e, docs); err != nil {
		return nil, nil, err
	}
	if err := tx.InsertEnvio(ctx, e); err != nil {
		return nil, nil, err
	}
	if _, err := tx.Enqueue(ctx, submitArgs{EmpresaID: e.EmpresaID, EnvioID: e.ID, Step: stepUpload}, nil); err != nil {
		return nil, nil, err
	}
	return e, docs, nil
}

// apiEstado is the contract's name of a stored state (pendiente, the
// store's own, shows as borrador).
func apiEstado(s string) string {
	if s == store.EstadoPendiente {
		return string(dte.EstadoBorrador)
	}
	return s
}

// newID returns a new envelope id (a UUIDv7, so ids grow with time).
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// invalid is a validation fault.Error with its details.
func invalid(msg string, details []dte.FieldError) *fault.Error {
	return &fault.Error{Kind: fault.KindValidation, Code: fault.Validation, Message: msg, Details: details}
}

// adopt runs a job that names a document rather than an envelope: one
// Signed queued for a document emitted with auto_send, or a step an
// earlier version queued. A firmado document in no envelope is packed in
// an envelope of its own, whose upload is queued; a document in an
// envelope an earlier version made (which has no job of its own) has this
// step carried on as that envelope's. A document in an envelope of this
// version (made by Create, or by an adoption before) needs nothing: its
// envelope's own jobs carry it.
func (sb *Submitter) adopt(ctx context.Context, a submitArgs) error {
	return sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDTEForUpdate(ctx, a.EmpresaID, a.DTEID)
		if errors.Is(err, store.ErrNotFound) {
			return stepDone(ctx, tx)
		}
		if err != nil {
			return err
		}
		t := outbox.TrackingOf(d)
		if t.EnvioID != nil {
			e, err := tx.GetEnvioForUpdate(ctx, a.EmpresaID, *t.EnvioID)
			if errors.Is(err, store.ErrNotFound) {
				return stepDone(ctx, tx)
			}
			if err != nil {
				return err
			}
			if e.Ambiente != "" || EnvioFinished(e.Estado) || final(d.Estado) {
				return stepDone(ctx, tx) // carried by its envelope's own jobs, or done
			}
			// An earlier version's envelope: this chain is its chain.
			na := a
			na.EnvioID, na.DTEID = e.ID, ""
			return sb.nextAt(ctx, tx, na, a.Step, a.N, sb.now())
		}
		if d.Estado != string(dte.EstadoFirmado) || a.Step != stepUpload {
			return stepDone(ctx, tx)
		}
		env, err := sb.cfg.Documents.Ambiente(ctx, tx, d)
		if err != nil {
			return fmt.Errorf("billing: submit DTE %s: its environment: %w", d.ID, err)
		}
		e := &store.Envio{ID: newID(), EmpresaID: a.EmpresaID, DTEIDs: []string{d.ID}, Ambiente: env, Estado: envioNew}
		t.EnvioID = ptr(e.ID)
		if err := outbox.SetTracking(d, t); err != nil {
			return err
		}
		d.UpdatedAt = time.Time{}
		if err := tx.UpdateDTE(ctx, d); err != nil {
			return err
		}
		if err := setResults(e, []*store.DTE{d}); err != nil {
			return err
		}
		if err := tx.InsertEnvio(ctx, e); err != nil {
			return err
		}
		na := submitArgs{EmpresaID: a.EmpresaID, EnvioID: e.ID, Step: stepUpload}
		return sb.nextAt(ctx, tx, na, stepUpload, 0, sb.now())
	})
}

// envelopeEnv returns an envelope's environment: its own, or for an
// envelope of an earlier version its first document's.
func (sb *Submitter) envelopeEnv(ctx context.Context, e *store.Envio) (sii.Environment, error) {
	if e.Ambiente != "" {
		return sii.Environment(e.Ambiente), nil
	}
	if len(e.DTEIDs) == 0 {
		return "", fmt.Errorf("billing: envelope %s carries no documents", e.ID)
	}
	d, err := sb.st.GetDTE(ctx, e.EmpresaID, e.DTEIDs[0])
	if err != nil {
		return "", err
	}
	env, err := sb.cfg.Documents.Ambiente(ctx, sb.st, d)
	return sii.Environment(env), err
}

// readDocs reads an envelope's documents in envelope order (outside any
// transaction).
func (sb *Submitter) readDocs(ctx context.Context, e *store.Envio) ([]*store.DTE, error) {
	docs := make([]*store.DTE, len(e.DTEIDs))
	for i, id := range e.DTEIDs {
		d, err := sb.st.GetDTE(ctx, e.EmpresaID, id)
		if err != nil {
			return nil, fmt.Errorf("billing: envelope %s: DTE %s: %w", e.ID, id, err)
		}
		docs[i] = d
	}
	return docs, nil
}

// lockEnvelope reads an envelope and its documents for update in tx,
// the documents in sorted id order, and returns them in envelope order.
func lockEnvelope(ctx context.Context, tx store.Tx, empresaID, id string) (*store.Envio, []*store.DTE, error) {
	e, err := tx.GetEnvioForUpdate(ctx, empresaID, id)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]*store.DTE, len(e.DTEIDs))
	for _, did := range sorted(e.DTEIDs) {
		d, err := tx.GetDTEForUpdate(ctx, empresaID, did)
		if err != nil {
			return nil, nil, fmt.Errorf("billing: envelope %s: DTE %s: %w", e.ID, did, err)
		}
		byID[did] = d
	}
	docs := make([]*store.DTE, len(e.DTEIDs))
	for i, did := range e.DTEIDs {
		docs[i] = byID[did]
	}
	return e, docs, nil
}

// saveEnvelope writes the envelope with its documents' results.
func saveEnvelope(ctx context.Context, tx store.Tx, e *store.Envio, docs []*store.DTE) error {
	if err := setResults(e, docs); err != nil {
		return err
	}
	e.UpdatedAt = time.Time{}
	return tx.UpdateEnvio(ctx, e)
}
