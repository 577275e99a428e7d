package inbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// What a company's inbox may keep, so that no supplier, customer or
// outsider can fill the disk through it (issue 30):
//
//   - a file refused whole (store.Recepcion.Descartado: an envelope
//     refused before any document was received, an answer that changed
//     nothing) keeps its digest, size, report and its first PrefixBytes,
//     and the documents read from it keep their reports but no bytes;
//   - the company's received files are bounded in number and stored
//     bytes, and the mails read from its mailbox in number (Limits): a
//     file over the quota is refused with LIMIT_EXCEEDED, and a mailbox
//     over it is not read until room is made;
//   - a periodic job deletes, in short batches, the refused files and the
//     mails read that are older than the retention period.

// PrefixBytes is what a refused file keeps of its bytes: enough to see
// what it was.
const PrefixBytes = 4 << 10

// Limits are a company's inbox quota and retention.
type Limits struct {
	// MaxRecepciones and MaxRecepcionBytes bound the received files kept
	// (their number, and the bytes each keeps: its XML and report and
	// those of the documents read from it); MaxMensajes the mails read
	// from the mailbox kept.
	MaxRecepciones    int64 `json:"max_recepciones"`
	MaxRecepcionBytes int64 `json:"max_recepcion_bytes"`
	MaxMensajes       int64 `json:"max_mensajes"`
	// RetencionDias is how long refused files and mails read are kept.
	RetencionDias int64 `json:"retencion_dias"`
}

// The defaults of Limits, for an operator who sets none.
const (
	DefaultMaxRecepciones    = 100_000
	DefaultMaxRecepcionBytes = 2 << 30
	DefaultMaxMensajes       = 100_000
	DefaultRetencionDias     = 90
	// MaxRetencionDias bounds the retention (ten years).
	MaxRetencionDias = 3660
)

// DefaultLimits are the limits of a company when neither the operator
// nor the company set any.
func DefaultLimits() Limits {
	return Limits{MaxRecepciones: DefaultMaxRecepciones, MaxRecepcionBytes: DefaultMaxRecepcionBytes,
		MaxMensajes: DefaultMaxMensajes, RetencionDias: DefaultRetencionDias}
}

// orDefault fills the zero fields of l from DefaultLimits.
func (l Limits) orDefault() Limits {
	d := DefaultLimits()
	if l.MaxRecepciones <= 0 {
		l.MaxRecepciones = d.MaxRecepciones
	}
	if l.MaxRecepcionBytes <= 0 {
		l.MaxRecepcionBytes = d.MaxRecepcionBytes
	}
	if l.MaxMensajes <= 0 {
		l.MaxMensajes = d.MaxMensajes
	}
	if l.RetencionDias <= 0 {
		l.RetencionDias = d.RetencionDias
	}
	return l
}

// Limits returns the limits that apply to the company: its own choice
// within the operator's.
func (ib *Inbox) Limits(ctx context.Context, r store.InboxReader, empresaID string) (Limits, error) {
	q, err := ib.quota(ctx, r, empresaID, false)
	if err != nil {
		return Limits{}, err
	}
	return Limits(q.Vigente), nil
}

// quota reads the company's settings (and its usage when asked): what
// the operator allows, what the company chose (a nil field is the
// operator's value), what applies, and what its inbox holds.
func (ib *Inbox) quota(ctx context.Context, r store.InboxReader, empresaID string, usage bool) (*api.RecepcionSettings, error) {
	q := &api.RecepcionSettings{Operador: api.RecepcionCuota(ib.cfg.Limits.orDefault())}
	s, err := r.GetInboxSettings(ctx, empresaID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return nil, fault.Failed("reading the inbox settings", err)
	default:
		q.Empresa = api.RecepcionLimits{MaxRecepciones: s.MaxRecepciones, MaxRecepcionBytes: s.MaxRecepcionBytes,
			MaxMensajes: s.MaxMensajes, RetencionDias: s.RetencionDias}
		t := s.UpdatedAt.UTC()
		q.UpdatedAt = &t
	}
	q.Vigente = q.Operador
	lower := func(dst *int64, v *int64) {
		if v != nil && *v > 0 && *v < *dst {
			*dst = *v
		}
	}
	lower(&q.Vigente.MaxRecepciones, q.Empresa.MaxRecepciones)
	lower(&q.Vigente.MaxRecepcionBytes, q.Empresa.MaxRecepcionBytes)
	lower(&q.Vigente.MaxMensajes, q.Empresa.MaxMensajes)
	if v := q.Empresa.RetencionDias; v != nil && *v > 0 {
		q.Vigente.RetencionDias = *v
	}
	if usage {
		u, err := r.InboxUsage(ctx, empresaID)
		if err != nil {
			return nil, fault.Failed("counting the inbox", err)
		}
		q.Uso = api.RecepcionUso{Recepciones: u.Recepciones, RecepcionBytes: u.RecepcionBytes, Mensajes: u.Mensajes}
	}
	return q, nil
}

// Quota returns the company's limits and usage.
func (ib *Inbox) Quota(ctx context.Context, empresaID string) (*api.RecepcionSettings, error) {
	if _, err := ib.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "empresa", empresaID)
	}
	return ib.quota(ctx, ib.st, empresaID, true)
}

// SetQuota records the company's choice of its limits (every field; nil
// is the operator's default) and returns the result. A company may lower
// its quota below the operator's, never raise it; it may choose any
// retention from 1 day to MaxRetencionDias.
func (ib *Inbox) SetQuota(ctx context.Context, empresaID string, in api.RecepcionLimits) (*api.RecepcionSettings, error) {
	op := ib.cfg.Limits.orDefault()
	var d []dte.FieldError
	check := func(field string, v *int64, maxV int64, unit string) {
		if v != nil && (*v < 1 || *v > maxV) {
			d = append(d, dte.FieldError{Field: field, Code: dte.CodeOutOfRange,
				Message: fmt.Sprintf("%s must be from 1 to %d %s (the operator's limit)", field, maxV, unit)})
		}
	}
	check("max_recepciones", in.MaxRecepciones, op.MaxRecepciones, "files")
	check("max_recepcion_bytes", in.MaxRecepcionBytes, op.MaxRecepcionBytes, "bytes")
	check("max_mensajes", in.MaxMensajes, op.MaxMensajes, "mails")
	if v := in.RetencionDias; v != nil && (*v < 1 || *v > MaxRetencionDias) {
		d = append(d, dte.FieldError{Field: "retencion_dias", Code: dte.CodeOutOfRange,
			Message: fmt.Sprintf("retencion_dias must be from 1 to %d days", MaxRetencionDias)})
	}
	if len(d) > 0 {
		return nil, fault.FromValidation(&dte.ValidationError{Details: d})
	}
	err := ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.PutInboxSettings(ctx, &store.InboxSettings{EmpresaID: empresaID, MaxRecepciones: in.MaxRecepciones,
			MaxRecepcionBytes: in.MaxRecepcionBytes, MaxMensajes: in.MaxMensajes, RetencionDias: in.RetencionDias})
	})
	if err != nil {
		return nil, storeErr(err, "empresa", empresaID)
	}
	return ib.Quota(ctx, empresaID)
}

// overQuota is the LIMIT_EXCEEDED refusal of a file that would take the
// company's received files over its quota (stored: the bytes the file
// would keep), nil when it fits.
func overQuota(l Limits, u *store.InboxUsage, stored int64) error {
	switch {
	case u.Recepciones >= l.MaxRecepciones:
		return fault.Clash(fault.LimitExceeded, fmt.Sprintf("the company keeps %d received files, its quota (max_recepciones %d); "+
			"nothing more is received until the retention deletes refused files or the quota is raised", u.Recepciones, l.MaxRecepciones))
	case u.RecepcionBytes+stored > l.MaxRecepcionBytes:
		return fault.Clash(fault.LimitExceeded, fmt.Sprintf("the company's received files keep %d bytes and this one would keep %d more, "+
			"over its quota (max_recepcion_bytes %d)", u.RecepcionBytes, stored, l.MaxRecepcionBytes))
	}
	return nil
}

// checkQuota refuses a file that would take the company over its quota
// (an early refusal that spares the verification; stored is 0 then).
func (ib *Inbox) checkQuota(ctx context.Context, r store.InboxReader, empresaID string, stored int64) error {
	l, err := ib.Limits(ctx, r, empresaID)
	if err != nil {
		return err
	}
	u, err := r.InboxUsage(ctx, empresaID)
	if err != nil {
		return fault.Failed("counting the inbox", err)
	}
	return overQuota(l, u, stored)
}

// checkInserted refuses, in the transaction that has just inserted r, a
// file that takes the company over its quota (the caller rolls back).
// InsertRecepcion locked the company, so concurrent files are counted
// one after the other, never both within the quota's last room.
func (ib *Inbox) checkInserted(ctx context.Context, tx store.Tx, r *store.Recepcion) error {
	l, err := ib.Limits(ctx, tx, r.EmpresaID)
	if err != nil {
		return err
	}
	u, err := tx.InboxUsage(ctx, r.EmpresaID)
	if err != nil {
		return fault.Failed("counting the inbox", err)
	}
	before := *u
	before.Recepciones--
	before.RecepcionBytes -= r.Stored
	return overQuota(l, &before, r.Stored)
}

// AdmitMail reports, before a mail is read from the company's mailbox,
// whether the company may keep one more: LIMIT_EXCEEDED when the mails
// read it keeps reach its quota (max_mensajes) or its files theirs. The
// mail then stays in the mailbox, unread by the service, until room is
// made.
func (ib *Inbox) AdmitMail(ctx context.Context, empresaID string) error {
	l, err := ib.Limits(ctx, ib.st, empresaID)
	if err != nil {
		return err
	}
	u, err := ib.st.InboxUsage(ctx, empresaID)
	if err != nil {
		return fault.Failed("counting the inbox", err)
	}
	if u.Mensajes >= l.MaxMensajes {
		return fault.Clash(fault.LimitExceeded, fmt.Sprintf("the company keeps %d mails read, its quota (max_mensajes %d); "+
			"the mailbox is read again once the retention deletes old ones or the quota is raised", u.Mensajes, l.MaxMensajes))
	}
	return nil
}

// IsLimit reports whether err is a LIMIT_EXCEEDED refusal.
func IsLimit(err error) bool {
	e := fault.As(err)
	return e != nil && e.Code == fault.LimitExceeded
}

// kept is what a file keeps of data: all of it, or its first PrefixBytes
// when it is refused whole.
func kept(data []byte, descartado bool) []byte {
	if descartado && len(data) > PrefixBytes {
		return data[:PrefixBytes:PrefixBytes]
	}
	return data
}

// PurgeBatch is how many files and mails one transaction of the retention
// deletes; PurgeBatches bounds the transactions of one company per run.
const (
	PurgeBatch   = 200
	PurgeBatches = 50
)

// purgeArgs names the periodic retention job.
type purgeArgs struct{}

// Kind names the job.
func (purgeArgs) Kind() string { return "inbox.purge" }

// purge runs the retention of every company.
func (ib *Inbox) purge(ctx context.Context) error {
	return periodic.EachEmpresa(ctx, ib.st, func(e *store.Empresa) error {
		if _, _, err := ib.Purge(ctx, e.ID); err != nil {
			ib.log.Warn("billing: deleting old received files failed", "empresa_id", e.ID, "error", err.Error())
		}
		return nil
	})
}

// Purge deletes the company's refused files and mails read that are
// older than its retention period, PurgeBatch at a time in short
// transactions, at most PurgeBatches of them (the next run goes on).
func (ib *Inbox) Purge(ctx context.Context, empresaID string) (recepciones, mensajes int, err error) {
	l, err := ib.Limits(ctx, ib.st, empresaID)
	if err != nil {
		return 0, 0, err
	}
	before := ib.now().Add(-time.Duration(l.RetencionDias) * 24 * time.Hour)
	for range PurgeBatches {
		var r, m int
		err := ib.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			r, m, err = tx.PurgeInbox(ctx, empresaID, before, PurgeBatch)
			return err
		})
		if err != nil {
			return recepciones, mensajes, err
		}
		recepciones, mensajes = recepciones+r, mensajes+m
		if r < PurgeBatch && m < PurgeBatch {
			break
		}
	}
	if recepciones+mensajes > 0 {
		ib.log.Info("billing: deleted old refused files and mails read", "empresa_id", empresaID,
			"recepciones", recepciones, "mensajes", mensajes)
	}
	return recepciones, mensajes, nil
}
