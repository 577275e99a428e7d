package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/store"
)

var errNoRows = sql.ErrNoRows

// jsonText scans a JSON text column into v.
type jsonText struct{ v any }

func (j jsonText) Scan(src any) error {
	var b []byte
	switch s := src.(type) {
	case nil:
		return nil
	case string:
		b = []byte(s)
	case []byte:
		b = s
	default:
		return fmt.Errorf("sqlstore: cannot scan %T as JSON text", src)
	}
	return json.Unmarshal(b, j.v)
}

func jsonArg(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("store: encoding %T: %w", v, err)
	}
	return string(b), nil
}

// bytesOrNil normalizes a scanned blob: SQL NULL stays nil, and an empty
// stored value is an empty non-nil slice. It copies nothing: database/sql
// already gives a *[]byte destination its own copy of the driver's bytes
// (a copy more of a document's request would be megabytes per row).
func bytesOrNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return b[:len(b):len(b)]
}

// ---- empresas

const empresaCols = "id, rut, razon_social, giro, direccion, comuna, ciudad, ambiente, fecha_resolucion, numero_resolucion, inbound_email, inbound_status, acteco, created_at, updated_at, oficina_sii"

func scanEmpresa(s scanner) (store.Empresa, error) {
	var e store.Empresa
	err := s.Scan(&e.ID, &e.Rut, &e.RazonSocial, &e.Giro, &e.Direccion, &e.Comuna, &e.Ciudad, &e.Ambiente,
		&e.FechaResolucion, &e.NumeroResolucion, &e.InboundEmail, &e.InboundStatus, jsonText{&e.Acteco},
		ts(&e.CreatedAt), ts(&e.UpdatedAt), &e.OficinaSII)
	return e, err
}

func (r *reader) GetEmpresa(ctx context.Context, empresaID string) (*store.Empresa, error) {
	e, err := scanEmpresa(r.q.QueryRowContext(ctx, "SELECT "+empresaCols+" FROM empresas WHERE id = $1", empresaID))
	if err != nil {
		return nil, r.notFound(err, "empresa", empresaID)
	}
	return &e, nil
}

// GetEmpresaByRut finds a company by the key of its uniqueness rule
// (empresas_rut_ambiente), through that rule's index.
func (r *reader) GetEmpresaByRut(ctx context.Context, rut, ambiente string) (*store.Empresa, error) {
	e, err := scanEmpresa(r.q.QueryRowContext(ctx, "SELECT "+empresaCols+" FROM empresas WHERE rut = $1 AND ambiente = $2", rut, ambiente))
	if err != nil {
		return nil, r.notFound(err, "empresa with rut and ambiente", rut+" "+ambiente)
	}
	return &e, nil
}

func (r *reader) ListEmpresas(ctx context.Context, f store.ListFilter) (*store.Page[store.Empresa], error) {
	var w where
	w.add("1 = 1")
	return pageOf(ctx, r, listing{name: "empresas", table: "empresas", cols: empresaCols, asc: true}, w, f.Cursor, f.Limit, scanEmpresa)
}

func (t *tx) InsertEmpresa(ctx context.Context, e *store.Empresa) error {
	t.stamp(&e.ID, &e.CreatedAt, &e.UpdatedAt)
	acteco, err := jsonArg(nonNil(e.Acteco))
	if err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO empresas ("+empresaCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT DO NOTHING",
		e.ID, e.Rut, e.RazonSocial, e.Giro, e.Direccion, e.Comuna, e.Ciudad, e.Ambiente, e.FechaResolucion,
		e.NumeroResolucion, e.InboundEmail, e.InboundStatus, acteco, t.d.targ(e.CreatedAt), t.d.targ(e.UpdatedAt), e.OficinaSII)
	return t.inserted(ctx, res, err, "empresa", "empresas", e.ID, store.ConstraintEmpresaRut)
}

func (t *tx) UpdateEmpresa(ctx context.Context, e *store.Empresa) error {
	e.UpdatedAt = time.Time{}
	t.stamp(nil, &e.UpdatedAt)
	acteco, err := jsonArg(nonNil(e.Acteco))
	if err != nil {
		return err
	}
	// A changed rut/ambiente that collides with another company is a
	// conflict; check first so PostgreSQL's transaction is not aborted.
	var other string
	err = t.q.QueryRowContext(ctx, "SELECT id FROM empresas WHERE rut = $1 AND ambiente = $2 AND id <> $3", e.Rut, e.Ambiente, e.ID).Scan(&other)
	if err == nil {
		return &store.ConflictError{Constraint: store.ConstraintEmpresaRut}
	}
	if !errors.Is(err, errNoRows) {
		return t.errf(err, "updating empresa %q", e.ID)
	}
	res, err := t.q.ExecContext(ctx, `UPDATE empresas SET rut = $2, razon_social = $3, giro = $4, direccion = $5, comuna = $6, ciudad = $7,
		ambiente = $8, fecha_resolucion = $9, numero_resolucion = $10, inbound_email = $11, inbound_status = $12, acteco = $13, updated_at = $14,
		oficina_sii = $15
		WHERE id = $1`,
		e.ID, e.Rut, e.RazonSocial, e.Giro, e.Direccion, e.Comuna, e.Ciudad, e.Ambiente, e.FechaResolucion,
		e.NumeroResolucion, e.InboundEmail, e.InboundStatus, acteco, t.d.targ(e.UpdatedAt), e.OficinaSII)
	return t.affectedOne(res, err, "empresa", e.ID)
}

func (r *reader) GetEmpresaLogo(ctx context.Context, empresaID string) (*store.Logo, error) {
	var l store.Logo
	err := r.q.QueryRowContext(ctx, "SELECT content_type, data FROM empresa_logos WHERE empresa_id = $1", empresaID).Scan(&l.ContentType, &l.Data)
	if err != nil {
		return nil, r.notFound(err, "logo of empresa", empresaID)
	}
	return &l, nil
}

func (t *tx) SetEmpresaLogo(ctx context.Context, empresaID string, l *store.Logo) error {
	if err := t.empresaExists(ctx, empresaID); err != nil {
		return err
	}
	_, err := t.q.ExecContext(ctx, `INSERT INTO empresa_logos (empresa_id, content_type, data) VALUES ($1, $2, $3)
		ON CONFLICT (empresa_id) DO UPDATE SET content_type = excluded.content_type, data = excluded.data`, empresaID, l.ContentType, l.Data)
	return t.errf(err, "setting the logo of empresa %q", empresaID)
}

// empresaExists returns ErrNotFound when the company does not exist. A
// write checks it first where a foreign key violation would otherwise
// abort PostgreSQL's transaction.
func (t *tx) empresaExists(ctx context.Context, empresaID string) error {
	var one int
	if err := t.q.QueryRowContext(ctx, "SELECT 1 FROM empresas WHERE id = $1", empresaID).Scan(&one); err != nil {
		return t.notFound(err, "empresa", empresaID)
	}
	return nil
}

func (t *tx) DeleteEmpresaLogo(ctx context.Context, empresaID string) error {
	res, err := t.q.ExecContext(ctx, "DELETE FROM empresa_logos WHERE empresa_id = $1", empresaID)
	return t.affectedOne(res, err, "logo of empresa", empresaID)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ---- certificados

const certificadoCols = "empresa_id, rut_firmante, subject, fecha_vencimiento, sealed, is_active, uploaded_at"

func (r *reader) GetCertificado(ctx context.Context, empresaID string) (*store.Certificado, error) {
	var c store.Certificado
	err := r.q.QueryRowContext(ctx, "SELECT "+certificadoCols+" FROM certificados WHERE empresa_id = $1", empresaID).Scan(
		&c.EmpresaID, &c.RutFirmante, &c.Subject, ts(&c.FechaVencimiento), &c.Sealed, &c.IsActive, ts(&c.UploadedAt))
	if err != nil {
		return nil, r.notFound(err, "certificado of empresa", empresaID)
	}
	c.Sealed = bytesOrNil(c.Sealed)
	return &c, nil
}

func (t *tx) PutCertificado(ctx context.Context, c *store.Certificado) error {
	t.stamp(nil, &c.UploadedAt)
	c.FechaVencimiento = normTime(c.FechaVencimiento)
	sealed := c.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO certificados ("+certificadoCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (empresa_id) DO UPDATE SET rut_firmante = excluded.rut_firmante, subject = excluded.subject,
		fecha_vencimiento = excluded.fecha_vencimiento, sealed = excluded.sealed, is_active = excluded.is_active,
		uploaded_at = excluded.uploaded_at`,
		c.EmpresaID, c.RutFirmante, c.Subject, t.d.targ(c.FechaVencimiento), sealed, boolArg(c.IsActive), t.d.targ(c.UploadedAt))
	return t.affectedOne(res, err, "certificado of empresa", c.EmpresaID)
}

// ---- cafs

// cafTakeCols are the columns of a CAF but its document, xml.
const cafTakeCols = "id, empresa_id, tipo_dte, folio_desde, folio_hasta, next_folio, ambiente, fecha_autorizacion, is_active, created_at"
const cafCols = cafTakeCols + ", xml, sealed_key"

// cafFields lists the scan destinations of cafTakeCols.
func cafFields(c *store.CAF) []any {
	return []any{&c.ID, &c.EmpresaID, &c.TipoDTE, &c.FolioDesde, &c.FolioHasta, &c.NextFolio, &c.Ambiente,
		&c.FechaAutorizacion, &c.IsActive, ts(&c.CreatedAt)}
}

func scanCAF(s scanner) (store.CAF, error) {
	var c store.CAF
	err := s.Scan(append(cafFields(&c), &c.XML, &c.SealedKey)...)
	c.XML, c.SealedKey = bytesOrNil(c.XML), bytesOrNil(c.SealedKey)
	return c, err
}

func (r *reader) GetCAF(ctx context.Context, empresaID, id string) (*store.CAF, error) {
	c, err := scanCAF(r.q.QueryRowContext(ctx, "SELECT "+cafCols+" FROM cafs WHERE empresa_id = $1 AND id = $2", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "caf", id)
	}
	return &c, nil
}

func (r *reader) ListCAFs(ctx context.Context, empresaID string, tipoDTE int) ([]store.CAF, error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if tipoDTE != 0 {
		w.add("tipo_dte = ?", tipoDTE)
	}
	rows, err := r.q.QueryContext(ctx, "SELECT "+cafCols+" FROM cafs WHERE "+w.String()+" ORDER BY tipo_dte, folio_desde", w.args...)
	if err != nil {
		return nil, r.errf(err, "listing cafs of empresa %q", empresaID)
	}
	defer rows.Close()
	out := []store.CAF{}
	for rows.Next() {
		c, err := scanCAF(rows)
		if err != nil {
			return nil, r.errf(err, "reading cafs of empresa %q", empresaID)
		}
		out = append(out, c)
	}
	return out, r.errf(rows.Err(), "listing cafs of empresa %q", empresaID)
}

func (r *reader) ListCAFPage(ctx context.Context, empresaID string, f store.CAFFilter) (*store.Page[store.CAF], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if f.TipoDTE != 0 {
		w.add("tipo_dte = ?", f.TipoDTE)
	}
	if f.Ambiente != "" {
		w.add("ambiente = ?", f.Ambiente)
	}
	return pageOf(ctx, r, listing{name: "cafs", table: "cafs", empresaID: empresaID, cols: cafTakeCols, asc: true}, w, f.Cursor, f.Limit,
		func(s scanner) (store.CAF, error) {
			var c store.CAF
			err := s.Scan(cafFields(&c)...)
			return c, err
		})
}

func (r *reader) CAFsInUse(ctx context.Context, empresaID string) (map[int]string, error) {
	// TakeFolio's choice for every type at once: an active CAF of the
	// company's ambiente with folios left such that no other of its type
	// and ambiente has a lower range.
	rows, err := r.q.QueryContext(ctx, `SELECT c.tipo_dte, c.id FROM cafs c
		WHERE c.empresa_id = $1 AND c.is_active = $2 AND c.next_folio <= c.folio_hasta
		AND c.ambiente = (SELECT ambiente FROM empresas WHERE id = $1)
		AND NOT EXISTS (SELECT 1 FROM cafs o WHERE o.empresa_id = c.empresa_id AND o.tipo_dte = c.tipo_dte
			AND o.ambiente = c.ambiente AND o.is_active = $2 AND o.next_folio <= o.folio_hasta AND o.folio_desde < c.folio_desde)`, empresaID, boolArg(true))
	if err != nil {
		return nil, r.errf(err, "finding the cafs in use of empresa %q", empresaID)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var tipo int
		var id string
		if err := rows.Scan(&tipo, &id); err != nil {
			return nil, r.errf(err, "reading the cafs in use of empresa %q", empresaID)
		}
		out[tipo] = id
	}
	if err := rows.Err(); err != nil {
		return nil, r.errf(err, "finding the cafs in use of empresa %q", empresaID)
	}
	return out, nil
}

// lockEmpresa serializes, per company, writers that check-then-insert
// (CAF ranges, the numbers of received files): it locks the company's
// row until the transaction ends (SQLite's single writer needs no lock),
// and returns ErrNotFound when the company does not exist.
func (t *tx) lockEmpresa(ctx context.Context, empresaID string) error {
	if t.d.LockEmpresa == "" {
		return t.empresaExists(ctx, empresaID)
	}
	var one int
	if err := t.q.QueryRowContext(ctx, t.d.LockEmpresa, empresaID).Scan(&one); err != nil {
		return t.notFound(err, "empresa", empresaID)
	}
	return nil
}

func (t *tx) InsertCAF(ctx context.Context, c *store.CAF) error {
	t.stamp(&c.ID, &c.CreatedAt)
	if c.NextFolio == 0 {
		c.NextFolio = c.FolioDesde
	}
	if c.FolioDesde < 1 || c.FolioHasta < c.FolioDesde || c.NextFolio < c.FolioDesde || c.NextFolio > c.FolioHasta+1 {
		return fmt.Errorf("store: caf %q: bad range %d-%d (next %d)", c.ID, c.FolioDesde, c.FolioHasta, c.NextFolio)
	}
	if err := t.lockEmpresa(ctx, c.EmpresaID); err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO cafs ("+cafCols+`)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
		WHERE NOT EXISTS (SELECT 1 FROM cafs WHERE empresa_id = $2 AND tipo_dte = $3 AND ambiente = $7 AND folio_desde <= $5 AND folio_hasta >= $4)
		ON CONFLICT DO NOTHING`,
		c.ID, c.EmpresaID, c.TipoDTE, c.FolioDesde, c.FolioHasta, c.NextFolio, c.Ambiente, c.FechaAutorizacion,
		boolArg(c.IsActive), t.d.targ(c.CreatedAt), blob(c.XML), blob(c.SealedKey))
	return t.inserted(ctx, res, err, "caf", "cafs", c.ID, store.ConstraintCAFRange)
}

func (t *tx) SetCAFActive(ctx context.Context, empresaID, id string, active bool) error {
	res, err := t.q.ExecContext(ctx, "UPDATE cafs SET is_active = $3 WHERE empresa_id = $1 AND id = $2", empresaID, id, boolArg(active))
	return t.affectedOne(res, err, "caf", id)
}

func (t *tx) TakeFolio(ctx context.Context, empresaID string, tipoDTE int) (*store.CAF, int64, error) {
	// One statement chooses the active CAF with folios left (the oldest
	// range first) and takes its next folio. On PostgreSQL a concurrent
	// taker may exhaust the chosen CAF meanwhile: the UPDATE waits for it,
	// re-checks its guard and changes nothing. Then, if a candidate is
	// left, the statement runs again; if none is, there are no folios.
	for range 1000 {
		var c store.CAF
		err := t.q.QueryRowContext(ctx, `UPDATE cafs SET next_folio = next_folio + 1
			WHERE empresa_id = $1 AND is_active = $3 AND next_folio <= folio_hasta AND id = (
				SELECT id FROM cafs WHERE empresa_id = $1 AND tipo_dte = $2 AND is_active = $3
				AND next_folio <= folio_hasta AND ambiente = (SELECT ambiente FROM empresas WHERE id = $1)
				ORDER BY folio_desde LIMIT 1)
			RETURNING `+cafTakeCols, empresaID, tipoDTE, boolArg(true)).Scan(cafFields(&c)...)
		if err == nil {
			return &c, c.NextFolio - 1, nil
		}
		if !errors.Is(err, errNoRows) {
			return nil, 0, t.errf(err, "taking a folio of empresa %q tipo %d", empresaID, tipoDTE)
		}
		var one int
		err = t.q.QueryRowContext(ctx, `SELECT 1 FROM cafs WHERE empresa_id = $1 AND tipo_dte = $2 AND is_active = $3
			AND next_folio <= folio_hasta AND ambiente = (SELECT ambiente FROM empresas WHERE id = $1) LIMIT 1`, empresaID, tipoDTE, boolArg(true)).Scan(&one)
		if errors.Is(err, errNoRows) {
			return nil, 0, t.noFolios(ctx, empresaID, tipoDTE)
		}
		if err != nil {
			return nil, 0, t.errf(err, "choosing the caf of empresa %q tipo %d", empresaID, tipoDTE)
		}
	}
	return nil, 0, fmt.Errorf("store: taking a folio of empresa %q tipo %d: too much contention", empresaID, tipoDTE)
}

// noFolios tells why TakeFolio found nothing to take: ErrNoCAF when no
// CAF of the type is registered in the company's current environment,
// else ErrNoFolios.
func (t *tx) noFolios(ctx context.Context, empresaID string, tipoDTE int) error {
	var ambiente string
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT e.ambiente, (SELECT COUNT(*) FROM cafs c WHERE c.empresa_id = e.id AND c.tipo_dte = $2 AND c.ambiente = e.ambiente)
		FROM empresas e WHERE e.id = $1`, empresaID, tipoDTE).Scan(&ambiente, &n)
	if err != nil {
		return t.notFound(err, "empresa", empresaID)
	}
	if n == 0 {
		return fmt.Errorf("%w: empresa %q has no CAF of tipo %d in %s", store.ErrNoCAF, empresaID, tipoDTE, ambiente)
	}
	return fmt.Errorf("%w: empresa %q, tipo %d, %s", store.ErrNoFolios, empresaID, tipoDTE, ambiente)
}

// ---- dtes

const dteListCols = "id, empresa_id, ambiente, tipo_dte, folio, caf_id, estado, rut_receptor, razon_social_receptor, fecha_emision, monto_total, auto_send, request, emisor, emitted_at, totals, tracking, sii_status, metadata, created_at, updated_at"

// dteCols adds what only the reads of one document return: its XML and
// what its receptor answered.
const dteCols = dteListCols + ", xml, intercambio"

// dteFields lists the scan destinations of dteListCols.
func dteFields(d *store.DTE) []any {
	return []any{&d.ID, &d.EmpresaID, &d.Ambiente, &d.TipoDTE, &d.Folio, &d.CAFID, &d.Estado, &d.RutReceptor, &d.RazonSocialReceptor,
		&d.FechaEmision, &d.MontoTotal, &d.AutoSend, &d.Request, &d.Emisor, ts(&d.EmittedAt), &d.Totals, &d.Tracking,
		&d.SIIStatus, &d.Metadata, ts(&d.CreatedAt), ts(&d.UpdatedAt)}
}

// dteOwnBytes gives the scanned blobs their own memory (NULL stays nil).
func dteOwnBytes(d *store.DTE) {
	d.Request, d.Emisor, d.Totals = bytesOrNil(d.Request), bytesOrNil(d.Emisor), bytesOrNil(d.Totals)
	d.Tracking, d.SIIStatus, d.Metadata = bytesOrNil(d.Tracking), bytesOrNil(d.SIIStatus), bytesOrNil(d.Metadata)
	d.XML, d.Intercambio = bytesOrNil(d.XML), bytesOrNil(d.Intercambio)
}

// cedidaCond is the condition that a row of dtes has a cesión the
// registry recorded (DTE.Cedido): a semi-join, which keeps the ceded
// documents (DTEFilter.Cedido) on the index of cesiones by company and
// document.
const cedidaCond = "c.empresa_id = dtes.empresa_id AND c.dte_id = dtes.id AND c.estado = '" + store.CesionAceptada + "'"

// dteCedidoCol reads DTE.Cedido with each row of a page. It is a scalar
// subquery rather than EXISTS: PostgreSQL may run an EXISTS of the select
// list as one hash of every company's ceded documents (27 ms for a page of
// 50 beside 55,000 ceded documents, against 0.2 ms), so that one company's
// cesiones would slow another's lists; a count is one index probe per row
// of the page (a document has at most one cesión aceptada).
const dteCedidoCol = "(SELECT COUNT(*) FROM cesiones c WHERE " + cedidaCond + ") > 0"

func scanDTEList(s scanner) (store.DTE, error) {
	var d store.DTE
	err := s.Scan(append(dteFields(&d), &d.Cedido)...)
	dteOwnBytes(&d)
	return d, err
}

func scanDTE(s scanner) (store.DTE, error) {
	var d store.DTE
	err := s.Scan(append(dteFields(&d), &d.XML, &d.Intercambio)...)
	dteOwnBytes(&d)
	return d, err
}

func (r *reader) GetDTE(ctx context.Context, empresaID, id string) (*store.DTE, error) {
	d, err := scanDTE(r.q.QueryRowContext(ctx, "SELECT "+dteCols+" FROM dtes WHERE empresa_id = $1 AND id = $2", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "dte", id)
	}
	return &d, nil
}

func (r *reader) GetDTEByFolio(ctx context.Context, empresaID, ambiente string, tipoDTE int, folio int64) (*store.DTE, error) {
	d, err := scanDTE(r.q.QueryRowContext(ctx, "SELECT "+dteCols+" FROM dtes WHERE empresa_id = $1 AND ambiente = $2 AND tipo_dte = $3 AND folio = $4",
		empresaID, ambiente, tipoDTE, folio))
	if err != nil {
		return nil, r.notFound(err, "dte", fmt.Sprintf("%s tipo %d folio %d", ambiente, tipoDTE, folio))
	}
	return &d, nil
}

func (t *tx) GetDTEForUpdate(ctx context.Context, empresaID, id string) (*store.DTE, error) {
	d, err := scanDTE(t.q.QueryRowContext(ctx, "SELECT "+dteCols+" FROM dtes WHERE empresa_id = $1 AND id = $2"+t.d.ForUpdate, empresaID, id))
	if err != nil {
		return nil, t.notFound(err, "dte", id)
	}
	return &d, nil
}

// addDocument adds the filters that the company's documents and those it
// received share: a type, a state, a range of emission dates (inclusive,
// YYYY-MM-DD); zero values do not filter.
func (w *where) addDocument(tipoDTE int, estado, fechaDesde, fechaHasta string) {
	if tipoDTE != 0 {
		w.add("tipo_dte = ?", tipoDTE)
	}
	if estado != "" {
		w.add("estado = ?", estado)
	}
	if fechaDesde != "" {
		w.add("fecha_emision >= ?", fechaDesde)
	}
	if fechaHasta != "" {
		w.add("fecha_emision <= ?", fechaHasta)
	}
}

func (r *reader) ListDTEs(ctx context.Context, empresaID string, f store.DTEFilter) (*store.Page[store.DTE], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if f.Ambiente != "" {
		w.add("ambiente = ?", f.Ambiente)
	}
	w.addDocument(f.TipoDTE, f.Estado, f.FechaDesde, f.FechaHasta)
	if f.RutReceptor != "" {
		w.add("rut_receptor = ?", f.RutReceptor)
	}
	if f.Folio != 0 {
		w.add("folio = ?", f.Folio)
	}
	if f.Cedido {
		w.add("EXISTS (SELECT 1 FROM cesiones c WHERE " + cedidaCond + ")")
	}
	return pageOf(ctx, r, listing{name: "dtes", table: "dtes", empresaID: empresaID, cols: dteListCols + ", " + dteCedidoCol}, w, f.Cursor, f.Limit, scanDTEList)
}

func (t *tx) InsertDTE(ctx context.Context, d *store.DTE) error {
	t.stamp(&d.ID, &d.CreatedAt, &d.UpdatedAt)
	d.EmittedAt = normTime(d.EmittedAt)
	if d.Ambiente == "" {
		a, err := t.empresaAmbiente(ctx, d.EmpresaID)
		if err != nil {
			return err
		}
		d.Ambiente = a
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO dtes ("+dteCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
		$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23) ON CONFLICT DO NOTHING`,
		d.ID, d.EmpresaID, d.Ambiente, d.TipoDTE, d.Folio, d.CAFID, d.Estado, d.RutReceptor, d.RazonSocialReceptor, d.FechaEmision,
		d.MontoTotal, boolArg(d.AutoSend), blob(d.Request), blob(d.Emisor), t.d.targ(d.EmittedAt), blob(d.Totals),
		blob(d.Tracking), blob(d.SIIStatus), blob(d.Metadata), t.d.targ(d.CreatedAt), t.d.targ(d.UpdatedAt), blob(d.XML), blob(d.Intercambio))
	return t.inserted(ctx, res, err, "dte", "dtes", d.ID, store.ConstraintDTEFolio)
}

const updateDTESet = `UPDATE dtes SET estado = $3, monto_total = $4, xml = $5, totals = $6, tracking = $7,
		sii_status = $8, metadata = $9, updated_at = $10 WHERE empresa_id = $1 AND id = $2`

func (t *tx) updateDTEArgs(d *store.DTE, more ...any) []any {
	d.UpdatedAt = time.Time{}
	t.stamp(nil, &d.UpdatedAt)
	return append([]any{d.EmpresaID, d.ID, d.Estado, d.MontoTotal, blob(d.XML), blob(d.Totals), blob(d.Tracking),
		blob(d.SIIStatus), blob(d.Metadata), t.d.targ(d.UpdatedAt)}, more...)
}

func (t *tx) UpdateDTE(ctx context.Context, d *store.DTE) error {
	res, err := t.q.ExecContext(ctx, updateDTESet, t.updateDTEArgs(d)...)
	return t.affectedOne(res, err, "dte", d.ID)
}

func (t *tx) UpdateDTEIf(ctx context.Context, d *store.DTE, fromEstado string) (bool, error) {
	res, err := t.q.ExecContext(ctx, updateDTESet+" AND estado = $11", t.updateDTEArgs(d, fromEstado)...)
	err = t.affectedOne(res, err, "dte", d.ID)
	if !errors.Is(err, store.ErrNotFound) {
		return err == nil, err
	}
	// Not updated: in another state, or not there at all.
	var estado string
	err = t.q.QueryRowContext(ctx, "SELECT estado FROM dtes WHERE empresa_id = $1 AND id = $2", d.EmpresaID, d.ID).Scan(&estado)
	if err != nil {
		return false, t.notFound(err, "dte", d.ID)
	}
	return false, nil
}

// SetDTEIntercambio replaces what the receptor answered about one
// document, and nothing else (its update time included).
func (t *tx) SetDTEIntercambio(ctx context.Context, empresaID, id string, data []byte) error {
	res, err := t.q.ExecContext(ctx, "UPDATE dtes SET intercambio = $3 WHERE empresa_id = $1 AND id = $2", empresaID, id, blob(data))
	return t.affectedOne(res, err, "dte", id)
}

// ---- clientes

const clienteCols = "id, empresa_id, rut, razon_social, giro, direccion, comuna, ciudad, email, telefono, contacto, notas, created_at, updated_at"

func scanCliente(s scanner) (store.Cliente, error) {
	var c store.Cliente
	err := s.Scan(&c.ID, &c.EmpresaID, &c.Rut, &c.RazonSocial, &c.Giro, &c.Direccion, &c.Comuna, &c.Ciudad,
		&c.Email, &c.Telefono, &c.Contacto, &c.Notas, ts(&c.CreatedAt), ts(&c.UpdatedAt))
	return c, err
}

func (r *reader) GetCliente(ctx context.Context, empresaID, id string) (*store.Cliente, error) {
	c, err := scanCliente(r.q.QueryRowContext(ctx, "SELECT "+clienteCols+" FROM clientes WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "cliente", id)
	}
	return &c, nil
}

func (r *reader) GetClienteByRut(ctx context.Context, empresaID, rut string) (*store.Cliente, error) {
	c, err := scanCliente(r.q.QueryRowContext(ctx, "SELECT "+clienteCols+" FROM clientes WHERE empresa_id = $1 AND rut = $2 AND deleted_at IS NULL", empresaID, rut))
	if err != nil {
		return nil, r.notFound(err, "cliente with rut", rut)
	}
	return &c, nil
}

func (r *reader) ListClientes(ctx context.Context, empresaID string, f store.CatalogFilter) (*store.Page[store.Cliente], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	w.add("deleted_at IS NULL")
	if f.Query != "" {
		p := likePattern(f.Query)
		w.add(`busqueda LIKE ? ESCAPE '\'`, p)
	}
	return pageOf(ctx, r, listing{name: "clientes", table: "clientes", empresaID: empresaID, cols: clienteCols, asc: true}, w, f.Cursor, f.Limit, scanCliente)
}

func (t *tx) InsertCliente(ctx context.Context, c *store.Cliente) error {
	t.stamp(&c.ID, &c.CreatedAt, &c.UpdatedAt)
	res, err := t.q.ExecContext(ctx, "INSERT INTO clientes ("+clienteCols+`, busqueda) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT DO NOTHING`,
		c.ID, c.EmpresaID, c.Rut, c.RazonSocial, c.Giro, c.Direccion, c.Comuna, c.Ciudad, c.Email, c.Telefono,
		c.Contacto, c.Notas, t.d.targ(c.CreatedAt), t.d.targ(c.UpdatedAt), searchText(c.RazonSocial, c.Rut))
	return t.inserted(ctx, res, err, "cliente", "clientes", c.ID, store.ConstraintClienteRut)
}

func (t *tx) UpdateCliente(ctx context.Context, c *store.Cliente) error {
	c.UpdatedAt = time.Time{}
	t.stamp(nil, &c.UpdatedAt)
	// The rut never changes: the search text takes the stored one.
	var rut string
	err := t.q.QueryRowContext(ctx, "SELECT rut FROM clientes WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL", c.EmpresaID, c.ID).Scan(&rut)
	if err != nil {
		return t.notFound(err, "cliente", c.ID)
	}
	res, err := t.q.ExecContext(ctx, `UPDATE clientes SET razon_social = $3, giro = $4, direccion = $5, comuna = $6, ciudad = $7,
		email = $8, telefono = $9, contacto = $10, notas = $11, updated_at = $12, busqueda = $13
		WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL`,
		c.EmpresaID, c.ID, c.RazonSocial, c.Giro, c.Direccion, c.Comuna, c.Ciudad, c.Email, c.Telefono, c.Contacto,
		c.Notas, t.d.targ(c.UpdatedAt), searchText(c.RazonSocial, rut))
	return t.affectedOne(res, err, "cliente", c.ID)
}

func (t *tx) DeleteCliente(ctx context.Context, empresaID, id string) error {
	res, err := t.q.ExecContext(ctx, "UPDATE clientes SET deleted_at = $3 WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL",
		empresaID, id, t.d.targ(t.now()))
	return t.affectedOne(res, err, "cliente", id)
}

// ---- productos

const productoCols = "id, empresa_id, codigo, nombre, descripcion, precio_unitario, unidad, es_exento, categoria, created_at, updated_at"

func scanProducto(s scanner) (store.Producto, error) {
	var p store.Producto
	err := s.Scan(&p.ID, &p.EmpresaID, &p.Codigo, &p.Nombre, &p.Descripcion, &p.PrecioUnitario, &p.Unidad,
		&p.EsExento, &p.Categoria, ts(&p.CreatedAt), ts(&p.UpdatedAt))
	return p, err
}

func (r *reader) GetProducto(ctx context.Context, empresaID, id string) (*store.Producto, error) {
	p, err := scanProducto(r.q.QueryRowContext(ctx, "SELECT "+productoCols+" FROM productos WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "producto", id)
	}
	return &p, nil
}

func (r *reader) ListProductos(ctx context.Context, empresaID string, f store.CatalogFilter) (*store.Page[store.Producto], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	w.add("deleted_at IS NULL")
	if f.Query != "" {
		p := likePattern(f.Query)
		w.add(`busqueda LIKE ? ESCAPE '\'`, p)
	}
	return pageOf(ctx, r, listing{name: "productos", table: "productos", empresaID: empresaID, cols: productoCols, asc: true}, w, f.Cursor, f.Limit, scanProducto)
}

func (t *tx) InsertProducto(ctx context.Context, p *store.Producto) error {
	t.stamp(&p.ID, &p.CreatedAt, &p.UpdatedAt)
	res, err := t.q.ExecContext(ctx, "INSERT INTO productos ("+productoCols+`, busqueda) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT DO NOTHING`,
		p.ID, p.EmpresaID, p.Codigo, p.Nombre, p.Descripcion, p.PrecioUnitario, p.Unidad, boolArg(p.EsExento),
		p.Categoria, t.d.targ(p.CreatedAt), t.d.targ(p.UpdatedAt), searchText(p.Nombre, p.Codigo))
	return t.inserted(ctx, res, err, "producto", "productos", p.ID, store.ConstraintProductoCodigo)
}

func (t *tx) UpdateProducto(ctx context.Context, p *store.Producto) error {
	p.UpdatedAt = time.Time{}
	t.stamp(nil, &p.UpdatedAt)
	if p.Codigo != "" {
		// Check the codigo first so PostgreSQL's transaction is not
		// aborted by a unique violation.
		var other string
		err := t.q.QueryRowContext(ctx, "SELECT id FROM productos WHERE empresa_id = $1 AND codigo = $2 AND id <> $3 AND deleted_at IS NULL",
			p.EmpresaID, p.Codigo, p.ID).Scan(&other)
		if err == nil {
			if _, gerr := t.GetProducto(ctx, p.EmpresaID, p.ID); gerr != nil {
				return gerr
			}
			return &store.ConflictError{Constraint: store.ConstraintProductoCodigo}
		}
		if !errors.Is(err, errNoRows) {
			return t.errf(err, "updating producto %q", p.ID)
		}
	}
	res, err := t.q.ExecContext(ctx, `UPDATE productos SET codigo = $3, nombre = $4, descripcion = $5, precio_unitario = $6,
		unidad = $7, es_exento = $8, categoria = $9, updated_at = $10, busqueda = $11
		WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL`,
		p.EmpresaID, p.ID, p.Codigo, p.Nombre, p.Descripcion, p.PrecioUnitario, p.Unidad, boolArg(p.EsExento),
		p.Categoria, t.d.targ(p.UpdatedAt), searchText(p.Nombre, p.Codigo))
	return t.affectedOne(res, err, "producto", p.ID)
}

func (t *tx) DeleteProducto(ctx context.Context, empresaID, id string) error {
	res, err := t.q.ExecContext(ctx, "UPDATE productos SET deleted_at = $3 WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL",
		empresaID, id, t.d.targ(t.now()))
	return t.affectedOne(res, err, "producto", id)
}

// ---- webhooks

const webhookCols = "id, empresa_id, url, events, secret, is_active, created_at, updated_at"

func scanWebhook(s scanner) (store.Webhook, error) {
	var w store.Webhook
	err := s.Scan(&w.ID, &w.EmpresaID, &w.URL, jsonText{&w.Events}, &w.Secret, &w.IsActive, ts(&w.CreatedAt), ts(&w.UpdatedAt))
	w.Secret = bytesOrNil(w.Secret)
	if w.Events == nil {
		w.Events = []string{}
	}
	return w, err
}

func (r *reader) GetWebhook(ctx context.Context, empresaID, id string) (*store.Webhook, error) {
	w, err := scanWebhook(r.q.QueryRowContext(ctx, "SELECT "+webhookCols+" FROM webhooks WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "webhook", id)
	}
	return &w, nil
}

func (r *reader) ListWebhooks(ctx context.Context, empresaID string) ([]store.Webhook, error) {
	rows, err := r.q.QueryContext(ctx, "SELECT "+webhookCols+" FROM webhooks WHERE empresa_id = $1 AND deleted_at IS NULL ORDER BY seq", empresaID)
	if err != nil {
		return nil, r.errf(err, "listing webhooks of empresa %q", empresaID)
	}
	defer rows.Close()
	out := []store.Webhook{}
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, r.errf(err, "reading webhooks of empresa %q", empresaID)
		}
		out = append(out, w)
	}
	return out, r.errf(rows.Err(), "listing webhooks of empresa %q", empresaID)
}

func (t *tx) InsertWebhook(ctx context.Context, w *store.Webhook) error {
	t.stamp(&w.ID, &w.CreatedAt, &w.UpdatedAt)
	events, err := jsonArg(nonNil(w.Events))
	if err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO webhooks ("+webhookCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
		w.ID, w.EmpresaID, w.URL, events, blob(w.Secret), boolArg(w.IsActive), t.d.targ(w.CreatedAt), t.d.targ(w.UpdatedAt))
	return t.inserted(ctx, res, err, "webhook", "webhooks", w.ID, store.ConstraintPrimaryKey)
}

func (t *tx) UpdateWebhook(ctx context.Context, w *store.Webhook) error {
	w.UpdatedAt = time.Time{}
	t.stamp(nil, &w.UpdatedAt)
	events, err := jsonArg(nonNil(w.Events))
	if err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, `UPDATE webhooks SET url = $3, events = $4, secret = $5, is_active = $6, updated_at = $7
		WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL`,
		w.EmpresaID, w.ID, w.URL, events, blob(w.Secret), boolArg(w.IsActive), t.d.targ(w.UpdatedAt))
	return t.affectedOne(res, err, "webhook", w.ID)
}

func (t *tx) DeleteWebhook(ctx context.Context, empresaID, id string) error {
	res, err := t.q.ExecContext(ctx, "UPDATE webhooks SET deleted_at = $3, is_active = $4, secret = NULL WHERE empresa_id = $1 AND id = $2 AND deleted_at IS NULL",
		empresaID, id, t.d.targ(t.now()), boolArg(false))
	return t.affectedOne(res, err, "webhook", id)
}

// ---- api keys

const apiKeyCols = "id, empresa_id, hash, can_write, label, created_at, revoked_at"

func scanAPIKey(s scanner) (store.APIKey, error) {
	var k store.APIKey
	err := s.Scan(&k.ID, &k.EmpresaID, &k.Hash, &k.Write, &k.Label, ts(&k.CreatedAt), ts(&k.RevokedAt))
	k.Hash = bytesOrNil(k.Hash)
	return k, err
}

func (r *reader) FindAPIKey(ctx context.Context, hash []byte) (*store.APIKey, error) {
	k, err := scanAPIKey(r.q.QueryRowContext(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE hash = $1", hash))
	if err != nil {
		return nil, r.notFound(err, "api key", "(by hash)")
	}
	return &k, nil
}

func (r *reader) ListAPIKeys(ctx context.Context, empresaID string) ([]store.APIKey, error) {
	rows, err := r.q.QueryContext(ctx, "SELECT "+apiKeyCols+" FROM api_keys WHERE empresa_id = $1 ORDER BY seq", empresaID)
	if err != nil {
		return nil, r.errf(err, "listing api keys of empresa %q", empresaID)
	}
	defer rows.Close()
	out := []store.APIKey{}
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, r.errf(err, "reading api keys of empresa %q", empresaID)
		}
		out = append(out, k)
	}
	return out, r.errf(rows.Err(), "listing api keys of empresa %q", empresaID)
}

func (t *tx) InsertAPIKey(ctx context.Context, k *store.APIKey) error {
	t.stamp(&k.ID, &k.CreatedAt)
	if len(k.Hash) == 0 {
		return fmt.Errorf("store: api key %q: empty hash", k.ID)
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO api_keys ("+apiKeyCols+") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
		k.ID, k.EmpresaID, k.Hash, boolArg(k.Write), k.Label, t.d.targ(k.CreatedAt), t.d.targ(k.RevokedAt))
	return t.inserted(ctx, res, err, "api key", "api_keys", k.ID, store.ConstraintAPIKeyHash)
}

func (t *tx) RevokeAPIKey(ctx context.Context, empresaID, id string, at time.Time) error {
	if at.IsZero() {
		at = t.now()
	}
	res, err := t.q.ExecContext(ctx, "UPDATE api_keys SET revoked_at = $3 WHERE empresa_id = $1 AND id = $2", empresaID, id, t.d.targ(at))
	return t.affectedOne(res, err, "api key", id)
}

// ---- idempotency

const idemCols = "empresa_id, ambiente, idem_key, body_hash, state, dte_id, response_status, response_body, created_at, updated_at"

func (r *reader) GetIdempotency(ctx context.Context, empresaID, ambiente, key string) (*store.Idempotency, error) {
	var i store.Idempotency
	err := r.q.QueryRowContext(ctx, "SELECT "+idemCols+" FROM idempotency_keys WHERE empresa_id = $1 AND ambiente = $2 AND idem_key = $3",
		empresaID, ambiente, key).Scan(&i.EmpresaID, &i.Ambiente, &i.Key, &i.BodyHash, &i.State, &i.DTEID, &i.ResponseStatus, &i.ResponseBody, ts(&i.CreatedAt), ts(&i.UpdatedAt))
	if err != nil {
		return nil, r.notFound(err, "idempotency key", key)
	}
	i.BodyHash, i.ResponseBody = bytesOrNil(i.BodyHash), bytesOrNil(i.ResponseBody)
	return &i, nil
}

func (t *tx) InsertIdempotency(ctx context.Context, i *store.Idempotency) error {
	t.stamp(nil, &i.CreatedAt, &i.UpdatedAt)
	if i.State == "" {
		i.State = store.IdempotencyInProgress
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO idempotency_keys ("+idemCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
		i.EmpresaID, i.Ambiente, i.Key, blob(i.BodyHash), i.State, i.DTEID, i.ResponseStatus, blob(i.ResponseBody),
		t.d.targ(i.CreatedAt), t.d.targ(i.UpdatedAt))
	return t.inserted(ctx, res, err, "idempotency key", "", i.Key, store.ConstraintIdempotency)
}

func (t *tx) UpdateIdempotency(ctx context.Context, i *store.Idempotency) error {
	i.UpdatedAt = time.Time{}
	t.stamp(nil, &i.UpdatedAt)
	res, err := t.q.ExecContext(ctx, `UPDATE idempotency_keys SET state = $3, dte_id = $4, response_status = $5, response_body = $6,
		updated_at = $7 WHERE empresa_id = $1 AND idem_key = $2 AND ambiente = $8`,
		i.EmpresaID, i.Key, i.State, i.DTEID, i.ResponseStatus, blob(i.ResponseBody), t.d.targ(i.UpdatedAt), i.Ambiente)
	return t.affectedOne(res, err, "idempotency key", i.Key)
}

func (t *tx) PurgeIdempotency(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.q.ExecContext(ctx, "DELETE FROM idempotency_keys WHERE created_at < $1", t.d.targ(before))
	if err != nil {
		return 0, t.errf(err, "purging idempotency keys")
	}
	n, err := res.RowsAffected()
	return n, t.errf(err, "purging idempotency keys")
}

// ---- events

const eventCols = "id, empresa_id, type, payload, created_at"

func scanEvent(s scanner) (store.Event, error) {
	var e store.Event
	err := s.Scan(&e.ID, &e.EmpresaID, &e.Type, &e.Payload, ts(&e.CreatedAt))
	e.Payload = bytesOrNil(e.Payload)
	return e, err
}

func (r *reader) GetEvent(ctx context.Context, empresaID, id string) (*store.Event, error) {
	e, err := scanEvent(r.q.QueryRowContext(ctx, "SELECT "+eventCols+" FROM events WHERE empresa_id = $1 AND id = $2", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "event", id)
	}
	return &e, nil
}

func (r *reader) ListEvents(ctx context.Context, empresaID string, f store.ListFilter) (*store.Page[store.Event], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	return pageOf(ctx, r, listing{name: "events", table: "events", empresaID: empresaID, cols: eventCols}, w, f.Cursor, f.Limit, scanEvent)
}

func (t *tx) InsertEvent(ctx context.Context, e *store.Event) error {
	t.stamp(&e.ID, &e.CreatedAt)
	payload := e.Payload
	if payload == nil {
		payload = []byte{}
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO events ("+eventCols+") VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
		e.ID, e.EmpresaID, e.Type, payload, t.d.targ(e.CreatedAt))
	return t.inserted(ctx, res, err, "event", "events", e.ID, store.ConstraintPrimaryKey)
}

// ---- deliveries

const deliveryCols = "id, empresa_id, webhook_id, event_id, state, attempts, last_status_code, last_error, next_attempt_at, created_at, updated_at"

func scanDelivery(s scanner) (store.Delivery, error) {
	var d store.Delivery
	err := s.Scan(&d.ID, &d.EmpresaID, &d.WebhookID, &d.EventID, &d.State, &d.Attempts, &d.LastStatusCode,
		&d.LastError, ts(&d.NextAttemptAt), ts(&d.CreatedAt), ts(&d.UpdatedAt))
	return d, err
}

func (r *reader) GetDelivery(ctx context.Context, empresaID, id string) (*store.Delivery, error) {
	d, err := scanDelivery(r.q.QueryRowContext(ctx, "SELECT "+deliveryCols+" FROM deliveries WHERE empresa_id = $1 AND id = $2", empresaID, id))
	if err != nil {
		return nil, r.notFound(err, "delivery", id)
	}
	return &d, nil
}

func (r *reader) ListDeliveries(ctx context.Context, empresaID, webhookID string, f store.ListFilter) (*store.Page[store.Delivery], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	w.add("webhook_id = ?", webhookID)
	return pageOf(ctx, r, listing{name: "deliveries", table: "deliveries", empresaID: empresaID, cols: deliveryCols}, w, f.Cursor, f.Limit, scanDelivery)
}

func (t *tx) InsertDelivery(ctx context.Context, d *store.Delivery) error {
	t.stamp(&d.ID, &d.CreatedAt, &d.UpdatedAt)
	if d.State == "" {
		d.State = store.DeliveryPending
	}
	d.NextAttemptAt = normTime(d.NextAttemptAt)
	// The webhook and the event must belong to the same company.
	var n int
	err := t.q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM webhooks WHERE empresa_id = $1 AND id = $2)
		+ (SELECT COUNT(*) FROM events WHERE empresa_id = $1 AND id = $3)`, d.EmpresaID, d.WebhookID, d.EventID).Scan(&n)
	if err != nil {
		return t.errf(err, "inserting delivery %q", d.ID)
	}
	if n != 2 {
		return fmt.Errorf("%w: delivery %q: webhook %q or event %q of empresa %q", store.ErrNotFound, d.ID, d.WebhookID, d.EventID, d.EmpresaID)
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO deliveries ("+deliveryCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT DO NOTHING",
		d.ID, d.EmpresaID, d.WebhookID, d.EventID, d.State, d.Attempts, d.LastStatusCode, d.LastError,
		t.d.targ(d.NextAttemptAt), t.d.targ(d.CreatedAt), t.d.targ(d.UpdatedAt))
	return t.inserted(ctx, res, err, "delivery", "deliveries", d.ID, store.ConstraintDelivery)
}

func (t *tx) UpdateDelivery(ctx context.Context, d *store.Delivery) error {
	d.UpdatedAt = time.Time{}
	t.stamp(nil, &d.UpdatedAt)
	d.NextAttemptAt = normTime(d.NextAttemptAt)
	res, err := t.q.ExecContext(ctx, `UPDATE deliveries SET state = $3, attempts = $4, last_status_code = $5, last_error = $6,
		next_attempt_at = $7, updated_at = $8 WHERE empresa_id = $1 AND id = $2`,
		d.EmpresaID, d.ID, d.State, d.Attempts, d.LastStatusCode, d.LastError, t.d.targ(d.NextAttemptAt), t.d.targ(d.UpdatedAt))
	return t.affectedOne(res, err, "delivery", d.ID)
}

// ---- envios

const envioListCols = "id, empresa_id, dte_ids, ambiente, track_id, estado, attempts, results, created_at, updated_at"
const envioCols = envioListCols + ", xml, response"

// scanEnvioList reads an envelope of envioListCols. The JSON of its
// documents is scanned as bytes, so a page counts it against
// store.MaxPageBytes.
func scanEnvioList(s scanner, extra ...any) (store.Envio, error) {
	var e store.Envio
	var ids []byte
	err := s.Scan(append([]any{&e.ID, &e.EmpresaID, &ids, &e.Ambiente, &e.TrackID, &e.Estado, &e.Attempts, &e.Results,
		ts(&e.CreatedAt), ts(&e.UpdatedAt)}, extra...)...)
	if err != nil {
		return e, err
	}
	if len(ids) > 0 {
		if err := json.Unmarshal(ids, &e.DTEIDs); err != nil {
			return e, fmt.Errorf("envio %q: dte_ids: %w", e.ID, err)
		}
	}
	if e.DTEIDs == nil {
		e.DTEIDs = []string{}
	}
	e.Results = bytesOrNil(e.Results)
	return e, nil
}

// getEnvio reads one envelope with every column; lock is the backend's
// FOR UPDATE clause or "".
func (r *reader) getEnvio(ctx context.Context, empresaID, id, lock string) (*store.Envio, error) {
	var xml, resp []byte
	e, err := scanEnvioList(r.q.QueryRowContext(ctx, "SELECT "+envioCols+" FROM envios WHERE empresa_id = $1 AND id = $2"+lock, empresaID, id),
		&xml, &resp)
	if err != nil {
		return nil, r.notFound(err, "envio", id)
	}
	e.XML, e.Response = bytesOrNil(xml), bytesOrNil(resp)
	return &e, nil
}

func (r *reader) GetEnvio(ctx context.Context, empresaID, id string) (*store.Envio, error) {
	return r.getEnvio(ctx, empresaID, id, "")
}

func (t *tx) GetEnvioForUpdate(ctx context.Context, empresaID, id string) (*store.Envio, error) {
	return t.getEnvio(ctx, empresaID, id, t.d.ForUpdate)
}

func (r *reader) ListEnvios(ctx context.Context, empresaID string, f store.EnvioFilter) (*store.Page[store.Envio], error) {
	var w where
	w.add("empresa_id = ?", empresaID)
	if f.Ambiente != "" {
		w.add("ambiente = ?", f.Ambiente)
	}
	return pageOf(ctx, r, listing{name: "envios", table: "envios", empresaID: empresaID, cols: envioListCols}, w, f.Cursor, f.Limit,
		func(s scanner) (store.Envio, error) { return scanEnvioList(s) })
}

func (t *tx) InsertEnvio(ctx context.Context, e *store.Envio) error {
	t.stamp(&e.ID, &e.CreatedAt, &e.UpdatedAt)
	ids, err := jsonArg(nonNil(e.DTEIDs))
	if err != nil {
		return err
	}
	res, err := t.q.ExecContext(ctx, "INSERT INTO envios ("+envioCols+") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING",
		e.ID, e.EmpresaID, ids, e.Ambiente, e.TrackID, e.Estado, e.Attempts, blob(e.Results), t.d.targ(e.CreatedAt), t.d.targ(e.UpdatedAt),
		blob(e.XML), blob(e.Response))
	return t.inserted(ctx, res, err, "envio", "envios", e.ID, store.ConstraintPrimaryKey)
}

func (t *tx) UpdateEnvio(ctx context.Context, e *store.Envio) error {
	e.UpdatedAt = time.Time{}
	t.stamp(nil, &e.UpdatedAt)
	res, err := t.q.ExecContext(ctx, `UPDATE envios SET track_id = $3, estado = $4, attempts = $5, xml = $6, response = $7, results = $8, updated_at = $9
		WHERE empresa_id = $1 AND id = $2`,
		e.EmpresaID, e.ID, e.TrackID, e.Estado, e.Attempts, blob(e.XML), blob(e.Response), blob(e.Results), t.d.targ(e.UpdatedAt))
	return t.affectedOne(res, err, "envio", e.ID)
}
