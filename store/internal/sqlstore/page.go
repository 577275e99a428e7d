package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/dtekit/dtekit/store"
)

// Keyset cursors: every listed table has a seq column that grows with each
// insert. A page is the next `limit` rows after the last seq of the
// previous page, so rows inserted meanwhile never shift a later page (no
// row is repeated or skipped). The cursor names the last row of the page by
// its id (the seq is looked up again), tagged with the listing it belongs
// to and base64url-encoded so callers treat it as opaque. It does not carry
// the seq itself: a number counted across companies would tell a tenant
// how much the others write.

func encodeCursor(listing, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(listing + ":" + id))
}

// decodeCursor returns the id a cursor of the listing names.
func decodeCursor(listing, cursor string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", fmt.Errorf("%w: not base64url", store.ErrInvalidCursor)
	}
	name, id, ok := strings.Cut(string(raw), ":")
	if !ok || name != listing || id == "" || len(id) > 64 {
		return "", fmt.Errorf("%w: not a cursor of this listing", store.ErrInvalidCursor)
	}
	// An id is printable ASCII: anything else (NUL, which PostgreSQL
	// refuses in a text parameter, bytes that are not UTF-8) names no row
	// and never reaches a query.
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return "", fmt.Errorf("%w: not a cursor of this listing", store.ErrInvalidCursor)
		}
	}
	return id, nil
}

// clampLimit applies store.DefaultLimit and store.MaxLimit.
func clampLimit(n int) int {
	switch {
	case n <= 0:
		return store.DefaultLimit
	case n > store.MaxLimit:
		return store.MaxLimit
	}
	return n
}

// where builds a WHERE clause with numbered placeholders.
type where struct {
	conds []string
	args  []any
}

// add appends a condition; each "?" in cond becomes the next $n.
func (w *where) add(cond string, args ...any) {
	var b strings.Builder
	for _, r := range cond {
		if r == '?' {
			w.args = append(w.args, args[0])
			args = args[1:]
			fmt.Fprintf(&b, "$%d", len(w.args))
			continue
		}
		b.WriteRune(r)
	}
	w.conds = append(w.conds, b.String())
}

func (w *where) String() string { return strings.Join(w.conds, " AND ") }

// listing describes one keyset listing.
type listing struct {
	name  string // cursor tag
	table string
	// empresaID scopes the cursor's row to the company listed (empty
	// for the listing of companies itself).
	empresaID string
	cols      string // selected columns (seq must not be among them)
	asc       bool   // oldest first when true
}

// pageOf runs a listing: the rows matching w after the cursor, limited,
// plus the total count of rows matching w, both in one snapshot.
func pageOf[T any](ctx context.Context, r *reader, l listing, w where, cursor string, limit int,
	scan func(sc scanner) (T, error)) (*store.Page[T], error) {
	limit = clampLimit(limit)
	page := &store.Page[T]{Items: []T{}}
	err := r.snapshot(ctx, func(q querier) error {
		if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+l.table+" WHERE "+w.String(), w.args...).Scan(&page.TotalCount); err != nil {
			return r.errf(err, "counting %s", l.table)
		}
		iw := where{conds: append([]string(nil), w.conds...), args: append([]any(nil), w.args...)}
		op, order := "<", "DESC"
		if l.asc {
			op, order = ">", "ASC"
		}
		if cursor != "" {
			id, err := decodeCursor(l.name, cursor)
			if err != nil {
				return err
			}
			// The row is looked up within the company, like every read of
			// a tenant's data: another company's row is no cursor here.
			lookup, args := "SELECT seq FROM "+l.table+" WHERE id = $1", []any{id}
			if l.empresaID != "" {
				lookup, args = lookup+" AND empresa_id = $2", append(args, l.empresaID)
			}
			var seq int64
			err = q.QueryRowContext(ctx, lookup, args...).Scan(&seq)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("%w: its row is gone", store.ErrInvalidCursor)
			}
			if err != nil {
				return r.errf(err, "reading the cursor of %s", l.table)
			}
			iw.add("seq "+op+" ?", seq)
		}
		iw.args = append(iw.args, limit+1)
		query := fmt.Sprintf("SELECT seq, id, %s FROM %s WHERE %s ORDER BY seq %s LIMIT $%d", l.cols, l.table, iw.String(), order, len(iw.args))
		rows, err := q.QueryContext(ctx, query, iw.args...)
		if err != nil {
			return r.errf(err, "listing %s", l.table)
		}
		defer rows.Close()
		var last string
		read := 0 // bytes of text and blobs read so far (store.MaxPageBytes)
		for rows.Next() {
			if len(page.Items) == limit || read >= store.MaxPageBytes {
				page.NextCursor = encodeCursor(l.name, last)
				break
			}
			var seq int64
			var id string
			item, err := scan(seqScanner{rows: rows, seq: &seq, id: &id, read: &read})
			if err != nil {
				return r.errf(err, "reading %s", l.table)
			}
			last = id
			page.Items = append(page.Items, item)
		}
		if err := rows.Err(); err != nil {
			return r.errf(err, "listing %s", l.table)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return page, nil
}

// scanner is a Row or Rows.
type scanner interface {
	Scan(dest ...any) error
}

// seqScanner prepends the seq and id columns to a row scan and adds to
// read the bytes of the text and blob columns it scanned (those scanned
// into a string or a []byte), which is what a record of any listing holds
// beyond a few fixed-size fields.
type seqScanner struct {
	rows Rows
	seq  *int64
	id   *string
	read *int
}

func (s seqScanner) Scan(dest ...any) error {
	if err := s.rows.Scan(append([]any{s.seq, s.id}, dest...)...); err != nil {
		return err
	}
	for _, d := range dest {
		switch v := d.(type) {
		case *string:
			*s.read += len(*v)
		case *[]byte:
			*s.read += len(*v)
		}
	}
	return nil
}
