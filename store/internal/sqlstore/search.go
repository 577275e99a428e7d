package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Catalog search ignores case and accents on both backends: SQLite's
// lower() folds ASCII only, and PostgreSQL's depends on the database's
// locale (C in CI), so neither can be asked to. The store folds in Go
// instead, once when a cliente or producto is written (its busqueda
// column) and once for each query, with the same function.

// searchSep separates the name from the rut or codigo in a busqueda
// value. fold turns every control character of a query into a space, so
// a match never spans both.
const searchSep = "\x1f"

// fold returns s as searches compare it: compatibility-decomposed (so
// "Ñ" is "N" and a combining tilde, a full-width "Ａ" is "A"), without
// its nonspacing marks, lower-cased, with control characters as spaces.
// "ÑUÑOA", "Ñuñoa" and "nunoa" fold alike.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsControl(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// searchText is the busqueda value of a record named name whose key
// (rut, codigo) is key.
func searchText(name, key string) string { return fold(name) + searchSep + fold(key) }

// likePattern makes a substring pattern of a query, folded as busqueda
// values are, with LIKE's wildcards in the user's text escaped.
func likePattern(q string) string {
	q = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(fold(q))
	return "%" + q + "%"
}

// backfillSearch fills the busqueda of the clientes and productos written
// before migration 00012, a batch at a time, each batch in a transaction
// of its own; run when the store opens, it finds nothing to do after the
// first time.
func backfillSearch(ctx context.Context, db *sql.DB) error {
	for _, t := range []struct{ table, name, key string }{
		{"clientes", "razon_social", "rut"},
		{"productos", "nombre", "codigo"},
	} {
		for {
			n, err := backfillBatch(ctx, db, t.table, t.name, t.key)
			if err != nil {
				return fmt.Errorf("filling the search text of %s: %w", t.table, err)
			}
			if n == 0 {
				break
			}
		}
	}
	return nil
}

// backfillBatch fills up to 500 rows of table and reports how many.
func backfillBatch(ctx context.Context, db *sql.DB, table, name, key string) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, fmt.Sprintf("SELECT seq, %s, %s FROM %s WHERE busqueda IS NULL ORDER BY seq LIMIT 500", name, key, table))
	if err != nil {
		return 0, err
	}
	type row struct {
		seq  int64
		text string
	}
	var todo []row
	for rows.Next() {
		var r row
		var n, k string
		if err := rows.Scan(&r.seq, &n, &k); err != nil {
			rows.Close()
			return 0, err
		}
		r.text = searchText(n, k)
		todo = append(todo, r)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, err
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	for _, r := range todo {
		if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET busqueda = $1 WHERE seq = $2", r.text, r.seq); err != nil {
			return 0, err
		}
	}
	return len(todo), tx.Commit()
}
