package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/dtekit/dtekit/store"
)

// Sealed secrets of every company, and the settings of the database:
// what keeps the secrets under one key-encryption key.

// sealedColumn says where one kind of sealed secret lives: its table, the
// column of the sealed bytes, and the record's id column ("" for a table
// keyed by company alone).
type sealedColumn struct {
	table, column, id string
}

var sealedColumns = map[string]sealedColumn{
	store.SealedCertificado:    {table: "certificados", column: "sealed"},
	store.SealedCAFKey:         {table: "cafs", column: "sealed_key", id: "id"},
	store.SealedWebhook:        {table: "webhooks", column: "secret", id: "id"},
	store.SealedCorreoIMAP:     {table: "correo_config", column: "sealed_imap"},
	store.SealedCorreoSMTP:     {table: "correo_config", column: "sealed_smtp"},
	store.SealedConsoleSession: {table: "console_sesiones", column: "sealed_credential", id: "id"},
}

func sealedColumnOf(kind string) (sealedColumn, error) {
	c, ok := sealedColumns[kind]
	if !ok {
		return c, fmt.Errorf("store: unknown kind of sealed secret %q", kind)
	}
	return c, nil
}

// ListSealed returns a page of the sealed secrets of one kind.
func (r *reader) ListSealed(ctx context.Context, kind, afterEmpresa, afterID string, limit int) ([]store.Sealed, error) {
	c, err := sealedColumnOf(kind)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > store.MaxLimit {
		limit = store.MaxLimit
	}
	var q string
	var args []any
	if c.id == "" {
		q = "SELECT empresa_id, '', " + c.column + " FROM " + c.table + " WHERE " + c.column + " IS NOT NULL AND empresa_id > $1 ORDER BY empresa_id LIMIT $2"
		args = []any{afterEmpresa, limit}
	} else {
		q = "SELECT empresa_id, " + c.id + ", " + c.column + " FROM " + c.table + " WHERE " + c.column + " IS NOT NULL AND (empresa_id > $1 OR (empresa_id = $1 AND " + c.id + " > $2)) ORDER BY empresa_id, " + c.id + " LIMIT $3"
		args = []any{afterEmpresa, afterID, limit}
	}
	rows, err := r.q.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, r.errf(err, "listing sealed %s", kind)
	}
	defer rows.Close()
	out := []store.Sealed{}
	for rows.Next() {
		s := store.Sealed{Kind: kind}
		if err := rows.Scan(&s.EmpresaID, &s.ID, &s.Data); err != nil {
			return nil, r.errf(err, "reading sealed %s", kind)
		}
		s.Data = bytesOrNil(s.Data)
		out = append(out, s)
	}
	return out, r.errf(rows.Err(), "listing sealed %s", kind)
}

// ReplaceSealed rewrites the sealed bytes of one secret.
func (t *tx) ReplaceSealed(ctx context.Context, s *store.Sealed) error {
	c, err := sealedColumnOf(s.Kind)
	if err != nil {
		return err
	}
	if s.Data == nil {
		return fmt.Errorf("store: sealed %s of empresa %q %q: no data", s.Kind, s.EmpresaID, s.ID)
	}
	var res sql.Result
	if c.id == "" {
		res, err = t.q.ExecContext(ctx, "UPDATE "+c.table+" SET "+c.column+" = $2 WHERE empresa_id = $1 AND "+c.column+" IS NOT NULL",
			s.EmpresaID, s.Data)
	} else {
		res, err = t.q.ExecContext(ctx, "UPDATE "+c.table+" SET "+c.column+" = $3 WHERE empresa_id = $1 AND "+c.id+" = $2 AND "+c.column+" IS NOT NULL",
			s.EmpresaID, s.ID, s.Data)
	}
	return t.affectedOne(res, err, "sealed "+s.Kind+" of empresa "+s.EmpresaID, s.ID)
}

// SealCAF replaces a CAF's document and sealed key.
func (t *tx) SealCAF(ctx context.Context, c *store.CAF) error {
	res, err := t.q.ExecContext(ctx, "UPDATE cafs SET xml = $3, sealed_key = $4 WHERE empresa_id = $1 AND id = $2",
		c.EmpresaID, c.ID, blob(c.XML), blob(c.SealedKey))
	return t.affectedOne(res, err, "caf", c.ID)
}

// Setting returns a setting of the database.
func (r *reader) Setting(ctx context.Context, name string) (string, bool, error) {
	var v string
	err := r.q.QueryRowContext(ctx, "SELECT value FROM settings WHERE name = $1", name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, r.errf(err, "reading setting %q", name)
	}
	return v, true, nil
}

// PutSetting sets a setting of the database.
func (t *tx) PutSetting(ctx context.Context, name, value string) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	return t.errf(err, "writing setting %q", name)
}

// Scrub removes replaced and deleted bytes from the database's files, as
// the backend does it (nothing when it has no such step).
func (db *DB) Scrub(ctx context.Context) error {
	if db.cfg.Scrub == nil {
		return nil
	}
	return db.cfg.Scrub(ctx)
}
