package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// sessionID is a session's key as the console stores it: 64 hex digits.
func sessionID(n int) string { return fmt.Sprintf("%064x", n) }

// testConsoleSession: a session round-trips, is touched, switched and
// deleted by its key alone; InsertConsoleSession closes the company's
// oldest live session beyond its bound, never another company's, and
// refuses one beyond the total; expired sessions count for neither bound
// and are purged a bounded number at a time.
func (h *harness) testConsoleSession(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78555555-5")
	b := empresa(t, s, "78666666-6")
	c := empresa(t, s, "78777777-7")
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	bounds := store.ConsoleSessionBounds{PerCompany: 2, Total: 3, IdleBefore: t0.Add(-30 * time.Minute), CreatedBefore: t0.Add(-12 * time.Hour)}
	insert := func(id string, e *store.Empresa, at time.Time, b store.ConsoleSessionBounds) (*store.ConsoleSession, error) {
		sess := &store.ConsoleSession{ID: id, EmpresaID: e.ID, SealedCredential: []byte("sealed-" + id[60:]), CSRF: "csrf-" + id[60:],
			CreatedAt: at, LastSeen: at}
		return sess, s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertConsoleSession(ctx, sess, b) })
	}
	get := func(id string) *store.ConsoleSession {
		t.Helper()
		got, err := s.GetConsoleSession(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	a1, err := insert(sessionID(1), a, t0, bounds)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "GetConsoleSession", get(a1.ID), a1)
	if get(sessionID(99)) != nil {
		t.Error("a session never stored was found")
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.TouchConsoleSession(ctx, a1.ID, t0.Add(time.Minute)), tx.SwitchConsoleSession(ctx, a1.ID, b.ID))
	})
	a1.LastSeen, a1.Actua = t0.Add(time.Minute), b.ID
	same(t, "GetConsoleSession after Touch and Switch", get(a1.ID), a1)
	for name, fn := range map[string]func(tx store.Tx) error{
		"Touch":  func(tx store.Tx) error { return tx.TouchConsoleSession(ctx, sessionID(99), t0) },
		"Switch": func(tx store.Tx) error { return tx.SwitchConsoleSession(ctx, sessionID(99), "") },
	} {
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return fn(tx) })
		wantErr(t, err, store.ErrNotFound, name+" of no session")
	}
	_, err = insert(a1.ID, a, t0, bounds)
	wantConflict(t, err, store.ConstraintPrimaryKey, "a used session id")
	_, err = insert(sessionID(98), &store.Empresa{ID: "no-such-empresa"}, t0, bounds)
	wantErr(t, err, store.ErrNotFound, "a session of no company")

	// A's third session closes its first, and only it; B's session fills
	// the total, which C (with none to close) cannot pass.
	a2, _ := insert(sessionID(2), a, t0.Add(time.Second), bounds)
	b1, _ := insert(sessionID(3), b, t0.Add(2*time.Second), bounds)
	a3, err := insert(sessionID(4), a, t0.Add(3*time.Second), bounds)
	if err != nil {
		t.Fatal(err)
	}
	if get(a1.ID) != nil || get(a2.ID) == nil || get(a3.ID) == nil || get(b1.ID) == nil {
		t.Error("A's third session must close A's first and keep the rest")
	}
	_, err = insert(sessionID(5), c, t0.Add(4*time.Second), bounds)
	wantErr(t, err, store.ErrConsoleSessionsFull, "a session beyond the total")
	if get(sessionID(5)) != nil {
		t.Error("a refused session was stored")
	}

	// Half an hour later A's and B's sessions are idle: they count for
	// no bound, and C signs in.
	later := bounds
	later.IdleBefore = t0.Add(10 * time.Second)
	if _, err := insert(sessionID(6), c, t0.Add(31*time.Minute), later); err != nil {
		t.Fatalf("a session beside expired ones: %v", err)
	}
	// Created too long ago counts as expired too, whatever LastSeen.
	var purged []int
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for range 3 {
			n, err := tx.PurgeConsoleSessions(ctx, t0.Add(10*time.Second), time.Time{}, 2)
			if err != nil {
				return err
			}
			purged = append(purged, n)
		}
		return nil
	})
	same(t, "sessions purged two at a time", purged, []int{2, 1, 0})
	if get(sessionID(6)) == nil || get(a2.ID) != nil {
		t.Error("the purge took a live session or left an expired one")
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.TouchConsoleSession(ctx, sessionID(6), t0.Add(13*time.Hour)); err != nil {
			return err
		}
		n, err := tx.PurgeConsoleSessions(ctx, time.Time{}, t0.Add(time.Hour), 10)
		if n != 1 {
			t.Errorf("a session created over the life bound: %d purged", n)
		}
		return err
	})

	// Deleting is by key; a key unknown is no error.
	b2, _ := insert(sessionID(7), b, t0.Add(time.Hour), store.ConsoleSessionBounds{PerCompany: 2, Total: 3})
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return errors.Join(tx.DeleteConsoleSession(ctx, b2.ID), tx.DeleteConsoleSession(ctx, sessionID(99)))
	})
	if get(b2.ID) != nil {
		t.Error("a deleted session was found")
	}
	if !strings.HasPrefix(string(b2.SealedCredential), "sealed-") {
		t.Fatal("the fixture's sealed credential")
	}
}

// testConsoleSessionConcurrent: sign-ins of one company at once keep its
// bound.
func (h *harness) testConsoleSessionConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "78888888-8")
	const n, bound = 8, 3
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertConsoleSession(ctx, &store.ConsoleSession{ID: sessionID(100 + i), EmpresaID: a.ID, CSRF: "x"},
					store.ConsoleSessionBounds{PerCompany: bound, Total: 100})
			})
		})
	}
	wg.Wait()
	live := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("sign-in %d: %v", i, errs[i])
		}
		if _, err := s.GetConsoleSession(ctx, sessionID(100+i)); err == nil {
			live++
		}
	}
	if live != bound {
		t.Errorf("%d sign-ins at once left %d sessions, want %d", n, live, bound)
	}
}
