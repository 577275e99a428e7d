package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/store"
)

// The attempt log of webhook deliveries: appended on the Tx, read on
// both the Tx and the DB.

const attemptCols = "id, empresa_id, delivery_id, webhook_id, attempt, trigger, attempted_at, status_code, error_class, error, duration_us, response, ok"

// InsertDeliveryAttempt appends one attempt to the log.
func (t *tx) InsertDeliveryAttempt(ctx context.Context, a *store.DeliveryAttempt) error {
	var none time.Time
	t.stamp(&a.ID, &a.AttemptedAt, &none)
	if len(a.Response) > store.MaxAttemptResponse {
		a.Response = a.Response[:store.MaxAttemptResponse]
	}
	// The delivery must be the company's and go to the attempt's webhook
	// (the foreign key alone would accept another company's delivery).
	var n int
	err := t.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM deliveries WHERE empresa_id = $1 AND id = $2 AND webhook_id = $3",
		a.EmpresaID, a.DeliveryID, a.WebhookID).Scan(&n)
	if err != nil {
		return t.errf(err, "inserting delivery attempt %q", a.ID)
	}
	if n != 1 {
		return fmt.Errorf("%w: delivery attempt %q: delivery %q to webhook %q of empresa %q", store.ErrNotFound, a.ID, a.DeliveryID, a.WebhookID, a.EmpresaID)
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO delivery_attempts ("+attemptCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING",
		a.ID, a.EmpresaID, a.DeliveryID, a.WebhookID, a.Attempt, a.Trigger, t.d.targ(a.AttemptedAt), a.StatusCode,
		a.ErrorClass, a.Error, a.Duration.Microseconds(), blob(a.Response), boolArg(a.OK))
	return t.inserted(ctx, res, err, "delivery attempt", "delivery_attempts", a.ID, store.ConstraintPrimaryKey)
}

// ListDeliveryAttempts returns the latest store.MaxLimit attempts of a
// delivery, oldest first.
func (r *reader) ListDeliveryAttempts(ctx context.Context, empresaID, deliveryID string) ([]store.DeliveryAttempt, error) {
	rows, err := r.q.QueryContext(ctx, "SELECT "+attemptCols+" FROM (SELECT seq, "+attemptCols+
		" FROM delivery_attempts WHERE empresa_id = $1 AND delivery_id = $2 ORDER BY seq DESC LIMIT $3) AS latest ORDER BY seq",
		empresaID, deliveryID, store.MaxLimit)
	if err != nil {
		return nil, r.errf(err, "listing attempts of delivery %q", deliveryID)
	}
	defer rows.Close()
	var out []store.DeliveryAttempt
	for rows.Next() {
		var a store.DeliveryAttempt
		var us int64
		if err := rows.Scan(&a.ID, &a.EmpresaID, &a.DeliveryID, &a.WebhookID, &a.Attempt, &a.Trigger, ts(&a.AttemptedAt),
			&a.StatusCode, &a.ErrorClass, &a.Error, &us, &a.Response, &a.OK); err != nil {
			return nil, r.errf(err, "reading attempts of delivery %q", deliveryID)
		}
		a.Duration = time.Duration(us) * time.Microsecond
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, r.errf(err, "listing attempts of delivery %q", deliveryID)
	}
	return out, nil
}

// WebhookFailingSince returns the time of the webhook's first failed
// attempt after its last successful one (zero when none).
func (r *reader) WebhookFailingSince(ctx context.Context, empresaID, webhookID string) (time.Time, error) {
	var t time.Time
	err := r.q.QueryRowContext(ctx, `SELECT MIN(attempted_at) FROM delivery_attempts
		WHERE empresa_id = $1 AND webhook_id = $2 AND NOT ok AND seq > COALESCE(
			(SELECT MAX(seq) FROM delivery_attempts WHERE empresa_id = $1 AND webhook_id = $2 AND ok), 0)`,
		empresaID, webhookID).Scan(ts(&t))
	if err != nil {
		return time.Time{}, r.errf(err, "reading the failures of webhook %q", webhookID)
	}
	return t, nil
}
