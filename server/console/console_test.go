package console

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
)

// TestConsole builds one fixture (two companies, each with a document
// and five pending received documents) and runs the handler tests and
// the browser test over it.
func TestConsole(t *testing.T) {
	f := newFixture(t)
	t.Run("Resumen", f.testResumen) // first: the others change the counts
	t.Run("SignInAndOut", f.testSignInAndOut)
	t.Run("Headers", f.testHeaders)
	t.Run("Revoked", f.testRevoked)
	t.Run("TLS", f.testTLS)
	t.Run("Receipt", f.testReceipt)
	t.Run("Tenancy", f.testTenancy)
	t.Run("CSRF", f.testCSRF)
	t.Run("ReadOnly", f.testReadOnly)
	t.Run("Escaping", f.testEscaping)
	t.Run("Decide", f.testDecide)
	t.Run("Pages", f.testPages)
	t.Run("Folios", f.testFolios)
	t.Run("Send", f.testSend)
	t.Run("Webhooks", f.testWebhooks)
	t.Run("Emitir", f.testEmitir)
	t.Run("EmitirTipos", f.testEmitirTipos)
	t.Run("Empresas", f.testEmpresas)
	t.Run("Correo", f.testCorreo)
	t.Run("AjustesReadOnly", f.testAjustesReadOnly)
	t.Run("AjustesEmpresa", f.testAjustesEmpresa)
	t.Run("AjustesClaves", f.testAjustesClaves)
	t.Run("AjustesAmbiente", f.testAjustesAmbiente)
	t.Run("LogoLimit", f.testLogoLimit)
	t.Run("WebhookSecretAndResend", f.testWebhookSecretAndResend)
	t.Run("NewFormsCSRF", f.testNewFormsCSRF)
	t.Run("Cesiones", f.testCesiones)
	t.Run("CesionTenancy", f.testCesionTenancy)
	t.Run("CesionRoles", f.testCesionRoles)
	t.Run("ListaCedidas", f.testListaCedidas)
	t.Run("SharedSessions", f.testSharedSessions)
	t.Run("Browser", f.testBrowser)
}

// TestConsolePostgres runs the tenancy cases over PostgreSQL (skipped
// without DTEKIT_PG_URL): the console reads through the billing face,
// whose store queries differ by backend. Cesiones runs there too: its
// form sent twice at once meets PostgreSQL's locks, not SQLite's.
func TestConsolePostgres(t *testing.T) {
	f := newFixtureOn(t, billingtest.Postgres)
	t.Run("Tenancy", f.testTenancy)
	t.Run("AjustesClaves", f.testAjustesClaves)
	t.Run("Empresas", f.testEmpresas)
	t.Run("CesionTenancy", f.testCesionTenancy)
	t.Run("Cesiones", f.testCesiones)
	t.Run("ListaCedidas", f.testListaCedidas)
	t.Run("SharedSessions", f.testSharedSessions)
}

// Sign-in: no session sends a GET to the form and refuses a POST; a bad
// key or a form without its token is refused; the session's cookie is
// HttpOnly, SameSite=Strict, limited to the console, and carries no
// credential; sign-out ends it on the server.
func (f *fixture) testSignInAndOut(t *testing.T) {
	t.Parallel()
	b := newBrowser(t, f.srv.URL)
	p := b.get(Prefix + "resumen")
	if p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"ingresar" {
		t.Fatalf("no session: %d %v", p.status, p.header)
	}
	wantStatus(t, "POST without a session", b.post(Prefix+"salir", nil), http.StatusForbidden)
	wantStatus(t, "an unknown key", b.signIn("dtk_no-es-una-clave"), http.StatusUnauthorized)
	wantStatus(t, "an empty credential", b.signIn(""), http.StatusUnauthorized)
	b.get(Prefix + "ingresar")
	wantStatus(t, "a sign-in without its token", b.post(Prefix+"ingresar", url.Values{"credencial": {f.A.writeKey}, "csrf": {"x"}}), http.StatusForbidden)

	b.get(Prefix + "ingresar")
	req, _ := http.NewRequest("POST", f.srv.URL+Prefix+"ingresar",
		strings.NewReader(url.Values{"credencial": {f.A.writeKey}, "csrf": {b.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	var sess *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookieName {
			sess = ck
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != Prefix || sess.Secure ||
		len(sess.Value) < 40 || strings.Contains(sess.Value, f.A.writeKey) {
		t.Fatalf("the session cookie: %+v", sess)
	}
	p = b.get(Prefix + "resumen")
	wantStatus(t, "Resumen", p, http.StatusOK)
	if strings.Contains(p.body, f.A.writeKey) {
		t.Fatal("a page shows the credential")
	}
	// Signing in again from the same browser ends the first session.
	if p := b.signIn(f.A.writeKey); p.status != http.StatusSeeOther {
		t.Fatalf("the second sign-in: %d", p.status)
	}
	first := newBrowser(t, f.srv.URL)
	u0, _ := url.Parse(f.srv.URL + Prefix)
	first.c.Jar.SetCookies(u0, []*http.Cookie{{Name: sessionCookieName, Value: sess.Value, Path: Prefix}})
	if p := first.get(Prefix + "resumen"); p.status != http.StatusSeeOther {
		t.Fatalf("the first session after a second sign-in: %d", p.status)
	}
	for _, ck := range b.c.Jar.Cookies(u0) {
		if ck.Name == sessionCookieName {
			sess.Value = ck.Value
		}
	}
	b.get(Prefix + "resumen")
	p = b.post(Prefix+"salir", nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", p.status)
	}
	// The old cookie, sent again, opens nothing.
	old := newBrowser(t, f.srv.URL)
	u, _ := url.Parse(f.srv.URL + Prefix)
	old.c.Jar.SetCookies(u, []*http.Cookie{{Name: sessionCookieName, Value: sess.Value, Path: Prefix}})
	if p := old.get(Prefix + "resumen"); p.status != http.StatusSeeOther {
		t.Fatalf("the signed-out session's cookie: %d", p.status)
	}
}

// The headers of every page: a policy without inline scripts that no
// other site may frame; PDFs may be framed by the console only.
func (f *fixture) testHeaders(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.readKey)
	for _, path := range []string{"ingresar", "resumen", "documentos", "recibidos", "documentos/" + f.A.dte, "no-existe"} {
		p := b.get(Prefix + path)
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
			strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") ||
			p.header.Get("X-Frame-Options") != "DENY" || p.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, p.header)
		}
		if strings.Contains(p.body, "<script") {
			t.Errorf("%s: a page with a script", path)
		}
	}
	p := b.get(Prefix + "documentos/" + f.A.dte + "/pdf")
	wantStatus(t, "the PDF", p, http.StatusOK)
	if p.header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(p.body, "%PDF-") ||
		p.header.Get("Content-Security-Policy") != pdfPolicy {
		t.Errorf("the PDF: %v %.20q", p.header, p.body)
	}
	p = b.get(Prefix + "static/console.css")
	wantStatus(t, "the stylesheet", p, http.StatusOK)
	if !strings.HasPrefix(p.header.Get("Content-Type"), "text/css") {
		t.Errorf("the stylesheet's type: %q", p.header.Get("Content-Type"))
	}
}

// Tenancy: company B's ids are not found on every page and form of A's
// session, and nothing of B changes.
func (f *fixture) testTenancy(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.writeKey)
	for _, path := range []string{"documentos/" + f.B.dte, "documentos/" + f.B.dte + "/pdf", "documentos/" + f.B.dte + "/xml",
		"recibidos/" + f.B.recibidos[0], "recibidos/" + f.B.recibidos[0] + "/pdf", "documentos/no-es-un-id", "recibidos/../resumen"} {
		p := b.get(Prefix + path)
		if path == "recibidos/../resumen" {
			continue // cleaned by the client; only its status matters below
		}
		wantStatus(t, path, p, http.StatusNotFound)
	}
	for _, form := range []url.Values{{"accion": {"ACD"}}, {"accion": {"ACD"}, "confirmar": {"si"}},
		{"accion": {"RCD"}, "motivo": {"x"}, "confirmar": {"si"}}, {"accion": {"ERM"}, "confirmar": {"si"}}} {
		wantStatus(t, "deciding B's document "+form.Encode(), b.post(Prefix+"recibidos/"+f.B.recibidos[0]+"/decidir", form), http.StatusNotFound)
	}
	r, err := f.b.Received.Get(context.Background(), f.B.id, f.B.recibidos[0])
	if err != nil || r.Estado != api.RecibidoPendiente {
		t.Fatalf("B's document after A's forms: %v %v", r, err)
	}
	wantStatus(t, "sending B's held document", b.post(Prefix+"documentos/"+f.B.dte+"/enviar", url.Values{"clave": {newUUID()}}), http.StatusNotFound)
	if d, err := f.b.Documents.Get(context.Background(), f.B.id, f.B.dte, api.DTEGetParams{}); err != nil || d.Estado != dte.EstadoFirmado {
		t.Fatalf("B's held document after A's form: %v %v", d, err)
	}
	// A's own pages answer.
	wantStatus(t, "A's document", b.get(Prefix+"documentos/"+f.A.dte), http.StatusOK)
	wantStatus(t, "A's received document", b.get(Prefix+"recibidos/"+f.A.recibidos[0]), http.StatusOK)
}

// CSRF: a form without the session's token, with another session's, or
// from another origin is refused and changes nothing.
func (f *fixture) testCSRF(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.writeKey)
	other := f.session(t, f.A.writeKey)
	id := f.A.recibidos[1]
	target := Prefix + "recibidos/" + id + "/decidir"
	for name, tok := range map[string]string{"none": "", "wrong": "abc", "another session's": other.csrf} {
		p := b.post(target, url.Values{"accion": {"ACD"}, "confirmar": {"si"}, "csrf": {tok}})
		wantStatus(t, "a token "+name, p, http.StatusForbidden)
	}
	form := url.Values{"accion": {"ACD"}, "confirmar": {"si"}, "csrf": {b.csrf}}
	req, _ := http.NewRequest("POST", f.srv.URL+target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	wantStatus(t, "another origin", b.do(req), http.StatusForbidden)
	wantStatus(t, "sign-out without a token", b.post(Prefix+"salir", url.Values{"csrf": {""}}), http.StatusForbidden)
	r, err := f.b.Received.Get(context.Background(), f.A.id, id)
	if err != nil || r.Estado != api.RecibidoPendiente {
		t.Fatalf("after the refused forms: %v %v", r, err)
	}
}

// A read-only key sees every page and no form to act; a decision it
// posts anyway is refused with 403.
func (f *fixture) testReadOnly(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.readKey)
	id := f.A.recibidos[2]
	p := b.get(Prefix + "recibidos/" + id)
	wantStatus(t, "the received document", p, http.StatusOK)
	if strings.Contains(p.body, "/decidir") || !strings.Contains(p.body, "solo lectura") {
		t.Fatalf("a read-only session is offered a decision: %s", p.body)
	}
	for _, form := range []url.Values{{"accion": {"ACD"}}, {"accion": {"ACD"}, "confirmar": {"si"}}} {
		p = b.post(Prefix+"recibidos/"+id+"/decidir", form)
		wantStatus(t, "a read-only decision", p, http.StatusForbidden)
		if !strings.Contains(p.body, "solo lectura") {
			t.Errorf("the 403 page: %s", p.body)
		}
	}
	r, err := f.b.Received.Get(context.Background(), f.A.id, id)
	if err != nil || r.Estado != api.RecibidoPendiente {
		t.Fatalf("after a read-only decision: %v %v", r, err)
	}
}

// Escaping: a receptor's razón social with markup shows as text.
func (f *fixture) testEscaping(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.readKey)
	escaped := `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; Cía`
	for _, path := range []string{"documentos", "documentos/" + f.A.dte} {
		p := b.get(Prefix + path)
		wantStatus(t, path, p, http.StatusOK)
		if strings.Contains(p.body, "<script") || !strings.Contains(p.body, escaped) {
			t.Errorf("%s: the hostile name is not shown escaped: %s", path, p.body)
		}
	}
	// A query that echoes into the page is escaped too.
	p := b.get(Prefix + "documentos?receptor=%22%3E%3Cscript%3E")
	if strings.Contains(p.body, "<script") {
		t.Errorf("the filter's echo: %s", p.body)
	}
}

// Deciding through the forms: a first POST shows the confirmation and
// changes nothing; the confirmed one registers the decision; a claim
// without its reason is refused naming the field.
func (f *fixture) testDecide(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.writeKey)
	id := f.A.recibidos[3]
	target := Prefix + "recibidos/" + id + "/decidir"
	p := b.post(target, url.Values{"accion": {"RCD"}})
	wantStatus(t, "a claim without its reason", p, http.StatusBadRequest)
	if !strings.Contains(p.body, "motivo:") {
		t.Errorf("the refusal does not name motivo: %s", p.body)
	}
	wantStatus(t, "an unknown action", b.post(target, url.Values{"accion": {"XYZ"}, "confirmar": {"si"}}), http.StatusBadRequest)
	p = b.post(target, url.Values{"accion": {"RCD"}, "motivo": {"Precio distinto al convenido"}})
	wantStatus(t, "the confirmation", p, http.StatusOK)
	if !strings.Contains(p.body, `name="confirmar" value="si"`) || !strings.Contains(p.body, "Reclamo al contenido (RCD)") ||
		!strings.Contains(p.body, "$4.760") { // the fourth factura: 4.000 + 19% = 4.760
		t.Fatalf("the confirmation page: %s", p.body)
	}
	if r, _ := f.b.Received.Get(context.Background(), f.A.id, id); r.Estado != api.RecibidoPendiente {
		t.Fatalf("decided before confirmation: %s", r.Estado)
	}
	p = b.post(target, url.Values{"accion": {"RCD"}, "motivo": {"Precio distinto al convenido"}, "confirmar": {"si"}})
	if p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"recibidos/"+id+"?hecho=RCD" {
		t.Fatalf("the confirmed claim: %d %s", p.status, p.body)
	}
	r, err := f.b.Received.Get(context.Background(), f.A.id, id)
	if err != nil || r.Estado != api.RecibidoReclamado || r.Respuestas.Decision == nil || r.Respuestas.Decision.Motivo != "Precio distinto al convenido" {
		t.Fatalf("after the claim: %+v %v", r, err)
	}
	p = b.get(p.header.Get("Location"))
	if !strings.Contains(p.body, "Registrado: Reclamo al contenido (RCD).") || strings.Contains(p.body, `id="reclamar"`) {
		t.Errorf("the decided document's page: %s", p.body)
	}
	// The notice names known actions only, never the link's text.
	if p = b.get(Prefix + "recibidos/" + id + "?hecho=Llame+al+600"); strings.Contains(p.body, "Llame") {
		t.Errorf("the page repeats the link's text: %s", p.body)
	}
}

// The pages' content: amounts and dates in Chilean format, the filters.
func (f *fixture) testPages(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.readKey)
	p := b.get(Prefix + "documentos/" + f.A.dte)
	// 1.000 net + 19% IVA = 1.190; today's date as DD-MM-YYYY.
	today := time.Now().In(chile.Location()).Format("02-01-2006")
	if !strings.Contains(p.body, "$1.190") || !strings.Contains(p.body, "$190") || !strings.Contains(p.body, today) ||
		!strings.Contains(p.body, `src="/console/documentos/`+f.A.dte+`/pdf"`) {
		t.Errorf("the document's page: %s", p.body)
	}
	p = b.get(Prefix + "documentos/" + f.A.dte + "/xml")
	if p.status != 200 || !strings.Contains(p.header.Get("Content-Disposition"), "attachment") || !strings.Contains(p.body, "<DTE") {
		t.Errorf("the XML: %d %v", p.status, p.header)
	}
	p = b.get(Prefix + "documentos?receptor=76086428-5")
	if !strings.Contains(p.body, "1 documentos.") {
		t.Errorf("filtered by receptor: %s", p.body)
	}
	// Folio: A's held document is its sixth factura (five were sent to B
	// first), so folio 6; no document has folio 9999; a folio that is not a
	// number is refused naming the field.
	p = b.get(Prefix + "documentos?tipo=33&folio=6")
	if !strings.Contains(p.body, "1 documentos.") || !strings.Contains(p.body, `href="/console/documentos/`+f.A.dte+`"`) {
		t.Errorf("folio 6: %s", p.body)
	}
	if p = b.get(Prefix + "documentos?folio=9999"); !strings.Contains(p.body, "0 documentos.") {
		t.Errorf("folio 9999: %s", p.body)
	}
	p = b.get(Prefix + "documentos?folio=seis")
	wantStatus(t, "a folio that is not a number", p, http.StatusBadRequest)
	if !strings.Contains(p.body, "folio:") {
		t.Errorf("the refused folio: %s", p.body)
	}
	p = b.get(Prefix + "documentos?desde=29-11-2026")
	wantStatus(t, "a date not in the API's form", p, http.StatusBadRequest)
	if !strings.Contains(p.body, "fecha_desde:") {
		t.Errorf("the refused date: %s", p.body)
	}
	// A document the fake SII accepted shows its journey: the track id
	// the SII gave its envelope.
	sent, err := f.b.Documents.List(context.Background(), f.A.id, api.DTEListParams{Estado: dte.EstadoAceptado, ListParams: api.ListParams{Limit: 1}})
	if err != nil || len(sent.Data) != 1 || sent.Data[0].Tracking == nil || sent.Data[0].Tracking.TrackID == nil {
		t.Fatalf("an accepted document of A: %+v %v", sent, err)
	}
	p = b.get(Prefix + "documentos/" + sent.Data[0].ID)
	if !strings.Contains(p.body, "Enviado al SII con track id "+*sent.Data[0].Tracking.TrackID) {
		t.Errorf("the accepted document's history: %s", p.body)
	}
	p = b.get(Prefix + "recibidos")
	wantStatus(t, "Recibidos", p, http.StatusOK)
	// No window is known yet (the registry was not asked): none closes
	// within three days.
	if p = b.get(Prefix + "recibidos?por_vencer=si"); !strings.Contains(p.body, "0 documentos.") {
		t.Errorf("por vencer: %s", p.body)
	}
	p = b.get(Prefix + "resumen")
	if !strings.Contains(p.body, "Documentos de hoy ("+today+")") {
		t.Errorf("Resumen: %s", p.body)
	}
}

// Resumen counts what the fixture made, by hand: A emitted six documents
// today, five sent and accepted by the fake SII and one held (firmado);
// it has five received documents pending, none with a known window yet;
// its CAF of facturas (folios 1 to 1000) has 1000 − 6 = 994 left: low
// under a threshold of 994 (caf.low_stock fires when an emission leaves
// at most the threshold), not under one of 993.
func (f *fixture) testResumen(t *testing.T) {
	ctx := context.Background()
	b := f.session(t, f.A.readKey)
	set := func(n int64) {
		if _, err := f.b.Company.UpdateAlertSettings(ctx, f.A.id, api.AlertSettingsInput{CAFLowStockThreshold: &n}); err != nil {
			t.Fatal(err)
		}
	}
	set(994)
	p := b.get(Prefix + "resumen")
	wantStatus(t, "Resumen", p, http.StatusOK)
	for _, want := range []string{"Documentos de hoy (" + time.Now().In(chile.Location()).Format("02-01-2006") + "): 6",
		`<span class="n">5</span> Aceptado`, `<span class="n">1</span> Firmado`, `<span class="n">0</span> Rechazado`,
		"Recibidos por decidir: 5", "Ninguno vence en los próximos 3 días.", "Factura (33): quedan 994", "Sin fallas."} {
		if !strings.Contains(p.body, want) {
			t.Errorf("Resumen lacks %q: %s", want, p.body)
		}
	}
	set(993)
	p = b.get(Prefix + "resumen")
	if strings.Contains(p.body, "quedan 994") || !strings.Contains(p.body, "Todos los tipos con CAF tienen folios sobre el umbral.") {
		t.Errorf("994 folios left under a threshold of 993 shown as low: %s", p.body)
	}
	set(20)
}

// postFile sends a multipart form with one file and the session's token
// (unless csrf says another).
func (b *browser) postFile(path, field string, file []byte, csrf string) page {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("csrf", csrf)
	fw, _ := mw.CreateFormFile(field, "caf.xml")
	fw.Write(file)
	mw.Close()
	req, _ := http.NewRequest("POST", b.base+path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.do(req)
}

// Folios: the stock per type, a CAF uploaded through the form (its
// folios counted: 1 to 50 is 50), the threshold changed; refusals name
// their field; a read-only key and a form without its token change
// nothing; company B does not see A's CAF.
func (f *fixture) testFolios(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	emp, err := f.b.Company.Get(ctx, f.A.id)
	if err != nil {
		t.Fatal(err)
	}
	file, err := billingtest.Creds(t).Authority.Issue(caftest.IssueRequest{RutEmisor: emp.Rut, RazonSocial: emp.RazonSocial,
		Tipo: 34, Desde: 1, Hasta: 50, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	ro := f.session(t, f.A.readKey)
	p := ro.get(Prefix + "folios")
	wantStatus(t, "Folios, read-only", p, http.StatusOK)
	if strings.Contains(p.body, `enctype="multipart/form-data"`) {
		t.Error("a read-only session is offered the upload")
	}
	wantStatus(t, "a read-only upload", ro.postFile(Prefix+"folios", "archivo", file, ro.csrf), http.StatusForbidden)
	wantStatus(t, "a read-only threshold", ro.post(Prefix+"folios/umbral", url.Values{"umbral": {"5"}}), http.StatusForbidden)

	b := f.session(t, f.A.writeKey)
	b.get(Prefix + "folios")
	wantStatus(t, "an upload without its token", b.postFile(Prefix+"folios", "archivo", file, "x"), http.StatusForbidden)
	p = b.postFile(Prefix+"folios", "archivo", []byte("<AUTORIZACION>no</AUTORIZACION>"), b.csrf)
	wantStatus(t, "a file that is no CAF", p, http.StatusBadRequest)
	p = b.postFile(Prefix+"folios", "otro", file, b.csrf)
	wantStatus(t, "no archivo", p, http.StatusBadRequest)
	if !strings.Contains(p.body, "archivo:") {
		t.Errorf("the refusal does not name archivo: %s", p.body)
	}
	cafs, _ := f.b.CAFs.List(ctx, f.A.id, api.CAFListParams{TipoDTE: 34})
	if cafs.TotalCount != 0 {
		t.Fatalf("a CAF registered by a refused form: %+v", cafs)
	}
	p = b.postFile(Prefix+"folios", "archivo", file, b.csrf)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"folios?hecho=caf" {
		t.Fatalf("the upload: %d %s", p.status, p.body)
	}
	p = b.get(p.header.Get("Location"))
	if !strings.Contains(p.body, "CAF registrado.") || !strings.Contains(p.body, `<td>Factura exenta (34)</td><td class="num">50</td>`) {
		t.Errorf("Folios after the upload: %s", p.body)
	}
	p = b.post(Prefix+"folios/umbral", url.Values{"umbral": {"veinte"}})
	wantStatus(t, "a threshold that is no number", p, http.StatusBadRequest)
	if !strings.Contains(p.body, "caf_low_stock_threshold:") {
		t.Errorf("the refused threshold: %s", p.body)
	}
	wantStatus(t, "a negative threshold", b.post(Prefix+"folios/umbral", url.Values{"umbral": {"-1"}}), http.StatusBadRequest)

	other := f.session(t, f.B.readKey)
	if p := other.get(Prefix + "folios"); strings.Contains(p.body, "Factura exenta (34)") {
		t.Errorf("B sees A's CAF: %s", p.body)
	}
}

// Sending a held document from its page: a read-only key is not offered
// the form and is refused; the form sends the document in one envelope,
// and the same form sent twice (its Idempotency-Key) still one; Envíos
// lists the envelope with the document.
func (f *fixture) testSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	id := f.emit(t, f.A, "12345678-5", "Cliente retenido", 2000, false)
	ro := f.session(t, f.A.readKey)
	p := ro.get(Prefix + "documentos/" + id)
	if strings.Contains(p.body, `id="enviar"`) {
		t.Error("a read-only session is offered to send")
	}
	wantStatus(t, "a read-only send", ro.post(Prefix+"documentos/"+id+"/enviar", url.Values{"clave": {newUUID()}}), http.StatusForbidden)

	before, err := f.b.Envelopes.List(ctx, f.A.id, api.EnvioListParams{})
	if err != nil {
		t.Fatal(err)
	}
	b := f.session(t, f.A.writeKey)
	p = b.get(Prefix + "documentos/" + id)
	m := regexp.MustCompile(`name="clave" value="([0-9a-f-]{36})"`).FindStringSubmatch(p.body)
	if m == nil || !strings.Contains(p.body, `id="enviar"`) {
		t.Fatalf("the held document's page has no send form: %s", p.body)
	}
	for range 2 {
		p = b.post(Prefix+"documentos/"+id+"/enviar", url.Values{"clave": {m[1]}})
		if p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"documentos/"+id+"?hecho=enviado" {
			t.Fatalf("send: %d %s", p.status, p.body)
		}
	}
	wantStatus(t, "a form without its key", b.post(Prefix+"documentos/"+id+"/enviar", nil), http.StatusBadRequest)
	after, err := f.b.Envelopes.List(ctx, f.A.id, api.EnvioListParams{})
	if err != nil || after.TotalCount != before.TotalCount+1 {
		t.Fatalf("envelopes: %d before, %d after (%v), want one more", before.TotalCount, after.TotalCount, err)
	}
	if d, _ := f.b.Documents.Get(ctx, f.A.id, id, api.DTEGetParams{}); d.Estado == dte.EstadoFirmado {
		t.Errorf("the sent document is still %s", d.Estado)
	}
	p = b.get(Prefix + "envios")
	wantStatus(t, "Envíos", p, http.StatusOK)
	if !strings.Contains(p.body, `href="/console/documentos/`+id+`"`) {
		t.Errorf("Envíos lacks the envelope of %s: %s", id, p.body)
	}
}

// Webhooks: the list and a webhook's page; pausing and enabling through
// their forms; read-only and company B refused (B's id not found), and
// nothing of theirs changes.
func (f *fixture) testWebhooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wa, err := f.b.Webhooks.Create(ctx, f.A.id, api.WebhookInput{URL: "https://hooks.example.com/a?x=<b>", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := f.b.Webhooks.Create(ctx, f.B.id, api.WebhookInput{URL: "https://hooks.example.com/b", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	ro := f.session(t, f.A.readKey)
	p := ro.get(Prefix + "webhooks")
	if !strings.Contains(p.body, `href="/console/webhooks/`+wa.ID+`"`) || strings.Contains(p.body, wb.ID) || strings.Contains(p.body, "<b>") {
		t.Errorf("A's webhooks: %s", p.body)
	}
	p = ro.get(Prefix + "webhooks/" + wa.ID)
	wantStatus(t, "A's webhook, read-only", p, http.StatusOK)
	if strings.Contains(p.body, `id="pausar"`) {
		t.Error("a read-only session is offered to pause")
	}
	wantStatus(t, "a read-only pause", ro.post(Prefix+"webhooks/"+wa.ID+"/pausar", nil), http.StatusForbidden)

	b := f.session(t, f.A.writeKey)
	wantStatus(t, "B's webhook", b.get(Prefix+"webhooks/"+wb.ID), http.StatusNotFound)
	wantStatus(t, "pausing B's webhook", b.post(Prefix+"webhooks/"+wb.ID+"/pausar", nil), http.StatusNotFound)
	if w, _ := f.b.Webhooks.Get(ctx, f.B.id, wb.ID); !w.IsActive {
		t.Fatal("A's form paused B's webhook")
	}
	b.get(Prefix + "webhooks/" + wa.ID)
	p = b.post(Prefix+"webhooks/"+wa.ID+"/pausar", nil)
	if p.status != http.StatusSeeOther {
		t.Fatalf("pause: %d %s", p.status, p.body)
	}
	if w, _ := f.b.Webhooks.Get(ctx, f.A.id, wa.ID); w.IsActive {
		t.Fatal("the webhook is still active")
	}
	p = b.get(p.header.Get("Location"))
	if !strings.Contains(p.body, "Webhook pausado") || !strings.Contains(p.body, `id="activar"`) {
		t.Errorf("the paused webhook's page: %s", p.body)
	}
	if p = b.post(Prefix+"webhooks/"+wa.ID+"/activar", nil); p.status != http.StatusSeeOther {
		t.Fatalf("enable: %d %s", p.status, p.body)
	}
	if w, _ := f.b.Webhooks.Get(ctx, f.A.id, wa.ID); !w.IsActive {
		t.Fatal("the webhook is still paused")
	}
}

// A key revoked while its session is open ends the session at its next
// request: the console checks the credential on every request.
func (f *fixture) testRevoked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := f.createKeyA(t, true)
	b := f.session(t, k.Key)
	wantStatus(t, "Resumen", b.get(Prefix+"resumen"), http.StatusOK)
	if err := f.b.Keys.Revoke(ctx, f.A.id, k.ID); err != nil {
		t.Fatal(err)
	}
	if p := b.get(Prefix + "resumen"); p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"ingresar" {
		t.Fatalf("after revocation: %d %v", p.status, p.header)
	}
	wantStatus(t, "a form after revocation", b.post(Prefix+"recibidos/"+f.A.recibidos[1]+"/decidir", url.Values{"accion": {"ACD"}}), http.StatusForbidden)
}

// Under TLS the session's cookie is Secure.
func (f *fixture) testTLS(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle(Prefix, f.console)
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	b := newBrowser(t, srv.URL)
	b.c.Transport = srv.Client().Transport
	b.get(Prefix + "ingresar")
	form := url.Values{"credencial": {f.A.readKey}, "csrf": {b.csrf}}
	req, _ := http.NewRequest("POST", srv.URL+Prefix+"ingresar", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var secure bool
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookieName {
			secure = ck.Secure && ck.HttpOnly && ck.SameSite == http.SameSiteStrictMode
		}
	}
	if res.StatusCode != http.StatusSeeOther || !secure {
		t.Fatalf("sign-in over TLS: %d %v", res.StatusCode, res.Header["Set-Cookie"])
	}
}

// The receipt of goods through its form and confirmation, with the
// place where the goods arrived.
func (f *fixture) testReceipt(t *testing.T) {
	t.Parallel()
	b := f.session(t, f.A.writeKey)
	id := f.A.recibidos[0] // accepted by the browser test, or pending without it: a receipt fits both
	p := b.get(Prefix + "recibidos/" + id)
	if !strings.Contains(p.body, `id="recibo"`) {
		t.Fatalf("no receipt form: %s", p.body)
	}
	form := url.Values{"accion": {"ERM"}, "recinto": {"Bodega central, Quilicura"}}
	p = b.post(Prefix+"recibidos/"+id+"/decidir", form)
	if p.status != http.StatusOK || !strings.Contains(p.body, "Recinto: Bodega central, Quilicura") {
		t.Fatalf("the confirmation: %d %s", p.status, p.body)
	}
	form.Set("confirmar", "si")
	if p = b.post(Prefix+"recibidos/"+id+"/decidir", form); p.status != http.StatusSeeOther {
		t.Fatalf("the confirmed receipt: %d %s", p.status, p.body)
	}
	r, err := f.b.Received.Get(context.Background(), f.A.id, id)
	if err != nil || !r.MercaderiasRecibidas || r.Estado != api.RecibidoAceptado {
		t.Fatalf("after the receipt: %+v %v", r, err)
	}
	if p = b.get(Prefix + "recibidos/" + id); strings.Contains(p.body, `id="recibo"`) {
		t.Errorf("the receipt is offered twice: %s", p.body)
	}
}

// Emitir: the totals the server computes before signing (by hand: two
// units at $1.500 and one at $1.000 are $4.000 net, 19% IVA $760, total
// $4.760), the gate's errors beside their fields (a line's on its own
// row, counted on the form's rows, not the request's), and one emission
// for a form sent twice; a read-only key neither sees the form nor emits.
func (f *fixture) testEmitir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ro := f.session(t, f.A.readKey)
	wantStatus(t, "Emitir, read-only", ro.get(Prefix+"emitir"), http.StatusForbidden)
	wantStatus(t, "an emission, read-only", ro.post(Prefix+"emitir", url.Values{"tipo": {"33"}}), http.StatusForbidden)

	b := f.session(t, f.A.writeKey)
	p := b.get(Prefix + "emitir")
	wantStatus(t, "Emitir", p, http.StatusOK)
	m := regexp.MustCompile(`name="clave" value="([0-9a-f-]{36})"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the form has no key: %s", p.body)
	}
	form := url.Values{"tipo": {"33"}, "clave": {m[1]}, "enviar": {}, "rut": {"11111111-1"}, "razon_social": {"Ferretería <El Clavo>"},
		"giro": {"Ferretería"}, "direccion": {"Av. Matta 100"}, "comuna": {"Santiago"},
		"nombre0": {"Martillo"}, "cantidad0": {"2"}, "precio0": {"1500"},
		// Row 1 left empty: the next line is the request's second.
		"nombre2": {"Clavos"}, "cantidad2": {"1"}, "precio2": {"abc"}}
	p = b.post(Prefix+"emitir", form)
	wantStatus(t, "a price that is no number", p, http.StatusBadRequest)
	if !regexp.MustCompile(`id="precio2"[^>]*aria-invalid="true"`).MatchString(p.body) || !strings.Contains(p.body, `id="precio2-error"`) ||
		strings.Contains(p.body, `id="precio0-error"`) || strings.Contains(p.body, `id="totales"`) {
		t.Errorf("the error is not beside row 2's price: %s", p.body)
	}
	if !strings.Contains(p.body, "Ferretería &lt;El Clavo&gt;") {
		t.Errorf("the typed name is not kept, escaped: %s", p.body)
	}
	form.Set("precio2", "1000")
	p = b.post(Prefix+"emitir", form)
	wantStatus(t, "the preview", p, http.StatusOK)
	for _, want := range []string{"<dt>Neto</dt><dd>$4.000</dd>", "<dd>$760</dd>", "<dt>Total</dt><dd>$4.760</dd>", `id="emitir"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the preview lacks %q: %s", want, p.body)
		}
	}
	before, _ := f.b.Documents.List(ctx, f.A.id, api.DTEListParams{RutReceptor: "11111111-1"})
	form.Set("paso", "emitir")
	var loc string
	for range 2 {
		p = b.post(Prefix+"emitir", form)
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), Prefix+"documentos/") {
			t.Fatalf("the emission: %d %s", p.status, p.body)
		}
		if loc != "" && p.header.Get("Location") != loc {
			t.Fatalf("the same form emitted twice: %s and %s", loc, p.header.Get("Location"))
		}
		loc = p.header.Get("Location")
	}
	after, _ := f.b.Documents.List(ctx, f.A.id, api.DTEListParams{RutReceptor: "11111111-1"})
	if after.TotalCount != before.TotalCount+1 {
		t.Fatalf("documents to 11111111-1: %d before, %d after, want one more", before.TotalCount, after.TotalCount)
	}
	p = b.get(loc)
	if !strings.Contains(p.body, "Documento emitido y firmado.") || !strings.Contains(p.body, "$4.760") || !strings.Contains(p.body, `id="enviar"`) {
		t.Errorf("the emitted document (held: enviar unchecked): %s", p.body)
	}
}
