package billing

import (
	"context"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/inbox"
)

// InboxConfig is the operator's bound on what each company's inbox keeps
// (Config.Inbox): the quota of received files (their number and the bytes
// they keep) and of mails read from its mailbox, and how long refused
// files and mails read are kept. A zero field is the default. A company
// may choose lower quotas and its own retention
// (Received.UpdateSettings), never a quota above these.
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

// Settings returns the company's inbox quota, retention and usage.
func (rs *ReceivedService) Settings(ctx context.Context, empresaID string) (*api.RecepcionSettings, error) {
	s := rs.s
	return s.inbox.Quota(ctx, empresaID)
}

// UpdateSettings records the company's choice of its inbox quota and
// retention (every field; null is the operator's value): quotas from 1
// to the operator's, a retention from 1 to 3,660 days.
func (rs *ReceivedService) UpdateSettings(ctx context.Context, empresaID string, in api.RecepcionLimits) (*api.RecepcionSettings, error) {
	s := rs.s
	return s.inbox.SetQuota(ctx, empresaID, in)
}
