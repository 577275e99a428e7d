package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// TestUnreadableValue: SQLite keeps whatever a column is given, so a
// damaged row can hold a time that does not parse or text in a number's
// column. Reading it (one record, or a page) is store.ErrUnreadable
// naming the column, which the service answers as a damaged record
// rather than a 500.
func TestUnreadableValue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	st, err := sqlite.Open(ctx, path, nil)
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
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, damage := range []struct{ column, sql string }{
		{"created_at", "UPDATE dtes SET created_at = 'ayer' WHERE id = $1"},
		{"folio", "UPDATE dtes SET created_at = '2026-03-02T12:00:00Z', folio = 'uno' WHERE id = $1"},
	} {
		if _, err := raw.ExecContext(ctx, damage.sql, d.ID); err != nil {
			t.Fatal(err)
		}
		_, err := st.GetDTE(ctx, e.ID, d.ID)
		if !errors.Is(err, store.ErrUnreadable) || !strings.Contains(err.Error(), damage.column) {
			t.Errorf("GetDTE with a damaged %s: %v, want ErrUnreadable naming the column", damage.column, err)
		}
		_, err = st.ListDTEs(ctx, e.ID, store.DTEFilter{})
		if !errors.Is(err, store.ErrUnreadable) {
			t.Errorf("ListDTEs with a damaged %s: %v, want ErrUnreadable", damage.column, err)
		}
	}
}
