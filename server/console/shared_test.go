package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/store"
)

// Two consoles, each over a billing service and a store of their own on
// the fixture's one database, as two processes behind a load balancer: a browser signed
// in on one is signed in on the other, its form token holds there, a
// sign-out on the second ends the session on the first, and a key
// revoked through one ends its session on the other. A session of A
// never shows B's pages on either, and the stored row keys the session
// by the SHA-256 of the cookie and holds the credential sealed only.
func (f *fixture) testSharedSessions(t *testing.T) {
	// Not parallel: it creates and revokes A's keys, which AjustesClaves
	// counts while it runs. A subtest that does not call t.Parallel runs
	// alone, before the parallel ones resume.
	ctx := context.Background()
	st2, err := f.be.Open(ctx, f.dsn, store.JobsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st2.Close() })
	b2 := billingtest.NewService(t, st2, billing.Config{Mail: billing.MailConfig{Off: true}})
	c2, err := New(Config{Billing: b2, Authenticate: b2.Keys.Authenticate, PerSecond: -1, SignInPerMinute: 60000})
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(c2)
	t.Cleanup(srv2.Close)
	one, two := f.srv.URL, srv2.URL

	// Cookies are kept per host, not per port: one browser's session
	// travels to both servers, and base says which one it asks.
	k := f.createKeyA(t, true)
	b := f.session(t, k.Key) // on the first
	sid := sessionCookie(t, b, one)
	b.base = two
	wantStatus(t, "the second server's Resumen", b.get(Prefix+"resumen"), http.StatusOK)
	wantStatus(t, "A's document on the second", b.get(Prefix+"documentos/"+f.A.dte), http.StatusOK)
	wantStatus(t, "B's document on the second", b.get(Prefix+"documentos/"+f.B.dte), http.StatusNotFound)

	// The row: keyed by the cookie's SHA-256, hex (written here by hand,
	// not by the code under test's function), never by the cookie.
	sum := sha256.Sum256([]byte(sid))
	key := hex.EncodeToString(sum[:])
	if _, err := f.st.GetConsoleSession(ctx, sid); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a row keyed by the cookie itself: %v", err)
	}
	row, err := f.st.GetConsoleSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	cred := []byte(k.Key)
	for name, field := range map[string][]byte{"id": []byte(row.ID), "empresa_id": []byte(row.EmpresaID), "actua": []byte(row.Actua),
		"sealed_credential": row.SealedCredential, "csrf": []byte(row.CSRF)} {
		if bytes.Contains(field, cred) || bytes.Contains(field, cred[len(cred)-16:]) || bytes.Contains(field, []byte(sid)) {
			t.Errorf("the stored %s holds the credential or the cookie", name)
		}
	}
	if row.EmpresaID != f.A.id || len(row.SealedCredential) < len(cred)+16 {
		t.Errorf("the stored row: empresa %q, %d sealed bytes", row.EmpresaID, len(row.SealedCredential))
	}
	// Sealed under the database's key, bound to the company and the row:
	// the associated data spelled out here.
	kr, err := billing.NewKeyring(billingtest.KEK)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kr.Open(row.SealedCredential, []byte("dtekit/console_session/"+f.A.id+"/"+key)); err != nil || string(got) != k.Key {
		t.Errorf("the sealed credential does not open to the key: %v", err)
	}
	if _, err := kr.Open(row.SealedCredential, []byte("dtekit/console_session/"+f.B.id+"/"+key)); err == nil {
		t.Error("the sealed credential opens as B's")
	}

	// On SQLite, the database's files (the write-ahead log included)
	// hold neither the key nor the cookie anywhere (and do hold the
	// row's id: the files read are the database's).
	if f.be.Name == billingtest.SQLite.Name {
		seen := false
		for _, name := range []string{f.dsn, f.dsn + "-wal"} {
			raw, err := os.ReadFile(name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			if bytes.Contains(raw, cred) || bytes.Contains(raw, []byte(sid)) {
				t.Errorf("%s holds the credential or the cookie in clear", name)
			}
			seen = seen || bytes.Contains(raw, []byte(key))
		}
		if !seen {
			t.Error("the database's files do not hold the session's row")
		}
	}

	// B's session, opened on the second, is B's on the first.
	bb := newBrowser(t, two)
	if p := bb.signIn(f.B.readKey); p.status != http.StatusSeeOther {
		t.Fatalf("B's sign-in on the second: %d", p.status)
	}
	bb.base = one
	wantStatus(t, "B's document on the first", bb.get(Prefix+"documentos/"+f.B.dte), http.StatusOK)
	wantStatus(t, "A's document for B on the first", bb.get(Prefix+"documentos/"+f.A.dte), http.StatusNotFound)

	// A form whose page came from the first is taken by the second: the
	// sign-out there ends the session on both.
	b.base = one
	b.get(Prefix + "resumen")
	b.base = two
	if p := b.post(Prefix+"salir", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"ingresar" {
		t.Fatalf("sign-out on the second: %d %.300s", p.status, p.body)
	}
	old := newBrowser(t, one)
	u, _ := url.Parse(one + Prefix)
	old.c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookieName, Value: sid, Path: Prefix}})
	if p := old.get(Prefix + "resumen"); p.status != http.StatusSeeOther {
		t.Fatalf("the first server after the sign-out on the second: %d", p.status)
	}
	if _, err := f.st.GetConsoleSession(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the signed-out session's row: %v", err)
	}

	// A key revoked through the first ends its session on the second at
	// its next request.
	k2 := f.createKeyA(t, false)
	br := f.session(t, k2.Key)
	br.base = two
	wantStatus(t, "the second session on the second", br.get(Prefix+"resumen"), http.StatusOK)
	if err := f.b.Keys.Revoke(ctx, f.A.id, k2.ID); err != nil {
		t.Fatal(err)
	}
	if p := br.get(Prefix + "resumen"); p.status != http.StatusSeeOther {
		t.Fatalf("a revoked key's session on the other server: %d", p.status)
	}
}

// sessionCookie is the browser's session cookie for base.
func sessionCookie(t *testing.T, b *browser, base string) string {
	t.Helper()
	u, _ := url.Parse(base + Prefix)
	for _, ck := range b.c.Jar.Cookies(u) {
		if ck.Name == sessionCookieName {
			return ck.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}
