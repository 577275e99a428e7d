package billing

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/periodic"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// DefaultLowStockThreshold is the caf.low_stock threshold of a company
// that did not set its own (UpdateAlertSettings). The event fires the
// moment an emission leaves the company with exactly this many available
// folios of a document type (summed over its active CAFs of that type),
// coming from more. Once per crossing: registering a new CAF lifts the
// count again, and the next crossing fires again.
const DefaultLowStockThreshold = 20

// MaxLowStockThreshold bounds the threshold a company may set.
const MaxLowStockThreshold = 1_000_000

// AlertSettings are a company's alert preferences.
type AlertSettings struct {
	// CAFLowStockThreshold is the number of available folios of a type at
	// which caf.low_stock fires (0 to 1,000,000; 0 means when the last
	// folio is taken). Default DefaultLowStockThreshold.
	CAFLowStockThreshold int64 `json:"caf_low_stock_threshold"`
}

// lowStockThreshold returns the company's threshold, or the default.
func lowStockThreshold(ctx context.Context, r store.Reader, empresaID string) (int64, error) {
	n, set, err := r.LowStockThreshold(ctx, empresaID)
	if err != nil || !set {
		return DefaultLowStockThreshold, err
	}
	return n, nil
}

// GetAlertSettings returns the company's alert preferences.
func (s *Service) GetAlertSettings(ctx context.Context, empresaID string) (*AlertSettings, error) {
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading alert settings", "empresa", empresaID)
	}
	n, err := lowStockThreshold(ctx, s.st, empresaID)
	if err != nil {
		return nil, fault.Failed("reading alert settings", err)
	}
	return &AlertSettings{CAFLowStockThreshold: n}, nil
}

// UpdateAlertSettings changes the company's alert preferences.
func (s *Service) UpdateAlertSettings(ctx context.Context, empresaID string, in AlertSettings) (*AlertSettings, error) {
	if in.CAFLowStockThreshold < 0 || in.CAFLowStockThreshold > MaxLowStockThreshold {
		return nil, fault.Invalid("caf_low_stock_threshold", dte.CodeOutOfRange,
			fmt.Sprintf("caf_low_stock_threshold must be between 0 and %d", MaxLowStockThreshold))
	}
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		return tx.SetLowStockThreshold(ctx, empresaID, in.CAFLowStockThreshold)
	})
	if err != nil {
		return nil, storeErr(err, "updating alert settings", "empresa", empresaID)
	}
	return &AlertSettings{CAFLowStockThreshold: in.CAFLowStockThreshold}, nil
}

// expiryThresholds are the days before a certificate expires at which
// certificado.expiring fires, once each.
var expiryThresholds = [...]int{30, 15, 7, 1}

// CertExpiryInterval is how often the certificate expiry check runs.
const CertExpiryInterval = 24 * time.Hour

// checkLowStock records caf.low_stock when the folio just taken from rec
// left the company's available folios of its type at its threshold: the
// one emission that crosses it (folios are taken one at a time, each in a
// transaction serialized on the CAF, so exactly one sees the crossing).
func (s *Service) checkLowStock(ctx context.Context, tx store.Tx, rec *store.CAF) error {
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
	_, err = s.outbox.Publish(ctx, tx, rec.EmpresaID, webhook.EventCAFLowStock, webhook.CAFLowStockData{
		ID: taken.ID, TipoDTE: taken.TipoDTE, FolioDesde: taken.FolioDesde, FolioHasta: taken.FolioHasta,
		FoliosDisponibles: avail, Umbral: threshold, Ambiente: taken.Ambiente})
	return err
}

// certExpiryArgs is the daily job that records certificado.expiring.
type certExpiryArgs struct{}

// Kind names the certificate expiry job.
func (certExpiryArgs) Kind() string { return "certificado.expiry_check" }

// registerCertExpiry registers the daily certificate check.
func (s *Service) registerCertExpiry() error {
	return periodic.Register(s.st.Jobs(), periodic.Job{Args: certExpiryArgs{}, Every: CertExpiryInterval, OnStart: true, Timeout: 10 * time.Minute,
		Run: func(ctx context.Context) error { _, err := s.CheckCertificateExpiry(ctx); return err }})
}

// CheckCertificateExpiry records certificado.expiring for every company
// whose certificate expires within one of the thresholds (30, 15, 7, 1
// days) and reports how many it recorded. Each (certificate, threshold)
// fires once: the event's id is derived from them, so the daily job may
// run twice or late without repeating one; after days without a run it
// fires only the nearest threshold reached, not every one skipped.
func (s *Service) CheckCertificateExpiry(ctx context.Context) (int, error) {
	fired := 0
	err := periodic.EachEmpresa(ctx, s.st, func(e *store.Empresa) error {
		ok, err := s.checkCertExpiry(ctx, e.ID)
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

// checkCertExpiry handles one company.
func (s *Service) checkCertExpiry(ctx context.Context, empresaID string) (bool, error) {
	cert, err := s.st.GetCertificado(ctx, empresaID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fault.Failed("reading a certificate", err)
	}
	now := s.now()
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
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
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
		if err := s.outbox.Record(ctx, tx, ev); err != nil {
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
