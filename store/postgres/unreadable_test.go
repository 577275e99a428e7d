package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
)

// TestUnreadableValue: PostgreSQL's typed columns keep most damage out,
// but a column whose constraint or type was changed by hand can hold
// what the store cannot read: a NULL where it reads a string, text where
// it reads a number. pgx refuses the scan (a ScanArgError naming the
// column, not database/sql's "Scan error"), and reading the record, or a
// page, is store.ErrUnreadable naming the column, as on SQLite.
func TestUnreadableValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	loc := pgtest.URL(t)
	st, err := postgres.Open(ctx, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	d := &store.DTE{TipoDTE: 33, Folio: 1, Estado: "firmado", FechaEmision: "2026-03-02"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		d.EmpresaID = e.ID
		return tx.InsertDTE(ctx, d)
	}); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, damage := range []struct {
		column string
		sql    []string
	}{
		{"estado", []string{"ALTER TABLE dtes ALTER COLUMN estado DROP NOT NULL", "UPDATE dtes SET estado = NULL WHERE id = $1"}},
		{"folio", []string{"UPDATE dtes SET estado = 'firmado' WHERE id = $1",
			"ALTER TABLE dtes ALTER COLUMN folio TYPE TEXT USING folio::text", "UPDATE dtes SET folio = 'uno' WHERE id = $1"}},
	} {
		for _, q := range damage.sql {
			var args []any
			if strings.Contains(q, "$1") {
				args = append(args, d.ID)
			}
			if _, err := raw.ExecContext(ctx, q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		_, err := st.GetDTE(ctx, e.ID, d.ID)
		if !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), damage.column) {
			t.Errorf("GetDTE with a damaged %s: %v, want ErrUnreadable naming the column", damage.column, err)
		}
		_, err = st.ListDTEs(ctx, e.ID, store.DTEFilter{})
		if !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), damage.column) {
			t.Errorf("ListDTEs with a damaged %s: %v, want ErrUnreadable naming the column", damage.column, err)
		}
	}
}
