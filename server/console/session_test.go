package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Sessions end after their idle time and their lifetime, whichever
// comes first; a company's sessions beyond its bound close its oldest,
// never another company's.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := newSessions(30*time.Minute, 2*time.Hour)
	id, _, ok := s.open("k", "A", t0)
	if !ok || s.get(id, t0.Add(29*time.Minute)) == nil {
		t.Fatal("a session used within its idle time")
	}
	// Kept alive every 29 minutes, it still ends at its lifetime.
	at := t0.Add(29 * time.Minute)
	for at.Sub(t0) < 2*time.Hour {
		at = at.Add(29 * time.Minute)
		if got := s.get(id, at); (got != nil) != (at.Sub(t0) <= 2*time.Hour) {
			t.Fatalf("at +%v: session %v", at.Sub(t0), got != nil)
		}
	}
	id2, _, _ := s.open("k", "A", t0)
	if s.get(id2, t0.Add(31*time.Minute)) != nil {
		t.Fatal("a session idle for 31 minutes is still open")
	}
	if s.get("", t0) != nil || s.get(strings.Repeat("x", 200), t0) != nil {
		t.Fatal("an empty or oversized id found a session")
	}

	s = newSessions(0, 0)
	s.perCompany, s.max = 2, 3
	b1, _, _ := s.open("k", "B", t0)
	a1, _, _ := s.open("k", "A", t0.Add(time.Second))
	a2, _, _ := s.open("k", "A", t0.Add(2*time.Second))
	a3, _, ok := s.open("k", "A", t0.Add(3*time.Second))
	if !ok || s.get(a1, t0.Add(4*time.Second)) != nil || s.get(a2, t0.Add(4*time.Second)) == nil ||
		s.get(a3, t0.Add(4*time.Second)) == nil || s.get(b1, t0.Add(4*time.Second)) == nil {
		t.Fatal("A's third session must close A's first, and only it")
	}
	if _, _, ok := s.open("k", "C", t0.Add(5*time.Second)); ok {
		t.Fatal("a full table took a session")
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
	c = &Console{auth: nil, sessions: newSessions(0, 0), now: time.Now}
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
