package store

import "context"

// AlertSettings keeps a company's alert preferences. The Tx of every
// backend implements it (assert tx.(store.AlertSettings)); the Store does
// too, for reads.
type AlertSettings interface {
	// LowStockThreshold returns the company's caf.low_stock threshold;
	// ok is false when the company never set one.
	LowStockThreshold(ctx context.Context, empresaID string) (n int64, ok bool, err error)
	// SetLowStockThreshold records the company's threshold (inside a
	// write transaction only); ErrNotFound when the company does not
	// exist.
	SetLowStockThreshold(ctx context.Context, empresaID string, n int64) error
}
