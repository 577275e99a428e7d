package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
)

// An admin's credential switches company: its pages then show and act
// for that company only, and no other session moves with it. A key or a
// token without the admin role is refused and stays in its company.
func (f *fixture) testEmpresas(t *testing.T) {
	t.Parallel()
	// The console over the fixture's service with bearer tokens: the
	// server's Authenticate gives an admin's token Admin, a plain
	// token only Write, and resolves keys as Keys.Authenticate does.
	auth := func(ctx context.Context, cred string) (*api.Principal, error) {
		switch cred {
		case "token-admin-A":
			return &api.Principal{EmpresaID: f.A.id, Credential: "jwt:" + f.A.id + ":admin", Write: true, Admin: true}, nil
		case "token-A":
			return &api.Principal{EmpresaID: f.A.id, Credential: "jwt:" + f.A.id + ":op", Write: true}, nil
		}
		return f.b.Keys.Authenticate(ctx, cred)
	}
	c, err := New(Config{Billing: f.b, Authenticate: auth, PerSecond: -1, SignInPerMinute: 60000})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	signIn := func(cred string) *browser {
		b := newBrowser(t, srv.URL)
		if p := b.signIn(cred); p.status != http.StatusSeeOther {
			t.Fatalf("sign-in: %d %s", p.status, p.body)
		}
		b.get(Prefix + "resumen")
		return b
	}

	for _, cred := range []string{f.A.writeKey, "token-A"} {
		b := signIn(cred)
		if p := b.get(Prefix + "resumen"); strings.Contains(p.body, `href="/console/empresas"`) {
			t.Errorf("a non-admin is offered the companies: %s", p.body)
		}
		wantStatus(t, "the companies, not admin", b.get(Prefix+"empresas"), http.StatusForbidden)
		wantStatus(t, "a switch, not admin", b.post(Prefix+"empresas/cambiar", url.Values{"empresa": {f.B.id}}), http.StatusForbidden)
		wantStatus(t, "B's document after a refused switch", b.get(Prefix+"documentos/"+f.B.dte), http.StatusNotFound)
		wantStatus(t, "A's document", b.get(Prefix+"documentos/"+f.A.dte), http.StatusOK)
	}

	admin := signIn("token-admin-A")
	other := signIn("token-admin-A")
	p := admin.get(Prefix + "empresas")
	wantStatus(t, "the companies", p, http.StatusOK)
	if !strings.Contains(p.body, rutB) || !strings.Contains(p.body, `name="empresa" value="`+f.B.id+`"`) || strings.Contains(p.body, `name="empresa" value="`+f.A.id+`"`) {
		t.Fatalf("the admin's list: %s", p.body)
	}
	wantStatus(t, "a switch to no company", admin.post(Prefix+"empresas/cambiar", url.Values{"empresa": {newUUID()}}), http.StatusNotFound)
	wantStatus(t, "a switch to no id", admin.post(Prefix+"empresas/cambiar", url.Values{"empresa": {"x"}}), http.StatusBadRequest)
	wantStatus(t, "a switch without a token", admin.post(Prefix+"empresas/cambiar", url.Values{"empresa": {f.B.id}, "csrf": {""}}), http.StatusForbidden)
	wantStatus(t, "B's document before the switch", admin.get(Prefix+"documentos/"+f.B.dte), http.StatusNotFound)
	if p = admin.post(Prefix+"empresas/cambiar", url.Values{"empresa": {f.B.id}}); p.status != http.StatusSeeOther {
		t.Fatalf("the switch: %d %s", p.status, p.body)
	}
	p = admin.get(Prefix + "resumen")
	if !strings.Contains(p.body, "Empresa B de Prueba · "+rutB) {
		t.Errorf("after the switch the header names: %s", p.body)
	}
	wantStatus(t, "B's document after the switch", admin.get(Prefix+"documentos/"+f.B.dte), http.StatusOK)
	wantStatus(t, "A's document after the switch", admin.get(Prefix+"documentos/"+f.A.dte), http.StatusNotFound)
	// The other session of the same token stays in A.
	wantStatus(t, "B's document from the other session", other.get(Prefix+"documentos/"+f.B.dte), http.StatusNotFound)
	wantStatus(t, "A's document from the other session", other.get(Prefix+"documentos/"+f.A.dte), http.StatusOK)
}
