package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// TestGroupFailingFirst queues Writes behind one that holds the writer, so
// that they share the next commit, the first of them failing (by error,
// then by panic): it alone is undone and reaches its caller; the others
// commit.
func TestGroupFailingFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e := &store.Empresa{Rut: "76192083-9", Ambiente: "certificacion"}
	if err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	insert := func(ctx context.Context, tx store.Tx, rut string) error {
		return tx.InsertCliente(ctx, &store.Cliente{EmpresaID: e.ID, Rut: rut, RazonSocial: "c"})
	}
	errWanted := errors.New("wanted failure")
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			hold, holding := make(chan struct{}), make(chan struct{})
			var wg sync.WaitGroup
			outcomes := make([]string, 4)
			write := func(i int, fn func(ctx context.Context, tx store.Tx) error) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						if p := recover(); p != nil {
							outcomes[i] = fmt.Sprint("panic: ", p)
						}
					}()
					if err := s.Write(ctx, fn); err != nil {
						outcomes[i] = err.Error()
						return
					}
					outcomes[i] = "ok"
				}()
			}
			rut := func(i int) string { return fmt.Sprintf("%s-%d", how, i) }
			write(0, func(ctx context.Context, tx store.Tx) error {
				close(holding)
				<-hold
				return insert(ctx, tx, rut(0))
			})
			<-holding
			// Queued in this order while the writer is held: they form the
			// next batch, the failing one first.
			write(1, func(ctx context.Context, tx store.Tx) error {
				if err := insert(ctx, tx, rut(1)); err != nil {
					return err
				}
				if how == "panic" {
					panic("wanted panic")
				}
				return errWanted
			})
			time.Sleep(20 * time.Millisecond)
			for i := 2; i < 4; i++ {
				write(i, func(ctx context.Context, tx store.Tx) error { return insert(ctx, tx, rut(i)) })
				time.Sleep(20 * time.Millisecond)
			}
			close(hold)
			wg.Wait()
			want := []string{"ok", errWanted.Error(), "ok", "ok"}
			if how == "panic" {
				want[1] = "panic: wanted panic"
			}
			for i := range 4 {
				if outcomes[i] != want[i] {
					t.Errorf("write %d: %q, want %q", i, outcomes[i], want[i])
				}
				_, err := s.GetClienteByRut(ctx, e.ID, rut(i))
				if stored := err == nil; stored != (want[i] == "ok") {
					t.Errorf("write %d (%s): stored %v (%v)", i, want[i], stored, err)
				}
			}
		})
	}
}
