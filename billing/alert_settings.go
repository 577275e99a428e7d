package billing

import (
	"context"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/alerts"
	"github.com/dtekit/dtekit/dte"
)

// Bounds of AlertSettings.CAFLowStockThreshold.
const (
	DefaultLowStockThreshold = alerts.DefaultLowStockThreshold
	MaxLowStockThreshold     = alerts.MaxLowStockThreshold
)

// AlertSettings returns the company's alert preferences.
func (r *CompanyService) AlertSettings(ctx context.Context, empresaID string) (*api.AlertSettings, error) {
	s := r.s
	a, err := s.alerts.Settings(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the alert settings", "empresa", empresaID)
	}
	return a, nil
}

// UpdateAlertSettings replaces the company's alert preferences: the next
// emission that leaves the company with CAFLowStockThreshold folios of a
// type fires caf.low_stock.
func (r *CompanyService) UpdateAlertSettings(ctx context.Context, empresaID string, in api.AlertSettingsInput) (*api.AlertSettings, error) {
	s := r.s
	if in.CAFLowStockThreshold == nil {
		return nil, fault.Invalid("caf_low_stock_threshold", dte.CodeRequired, "caf_low_stock_threshold is required")
	}
	a, err := s.alerts.UpdateSettings(ctx, empresaID, api.AlertSettings{CAFLowStockThreshold: *in.CAFLowStockThreshold})
	if err != nil {
		return nil, storeErr(err, "changing the alert settings", "empresa", empresaID)
	}
	return a, nil
}
