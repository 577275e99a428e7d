package sqlite_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// BenchmarkWrite measures write transactions (take a folio, insert a
// document, enqueue a job) from parallel goroutines, in tx/s: concurrent
// transactions share a commit, and its fsync of the WAL, through the
// store's group commit. Figures: docs/performance.md.
//
//	go test -run '^$' -bench Write ./store/sqlite/
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), sqlite.FileName), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	e := &store.Empresa{Rut: "1-9", Ambiente: "certificacion"}
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		return tx.InsertCAF(ctx, &store.CAF{EmpresaID: e.ID, TipoDTE: 33, FolioDesde: 1, FolioHasta: 1 << 40, Ambiente: "certificacion", IsActive: true})
	})
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				c, f, err := tx.TakeFolio(ctx, e.ID, 33)
				if err != nil {
					return err
				}
				d := &store.DTE{EmpresaID: e.ID, TipoDTE: 33, Folio: f, CAFID: c.ID, Estado: store.EstadoPendiente,
					Request: make([]byte, 2000)}
				if err := tx.InsertDTE(ctx, d); err != nil {
					return err
				}
				_, err = tx.Enqueue(ctx, benchArgs{ID: d.ID}, nil)
				return err
			})
			if err != nil {
				b.Error(err)
				return
			}
			n.Add(1)
		}
	})
	b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "tx/s")
}

type benchArgs struct {
	ID string `json:"id"`
}

func (benchArgs) Kind() string { return "bench" }
