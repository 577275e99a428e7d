package billing

import (
	"context"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/alerts"
	"github.com/dtekit/dtekit/dte"
)

// Bounds of AlertSettings.CAFLowStockThreshold.
const (
	DefaultLowStockThreshold = alerts.DefaultLowStockThreshold
	MaxLowStockThreshold     = alerts.MaxLowStockThreshold
)

// AlertSettings are a company's alert preferences.
type AlertSettings struct {
	// CAFLowStockThreshold is how many available folios of a type
	// (summed over its active CAFs) an emission must leave for
	// caf.low_stock to fire, 0 to MaxLowStockThreshold (0: when the last
	// folio is taken); DefaultLowStockThreshold until the company sets it.
	CAFLowStockThreshold int64 `json:"caf_low_stock_threshold"`
}

// AlertSettingsInput changes a company's alert preferences; every field
// is required.
type AlertSettingsInput struct {
	CAFLowStockThreshold *int64 `json:"caf_low_stock_threshold"`
}

// AlertSettings returns the company's alert preferences.
func (s *Service) AlertSettings(ctx context.Context, empresaID string) (*AlertSettings, error) {
	a, err := s.alerts.Settings(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the alert settings", "empresa", empresaID)
	}
	return &AlertSettings{CAFLowStockThreshold: a.CAFLowStockThreshold}, nil
}

// UpdateAlertSettings replaces the company's alert preferences: the next
// emission that leaves the company with CAFLowStockThreshold folios of a
// type fires caf.low_stock.
func (s *Service) UpdateAlertSettings(ctx context.Context, empresaID string, in AlertSettingsInput) (*AlertSettings, error) {
	if in.CAFLowStockThreshold == nil {
		return nil, fault.Invalid("caf_low_stock_threshold", dte.CodeRequired, "caf_low_stock_threshold is required")
	}
	a, err := s.alerts.UpdateSettings(ctx, empresaID, alerts.Settings{CAFLowStockThreshold: *in.CAFLowStockThreshold})
	if err != nil {
		return nil, storeErr(err, "changing the alert settings", "empresa", empresaID)
	}
	return &AlertSettings{CAFLowStockThreshold: a.CAFLowStockThreshold}, nil
}
