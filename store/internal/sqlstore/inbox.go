package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/store"
)

// The company's inbox and mail: received files (recepciones) and their
// documents (recibidos), mails sent (correos) and read (mensajes), and the
// mailbox settings (correo_config). Every insert that a uniqueness rule
// may refuse runs as INSERT … ON CONFLICT DO NOTHING, so a refusal is a
// ConflictError that leaves the transaction usable on PostgreSQL too (the
// caller goes on to read the record that was there first).

// exists runs a query selecting at most one row and reports whether it
// found one.
func (t *tx) exists(ctx context.Context, query string, args ...any) (bool, error) {
	var one int
	err := t.q.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, errNoRows) {
		return false, nil
	}
	return err == nil, err
}

// refusedBy turns the primary key conflict that inserted reports, when
// the record's own uniqueness rule holds too, into a conflict on that
// rule: a record inserted twice (its id taken along with its key) is
// reported as what it is, a duplicate of the company's record. query
// selects the row the rule protects.
func (t *tx) refusedBy(ctx context.Context, err error, constraint, what, id, query string, args ...any) error {
	if store.ConflictOn(err) != store.ConstraintPrimaryKey {
		return err
	}
	found, qerr := t.exists(ctx, query, args...)
	if qerr != nil {
		return t.errf(qerr, "inserting %s %q", what, id)
	}
	if found {
		return &store.ConflictError{Constraint: constraint}
	}
	return err
}

// ---- recepciones

const recepcionListCols = "id, empresa_id, numero, digest, origen, mensaje_id, remitente, estado, report, created_at, tipo, tamano, descartado, guardado"
const recepcionCols = recepcionListCols + ", xml"

// recepcionAmbiente is the environment column of recepciones (00015),
// read after the others.
const recepcionAmbiente = ", ambiente"

func recepcionFields(r *store.Recepcion) []any {
	return []any{&r.ID, &r.EmpresaID, &r.Numero, &r.Digest, &r.Origen, &r.MensajeID, &r.Remitente, &r.Estado,
		&r.Report, ts(&r.CreatedAt), &r.Tipo, &r.Size, &r.Descartado, &r.Stored}
}

func scanRecepcionList(s scanner) (store.Recepcion, error) {
	var r store.Recepcion
	err := s.Scan(append(recepcionFields(&r), &r.Ambiente)...)
	r.Report = bytesOrNil(r.Report)
	return r, err
}

func (r *reader) getRecepcion(ctx context.Context, empresaID, by, key string) (*store.Recepcion, error) {
	var rec store.Recepcion
	err := r.q.QueryRowContext(ctx, "SELECT "+recepcionCols+recepcionAmbiente+" FROM recepciones WHERE empresa_id = $1 AND "+by+" = $2", empresaID, key).
		Scan(append(recepcionFields(&rec), &rec.XML, &rec.Ambiente)...)
	if err != nil {
		return nil, r.notFound(err, "recepcion with "+by, key)
	}
	rec.Report, rec.XML = bytesOrNil(rec.Report), bytesOrNil(rec.XML)
	return &rec, nil
}

func (r *reader) GetRecepcion(ctx context.Context, empresaID, id string) (*store.Recepcion, error) {
	return r.getRecepcion(ctx, empresaID, "id", id)
}

func (r *reader) GetRecepcionByDigest(ctx context.Context, empresaID, digest string) (*store.Recepcion, error) {
	return r.getRecepcion(ctx, empresaID, "digest", digest)
}

func (r *reader) ListRecepciones(ctx context.Context, empresaID string, f store.RecepcionFilter) (*store.Page[store.Recepcion], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if f.Ambiente != "" {
		w.add("ambiente = ?", f.Ambiente)
	}
	return pageOf(ctx, r, listing{name: "recepciones", table: "recepciones", empresaID: empresaID, cols: recepcionListCols + recepcionAmbiente}, w,
		f.Cursor, f.Limit, scanRecepcionList)
}

// InsertRecepcion records a received file under the next number of its
// company. The company's row is locked first (PostgreSQL; SQLite's one
// writer is alone already), so two transactions never compute the same
// number: the second waits for the first to end, then reads its number.
// A file refused by a uniqueness rule is reported as a ConflictError
// without aborting the transaction (ON CONFLICT DO NOTHING).
func (t *tx) InsertRecepcion(ctx context.Context, r *store.Recepcion) error {
	t.stamp(&r.ID, &r.CreatedAt)
	tipo := r.Tipo
	if tipo == "" {
		// The column's default: what every file recorded before 00010 was.
		tipo = "envio"
	}
	if err := t.lockEmpresa(ctx, r.EmpresaID); err != nil {
		return err
	}
	size := r.Size
	if size == 0 {
		size = int64(len(r.XML))
	}
	stored := r.Stored
	if stored == 0 {
		stored = int64(len(r.XML) + len(r.Report))
	}
	// The company's current environment when none is given (read under
	// the lock).
	ambiente := r.Ambiente
	if ambiente == "" {
		a, err := t.empresaAmbiente(ctx, r.EmpresaID)
		if err != nil {
			return err
		}
		ambiente = a
	}
	var numero int64
	err := t.q.QueryRowContext(ctx, "INSERT INTO recepciones ("+recepcionCols+recepcionAmbiente+`)
		SELECT $1, $2, COALESCE(MAX(numero), 0) + 1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 FROM recepciones WHERE empresa_id = $2
		ON CONFLICT DO NOTHING RETURNING numero`,
		r.ID, r.EmpresaID, r.Digest, r.Origen, r.MensajeID, r.Remitente, r.Estado, blob(r.Report), t.d.targ(r.CreatedAt),
		tipo, size, r.Descartado, stored, blob(r.XML), ambiente).Scan(&numero)
	if err == nil {
		r.Numero, r.Tipo, r.Size, r.Stored, r.Ambiente = numero, tipo, size, stored, ambiente
		return nil
	}
	if !errors.Is(err, errNoRows) {
		if t.d.IsForeignKey(err) {
			return fmt.Errorf("%w: recepcion %q: its company does not exist", store.ErrNotFound, r.ID)
		}
		return t.errf(err, "inserting recepcion %q", r.ID)
	}
	// Refused: by its digest or its id (its number is the company's
	// next, under the lock).
	found, err := t.exists(ctx, "SELECT 1 FROM recepciones WHERE empresa_id = $1 AND digest = $2", r.EmpresaID, r.Digest)
	if err != nil {
		return t.errf(err, "inserting recepcion %q", r.ID)
	}
	if found {
		return &store.ConflictError{Constraint: store.ConstraintRecepcion}
	}
	if found, err = t.exists(ctx, "SELECT 1 FROM recepciones WHERE id = $1", r.ID); err != nil {
		return t.errf(err, "inserting recepcion %q", r.ID)
	}
	if found {
		return &store.ConflictError{Constraint: store.ConstraintPrimaryKey}
	}
	return fmt.Errorf("store: inserting recepcion %q of empresa %q: its number was taken meanwhile", r.ID, r.EmpresaID)
}

// ---- recibidos

const recibidoListCols = `id, empresa_id, recepcion_id, dedupe_key, rut_emisor, razon_social_emisor, tipo_dte, folio, fecha_emision,
	monto_total, estado, correo_emisor, report, respuesta, rcv, fecha_recepcion_sii, plazo_vence, plazo_avisado_at, created_at, updated_at`
const recibidoCols = recibidoListCols + ", xml"

// recibidoAmbiente is the environment column of recibidos (00015), read
// after the others.
const recibidoAmbiente = ", ambiente"

func recibidoFields(r *store.Recibido) []any {
	return []any{&r.ID, &r.EmpresaID, &r.RecepcionID, &r.DedupeKey, &r.RutEmisor, &r.RazonSocialEmisor, &r.TipoDTE, &r.Folio,
		&r.FechaEmision, &r.MontoTotal, &r.Estado, &r.CorreoEmisor, &r.Report, &r.Respuesta, &r.RCV,
		ts(&r.FechaRecepcionSII), ts(&r.PlazoVence), ts(&r.PlazoAvisadoAt), ts(&r.CreatedAt), ts(&r.UpdatedAt)}
}

func recibidoOwnBytes(r *store.Recibido) {
	r.Report, r.Respuesta, r.RCV, r.XML = bytesOrNil(r.Report), bytesOrNil(r.Respuesta), bytesOrNil(r.RCV), bytesOrNil(r.XML)
}

func scanRecibidoList(s scanner) (store.Recibido, error) {
	var r store.Recibido
	err := s.Scan(append(recibidoFields(&r), &r.Ambiente)...)
	recibidoOwnBytes(&r)
	return r, err
}

// getRecibido reads one received document with every column; lock is the
// backend's FOR UPDATE clause or "".
func (r *reader) getRecibido(ctx context.Context, empresaID, by, key, lock string) (*store.Recibido, error) {
	var rec store.Recibido
	err := r.q.QueryRowContext(ctx, "SELECT "+recibidoCols+recibidoAmbiente+" FROM recibidos WHERE empresa_id = $1 AND "+by+" = $2"+lock, empresaID, key).
		Scan(append(recibidoFields(&rec), &rec.XML, &rec.Ambiente)...)
	if err != nil {
		return nil, r.notFound(err, "recibido with "+by, key)
	}
	recibidoOwnBytes(&rec)
	return &rec, nil
}

func (r *reader) GetRecibido(ctx context.Context, empresaID, id string) (*store.Recibido, error) {
	return r.getRecibido(ctx, empresaID, "id", id, "")
}

func (r *reader) GetRecibidoByKey(ctx context.Context, empresaID, key string) (*store.Recibido, error) {
	return r.getRecibido(ctx, empresaID, "dedupe_key", key, "")
}

func (t *tx) GetRecibidoForUpdate(ctx context.Context, empresaID, id string) (*store.Recibido, error) {
	return t.getRecibido(ctx, empresaID, "id", id, t.d.ForUpdate)
}

func (r *reader) ListRecibidos(ctx context.Context, empresaID string, f store.RecibidoFilter) (*store.Page[store.Recibido], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if f.Ambiente != "" {
		w.add("ambiente = ?", f.Ambiente)
	}
	w.addDocument(f.TipoDTE, f.Estado, f.FechaDesde, f.FechaHasta)
	if f.RutEmisor != "" {
		w.add("rut_emisor = ?", f.RutEmisor)
	}
	if !f.PlazoHasta.IsZero() {
		// Spelled as the partial index recibidos_plazo is.
		w.add("plazo_vence IS NOT NULL")
		w.add("plazo_vence <= ?", r.d.targ(f.PlazoHasta))
	}
	if f.SinAviso {
		w.add("plazo_avisado_at IS NULL")
	}
	if !f.PlazoDesde.IsZero() {
		w.add("(plazo_vence IS NULL OR plazo_vence > ?)", r.d.targ(f.PlazoDesde))
	}
	return pageOf(ctx, r, listing{name: "recibidos", table: "recibidos", empresaID: empresaID, cols: recibidoListCols + recibidoAmbiente}, w,
		f.Cursor, f.Limit, scanRecibidoList)
}

// normRecibidoTimes gives the times of the document's window the form
// they are stored in.
func normRecibidoTimes(r *store.Recibido) {
	r.FechaRecepcionSII, r.PlazoVence, r.PlazoAvisadoAt = normTime(r.FechaRecepcionSII), normTime(r.PlazoVence), normTime(r.PlazoAvisadoAt)
}

// InsertRecibido records a received document of one of the company's
// received files: a RecepcionID that is not the company's is ErrNotFound
// (checked first, so the transaction stays usable).
func (t *tx) InsertRecibido(ctx context.Context, r *store.Recibido) error {
	t.stamp(&r.ID, &r.CreatedAt, &r.UpdatedAt)
	normRecibidoTimes(r)
	// The file's environment is the document's when none is given.
	var fileAmbiente string
	err := t.q.QueryRowContext(ctx, "SELECT ambiente FROM recepciones WHERE empresa_id = $1 AND id = $2", r.EmpresaID, r.RecepcionID).
		Scan(&fileAmbiente)
	if errors.Is(err, errNoRows) {
		return fmt.Errorf("%w: recibido %q: empresa %q has no recepcion %q", store.ErrNotFound, r.ID, r.EmpresaID, r.RecepcionID)
	}
	if err != nil {
		return t.errf(err, "inserting recibido %q", r.ID)
	}
	if r.Ambiente == "" {
		r.Ambiente = fileAmbiente
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO recibidos ("+recibidoCols+recibidoAmbiente+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
		$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22) ON CONFLICT DO NOTHING`,
		r.ID, r.EmpresaID, r.RecepcionID, r.DedupeKey, r.RutEmisor, r.RazonSocialEmisor, r.TipoDTE, r.Folio, r.FechaEmision,
		r.MontoTotal, r.Estado, r.CorreoEmisor, blob(r.Report), blob(r.Respuesta), blob(r.RCV), t.d.targ(r.FechaRecepcionSII),
		t.d.targ(r.PlazoVence), t.d.targ(r.PlazoAvisadoAt), t.d.targ(r.CreatedAt), t.d.targ(r.UpdatedAt), blob(r.XML), r.Ambiente)
	err = t.inserted(ctx, res, err, "recibido", "recibidos", r.ID, store.ConstraintRecibido)
	return t.refusedBy(ctx, err, store.ConstraintRecibido, "recibido", r.ID,
		"SELECT 1 FROM recibidos WHERE empresa_id = $1 AND dedupe_key = $2", r.EmpresaID, r.DedupeKey)
}

func (t *tx) UpdateRecibido(ctx context.Context, r *store.Recibido) error {
	t.stamp(nil, &r.UpdatedAt)
	normRecibidoTimes(r)
	res, err := t.q.ExecContext(ctx, `UPDATE recibidos SET estado = $3, correo_emisor = $4, respuesta = $5, rcv = $6,
		fecha_recepcion_sii = $7, plazo_vence = $8, plazo_avisado_at = $9, updated_at = $10 WHERE empresa_id = $1 AND id = $2`,
		r.EmpresaID, r.ID, r.Estado, r.CorreoEmisor, blob(r.Respuesta), blob(r.RCV), t.d.targ(r.FechaRecepcionSII),
		t.d.targ(r.PlazoVence), t.d.targ(r.PlazoAvisadoAt), t.d.targ(r.UpdatedAt))
	return t.affectedOne(res, err, "recibido", r.ID)
}

// empresaAmbiente reads the company's current environment: what an
// insert given none records.
func (t *tx) empresaAmbiente(ctx context.Context, empresaID string) (string, error) {
	var a string
	if err := t.q.QueryRowContext(ctx, "SELECT ambiente FROM empresas WHERE id = $1", empresaID).Scan(&a); err != nil {
		return "", t.notFound(err, "empresa", empresaID)
	}
	return a, nil
}

// ---- correos

const correoListCols = "id, empresa_id, tipo, dte_id, recibido_id, para, message_id, estado, attempts, last_error, sent_at, created_at, updated_at"
const correoCols = correoListCols + ", message"

func correoFields(c *store.Correo) []any {
	return []any{&c.ID, &c.EmpresaID, &c.Tipo, &c.DTEID, &c.RecibidoID, &c.Para, &c.MessageID, &c.Estado, &c.Attempts,
		&c.LastError, ts(&c.SentAt), ts(&c.CreatedAt), ts(&c.UpdatedAt)}
}

func (r *reader) GetCorreo(ctx context.Context, empresaID, id string) (*store.Correo, error) {
	var c store.Correo
	err := r.q.QueryRowContext(ctx, "SELECT "+correoCols+" FROM correos WHERE empresa_id = $1 AND id = $2", empresaID, id).
		Scan(append(correoFields(&c), &c.Message)...)
	if err != nil {
		return nil, r.notFound(err, "correo", id)
	}
	c.Message = bytesOrNil(c.Message)
	return &c, nil
}

func (r *reader) ListCorreos(ctx context.Context, empresaID string, f store.CorreoFilter) (*store.Page[store.Correo], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if f.DTEID != "" {
		w.add("dte_id = ?", f.DTEID)
	}
	if f.RecibidoID != "" {
		w.add("recibido_id = ?", f.RecibidoID)
	}
	return pageOf(ctx, r, listing{name: "correos", table: "correos", empresaID: empresaID, cols: correoListCols}, w,
		f.Cursor, f.Limit, func(s scanner) (store.Correo, error) {
			var c store.Correo
			err := s.Scan(correoFields(&c)...)
			return c, err
		})
}

// InsertCorreo records a mail to send. Its company, and the document or
// received document it names, must be the company's: each is checked
// first (ErrNotFound), so the transaction stays usable.
func (t *tx) InsertCorreo(ctx context.Context, c *store.Correo) error {
	t.stamp(&c.ID, &c.CreatedAt, &c.UpdatedAt)
	c.SentAt = normTime(c.SentAt)
	if err := t.empresaExists(ctx, c.EmpresaID); err != nil {
		return err
	}
	for _, ref := range []struct{ table, id string }{{"dtes", c.DTEID}, {"recibidos", c.RecibidoID}} {
		if ref.id == "" {
			continue
		}
		found, err := t.exists(ctx, "SELECT 1 FROM "+ref.table+" WHERE empresa_id = $1 AND id = $2", c.EmpresaID, ref.id)
		if err != nil {
			return t.errf(err, "inserting correo %q", c.ID)
		}
		if !found {
			return fmt.Errorf("%w: correo %q: empresa %q has no %s %q", store.ErrNotFound, c.ID, c.EmpresaID, ref.table, ref.id)
		}
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO correos ("+correoCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
		$11, $12, $13, $14) ON CONFLICT DO NOTHING`,
		c.ID, c.EmpresaID, c.Tipo, c.DTEID, c.RecibidoID, c.Para, c.MessageID, c.Estado, c.Attempts, c.LastError,
		t.d.targ(c.SentAt), t.d.targ(c.CreatedAt), t.d.targ(c.UpdatedAt), blob(c.Message))
	return t.inserted(ctx, res, err, "correo", "correos", c.ID, store.ConstraintPrimaryKey)
}

func (t *tx) UpdateCorreo(ctx context.Context, c *store.Correo) error {
	t.stamp(nil, &c.UpdatedAt)
	c.SentAt = normTime(c.SentAt)
	res, err := t.q.ExecContext(ctx, `UPDATE correos SET estado = $3, attempts = $4, last_error = $5, sent_at = $6, updated_at = $7
		WHERE empresa_id = $1 AND id = $2`,
		c.EmpresaID, c.ID, c.Estado, c.Attempts, c.LastError, t.d.targ(c.SentAt), t.d.targ(c.UpdatedAt))
	return t.affectedOne(res, err, "correo", c.ID)
}

// ---- mensajes

const mensajeCols = "id, empresa_id, message_id, digest, from_addr, subject, estado, detalle, created_at"

func scanMensaje(s scanner) (store.Mensaje, error) {
	var m store.Mensaje
	err := s.Scan(&m.ID, &m.EmpresaID, &m.MessageID, &m.Digest, &m.From, &m.Subject, &m.Estado, &m.Detalle, ts(&m.CreatedAt))
	return m, err
}

// FindMensaje looks the mail up by its digest, through its unique
// constraint.
func (r *reader) FindMensaje(ctx context.Context, empresaID, digest string) (*store.Mensaje, error) {
	m, err := scanMensaje(r.q.QueryRowContext(ctx, "SELECT "+mensajeCols+" FROM mensajes WHERE empresa_id = $1 AND digest = $2", empresaID, digest))
	if err != nil {
		return nil, r.notFound(err, "mensaje with digest", digest)
	}
	return &m, nil
}

func (r *reader) ListMensajes(ctx context.Context, empresaID string, f store.ListFilter) (*store.Page[store.Mensaje], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	return pageOf(ctx, r, listing{name: "mensajes", table: "mensajes", empresaID: empresaID, cols: mensajeCols}, w,
		f.Cursor, f.Limit, scanMensaje)
}

func (t *tx) InsertMensaje(ctx context.Context, m *store.Mensaje) error {
	t.stamp(&m.ID, &m.CreatedAt)
	// A missing company is told before the insert: on PostgreSQL its
	// foreign-key violation would abort the transaction.
	if err := t.empresaExists(ctx, m.EmpresaID); err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO mensajes ("+mensajeCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING",
		m.ID, m.EmpresaID, m.MessageID, m.Digest, m.From, m.Subject, m.Estado, m.Detalle, t.d.targ(m.CreatedAt))
	err = t.inserted(ctx, res, err, "mensaje", "mensajes", m.ID, store.ConstraintMensaje)
	return t.refusedBy(ctx, err, store.ConstraintMensaje, "mensaje", m.ID,
		"SELECT 1 FROM mensajes WHERE empresa_id = $1 AND digest = $2",
		m.EmpresaID, m.Digest)
}

// ---- correo_config

func (r *reader) GetCorreoConfig(ctx context.Context, empresaID string) (*store.CorreoConfig, error) {
	var c store.CorreoConfig
	err := r.q.QueryRowContext(ctx, "SELECT empresa_id, config, sealed_imap, sealed_smtp, updated_at FROM correo_config WHERE empresa_id = $1",
		empresaID).Scan(&c.EmpresaID, &c.Config, &c.SealedIMAP, &c.SealedSMTP, ts(&c.UpdatedAt))
	if err != nil {
		return nil, r.notFound(err, "correo config of empresa", empresaID)
	}
	c.Config, c.SealedIMAP, c.SealedSMTP = bytesOrNil(c.Config), bytesOrNil(c.SealedIMAP), bytesOrNil(c.SealedSMTP)
	return &c, nil
}

// PutCorreoConfig writes the settings and the two sealed passwords.
func (t *tx) PutCorreoConfig(ctx context.Context, c *store.CorreoConfig) error {
	t.stamp(nil, &c.UpdatedAt)
	if err := t.empresaExists(ctx, c.EmpresaID); err != nil {
		return err
	}
	config := c.Config
	if config == nil {
		config = []byte{}
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO correo_config (empresa_id, config, sealed_imap, sealed_smtp, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (empresa_id) DO UPDATE SET config = excluded.config, sealed_imap = excluded.sealed_imap,
		sealed_smtp = excluded.sealed_smtp, updated_at = excluded.updated_at`,
		c.EmpresaID, config, blob(c.SealedIMAP), blob(c.SealedSMTP), t.d.targ(c.UpdatedAt))
	return t.errf(err, "writing the correo config of empresa %q", c.EmpresaID)
}

// ---- quota and retention

// GetInboxSettings reads the company's inbox quota and retention.
func (r *reader) GetInboxSettings(ctx context.Context, empresaID string) (*store.InboxSettings, error) {
	var s store.InboxSettings
	var recs, bytes, mens, dias sql.NullInt64
	err := r.q.QueryRowContext(ctx, `SELECT empresa_id, max_recepciones, max_recepcion_bytes, max_mensajes, retencion_dias, updated_at
		FROM recepcion_settings WHERE empresa_id = $1`, empresaID).Scan(&s.EmpresaID, &recs, &bytes, &mens, &dias, ts(&s.UpdatedAt))
	if err != nil {
		return nil, r.notFound(err, "inbox settings of empresa", empresaID)
	}
	s.MaxRecepciones, s.MaxRecepcionBytes, s.MaxMensajes, s.RetencionDias = optInt(recs), optInt(bytes), optInt(mens), optInt(dias)
	return &s, nil
}

// optInt is a nullable column's value, nil for NULL.
func optInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// InboxUsage counts through indexes: recepciones_uso holds each file's
// guardado, mensajes_empresa_seq each mail.
func (r *reader) InboxUsage(ctx context.Context, empresaID string) (*store.InboxUsage, error) {
	var u store.InboxUsage
	err := r.q.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(SUM(guardado), 0) FROM recepciones WHERE empresa_id = $1", empresaID).
		Scan(&u.Recepciones, &u.RecepcionBytes)
	if err == nil {
		err = r.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM mensajes WHERE empresa_id = $1", empresaID).Scan(&u.Mensajes)
	}
	if err != nil {
		return nil, r.errf(err, "counting the inbox of empresa %q", empresaID)
	}
	return &u, nil
}

// PutInboxSettings writes the company's inbox quota and retention.
func (t *tx) PutInboxSettings(ctx context.Context, s *store.InboxSettings) error {
	t.stamp(nil, &s.UpdatedAt)
	if err := t.empresaExists(ctx, s.EmpresaID); err != nil {
		return err
	}
	opt := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO recepcion_settings (empresa_id, max_recepciones, max_recepcion_bytes, max_mensajes,
		retencion_dias, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (empresa_id) DO UPDATE SET max_recepciones = excluded.max_recepciones,
		max_recepcion_bytes = excluded.max_recepcion_bytes, max_mensajes = excluded.max_mensajes,
		retencion_dias = excluded.retencion_dias, updated_at = excluded.updated_at`,
		s.EmpresaID, opt(s.MaxRecepciones), opt(s.MaxRecepcionBytes), opt(s.MaxMensajes), opt(s.RetencionDias), t.d.targ(s.UpdatedAt))
	return t.errf(err, "writing the inbox settings of empresa %q", s.EmpresaID)
}

// PurgeInbox deletes one batch of refused files and one of mails read.
// The files are chosen first, by id, so their documents go before them
// (recibidos.recepcion_id refers to them).
func (t *tx) PurgeInbox(ctx context.Context, empresaID string, before time.Time, limit int) (int, int, error) {
	if limit <= 0 {
		return 0, 0, nil
	}
	rows, err := t.q.QueryContext(ctx, `SELECT id FROM recepciones WHERE empresa_id = $1 AND descartado AND created_at < $2
		AND numero < (SELECT MAX(numero) FROM recepciones WHERE empresa_id = $1) ORDER BY created_at, seq LIMIT $3`,
		empresaID, t.d.targ(before), limit)
	if err != nil {
		return 0, 0, t.errf(err, "choosing refused files of empresa %q to delete", empresaID)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, 0, t.errf(err, "choosing refused files of empresa %q to delete", empresaID)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, t.errf(err, "choosing refused files of empresa %q to delete", empresaID)
	}
	for _, id := range ids {
		if _, err := t.q.ExecContext(ctx, "DELETE FROM recibidos WHERE empresa_id = $1 AND recepcion_id = $2", empresaID, id); err != nil {
			return 0, 0, t.errf(err, "deleting the documents of refused file %q", id)
		}
		if _, err := t.q.ExecContext(ctx, "DELETE FROM recepciones WHERE empresa_id = $1 AND id = $2", empresaID, id); err != nil {
			return 0, 0, t.errf(err, "deleting refused file %q", id)
		}
	}
	res, err := t.q.ExecContext(ctx, `DELETE FROM mensajes WHERE seq IN (SELECT seq FROM mensajes WHERE empresa_id = $1
		AND created_at < $2 ORDER BY created_at, seq LIMIT $3)`, empresaID, t.d.targ(before), limit)
	if err != nil {
		return 0, 0, t.errf(err, "deleting old mails of empresa %q", empresaID)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, t.errf(err, "deleting old mails of empresa %q", empresaID)
	}
	return len(ids), int(n), nil
}

// ---- buzones

func (r *reader) GetBuzon(ctx context.Context, empresaID string) (*store.Buzon, error) {
	var b store.Buzon
	err := r.q.QueryRowContext(ctx, `SELECT empresa_id, fallos, ultimo_error, ultimo_intento, ultima_lectura, proximo, updated_at
		FROM buzones WHERE empresa_id = $1`, empresaID).Scan(&b.EmpresaID, &b.Fallos, &b.UltimoError, ts(&b.UltimoIntento),
		ts(&b.UltimaLectura), ts(&b.Proximo), ts(&b.UpdatedAt))
	if err != nil {
		return nil, r.notFound(err, "buzon of empresa", empresaID)
	}
	return &b, nil
}

// PutBuzon writes the mailbox's state, one row per company.
func (t *tx) PutBuzon(ctx context.Context, b *store.Buzon) error {
	t.stamp(nil, &b.UpdatedAt)
	if err := t.empresaExists(ctx, b.EmpresaID); err != nil {
		return err
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO buzones (empresa_id, fallos, ultimo_error, ultimo_intento, ultima_lectura, proximo, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (empresa_id) DO UPDATE SET fallos = excluded.fallos, ultimo_error = excluded.ultimo_error,
		ultimo_intento = excluded.ultimo_intento, ultima_lectura = excluded.ultima_lectura, proximo = excluded.proximo,
		updated_at = excluded.updated_at`,
		b.EmpresaID, b.Fallos, b.UltimoError, t.d.targ(b.UltimoIntento), t.d.targ(b.UltimaLectura), t.d.targ(b.Proximo), t.d.targ(b.UpdatedAt))
	return t.errf(err, "writing the buzon of empresa %q", b.EmpresaID)
}
