package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/store"
)

// The SII's list of contribuyentes (store.ContribuyentesReader and
// store.ContribuyentesWriter): one list for the database, read from the
// last complete import.

const contribuyenteCols = "rut, razon_social, numero_resolucion, fecha_resolucion, correo, url"

// currentLista is the id of the current list (NULL when none).
const currentLista = "(SELECT MAX(id) FROM contribuyentes_listas WHERE completa)"

func (r *reader) GetContribuyente(ctx context.Context, rut string) (*store.Contribuyente, error) {
	var c store.Contribuyente
	err := r.q.QueryRowContext(ctx, "SELECT "+contribuyenteCols+" FROM contribuyentes WHERE lista_id = "+currentLista+" AND rut = $1", rut).
		Scan(&c.Rut, &c.RazonSocial, &c.NumeroResolucion, &c.FechaResolucion, &c.Correo, &c.URL)
	if err != nil {
		return nil, r.notFound(err, "contribuyente", rut)
	}
	return &c, nil
}

const listaCols = "id, origen, filas, completa, created_at, completed_at"

func scanLista(s scanner) (*store.ContribuyentesLista, error) {
	var l store.ContribuyentesLista
	err := s.Scan(&l.ID, &l.Origen, &l.Filas, &l.Completa, ts(&l.CreatedAt), ts(&l.CompletedAt))
	return &l, err
}

func (r *reader) GetContribuyentesLista(ctx context.Context) (*store.ContribuyentesLista, error) {
	l, err := scanLista(r.q.QueryRowContext(ctx, "SELECT "+listaCols+" FROM contribuyentes_listas WHERE id = "+currentLista))
	if err != nil {
		return nil, r.notFound(err, "contribuyentes list", "current")
	}
	return l, nil
}

func (t *tx) BeginContribuyentes(ctx context.Context, origen string) (*store.ContribuyentesLista, error) {
	now := normTime(t.now())
	l, err := scanLista(t.q.QueryRowContext(ctx, "INSERT INTO contribuyentes_listas (origen, filas, completa, created_at) VALUES ($1, 0, $2, $3) RETURNING "+listaCols,
		origen, boolArg(false), t.d.targ(now)))
	if err != nil {
		return nil, t.errf(err, "starting a contribuyentes list")
	}
	return l, nil
}

// openLista checks that listaID names an incomplete list.
func (t *tx) openLista(ctx context.Context, listaID int64) error {
	var completa bool
	err := t.q.QueryRowContext(ctx, "SELECT completa FROM contribuyentes_listas WHERE id = $1", listaID).Scan(&completa)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && completa) {
		return fmt.Errorf("%w: incomplete contribuyentes list %d", store.ErrNotFound, listaID)
	}
	return t.errf(err, "reading contribuyentes list %d", listaID)
}

func (t *tx) AddContribuyentes(ctx context.Context, listaID int64, rows []store.Contribuyente) ([]int, error) {
	if len(rows) > store.MaxContribuyentesBatch {
		return nil, fmt.Errorf("store: %d contribuyentes in one batch, more than %d", len(rows), store.MaxContribuyentesBatch)
	}
	if err := t.openLista(ctx, listaID); err != nil {
		return nil, err
	}
	// A RUT repeated within rows keeps its first row; the others are
	// inserted in one statement that reports the RUTs it added.
	var repeated []int
	first := make(map[string]bool, len(rows))
	var q strings.Builder
	q.WriteString("INSERT INTO contribuyentes (lista_id, " + contribuyenteCols + ") VALUES ")
	args := []any{listaID}
	var sent []int
	for i := range rows {
		c := &rows[i]
		if first[c.Rut] {
			repeated = append(repeated, i)
			continue
		}
		first[c.Rut] = true
		if len(sent) > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		q.WriteString("($1")
		for k := 1; k <= 6; k++ {
			q.WriteString(", $" + strconv.Itoa(n+k))
		}
		q.WriteString(")")
		args = append(args, c.Rut, c.RazonSocial, c.NumeroResolucion, c.FechaResolucion, c.Correo, c.URL)
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return repeated, nil
	}
	q.WriteString(" ON CONFLICT (lista_id, rut) DO NOTHING RETURNING rut")
	res, err := t.q.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, t.errf(err, "adding contribuyentes to list %d", listaID)
	}
	added := make(map[string]bool, len(sent))
	for res.Next() {
		var rut string
		if err := res.Scan(&rut); err != nil {
			res.Close()
			return nil, t.errf(err, "adding contribuyentes to list %d", listaID)
		}
		added[rut] = true
	}
	if err := res.Close(); err != nil {
		return nil, t.errf(err, "adding contribuyentes to list %d", listaID)
	}
	if err := res.Err(); err != nil {
		return nil, t.errf(err, "adding contribuyentes to list %d", listaID)
	}
	for _, i := range sent {
		if !added[rows[i].Rut] {
			repeated = append(repeated, i)
		}
	}
	slices.Sort(repeated)
	return repeated, nil
}

func (t *tx) CompleteContribuyentes(ctx context.Context, listaID int64) (*store.ContribuyentesLista, error) {
	if err := t.openLista(ctx, listaID); err != nil {
		return nil, err
	}
	var n int64
	if err := t.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM contribuyentes WHERE lista_id = $1", listaID).Scan(&n); err != nil {
		return nil, t.errf(err, "counting contribuyentes list %d", listaID)
	}
	now := normTime(t.now())
	l, err := scanLista(t.q.QueryRowContext(ctx, "UPDATE contribuyentes_listas SET completa = $2, filas = $3, completed_at = $4 WHERE id = $1 RETURNING "+listaCols,
		listaID, boolArg(true), n, t.d.targ(now)))
	if err != nil {
		return nil, t.errf(err, "completing contribuyentes list %d", listaID)
	}
	return l, nil
}

func (t *tx) PurgeContribuyentes(ctx context.Context, limit int) (int64, error) {
	if limit <= 0 {
		return 0, nil
	}
	var cur sql.NullInt64
	if err := t.q.QueryRowContext(ctx, "SELECT "+currentLista).Scan(&cur); err != nil {
		return 0, t.errf(err, "reading the current contribuyentes list")
	}
	if !cur.Valid {
		return 0, nil
	}
	res, err := t.q.ExecContext(ctx, `DELETE FROM contribuyentes WHERE (lista_id, rut) IN
		(SELECT lista_id, rut FROM contribuyentes WHERE lista_id < $1 LIMIT $2)`, cur.Int64, limit)
	if err != nil {
		return 0, t.errf(err, "purging old contribuyentes lists")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, t.errf(err, "purging old contribuyentes lists")
	}
	if n < int64(limit) {
		if _, err := t.q.ExecContext(ctx, "DELETE FROM contribuyentes_listas WHERE id < $1", cur.Int64); err != nil {
			return n, t.errf(err, "purging old contribuyentes lists")
		}
	}
	return n, nil
}
