package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
)

// TestConsoleSignInWaitsOnlyForSignIns holds a sign-in's transaction open
// and checks what waits for it: another company's sign-in on the same
// database waits (the total is counted one sign-in at a time, which the
// conformance suite's ConsoleSessionConcurrent checks), and so does a
// purge of expired sessions alone (a sign-in's first step takes the turn
// before any row), while a sign-in in another schema of the same
// PostgreSQL database and a write to the signing-in company's own row do
// not.
func TestConsoleSignInWaitsOnlyForSignIns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	open := func() store.Store {
		st, err := postgres.Open(ctx, pgtest.URL(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	empresa := func(st store.Store, rut string) *store.Empresa {
		e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Ambiente: "certificacion", Acteco: []int64{620200}}
		if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		return e
	}
	bounds := store.ConsoleSessionBounds{PerCompany: 5, Total: 100}
	signIn := func(ctx context.Context, st store.Store, e *store.Empresa, n int, held func()) error {
		return st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			// As billing signs in: the expired sessions purged first.
			if _, err := tx.PurgeConsoleSessions(ctx, time.Time{}, time.Time{}, 10); err != nil {
				return err
			}
			err := tx.InsertConsoleSession(ctx, &store.ConsoleSession{ID: fmt.Sprintf("%064x", n), EmpresaID: e.ID, CSRF: "x"}, bounds)
			if err == nil && held != nil {
				held()
			}
			return err
		})
	}
	// done runs fn in a goroutine and reports its outcome.
	done := func(fn func() error) <-chan error {
		c := make(chan error, 1)
		go func() { c <- fn() }()
		return c
	}
	st, other := open(), open()
	a, b := empresa(st, "76111111-1"), empresa(st, "76222222-2")
	c := empresa(other, "76333333-3")

	holding, release := make(chan struct{}), make(chan struct{})
	first := done(func() error { return signIn(ctx, st, a, 1, func() { close(holding); <-release }) })
	select {
	case <-holding:
	case err := <-first:
		t.Fatalf("the first sign-in: %v", err)
	}
	waiting := done(func() error { return signIn(ctx, st, b, 2, nil) })
	purging := done(func() error {
		return st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.PurgeConsoleSessions(ctx, time.Time{}, time.Time{}, 10)
			return err
		})
	})

	// What must not wait gets ten seconds.
	quick, cancelQuick := context.WithTimeout(ctx, 10*time.Second)
	defer cancelQuick()
	if err := signIn(quick, other, c, 3, nil); err != nil {
		t.Errorf("a sign-in in another schema while one is open: %v", err)
	}
	a.Giro = "Otro giro"
	if err := st.Write(quick, func(ctx context.Context, tx store.Tx) error { return tx.UpdateEmpresa(ctx, a) }); err != nil {
		t.Errorf("updating the company signing in: %v", err)
	}
	// What waits has had 300 ms to end by mistake.
	time.Sleep(300 * time.Millisecond)
	pending := map[string]<-chan error{"a second sign-in": waiting, "a purge": purging}
	for what, ch := range pending {
		select {
		case err := <-ch:
			t.Errorf("%s ended (%v) while a sign-in was still open", what, err)
			delete(pending, what)
		default:
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the first sign-in: %v", err)
	}
	for what, ch := range pending {
		if err := <-ch; err != nil {
			t.Errorf("%s, once the first sign-in committed: %v", what, err)
		}
	}
}
