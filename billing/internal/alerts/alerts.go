// Package alerts records the billing service's warnings about a
// company's means of emitting: caf.low_stock, when an emission leaves the
// company with its threshold of available folios of a type, and
// certificado.expiring, when its signing certificate comes within 30, 15,
// 7 or 1 days of expiry (a daily job). Both are events of the outbox, so
// they reach the subscribed webhooks.
//
// An Alerts needs a store, the outbox and a clock; it knows nothing of
// billing.Service and asks nothing of it: its one function value,
// Config.Now, is the clock, which tests replace.
package alerts

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Config is what an Alerts needs; every field is required.
type Config struct {
	Store  store.Store
	Outbox *outbox.Outbox
	Now    func() time.Time
}

// Alerts records the alert events. Build it with New; it is safe for
// concurrent use.
type Alerts struct {
	st     store.Store
	outbox *outbox.Outbox
	now    func() time.Time
}

// New builds an Alerts from cfg. Register its job before the runner
// starts.
func New(cfg Config) *Alerts { return &Alerts{st: cfg.Store, outbox: cfg.Outbox, now: cfg.Now} }

// DefaultLowStockThreshold is the caf.low_stock threshold of a company
// that did not set its own (UpdateSettings). The event fires the moment
// an emission leaves the company with exactly this many available folios
// of a document type (summed over its active CAFs of that type), coming
// from more. Once per crossing: registering a new CAF lifts the count
// again, and the next crossing fires again.
const DefaultLowStockThreshold = 20

// MaxLowStockThreshold bounds the threshold a company may set.
const MaxLowStockThreshold = 1_000_000

// lowStockThreshold returns the company's threshold, or the default.
func lowStockThreshold(ctx context.Context, r store.AlertReader, empresaID string) (int64, error) {
	n, set, err := r.LowStockThreshold(ctx, empresaID)
	if err != nil || !set {
		return DefaultLowStockThreshold, err
	}
	return n, nil
}

// Settings returns the company's alert preferences; store.ErrNotFound
// when the company does not exist.
func (a *Alerts) Settings(ctx context.Context, empresaID string) (*api.AlertSettings, error) {
	if _, err := a.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, err
	}
	n, err := lowStockThreshold(ctx, a.st, empresaID)
	if err != nil {
		return nil, fault.Failed("reading alert settings", err)
	}
	return &api.AlertSettings{CAFLowStockThreshold: n}, nil
}

// UpdateSettings changes the company's alert preferences: a validation
// fault.Error for a threshold out of range, store.ErrNotFound when the
// company does not exist.
func (a *Alerts) UpdateSettings(ctx context.Context, empresaID string, in api.AlertSettings) (*api.AlertSettings, error) {
	if in.CAFLowStockThreshold < 0 || in.CAFLowStockThreshold > MaxLowStockThreshold {
		return nil, fault.Invalid("caf_low_stock_threshold", dte.CodeOutOfRange,
			fmt.Sprintf("caf_low_stock_threshold must be between 0 and %d", MaxLowStockThreshold))
	}
	err := a.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		return tx.SetLowStockThreshold(ctx, empresaID, in.CAFLowStockThreshold)
	})
	if err != nil {
		return nil, err
	}
	return &api.AlertSettings{CAFLowStockThreshold: in.CAFLowStockThreshold}, nil
}

// CheckLowStock records caf.low_stock, in tx, when the folio just taken
// from rec left the company's available folios of its type at its
// threshold: the one emission that crosses it (folios are taken one at a
// time, each in a transaction serialized on the CAF, so exactly one sees
// the crossing).
func (a *Alerts) CheckLowStock(ctx context.Context, tx store.Tx, rec *store.CAF) error {
	threshold, err := lowStockThreshold(ctx, tx, rec.EmpresaID)
	if err != nil {
		return err
	}
	if rec.FoliosDisponibles() > threshold {
		// rec is active, so the type's available folios are at least its
		// own: above the threshold, with no need to list the others.
		return nil
	}
	cafs, err := tx.ListCAFs(ctx, rec.EmpresaID, rec.TipoDTE)
	if err != nil {
		return err
	}
	var avail int64
	var taken *store.CAF
	for i := range cafs {
		c := &cafs[i]
		if c.Ambiente != rec.Ambiente {
			continue // the other environment's folios are no stock here
		}
		if c.ID == rec.ID {
			taken = c
		}
		if c.IsActive {
			avail += c.FoliosDisponibles()
		}
	}
	if taken == nil {
		taken = rec
	}
	if avail != threshold {
		return nil
	}
	_, err = a.outbox.Publish(ctx, tx, rec.EmpresaID, webhook.EventCAFLowStock, webhook.CAFLowStockData{
		ID: taken.ID, TipoDTE: taken.TipoDTE, FolioDesde: taken.FolioDesde, FolioHasta: taken.FolioHasta,
		FoliosDisponibles: avail, Umbral: threshold, Ambiente: taken.Ambiente})
	return err
}

// expiryThresholds are the days before a certificate expires at which
// certificado.expiring fires, once each.
var expiryThresholds = [...]int{30, 15, 7, 1}

// certExpiryInterval is how often the certificate expiry check runs.
const certExpiryInterval = 24 * time.Hour

// certExpiryArgs is the daily job that records certificado.expiring.
type certExpiryArgs struct{}

// Kind names the certificate expiry job.
func (certExpiryArgs) Kind() string { return "certificado.expiry_check" }

// Register registers the daily certificate check on j.
func (a *Alerts) Register(j store.Jobs) error {
	return periodic.Register(j, periodic.Job{Args: certExpiryArgs{}, Every: certExpiryInterval, OnStart: true, Timeout: 10 * time.Minute,
		Run: func(ctx context.Context) error { _, err := a.CheckCertificates(ctx); return err }})
}

// CheckCertificates records certificado.expiring for every company whose
// certificate expires within one of the thresholds (30, 15, 7, 1 days)
// and reports how many it recorded. Each (certificate, threshold) fires
// once: the event's id is derived from them, so the daily job may run
// twice or late without repeating one; after days without a run it fires
// only the nearest threshold reached, not every one skipped.
func (a *Alerts) CheckCertificates(ctx context.Context) (int, error) {
	fired := 0
	err := periodic.EachEmpresa(ctx, a.st, func(e *store.Empresa) error {
		ok, err := a.checkCertificate(ctx, e.ID)
		if err != nil {
			return err
		}
		if ok {
			fired++
		}
		return nil
	})
	return fired, err
}

// checkCertificate handles one company.
func (a *Alerts) checkCertificate(ctx context.Context, empresaID string) (bool, error) {
	cert, err := a.st.GetCertificado(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fault.Failed("reading a certificate", err)
	}
	now := a.now()
	days := (&signer.Certificate{Leaf: &x509.Certificate{NotAfter: cert.FechaVencimiento}}).DaysToExpiry(now)
	if days < 0 {
		return false, nil
	}
	threshold := 0
	for _, t := range expiryThresholds {
		if days <= t {
			threshold = t // the smallest threshold reached
		}
	}
	if threshold == 0 {
		return false, nil
	}
	id := expiryEventID(empresaID, cert.FechaVencimiento, threshold)
	fired := false
	err = a.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEvent(ctx, empresaID, id); err == nil {
			return nil // already fired
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		body, err := webhook.MarshalEvent(webhook.EventCertificadoExpiring, now.UTC().Truncate(time.Second), webhook.CertificadoExpiringData{
			RutFirmante: cert.RutFirmante, FechaVencimiento: dte.ChileTime(cert.FechaVencimiento).Format(time.DateOnly),
			DiasParaVencimiento: days})
		if err != nil {
			return err
		}
		ev := &store.Event{ID: id, EmpresaID: empresaID, Type: string(webhook.EventCertificadoExpiring), Payload: body}
		if err := a.outbox.Record(ctx, tx, ev); err != nil {
			return err
		}
		fired = true
		return nil
	})
	if err != nil {
		return false, fault.Failed("recording certificado.expiring", err)
	}
	return fired, nil
}

// expiryEventID is the id of the certificado.expiring event of one
// certificate (company, expiry instant) at one threshold: a name-based
// UUID, so the same event is never recorded twice.
func expiryEventID(empresaID string, notAfter time.Time, threshold int) string {
	name := fmt.Sprintf("dtekit/certificado.expiring/%s/%d/%d", empresaID, notAfter.Unix(), threshold)
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(name)).String()
}
