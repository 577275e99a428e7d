package billing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/cesiones"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// CesionService cedes the company's accepted facturas to factoring
// companies through the SII's registry of credit transfers and lists each
// document's cesiones with their state (/dte/{id}/cesiones).
type CesionService struct{ s *Service }

// Lengths of a cesión request: the stricter of the AEC's schema and the
// SII's format document (docs: sii-cesion-notes §2).
const (
	maxCesionRazonSocial = 100
	maxCesionDireccion   = 60
	minCesionDireccion   = 5
	maxCesionEmail       = 40
	minCesionEmail       = 6
)

// opCesion names the operation a cesión's Idempotency-Key is recorded
// for.
const opCesion = "dte.cesiones.create"

// Create cedes one of the company's documents as p asks, under an
// Idempotency-Key (p.IdempotencyKey) as an envelope's: a later call with
// the same key and the same request answers the first call's cesión with
// replayed set; the same key with another request, or used for another
// operation, fails with fault.KindIdempotencyMismatch.
//
// The document must be a factura the SII accepted (33, 34, 43 or 46;
// aceptado or con_reparos), neither ceded nor being ceded through the
// service (fault.AlreadyCeded); the cesionario's RUT valid and not the
// emisor's, its name, address and e-mail within the AEC's bounds, monto
// at most the total, ultimo_vencimiento a date not before the document's,
// email_notificacion an e-mail address. Refusals name the field, with a
// stable code. The AEC is built and signed with the company's
// certificate, recorded pendiente with its job in one transaction, and
// uploaded and followed in the background by a process whose
// Config.Submission is set (events dte.cedido, dte.cesion_rechazada).
func (r *CesionService) Create(ctx context.Context, empresaID, dteID string, p api.CesionParams) (*api.Cesion, bool, error) {
	s := r.s
	key, err := ParseIdempotencyKey(p.IdempotencyKey)
	if err != nil {
		return nil, false, err
	}
	u, err := uuid.Parse(dteID)
	if err != nil {
		return nil, false, fault.Missing("DTE", dteID)
	}
	dteID = u.String()
	if err := checkCesionParams(&p); err != nil {
		return nil, false, err
	}
	hash := cesionFingerprint(dteID, p)
	emp, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, false, storeErr(err, "reading the company", "empresa", empresaID)
	}
	// A replay answers without signing again.
	if out, ok, err := s.cesionReplay(ctx, s.st, empresaID, emp.Ambiente, key, hash); ok || err != nil {
		return out, ok, err
	}
	d, err := s.st.GetDTE(ctx, empresaID, dteID)
	if err != nil {
		return nil, false, storeErr(err, "reading the document", "DTE", dteID)
	}
	c, err := s.ces.Prepare(ctx, empresaID, d, p)
	if err != nil {
		// The same request sent twice at once: the first may record its
		// cesión between this call's look at its key and Prepare's look
		// at the document. The key then answers the first one.
		if fe := fault.As(err); fe != nil && fe.Code == fault.AlreadyCeded {
			if out, ok, rerr := s.cesionReplay(ctx, s.st, empresaID, emp.Ambiente, key, hash); ok && rerr == nil {
				return out, true, nil
			}
		}
		return nil, false, err
	}
	at := s.now().UTC().Truncate(time.Microsecond)
	c.ID = newID()
	var out *api.Cesion
	var replayed bool
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		out, replayed = nil, false
		idem := &store.Idempotency{EmpresaID: empresaID, Ambiente: emp.Ambiente, Key: key, BodyHash: hash, State: store.IdempotencyInProgress, CreatedAt: at, UpdatedAt: at}
		if err := tx.InsertIdempotency(ctx, idem); err != nil {
			if store.ConflictOn(err) != store.ConstraintIdempotency {
				return err
			}
			o, ok, err := s.cesionReplay(ctx, tx, empresaID, emp.Ambiente, key, hash)
			if err == nil && !ok {
				err = &fault.Error{Kind: fault.KindIdempotencyInProgress, Code: fault.IdempotencyInProgress,
					Message: "the first request with this Idempotency-Key is still being processed; retry later"}
			}
			out, replayed = o, ok
			return err
		}
		if err := s.ces.Insert(ctx, tx, c); err != nil {
			return err
		}
		a, err := cesiones.FromStore(c)
		if err != nil {
			return err
		}
		out = &a
		body, err := json.Marshal(out)
		if err != nil {
			return err
		}
		idem.State, idem.ResponseBody, idem.UpdatedAt = store.IdempotencyDone, body, at
		return tx.UpdateIdempotency(ctx, idem)
	})
	if err != nil {
		return nil, false, storeErr(err, "recording the cesión", "DTE", dteID)
	}
	return out, replayed, nil
}

// cesionReplay answers a key recorded before: ok with its first answer
// when it is done with the same request, a mismatch when it was used for
// another one, and not ok (no error) when it is unknown or in progress
// (the caller tells those apart).
func (s *Service) cesionReplay(ctx context.Context, r store.IdempotencyReader, empresaID, ambiente, key string, hash []byte) (*api.Cesion, bool, error) {
	rec, err := r.GetIdempotency(ctx, empresaID, ambiente, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, storeErr(err, "reading the Idempotency-Key", "empresa", empresaID)
	}
	if !bytes.Equal(rec.BodyHash, hash) {
		return nil, false, &fault.Error{Kind: fault.KindIdempotencyMismatch, Code: fault.IdempotencyMismatch,
			Message: "this Idempotency-Key was used with a different request"}
	}
	if rec.State != store.IdempotencyDone {
		return nil, false, nil
	}
	var first api.Cesion
	if err := json.Unmarshal(rec.ResponseBody, &first); err != nil {
		return nil, false, fault.Failed("reading the stored response of cesión request "+key, err)
	}
	return &first, true, nil
}

// cesionFingerprint is the fingerprint a cesión's key is recorded with:
// SHA-256 of the operation, the document and the request's JSON.
func cesionFingerprint(dteID string, p api.CesionParams) []byte {
	body, _ := json.Marshal(p)
	sum := sha256.Sum256([]byte(opCesion + "\n" + dteID + "\n" + string(body)))
	return sum[:]
}

// checkCesionParams checks a request's own fields (the document's rules
// are the room's), every problem at once, and writes the cesionario's RUT
// in its canonical form.
func checkCesionParams(p *api.CesionParams) error {
	var d []dte.FieldError
	bad := func(field string, code dte.DetailCode, msg string) {
		d = append(d, dte.FieldError{Field: field, Code: code, Message: msg})
	}
	c := &p.Cesionario
	switch rut, err := chile.CheckRUT(c.Rut); {
	case c.Rut == "":
		bad("cesionario.rut", dte.CodeRequired, "cesionario.rut is required: the factoring company's RUT")
	case err != nil:
		bad("cesionario.rut", dte.CodeInvalidRUT, fmt.Sprintf("cesionario.rut %q is not a valid RUT like 96790240-3", c.Rut))
	default:
		c.Rut = rut
	}
	text := func(field, v string, lo, hi int) {
		n := len([]rune(v))
		switch {
		case v == "":
			bad(field, dte.CodeRequired, field+" is required")
		case n < lo || n > hi:
			bad(field, dte.CodeTooLong, fmt.Sprintf("%s has %d characters; it has %d to %d", field, n, lo, hi))
		}
	}
	text("cesionario.razon_social", c.RazonSocial, 1, maxCesionRazonSocial)
	text("cesionario.direccion", c.Direccion, minCesionDireccion, maxCesionDireccion)
	email := func(field, v string) {
		text(field, v, minCesionEmail, maxCesionEmail)
		if v != "" {
			d = checkEmailField(d, field, v)
		}
	}
	email("cesionario.email", c.Email)
	email("email_notificacion", p.EmailNotificacion)
	if p.Monto < 0 {
		bad("monto", dte.CodeOutOfRange, fmt.Sprintf("monto %d is negative; 0 (or none) cedes the document's total", p.Monto))
	}
	if v := p.UltimoVencimiento; v != "" {
		if t, err := time.Parse(time.DateOnly, v); err != nil || t.Format(time.DateOnly) != v || t.Year() > 2050 {
			bad("ultimo_vencimiento", dte.CodeInvalidFormat, fmt.Sprintf("ultimo_vencimiento %q is not a date YYYY-MM-DD up to 2050-12-31", v))
		}
	}
	if len(d) > 0 {
		return &fault.Error{Kind: fault.KindValidation, Code: fault.Validation,
			Message: fmt.Sprintf("the request has %d invalid field(s)", len(d)), Details: d}
	}
	return nil
}

// List returns a page of the cesiones of one of the company's documents,
// newest first, each with the registry's state. A document the company
// does not have is not found.
func (r *CesionService) List(ctx context.Context, empresaID, dteID string, p api.CesionListParams) (*api.Page[api.Cesion], error) {
	s := r.s
	n, verr := pageLimit(p.Limit)
	if verr != nil {
		return nil, verr
	}
	u, err := uuid.Parse(dteID)
	if err != nil {
		return nil, fault.Missing("DTE", dteID)
	}
	dteID = u.String()
	if _, err := s.st.GetDTE(ctx, empresaID, dteID); err != nil {
		return nil, storeErr(err, "reading the document", "DTE", dteID)
	}
	page, err := s.st.ListCesiones(ctx, empresaID, dteID, store.ListFilter{Cursor: p.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing cesiones", "DTE", dteID)
	}
	out := &api.Page[api.Cesion]{Data: make([]api.Cesion, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		c, err := cesiones.FromStore(&page.Items[i])
		if err != nil {
			return nil, storeErr(err, "reading a cesión", "DTE", dteID)
		}
		out.Data = append(out.Data, c)
	}
	return out, nil
}

// cesionOf fills a document's read model with its cesión not rechazada,
// if any (GET /dte/{id}): Cesion, and Cedido once the registry recorded
// it.
func cesionOf(ctx context.Context, r store.CesionReader, empresaID string, out *api.DTE) error {
	c, err := r.ActiveCesion(ctx, empresaID, out.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return storeErr(err, "reading the DTE's cesión", "dte", out.ID)
	}
	a, err := cesiones.FromStore(c)
	if err != nil {
		return storeErr(err, "reading the DTE's cesión", "dte", out.ID)
	}
	out.Cesion, out.Cedido = &a, a.Estado == api.CesionAceptada
	return nil
}

// newCesiones builds the cesiones room. Its registry is the SII's, through
// the submission settings; a process that does not submit records
// cesiones and leaves their jobs to those that do.
func (s *Service) newCesiones() *cesiones.Room {
	cfg := cesiones.Config{Store: s.st, Outbox: s.outbox, Now: s.now, Logger: s.log, Tenants: tenants{s}, Documents: issued{s}}
	if s.cfg.Submission != nil {
		cfg.Registry = rtcRegistry{s}
		cfg.Workers = budget(s.cfg.Workers.Cesion, cesiones.DefaultWorkers)
		cfg.UploadBackoff, cfg.PollBackoff = s.cfg.Submission.UploadBackoff, s.cfg.Submission.PollBackoff
		cfg.Timeout = s.cfg.Submission.Timeout
	}
	return cesiones.New(cfg)
}

// rtcRegistry is the cesiones room's Registry: the SII's registry of
// credit transfers through the company's registry client.
type rtcRegistry struct{ s *Service }

var _ cesiones.Registry = rtcRegistry{}

// Registry returns the company's registry in one environment.
func (r rtcRegistry) Registry(ctx context.Context, empresaID, ambiente string) (cesiones.RTC, error) {
	c, err := r.s.registryClient(ctx, empresaID, ambiente)
	if err != nil {
		return nil, err
	}
	return rtcClient{c}, nil
}

// rtcClient reads package sii's answers as the room's.
type rtcClient struct{ c *sii.Client }

// kindOf maps sii's kinds onto the room's.
func kindOf(o sii.CesionOutcome) cesiones.Kind {
	switch o.Kind {
	case sii.CesionPending:
		return cesiones.Pending
	case sii.CesionAccepted:
		return cesiones.Accepted
	case sii.CesionRejected:
		return cesiones.Rejected
	}
	return cesiones.Failure
}

// Upload sends the AEC (RTCAnotEnvio).
func (x rtcClient) Upload(ctx context.Context, rutCedente, emailNotif string, aec []byte) (cesiones.Outcome, error) {
	res, err := x.c.UploadAEC(ctx, rutCedente, emailNotif, aec)
	if err != nil {
		return cesiones.Outcome{}, notSent(ctx, err)
	}
	o := sii.AECUploadOutcome(res)
	return cesiones.Outcome{Kind: kindOf(o), TrackID: res.TrackID, Code: o.Code, Message: o.Message, Raw: res.Raw}, nil
}

// notSent marks an upload's error as refused before it left
// (cesiones.ErrNotSent) when it is neither the exchange's failure nor the
// authentication's, nor the step's context ending: a field the client
// refuses, which it would refuse again.
func notSent(ctx context.Context, err error) error {
	var te *sii.TransportError
	var ae *sii.AuthError
	if ctx.Err() != nil || errors.As(err, &te) || errors.As(err, &ae) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", cesiones.ErrNotSent, err)
}

// Status asks for an upload's review (getEstEnvio).
func (x rtcClient) Status(ctx context.Context, trackID string) (cesiones.Outcome, error) {
	st, err := x.c.AECStatus(ctx, trackID)
	if err != nil {
		return cesiones.Outcome{}, err
	}
	o := sii.AECStatusOutcome(st)
	return cesiones.Outcome{Kind: kindOf(o), Code: o.Code, Message: o.Message, Raw: st.Raw}, nil
}

// Ceded asks getEstCesion whether the document is ceded: ESTADO 0 is
// ceded, 2 (no information) is not; any other ESTADO is the query's
// failure.
func (x rtcClient) Ceded(ctx context.Context, q cesiones.Query) (cesiones.Holding, error) {
	st, err := x.c.CesionStatus(ctx, sii.CesionQuery{RutEmisor: q.RutEmisor, TipoDoc: q.TipoDTE, Folio: q.Folio})
	if err != nil {
		return cesiones.Holding{}, err
	}
	switch st.Header.Estado {
	case 0:
		return cesiones.Holding{Ceded: st.Cedido, Holder: st.RutTenedor}, nil
	case 2:
		return cesiones.Holding{}, nil
	}
	return cesiones.Holding{}, fmt.Errorf("billing: getEstCesion answered ESTADO %d (%s)", st.Header.Estado, st.Header.Glosa)
}
