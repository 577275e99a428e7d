package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// Per-company alert preferences: the threshold of caf.low_stock.

// LowStockThreshold returns the company's caf.low_stock threshold.
func (r *reader) LowStockThreshold(ctx context.Context, empresaID string) (int64, bool, error) {
	var n int64
	err := r.q.QueryRowContext(ctx, "SELECT low_stock_threshold FROM alert_settings WHERE empresa_id = $1", empresaID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, r.errf(err, "reading the alert settings of empresa %q", empresaID)
	}
	return n, true, nil
}

// SetLowStockThreshold records the company's threshold.
func (t *tx) SetLowStockThreshold(ctx context.Context, empresaID string, n int64) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO alert_settings (empresa_id, low_stock_threshold) VALUES ($1, $2)
		ON CONFLICT (empresa_id) DO UPDATE SET low_stock_threshold = excluded.low_stock_threshold`, empresaID, n)
	if err != nil && t.d.IsForeignKey(err) {
		return t.notFound(sql.ErrNoRows, "empresa", empresaID)
	}
	if err != nil {
		return t.errf(err, "writing the alert settings of empresa %q", empresaID)
	}
	return nil
}
