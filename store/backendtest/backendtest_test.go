package backendtest

import (
	"context"
	"testing"

	"github.com/dtekit/dtekit/store"
)

func TestMain(m *testing.M) { Main(m) }

// TestFreshStores: each backend opens a working store, and two stores
// of one backend are two databases: a company written in one is not in
// the other.
func TestFreshStores(t *testing.T) {
	t.Parallel()
	Each(t, func(t *testing.T, b Backend) {
		ctx := context.Background()
		one, two := b.NewStore(t, store.JobsConfig{}), b.NewStore(t, store.JobsConfig{})
		e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
		if err := one.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			st   store.Store
			want int
		}{{"the store written", one, 1}, {"another store", two, 0}} {
			page, err := c.st.ListEmpresas(ctx, store.ListFilter{})
			if err != nil || len(page.Items) != c.want {
				t.Errorf("%s lists %v, %v; want %d companies", c.name, page, err, c.want)
			}
		}
	})
}
