package console

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/store"
)

// sessionStore is a billing service over a new SQLite store with
// three companies, for the session table's own tests.
func sessionStore(t *testing.T) (*billing.Service, store.Store, [3]string) {
	t.Helper()
	st := billingtest.SQLite.NewStore(t)
	b := billingtest.NewService(t, st, billing.Config{Mail: billing.MailConfig{Off: true}})
	var ids [3]string
	for i, rut := range []string{"76086428-5", rutB, "78555555-5"} {
		e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Ambiente: "certificacion"}
		if err := st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	return b, st, ids
}

// Sessions end after their idle time and their lifetime, whichever
// comes first; a company's sessions beyond its bound close its oldest,
// never another company's; the table's total refuses a new one.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b, st, co := sessionStore(t)
	A, B, C := co[0], co[1], co[2]
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := newSessions(b.ConsoleSessions, 30*time.Minute, 2*time.Hour)
	open := func(emp string, at time.Time) string {
		t.Helper()
		id, _, err := s.open(ctx, "k", emp, at)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	live := func(id string, at time.Time) bool {
		t.Helper()
		got, err := s.get(ctx, id, at)
		if err != nil {
			t.Fatal(err)
		}
		return got != nil
	}
	id := open(A, t0)
	// Its use is recorded at most once a minute: read from the store
	// by the id's SHA-256, spelled out here.
	lastSeen := func() time.Time {
		t.Helper()
		sum := sha256.Sum256([]byte(id))
		row, err := st.GetConsoleSession(ctx, hex.EncodeToString(sum[:]))
		if err != nil {
			t.Fatal(err)
		}
		return row.LastSeen
	}
	for _, d := range []time.Duration{time.Second, 30 * time.Second, 59 * time.Second} {
		if !live(id, t0.Add(d)) || !lastSeen().Equal(t0) {
			t.Fatalf("a use %v after sign-in wrote its time: %v", d, lastSeen())
		}
	}
	if !live(id, t0.Add(61*time.Second)) || !lastSeen().Equal(t0.Add(61*time.Second)) {
		t.Fatalf("a use a minute after sign-in: last seen %v", lastSeen())
	}
	if !live(id, t0.Add(29*time.Minute)) {
		t.Fatal("a session used within its idle time")
	}
	// Kept alive every 29 minutes, it still ends at its lifetime.
	at := t0.Add(29 * time.Minute)
	for at.Sub(t0) < 2*time.Hour {
		at = at.Add(29 * time.Minute)
		if got := live(id, at); got != (at.Sub(t0) <= 2*time.Hour) {
			t.Fatalf("at +%v: session %v", at.Sub(t0), got)
		}
	}
	id2 := open(A, t0)
	if live(id2, t0.Add(31*time.Minute)) {
		t.Fatal("a session idle for 31 minutes is still open")
	}
	if live("", t0) || live(strings.Repeat("x", 200), t0) {
		t.Fatal("an empty or oversized id found a session")
	}

	s = newSessions(b.ConsoleSessions, 0, 0)
	s.lim.PerCompany, s.lim.Total = 2, 3
	t1 := t0.Add(24 * time.Hour) // every earlier session has expired
	b1 := open(B, t1)
	a1 := open(A, t1.Add(time.Second))
	a2 := open(A, t1.Add(2*time.Second))
	a3 := open(A, t1.Add(3*time.Second))
	if live(a1, t1.Add(4*time.Second)) || !live(a2, t1.Add(4*time.Second)) || !live(a3, t1.Add(4*time.Second)) || !live(b1, t1.Add(4*time.Second)) {
		t.Fatal("A's third session must close A's first, and only it")
	}
	if _, _, err := s.open(ctx, "k", C, t1.Add(5*time.Second)); !errors.Is(err, billing.ErrConsoleSessionsFull) {
		t.Fatalf("a full table took a session: %v", err)
	}
}

// Sign-in attempts are limited per client address (before the
// credential is looked at), with Retry-After.
func TestSignInRateLimit(t *testing.T) {
	t.Parallel()
	c, err := New(Config{Billing: nil, Authenticate: nil})
	if err == nil || c != nil {
		t.Fatal("New without Billing and Authenticate")
	}
	c = &Console{auth: nil, sessions: newSessions(nil, 0, 0), now: time.Now}
	c.signIn = newSignInLimit(6) // a burst of 5, then one each 10 s
	if err := c.parseTemplates(); err != nil {
		t.Fatal(err)
	}
	c.routes()
	srv := httptest.NewServer(c)
	defer srv.Close()
	b := newBrowser(t, srv.URL)
	var last page
	for range 6 {
		b.get(Prefix + "ingresar")
		last = b.post(Prefix+"ingresar", url.Values{"credencial": {""}})
	}
	if last.status != http.StatusTooManyRequests || last.header.Get("Retry-After") == "" {
		t.Fatalf("the sixth attempt: %d %v", last.status, last.header)
	}
}
