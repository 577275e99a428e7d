package submission

import (
	"context"
	"log/slog"

	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// Settled is a document the SII's review settled: aceptado, con_reparos
// or rechazado, with the SII's code when it gave one.
type Settled struct {
	EmpresaID, DTEID string
	TipoDTE          int
	Folio            int64
	Estado           dte.Estado
	CodigoSII        string
}

// settled notes, inside the transaction that moves d to its final
// estado, that the review settled it: once that transaction commits,
// the outcome is logged (a rejection as a warning) and reported to
// Config.Outcomes. A transaction rolled back reports nothing; one run
// again reports only its last run.
func (sb *Submitter) settled(ctx context.Context, d *store.DTE, estado dte.Estado) {
	o := Settled{EmpresaID: d.EmpresaID, DTEID: d.ID, TipoDTE: d.TipoDTE, Folio: d.Folio, Estado: estado,
		CodigoSII: deref(outbox.TrackingOf(d).CodigoSII)}
	afterCommit(ctx, func() {
		level := slog.LevelInfo
		if estado == dte.EstadoRechazado {
			level = slog.LevelWarn
		}
		sb.log.Log(context.Background(), level, "billing: the SII's review settled a document", "empresa_id", o.EmpresaID,
			"dte_id", o.DTEID, "tipo", o.TipoDTE, "folio", o.Folio, "estado", string(o.Estado), "codigo_sii", o.CodigoSII)
		if sb.cfg.Outcomes != nil {
			sb.cfg.Outcomes.Settled(o)
		}
	})
}

// afterCommitStore is the submitter's store: each Write gives its
// function a context where afterCommit collects what must happen once
// the transaction commits, and runs it then. A run of the function that
// fails, or that the store runs again, leaves nothing behind.
type afterCommitStore struct{ store.Store }

// commitHooksKey carries a Write's pending functions in its context.
type commitHooksKey struct{}

// Write runs fn in a transaction of the wrapped store, then what fn's
// last run asked afterCommit for, once the transaction has committed.
func (s afterCommitStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	var pending []func()
	err := s.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		pending = pending[:0]
		return fn(context.WithValue(ctx, commitHooksKey{}, &pending), tx)
	})
	if err != nil {
		return err
	}
	for _, f := range pending {
		f()
	}
	return nil
}

// afterCommit runs f once the transaction of ctx (a Write of
// afterCommitStore) commits; outside one, at once.
func afterCommit(ctx context.Context, f func()) {
	if p, ok := ctx.Value(commitHooksKey{}).(*[]func()); ok {
		*p = append(*p, f)
		return
	}
	f()
}
