package console

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
)

// rutC is a third company's RUT, for the move to production, its check
// digit computed by hand from the right: 0·2+1·3+2·4+3·5+4·6+5·7+6·2+7·3
// = 118, 118 mod 11 = 8, 11−8 = 3.
const rutC = "76543210-3"

var (
	newKeyField    = regexp.MustCompile(`id="clave-nueva" readonly value="([^"]+)"`)
	newSecretField = regexp.MustCompile(`id="secreto-nuevo" readonly value="([^"]+)"`)
)

// Ajustes, read-only: the page shows the company and its keys and offers
// no form; every form posted anyway is refused and changes nothing.
func (f *fixture) testAjustesReadOnly(t *testing.T) {
	t.Parallel()
	f.keysA.Lock()
	defer f.keysA.Unlock()
	ctx := context.Background()
	keys, _ := f.b.Keys.List(ctx, f.A.id)
	b := f.session(t, f.A.readKey)
	p := b.get(Prefix + "ajustes")
	wantStatus(t, "Ajustes, read-only", p, http.StatusOK)
	if strings.Contains(p.body, `action="/console/ajustes/`) || !strings.Contains(p.body, "solo lectura") || !strings.Contains(p.body, "<h2>Claves de API</h2>") {
		t.Errorf("a read-only Ajustes: %s", p.body)
	}
	for path, form := range map[string]url.Values{"empresa": {"giro": {"Otro giro"}}, "ambiente": {"ambiente": {"produccion"}},
		"claves": {"escritura": {"si"}}, "claves/" + keys[0].ID + "/revocar": nil, "correo/probar": nil} {
		p := b.post(Prefix+"ajustes/"+path, form)
		wantStatus(t, "a read-only "+path, p, http.StatusForbidden)
		if !strings.Contains(p.body, "solo lectura") {
			t.Errorf("the 403 page of %s: %s", path, p.body)
		}
	}
	after, _ := f.b.Keys.List(ctx, f.A.id)
	e, _ := f.b.Company.Get(ctx, f.A.id)
	if len(after) != len(keys) || after[0].RevokedAt != nil || e.Giro == "Otro giro" || e.Ambiente != "certificacion" {
		t.Fatalf("after read-only forms: %d keys (was %d), %+v", len(after), len(keys), e)
	}
}

// Ajustes: the company's data is saved, a refused field shows its error
// beside it and saves nothing, outside text shows as text.
func (f *fixture) testAjustesEmpresa(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := f.session(t, f.A.writeKey)
	p := b.get(Prefix + "ajustes")
	for _, label := range []string{`<label for="razon_social">Razón social</label>`, `<label for="oficina_sii">Oficina del SII</label>`} {
		if !strings.Contains(p.body, label) {
			t.Errorf("no %s in %s", label, p.body)
		}
	}
	before, _ := f.b.Company.Get(ctx, f.A.id)
	p = b.post(Prefix+"ajustes/empresa", url.Values{"razon_social": {""}, "giro": {"Giro que no se guarda"}})
	wantStatus(t, "an empty razón social", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="razon_social-error"`) || !strings.Contains(p.body, `value="Giro que no se guarda"`) {
		t.Errorf("the refusal's page: %s", p.body)
	}
	if e, _ := f.b.Company.Get(ctx, f.A.id); e.Giro != before.Giro || e.RazonSocial != before.RazonSocial {
		t.Fatalf("a refused form changed the company: %+v", e)
	}
	giro := `Servicios <b>"informáticos"</b>`
	p = b.post(Prefix+"ajustes/empresa", url.Values{"giro": {giro}, "oficina_sii": {"Santiago Centro"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"ajustes?hecho=empresa" {
		t.Fatalf("saving: %d %s", p.status, p.body)
	}
	if e, _ := f.b.Company.Get(ctx, f.A.id); e.Giro != giro || e.OficinaSII != "Santiago Centro" || e.RazonSocial != before.RazonSocial {
		t.Fatalf("after saving: %+v", e)
	}
	p = b.get(p.header.Get("Location"))
	if !strings.Contains(p.body, "Datos de la empresa guardados") || strings.Contains(p.body, "<b>") ||
		!strings.Contains(p.body, `value="Servicios &lt;b&gt;&#34;informáticos&#34;&lt;/b&gt;"`) {
		t.Errorf("the saved page: %s", p.body)
	}
}

// Keys: a key is created and shown once, it authenticates with the
// permission asked for, and a revoked key stops at once; another
// company's key gives 404 and keeps working.
func (f *fixture) testAjustesClaves(t *testing.T) {
	t.Parallel()
	f.keysA.Lock()
	defer f.keysA.Unlock()
	ctx := context.Background()
	// A write key cannot mint keys: one that could would outlive its own
	// revocation.
	wk := f.session(t, f.A.writeKey)
	if p := wk.get(Prefix + "ajustes"); strings.Contains(p.body, `action="/console/ajustes/claves"`) {
		t.Errorf("a write key is offered the key form: %s", p.body)
	}
	before, _ := f.b.Keys.List(ctx, f.A.id)
	wantStatus(t, "a key created by a write key", wk.post(Prefix+"ajustes/claves", nil), http.StatusForbidden)
	if after, _ := f.b.Keys.List(ctx, f.A.id); len(after) != len(before) {
		t.Fatalf("a write key created a key: %d → %d", len(before), len(after))
	}
	b := f.tokenConsole(t)("token-admin-A")
	b.get(Prefix + "ajustes")
	p := b.post(Prefix+"ajustes/claves", nil)
	wantStatus(t, "creating a key", p, http.StatusOK)
	m := newKeyField.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no new key shown: %s", p.body)
	}
	pr, err := f.b.Keys.Authenticate(ctx, m[1])
	if err != nil || pr.EmpresaID != f.A.id || pr.Write {
		t.Fatalf("the new key: %+v %v", pr, err)
	}
	if p = b.get(Prefix + "ajustes"); strings.Contains(p.body, m[1]) {
		t.Fatal("the key is shown again")
	}
	p = b.post(Prefix+"ajustes/claves", url.Values{"escritura": {"si"}})
	w := newKeyField.FindStringSubmatch(p.body)
	if w == nil {
		t.Fatalf("no new write key shown: %s", p.body)
	}
	if pr, err := f.b.Keys.Authenticate(ctx, w[1]); err != nil || !pr.Write {
		t.Fatalf("the new write key: %+v %v", pr, err)
	}
	id := strings.TrimPrefix(pr.Credential, "apikey:")
	p = b.post(Prefix+"ajustes/claves/"+id+"/revocar", nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("revoking: %d %s", p.status, p.body)
	}
	if _, err := f.b.Keys.Authenticate(ctx, m[1]); err == nil {
		t.Fatal("the revoked key still authenticates")
	}
	// B's key, by id, from A's session.
	bk, err := f.b.Keys.Create(ctx, f.B.id, api.APIKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, "revoking B's key", b.post(Prefix+"ajustes/claves/"+bk.ID+"/revocar", nil), http.StatusNotFound)
	wantStatus(t, "revoking no key", b.post(Prefix+"ajustes/claves/no-es-un-id/revocar", nil), http.StatusNotFound)
	if _, err := f.b.Keys.Authenticate(ctx, bk.Key); err != nil {
		t.Fatalf("B's key after A's form: %v", err)
	}
	// CSRF: without the session's token nothing is created.
	before, _ = f.b.Keys.List(ctx, f.A.id)
	wantStatus(t, "creating without a token", b.post(Prefix+"ajustes/claves", url.Values{"csrf": {""}}), http.StatusForbidden)
	if after, _ := f.b.Keys.List(ctx, f.A.id); len(after) != len(before) {
		t.Fatalf("a form without a token created a key: %d → %d", len(before), len(after))
	}
}

// The move to production: refused without a resolution or a
// certificate, with each refusal beside its field, and done once both
// are there. Then the same company's logo.
func (f *fixture) testAjustesAmbiente(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := f.b.Company.Create(ctx, api.EmpresaInput{Rut: rutC, RazonSocial: "Empresa C", Giro: "Comercio", Direccion: "Calle 3",
		Comuna: "Santiago", Ciudad: "Santiago", Ambiente: "certificacion", FechaResolucion: "2014-08-22", Acteco: []int{620200}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := f.b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	b := f.session(t, k.Key)
	p := b.get(Prefix + "ajustes")
	if !strings.Contains(p.body, `id="cambiar-ambiente"`) || !strings.Contains(p.body, "sin certificado") {
		t.Fatalf("Ajustes of a company in certificación: %s", p.body)
	}
	// No resolution number, no certificate.
	p = b.post(Prefix+"ajustes/ambiente", url.Values{"ambiente": {"produccion"}})
	wantStatus(t, "a move without resolution nor certificate", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="numero_resolucion-error"`) || !strings.Contains(p.body, `id="ambiente-error"`) ||
		!strings.Contains(p.body, "producción exige el número de la resolución") || !strings.Contains(p.body, "producción exige el certificado de firma de la empresa: súbalo primero") {
		t.Errorf("the refusal: %s", p.body)
	}
	p = b.post(Prefix+"ajustes/ambiente", url.Values{"ambiente": {"produccion"}, "numero_resolucion": {"ochenta"}})
	wantStatus(t, "a resolution number that is no number", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="numero_resolucion-error"`) || !strings.Contains(p.body, `value="ochenta"`) {
		t.Errorf("the refusal: %s", p.body)
	}
	if got, _ := f.b.Company.Get(ctx, e.ID); got.Ambiente != "certificacion" || got.NumeroResolucion != 0 {
		t.Fatalf("a refused move changed the company: %+v", got)
	}
	// With the certificate, and the resolution given in the form.
	if _, err := billingtest.Provision(ctx, f.b, billingtest.Creds(t), billingtest.Company{ID: e.ID}); err != nil {
		t.Fatal(err)
	}
	p = b.post(Prefix+"ajustes/ambiente", url.Values{"ambiente": {"produccion"}, "numero_resolucion": {"80"}, "fecha_resolucion": {"2014-08-22"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("the move: %d %s", p.status, p.body)
	}
	if got, _ := f.b.Company.Get(ctx, e.ID); got.Ambiente != dte.AmbienteProduccion || got.NumeroResolucion != 80 {
		t.Fatalf("after the move: %+v", got)
	}
	p = b.get(p.header.Get("Location"))
	if !strings.Contains(p.body, `id="ambiente-actual">Producción`) || !strings.Contains(p.body, "Ambiente cambiado a producción.") ||
		!strings.Contains(p.body, rutC+" · producción") || !strings.Contains(p.body, "N° 80 del 22-08-2014") {
		t.Errorf("Ajustes in production: %s", p.body)
	}

	// The logo: a file that is no image is refused beside its field; a
	// PNG is installed.
	p = b.postFile(Prefix+"ajustes/logo", "logo", []byte("esto no es una imagen"), b.csrf)
	wantStatus(t, "a logo that is no image", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="logo-error">el logo debe ser una imagen PNG o JPEG`) {
		t.Errorf("the refused logo: %s", p.body)
	}
	if _, err := f.b.Company.Logo(ctx, e.ID); err == nil {
		t.Fatal("a refused logo was installed")
	}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewRGBA(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	if p = b.postFile(Prefix+"ajustes/logo", "logo", img.Bytes(), b.csrf); p.status != http.StatusSeeOther {
		t.Fatalf("the logo: %d %s", p.status, p.body)
	}
	if l, err := f.b.Company.Logo(ctx, e.ID); err != nil || l.ContentType != "image/png" {
		t.Fatalf("the installed logo: %+v %v", l, err)
	}
	if p = b.get(Prefix + "ajustes"); !strings.Contains(p.body, "La empresa tiene un logo") {
		t.Errorf("Ajustes with a logo: %s", p.body)
	}
	ro, err := f.b.Keys.Create(ctx, e.ID, api.APIKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	rb := f.session(t, ro.Key)
	rb.get(Prefix + "ajustes")
	wantStatus(t, "a read-only logo", rb.postFile(Prefix+"ajustes/logo", "logo", img.Bytes(), rb.csrf), http.StatusForbidden)
}

// Webhooks: rotating the secret shows the new one once; a delivery's
// attempts are listed and it can be sent again; another company's
// webhook and deliveries give 404 and stay as they were.
func (f *fixture) testWebhookSecretAndResend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wa, err := f.b.Webhooks.Create(ctx, f.A.id, api.WebhookInput{URL: "https://hooks.example.com/rotar", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := f.b.Webhooks.Create(ctx, f.B.id, api.WebhookInput{URL: "https://hooks.example.com/b2", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	da, err := f.b.Webhooks.Ping(ctx, f.A.id, wa.ID)
	if err != nil {
		t.Fatal(err)
	}
	db, err := f.b.Webhooks.Ping(ctx, f.B.id, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	b := f.session(t, f.A.writeKey)
	b.get(Prefix + "webhooks/" + wa.ID)
	p := b.post(Prefix+"webhooks/"+wa.ID+"/secreto", nil)
	wantStatus(t, "rotating", p, http.StatusOK)
	m := newSecretField.FindStringSubmatch(p.body)
	if m == nil || !strings.HasPrefix(m[1], "whsec_") || m[1] == wa.Secret {
		t.Fatalf("the new secret: %v in %s", m, p.body)
	}
	if p = b.get(Prefix + "webhooks/" + wa.ID); strings.Contains(p.body, m[1]) {
		t.Fatal("the secret is shown again")
	}
	// The ping's attempt (it cannot reach hooks.example.com) shows in
	// the delivery's log.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		d, err := f.b.Webhooks.GetDelivery(ctx, f.A.id, da.ID, api.DeliveryParams{WebhookID: wa.ID})
		if err != nil {
			t.Fatal(err)
		}
		if d.Attempts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ping made no attempt in 20 s")
		}
	}
	p = b.get(Prefix + "webhooks/" + wa.ID)
	if !strings.Contains(p.body, `<ol class="intentos">`) || !strings.Contains(p.body, "/entregas/"+da.ID+"/reenviar") {
		t.Errorf("the deliveries: %s", p.body)
	}
	p = b.post(Prefix+"webhooks/"+wa.ID+"/entregas/"+da.ID+"/reenviar", nil)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"webhooks/"+wa.ID+"?hecho=reenviado" {
		t.Fatalf("resend: %d %s", p.status, p.body)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		d, _ := f.b.Webhooks.GetDelivery(ctx, f.A.id, da.ID, api.DeliveryParams{WebhookID: wa.ID})
		if d != nil && d.Attempts >= 2 && d.AttemptLog[len(d.AttemptLog)-1].Trigger == "manual" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no manual attempt in 20 s: %+v", d)
		}
	}

	// Tenancy.
	// Get shows a secret masked to its last characters: a rotation
	// would change them (but once in 64³).
	masked, _ := f.b.Webhooks.Get(ctx, f.B.id, wb.ID)
	wantStatus(t, "rotating B's secret", b.post(Prefix+"webhooks/"+wb.ID+"/secreto", nil), http.StatusNotFound)
	if w, _ := f.b.Webhooks.Get(ctx, f.B.id, wb.ID); w.Secret != masked.Secret {
		t.Fatalf("B's secret changed: %q → %q", masked.Secret, w.Secret)
	}
	before, _ := f.b.Webhooks.GetDelivery(ctx, f.B.id, db.ID, api.DeliveryParams{WebhookID: wb.ID})
	for _, path := range []string{"webhooks/" + wb.ID + "/entregas/" + db.ID + "/reenviar", "webhooks/" + wa.ID + "/entregas/" + db.ID + "/reenviar",
		"webhooks/" + wa.ID + "/entregas/x/reenviar"} {
		wantStatus(t, path, b.post(Prefix+path, nil), http.StatusNotFound)
	}
	time.Sleep(200 * time.Millisecond)
	after, _ := f.b.Webhooks.GetDelivery(ctx, f.B.id, db.ID, api.DeliveryParams{WebhookID: wb.ID})
	for _, a := range after.AttemptLog {
		if a.Trigger == "manual" && len(after.AttemptLog) > len(before.AttemptLog) {
			t.Fatalf("A's form resent B's delivery: %+v", after.AttemptLog)
		}
	}

	// Read-only: no form, and the posts are refused.
	ro := f.session(t, f.A.readKey)
	if p := ro.get(Prefix + "webhooks/" + wa.ID); strings.Contains(p.body, "/secreto") || strings.Contains(p.body, "/reenviar") {
		t.Errorf("a read-only session is offered to act: %s", p.body)
	}
	wantStatus(t, "a read-only rotation", ro.post(Prefix+"webhooks/"+wa.ID+"/secreto", nil), http.StatusForbidden)
	wantStatus(t, "a read-only resend", ro.post(Prefix+"webhooks/"+wa.ID+"/entregas/"+da.ID+"/reenviar", nil), http.StatusForbidden)
}

// Every form of this slice needs the session's token: without it each is
// refused with 403 and changes nothing.
func (f *fixture) testNewFormsCSRF(t *testing.T) {
	t.Parallel()
	f.keysA.Lock()
	defer f.keysA.Unlock()
	ctx := context.Background()
	wa, err := f.b.Webhooks.Create(ctx, f.A.id, api.WebhookInput{URL: "https://hooks.example.com/csrf", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.b.Webhooks.Ping(ctx, f.A.id, wa.ID)
	if err != nil {
		t.Fatal(err)
	}
	masked, _ := f.b.Webhooks.Get(ctx, f.A.id, wa.ID)
	keys, _ := f.b.Keys.List(ctx, f.A.id)
	before, _ := f.b.Company.Get(ctx, f.A.id)
	b := f.session(t, f.A.writeKey)
	for path, form := range map[string]url.Values{
		"ajustes/empresa":  {"oficina_sii": {"Oficina CSRF"}},
		"ajustes/ambiente": {"ambiente": {"produccion"}, "numero_resolucion": {"80"}, "fecha_resolucion": {"2014-08-22"}},
		"ajustes/claves":   {"escritura": {"si"}}, "ajustes/claves/" + keys[0].ID + "/revocar": {},
		"ajustes/correo/probar": {}, "webhooks/" + wa.ID + "/secreto": {}, "webhooks/" + wa.ID + "/entregas/" + d.ID + "/reenviar": {},
		"empresas/cambiar": {"empresa": {f.B.id}},
	} {
		form.Set("csrf", "")
		wantStatus(t, path+" without a token", b.post(Prefix+path, form), http.StatusForbidden)
	}
	after, _ := f.b.Company.Get(ctx, f.A.id)
	if after.OficinaSII == "Oficina CSRF" || after.Ambiente != before.Ambiente {
		t.Fatalf("the company after forms without a token: %+v", after)
	}
	if ks, _ := f.b.Keys.List(ctx, f.A.id); len(ks) != len(keys) || ks[0].RevokedAt != nil {
		t.Fatalf("the keys after forms without a token: %+v", ks)
	}
	if w, _ := f.b.Webhooks.Get(ctx, f.A.id, wa.ID); w.Secret != masked.Secret {
		t.Fatal("a form without a token rotated the secret")
	}
}
