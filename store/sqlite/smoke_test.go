package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

type hello struct {
	N int `json:"n"`
}

func (hello) Kind() string { return "hello" }

func smoke(t *testing.T, s store.Store) {
	ctx := context.Background()
	e := &store.Empresa{Rut: "76000000-0", Ambiente: "certificacion", RazonSocial: "X"}
	done := make(chan int, 10)
	if err := s.Jobs().Register(store.Worker{Kind: "hello", Work: func(ctx context.Context, j *store.Job) error {
		a, err := store.DecodeArgs[hello](j)
		done <- a.N
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		if err := tx.InsertCAF(ctx, &store.CAF{EmpresaID: e.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 10, IsActive: true}); err != nil {
			return err
		}
		c, f, err := tx.TakeFolio(ctx, e.ID, 33)
		if err != nil {
			return err
		}
		t.Logf("caf %s folio %d left %d", c.ID, f, c.FoliosDisponibles())
		_, err = tx.Enqueue(ctx, hello{N: 7}, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetEmpresa(ctx, e.ID)
	t.Logf("%+v %v", got, err)
	if err := s.Jobs().Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-done:
		t.Logf("job ran %d", n)
	case <-time.After(10 * time.Second):
		t.Fatal("job never ran")
	}
	p, err := s.ListCAFs(ctx, e.ID, 0)
	t.Logf("%+v %v", p, err)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSmokeSQLite(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), &sqlite.Options{Jobs: store.JobsConfig{PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	smoke(t, s)
}

func TestSmokePG(t *testing.T) {
	s, err := postgres.Open(context.Background(), pgtest.URL(t), &postgres.Options{Jobs: store.JobsConfig{PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	smoke(t, s)
}
