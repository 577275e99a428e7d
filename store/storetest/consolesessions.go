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

// testConsoleSessionConcurrent: sign-ins at once keep both bounds. Those
// of one company keep its bound; those of different companies keep the
// total, which on PostgreSQL each transaction would otherwise count
// before any of the others commits (READ COMMITTED); and a mix of both
// keeps both. Each round's sessions are idle for the next one's bounds,
// so the rounds share one database.
func (h *harness) testConsoleSessionConcurrent(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	next := 100
	// signIns opens, all at once, one session for each company listed
	// (a company listed twice signs in twice), at the round's hour, and
	// returns each one's ID and outcome.
	signIns := func(round int, of []*store.Empresa, perCompany, total int) ([]string, []error) {
		at := t0.Add(time.Duration(round) * time.Hour)
		b := store.ConsoleSessionBounds{PerCompany: perCompany, Total: total, IdleBefore: at.Add(-30 * time.Minute)}
		ids, errs := make([]string, len(of)), make([]error, len(of))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, e := range of {
			ids[i] = sessionID(next)
			next++
			wg.Go(func() {
				<-start
				errs[i] = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
					return tx.InsertConsoleSession(ctx, &store.ConsoleSession{ID: ids[i], EmpresaID: e.ID, CSRF: "x", CreatedAt: at, LastSeen: at}, b)
				})
			})
		}
		close(start)
		wg.Wait()
		return ids, errs
	}
	// tally counts the stored sessions among ids, per company, and the
	// sign-ins refused for the total; any other error fails the test.
	tally := func(what string, of []*store.Empresa, ids []string, errs []error) (live int, per map[string]int, full int) {
		t.Helper()
		per = map[string]int{}
		for i, id := range ids {
			switch {
			case errors.Is(errs[i], store.ErrConsoleSessionsFull):
				full++
			case errs[i] != nil:
				t.Errorf("%s: sign-in %d: %v", what, i, errs[i])
			}
			got, err := s.GetConsoleSession(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.EmpresaID != of[i].ID {
				t.Errorf("%s: session %d belongs to %q, want %q", what, i, got.EmpresaID, of[i].ID)
			}
			live++
			per[got.EmpresaID]++
		}
		return live, per, full
	}

	// One company, 8 sign-ins, its bound 3: the last three stay.
	a := empresa(t, s, "78888888-8")
	ids, errs := signIns(0, []*store.Empresa{a, a, a, a, a, a, a, a}, 3, 100)
	if live, _, full := tally("one company", []*store.Empresa{a, a, a, a, a, a, a, a}, ids, errs); live != 3 || full != 0 {
		t.Errorf("8 sign-ins of one company at once left %d sessions (%d refused), want 3 (0)", live, full)
	}

	// Ten companies, one sign-in each, the total 4: exactly 4 are stored
	// and the other 6 refused.
	var ten []*store.Empresa
	for i := range 10 {
		ten = append(ten, empresa(t, s, fmt.Sprintf("7710000%d-%d", i, i)))
	}
	ids, errs = signIns(1, ten, 2, 4)
	if live, _, full := tally("ten companies", ten, ids, errs); live != 4 || full != 6 {
		t.Errorf("10 companies signing in at once under a total of 4: %d stored, %d refused; want 4 and 6", live, full)
	}

	// Four companies, four sign-ins each, a company's bound 2 and the
	// total 5. The total only grows (a company at its bound closes one
	// for each it opens), and 8 sessions could be kept, so it reaches 5
	// exactly; no company keeps more than 2.
	var mix []*store.Empresa
	for range 4 {
		mix = append(mix, ten[:4]...)
	}
	ids, errs = signIns(2, mix, 2, 5)
	live, per, _ := tally("four companies", mix, ids, errs)
	if live != 5 {
		t.Errorf("16 sign-ins of 4 companies at once under a total of 5 left %d sessions", live)
	}
	for id, n := range per {
		if n > 2 {
			t.Errorf("company %s kept %d sessions, its bound is 2", id, n)
		}
	}
}
