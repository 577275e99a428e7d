package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/store"
)

// The cesiones of the company's documents to factoring companies (the
// cesiones room).

const cesionListCols = "id, empresa_id, dte_id, ambiente, estado, rut_cesionario, monto, request, track_id, attempts, codigo, glosa, created_at, updated_at"
const cesionCols = cesionListCols + ", aec, response"

// scanCesionList reads a cesión of cesionListCols (extra: more columns).
func scanCesionList(s scanner, extra ...any) (store.Cesion, error) {
	var c store.Cesion
	err := s.Scan(append([]any{&c.ID, &c.EmpresaID, &c.DTEID, &c.Ambiente, &c.Estado, &c.RutCesionario, &c.Monto, &c.Request,
		&c.TrackID, &c.Attempts, &c.Codigo, &c.Glosa, ts(&c.CreatedAt), ts(&c.UpdatedAt)}, extra...)...)
	c.Request = bytesOrNil(c.Request)
	return c, err
}

// getCesion reads one cesión with every column matching cond ($1 is the
// company, $2 the argument); lock is the backend's FOR UPDATE clause or "".
func (r *reader) getCesion(ctx context.Context, empresaID, cond, arg, lock string) (*store.Cesion, error) {
	var aec, resp []byte
	c, err := scanCesionList(r.q.QueryRowContext(ctx, "SELECT "+cesionCols+" FROM cesiones WHERE empresa_id = $1 AND "+cond+lock, empresaID, arg),
		&aec, &resp)
	if err != nil {
		return nil, r.notFound(err, "cesion", arg)
	}
	c.AEC, c.Response = bytesOrNil(aec), bytesOrNil(resp)
	return &c, nil
}

func (r *reader) GetCesion(ctx context.Context, empresaID, id string) (*store.Cesion, error) {
	return r.getCesion(ctx, empresaID, "id = $2", id, "")
}

func (t *tx) GetCesionForUpdate(ctx context.Context, empresaID, id string) (*store.Cesion, error) {
	return t.getCesion(ctx, empresaID, "id = $2", id, t.d.ForUpdate)
}

func (r *reader) ActiveCesion(ctx context.Context, empresaID, dteID string) (*store.Cesion, error) {
	return r.getCesion(ctx, empresaID, "dte_id = $2 AND estado <> '"+store.CesionRechazada+"'", dteID, "")
}

func (r *reader) ListCesiones(ctx context.Context, empresaID, dteID string, f store.ListFilter) (*store.Page[store.Cesion], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	w.add("dte_id = ?", dteID)
	return pageOf(ctx, r, listing{name: "cesiones", table: "cesiones", empresaID: empresaID, cols: cesionListCols}, w, f.Cursor, f.Limit,
		func(s scanner) (store.Cesion, error) { return scanCesionList(s) })
}

func (t *tx) InsertCesion(ctx context.Context, c *store.Cesion) error {
	t.stamp(&c.ID, &c.CreatedAt, &c.UpdatedAt)
	// The document must be the company's (the foreign key alone would
	// take another company's).
	var n int
	if err := t.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM dtes WHERE empresa_id = $1 AND id = $2", c.EmpresaID, c.DTEID).Scan(&n); err != nil {
		return t.errf(err, "inserting cesion %q", c.ID)
	}
	if n != 1 {
		return fmt.Errorf("%w: cesion %q: dte %q of empresa %q", store.ErrNotFound, c.ID, c.DTEID, c.EmpresaID)
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO cesiones ("+cesionCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING",
		c.ID, c.EmpresaID, c.DTEID, c.Ambiente, c.Estado, c.RutCesionario, c.Monto, blob(c.Request), c.TrackID, c.Attempts, c.Codigo, c.Glosa,
		t.d.targ(c.CreatedAt), t.d.targ(c.UpdatedAt), blob(c.AEC), blob(c.Response))
	return t.inserted(ctx, res, err, "cesion", "cesiones", c.ID, store.ConstraintCesionActiva)
}

func (t *tx) UpdateCesion(ctx context.Context, c *store.Cesion) error {
	c.UpdatedAt = time.Time{}
	t.stamp(nil, &c.UpdatedAt)
	if c.Estado != store.CesionRechazada {
		// Checked first: a unique violation would abort the whole
		// transaction on PostgreSQL.
		var n int
		err := t.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM cesiones WHERE empresa_id = $1 AND id <> $2 AND estado <> $3
			AND dte_id = (SELECT dte_id FROM cesiones WHERE empresa_id = $1 AND id = $2)`, c.EmpresaID, c.ID, store.CesionRechazada).Scan(&n)
		if err != nil {
			return t.errf(err, "writing cesion %q", c.ID)
		}
		if n > 0 {
			return &store.ConflictError{Constraint: store.ConstraintCesionActiva}
		}
	}
	res, err := t.q.ExecContext(ctx, `UPDATE cesiones SET estado = $3, track_id = $4, attempts = $5, codigo = $6, glosa = $7, response = $8, updated_at = $9
		WHERE empresa_id = $1 AND id = $2`,
		c.EmpresaID, c.ID, c.Estado, c.TrackID, c.Attempts, c.Codigo, c.Glosa, blob(c.Response), t.d.targ(c.UpdatedAt))
	return t.affectedOne(res, err, "cesion", c.ID)
}
