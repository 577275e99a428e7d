package billing

import (
	"context"
	"time"

	"github.com/dtekit/dtekit/billing/internal/inbox"
)

// InboxConfig is the operator's bound on what each company's inbox keeps
// (Config.Inbox): the quota of received files (their number and the bytes
// they keep) and of mails read from its mailbox, and how long refused
// files and mails read are kept. A zero field is the default. A company
// may choose lower quotas and its own retention
// (PutRecepcionSettings), never a quota above these.
type InboxConfig struct {
	// MaxRecepciones bounds the received files a company keeps (default
	// 100,000).
	MaxRecepciones int64
	// MaxRecepcionBytes bounds the bytes they keep: each file's XML (the
	// first 4 KiB of a refused one) and its report, and those of the
	// documents read from it (default 2 GiB).
	MaxRecepcionBytes int64
	// MaxMensajes bounds the mails read a company keeps (default
	// 100,000); at it, the mailbox is not read until room is made.
	MaxMensajes int64
	// RetencionDias is how long refused files and mails read are kept,
	// in days (default 90).
	RetencionDias int64
	// PurgeEvery is the period of the job that deletes them (default 1
	// hour).
	PurgeEvery time.Duration
}

// limits is the room's form of c.
func (c InboxConfig) limits() inbox.Limits {
	return inbox.Limits{MaxRecepciones: c.MaxRecepciones, MaxRecepcionBytes: c.MaxRecepcionBytes,
		MaxMensajes: c.MaxMensajes, RetencionDias: c.RetencionDias}
}

// RecepcionSettings are a company's inbox quota and retention
// (GET/PUT /api/v1/billing/empresa/recepcion): what the operator allows
// (Operador), what the company chose (Empresa; null is the operator's
// value), what applies (Vigente) and what its inbox holds (Uso).
type RecepcionSettings struct {
	Operador  RecepcionCuota  `json:"operador"`
	Empresa   RecepcionLimits `json:"empresa"`
	Vigente   RecepcionCuota  `json:"vigente"`
	Uso       RecepcionUso    `json:"uso"`
	UpdatedAt *time.Time      `json:"updated_at"`
}

// RecepcionCuota is a set of inbox limits.
type RecepcionCuota struct {
	MaxRecepciones    int64 `json:"max_recepciones"`
	MaxRecepcionBytes int64 `json:"max_recepcion_bytes"`
	MaxMensajes       int64 `json:"max_mensajes"`
	RetencionDias     int64 `json:"retencion_dias"`
}

// RecepcionLimits are what a company chooses of its inbox limits (PUT
// /api/v1/billing/empresa/recepcion); null is the operator's value.
type RecepcionLimits struct {
	MaxRecepciones    *int64 `json:"max_recepciones"`
	MaxRecepcionBytes *int64 `json:"max_recepcion_bytes"`
	MaxMensajes       *int64 `json:"max_mensajes"`
	RetencionDias     *int64 `json:"retencion_dias"`
}

// RecepcionUso is what a company's inbox holds: its received files and
// the bytes they keep, and the mails read from its mailbox.
type RecepcionUso struct {
	Recepciones    int64 `json:"recepciones"`
	RecepcionBytes int64 `json:"recepcion_bytes"`
	Mensajes       int64 `json:"mensajes"`
}

// recepcionSettingsOut is the face's form of the room's quota.
func recepcionSettingsOut(q *inbox.Quota) *RecepcionSettings {
	cuota := func(l inbox.Limits) RecepcionCuota {
		return RecepcionCuota{MaxRecepciones: l.MaxRecepciones, MaxRecepcionBytes: l.MaxRecepcionBytes,
			MaxMensajes: l.MaxMensajes, RetencionDias: l.RetencionDias}
	}
	e := q.Empresa
	return &RecepcionSettings{Operador: cuota(q.Operador), Vigente: cuota(q.Vigente), UpdatedAt: q.UpdatedAt,
		Empresa: RecepcionLimits{MaxRecepciones: e.MaxRecepciones, MaxRecepcionBytes: e.MaxRecepcionBytes,
			MaxMensajes: e.MaxMensajes, RetencionDias: e.RetencionDias},
		Uso: RecepcionUso{Recepciones: q.Uso.Recepciones, RecepcionBytes: q.Uso.RecepcionBytes, Mensajes: q.Uso.Mensajes}}
}

// GetRecepcionSettings returns the company's inbox quota, retention and
// usage.
func (s *Service) GetRecepcionSettings(ctx context.Context, empresaID string) (*RecepcionSettings, error) {
	q, err := s.inbox.Quota(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	return recepcionSettingsOut(q), nil
}

// PutRecepcionSettings records the company's choice of its inbox quota
// and retention (every field; null is the operator's value): quotas from
// 1 to the operator's, a retention from 1 to 3,660 days.
func (s *Service) PutRecepcionSettings(ctx context.Context, empresaID string, in RecepcionLimits) (*RecepcionSettings, error) {
	q, err := s.inbox.SetQuota(ctx, empresaID, inbox.LimitSettings{MaxRecepciones: in.MaxRecepciones,
		MaxRecepcionBytes: in.MaxRecepcionBytes, MaxMensajes: in.MaxMensajes, RetencionDias: in.RetencionDias})
	if err != nil {
		return nil, err
	}
	return recepcionSettingsOut(q), nil
}
