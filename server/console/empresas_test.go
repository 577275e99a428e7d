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
	signIn := f.tokenConsole(t)

	// A key, a token and a company's own admin stay in their company.
	for _, cred := range []string{f.A.writeKey, "token-A", "token-admin-A"} {
		b := signIn(cred)
		if p := b.get(Prefix + "resumen"); strings.Contains(p.body, `href="/console/empresas"`) {
			t.Errorf("a non-admin is offered the companies: %s", p.body)
		}
		wantStatus(t, "the companies, not admin", b.get(Prefix+"empresas"), http.StatusForbidden)
		wantStatus(t, "a switch, not admin", b.post(Prefix+"empresas/cambiar", url.Values{"empresa": {f.B.id}}), http.StatusForbidden)
		wantStatus(t, "B's document after a refused switch", b.get(Prefix+"documentos/"+f.B.dte), http.StatusNotFound)
		wantStatus(t, "A's document", b.get(Prefix+"documentos/"+f.A.dte), http.StatusOK)
	}

	admin := signIn("token-operador-A")
	other := signIn("token-operador-A")
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

// tokenConsole is a console over the fixture's service that also takes
// bearer tokens, as the server's Authenticate does: "token-operador-A" is
// the server operator's (of company A), "token-admin-A" company A's own
// admin's, "token-A" a token of A without a role; keys
// resolve as Keys.Authenticate does. It returns how to sign in to it.
func (f *fixture) tokenConsole(t *testing.T) func(cred string) *browser {
	auth := func(ctx context.Context, cred string) (*api.Principal, error) {
		switch cred {
		case "token-operador-A":
			return &api.Principal{EmpresaID: f.A.id, Credential: "jwt:" + f.A.id + ":operador", Write: true, Admin: true, Operator: true}, nil
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

	return signIn
}

// rutF is the company whose mail an admin sets; its check digit by hand
// from the right: 2·2+2·3+2·4+2·5+2·6+2·7+6·2+7·3 = 87, 87 mod 11 = 10,
// 11−10 = 1.
const rutF = "76222222-1"

// Mail settings: only an admin changes them (as PUT /empresa/correo);
// the refusals stand beside their fields, a password is never shown,
// and one left empty keeps the one on record.
func (f *fixture) testCorreo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	signIn := f.tokenConsole(t)
	e, err := f.b.Company.Create(ctx, api.EmpresaInput{Rut: rutF, RazonSocial: "Empresa F", Giro: "Comercio", Direccion: "Calle 6",
		Comuna: "Santiago", Ciudad: "Santiago", Ambiente: "certificacion", FechaResolucion: "2014-08-22", Acteco: []int{620200}})
	if err != nil {
		t.Fatal(err)
	}
	for _, cred := range []string{f.A.writeKey, "token-A"} {
		b := signIn(cred)
		if p := b.get(Prefix + "ajustes"); strings.Contains(p.body, `action="/console/ajustes/correo"`) {
			t.Errorf("a non-admin is offered the mail form: %s", p.body)
		}
		wantStatus(t, "mail settings, not admin", b.post(Prefix+"ajustes/correo", url.Values{"correo_direccion": {"x@example.com"}}), http.StatusForbidden)
	}
	if c, _ := f.b.Mail.Settings(ctx, f.A.id); c.Direccion == "x@example.com" {
		t.Fatal("a non-admin changed the mail settings")
	}
	admin := signIn("token-operador-A")
	admin.get(Prefix + "empresas")
	if p := admin.post(Prefix+"empresas/cambiar", url.Values{"empresa": {e.ID}}); p.status != http.StatusSeeOther {
		t.Fatalf("the switch: %d %s", p.status, p.body)
	}
	wantStatus(t, "Ajustes", admin.get(Prefix+"ajustes"), http.StatusOK)
	form := url.Values{"correo_direccion": {"dte@empresa-f.cl"}, "correo_enviar_dte": {"firmado"}, "correo_smtp_host": {"smtp.example.com"},
		"correo_smtp_port": {"quinientos"}, "correo_smtp_seguridad": {"starttls"}, "correo_smtp_usuario": {"dte"}, "correo_smtp_password": {"s3creto-no-visible"}}
	p := admin.post(Prefix+"ajustes/correo", form)
	wantStatus(t, "a port that is no number", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="correo_smtp_port-error"`) || strings.Contains(p.body, "s3creto-no-visible") || !strings.Contains(p.body, `value="quinientos"`) {
		t.Errorf("the refusal: %s", p.body)
	}
	form.Set("correo_smtp_port", "587")
	form.Set("correo_smtp_seguridad", "none")
	p = admin.post(Prefix+"ajustes/correo", form)
	wantStatus(t, "no encryption to a remote host", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="correo_smtp_seguridad-error"`) || strings.Contains(p.body, "s3creto-no-visible") {
		t.Errorf("the face's refusal: %s", p.body)
	}
	if c, _ := f.b.Mail.Settings(ctx, e.ID); c.SMTP != nil {
		t.Fatalf("a refused form saved: %+v", c)
	}
	form.Set("correo_smtp_seguridad", "starttls")
	if p = admin.post(Prefix+"ajustes/correo", form); p.status != http.StatusSeeOther {
		t.Fatalf("saving: %d %s", p.status, p.body)
	}
	c, err := f.b.Mail.Settings(ctx, e.ID)
	if err != nil || c.Direccion != "dte@empresa-f.cl" || c.EnviarDTE != api.EnviarAlFirmar || c.SMTP == nil || c.SMTP.Host != "smtp.example.com" ||
		c.SMTP.Port != 587 || !c.SMTP.PasswordSet || c.AcuseAutomatico == nil || *c.AcuseAutomatico || c.IMAP != nil {
		t.Fatalf("the saved settings: %+v %v", c, err)
	}
	p = admin.get(Prefix + "ajustes")
	if strings.Contains(p.body, "s3creto-no-visible") || !strings.Contains(p.body, `id="correo_smtp_host" name="correo_smtp_host" value="smtp.example.com"`) {
		t.Errorf("Ajustes after saving: %s", p.body)
	}
	// Saved again without a password: the one on record stays.
	form.Del("correo_smtp_password")
	form.Set("acuse_automatico", "si")
	if p = admin.post(Prefix+"ajustes/correo", form); p.status != http.StatusSeeOther {
		t.Fatalf("saving again: %d %s", p.status, p.body)
	}
	if c, _ = f.b.Mail.Settings(ctx, e.ID); !c.SMTP.PasswordSet || !*c.AcuseAutomatico {
		t.Fatalf("after saving without a password: %+v", c.SMTP)
	}
}
