package console

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
)

// rutFactoring is the factoring company the tests cede to; its check
// digit by hand from the right: 0·2+4·3+2·4+0·5+9·6+7·7+6·2+9·3 = 162,
// 162 mod 11 = 8, 11−8 = 3.
const rutFactoring = "96790240-3"

// cesionForm is a valid form of the cesión of a document under key.
func cesionForm(key string) url.Values {
	return url.Values{"clave": {key}, "cesionario_rut": {rutFactoring}, "cesionario_razon_social": {"Factoring Austral S.A."},
		"cesionario_direccion": {"Av. Apoquindo 3000"}, "cesionario_email": {"cesiones@factoring.cl"},
		"email_notificacion": {"finanzas@empresa.cl"}}
}

// acceptedTo returns company from's factura to the receptor rut whose
// total is total: the fixture's documents the fake SII accepted.
func (f *fixture) acceptedTo(t *testing.T, from company, rut string, total int64) *api.DTE {
	t.Helper()
	page, err := f.b.Documents.List(context.Background(), from.id, api.DTEListParams{RutReceptor: rut, Estado: dte.EstadoAceptado,
		ListParams: api.ListParams{Limit: api.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range page.Data {
		if d := &page.Data[i]; d.MontoTotal == total && d.TipoDTE == 33 {
			return d
		}
	}
	t.Fatalf("no accepted factura of %s to %s for %d: %+v", from.rut, rut, total, page)
	return nil
}

// cesiones lists a document's cesiones through the face.
func (f *fixture) cesiones(t *testing.T, c company, id string) *api.Page[api.Cesion] {
	t.Helper()
	page, err := f.b.Cesiones.List(context.Background(), c.id, id, api.CesionListParams{})
	if err != nil {
		t.Fatal(err)
	}
	return page
}

var claveField = regexp.MustCompile(`id="form-ceder"[\s\S]*?name="clave" value="([0-9a-f-]{36})"`)

// Ceding a factura through its page: a read-only key sees the section
// and no form, and is refused; the form's refusals stand beside their
// fields (the amount read before the face is asked, then the face's
// fields, the emisor as cesionario, an amount over the total) and record
// nothing; the same form sent twice at once makes one cesión; the page
// then shows it in course, offers no form and refuses another; once the
// fake registry records it, the page says "Cedida a … el …". A held
// factura is not offered the form.
func (f *fixture) testCesiones(t *testing.T) {
	t.Parallel()
	// The third factura A sent B: 3.000 net + 19% IVA = 3.570.
	d := f.acceptedTo(t, f.A, rutB, 3570)
	path := Prefix + "documentos/" + d.ID

	ro := f.session(t, f.A.readKey)
	p := ro.get(path)
	wantStatus(t, "the factura, read-only", p, http.StatusOK)
	if !strings.Contains(p.body, `<h2 id="cesiones">Cesiones</h2>`) || !strings.Contains(p.body, "Esta factura no tiene cesiones.") ||
		strings.Contains(p.body, `id="form-ceder"`) {
		t.Errorf("the read-only page: %s", p.body)
	}
	wantStatus(t, "a read-only cesión", ro.post(path+"/ceder", cesionForm(newUUID())), http.StatusForbidden)

	b := f.session(t, f.A.writeKey)
	p = b.get(path)
	m := claveField.FindStringSubmatch(p.body)
	if m == nil || !strings.Contains(p.body, `id="monto" name="monto" value="3570"`) {
		t.Fatalf("the factura's page has no cesión form with its total: %s", p.body)
	}
	key := m[1]

	// An amount that is no number, beside its field, the rest kept.
	form := cesionForm(key)
	form.Set("monto", "tres mil")
	form.Set("cesionario_razon_social", "Factoring <Sur>")
	p = b.post(path+"/ceder", form)
	wantStatus(t, "an amount that is no number", p, http.StatusBadRequest)
	if !regexp.MustCompile(`id="monto"[^>]*aria-invalid="true"`).MatchString(p.body) || !strings.Contains(p.body, `id="monto-error"`) ||
		!strings.Contains(p.body, `value="Factoring &lt;Sur&gt;"`) || !strings.Contains(p.body, `name="clave" value="`+key+`"`) {
		t.Errorf("the refused amount: %s", p.body)
	}
	// The face's refusals, every one beside its field.
	form = cesionForm(key)
	form.Set("cesionario_rut", "96790240-4")
	form.Set("cesionario_direccion", "Av")
	form.Set("cesionario_email", "no-es-correo")
	form.Set("email_notificacion", "")
	form.Set("ultimo_vencimiento", "2026-02-30")
	p = b.post(path+"/ceder", form)
	wantStatus(t, "the face's refusals", p, http.StatusBadRequest)
	for field, msg := range map[string]string{"cesionario_rut": "el dígito verificador no corresponde a este RUT",
		"cesionario_direccion": "tiene de 5 a 60 caracteres", "cesionario_email": "no es una dirección de correo",
		"email_notificacion": "este dato es obligatorio", "ultimo_vencimiento": "la fecha se escribe AAAA-MM-DD"} {
		if !regexp.MustCompile(`id="` + field + `-error">` + msg).MatchString(p.body) {
			t.Errorf("%s: no %q beside it: %s", field, msg, p.body)
		}
	}
	if strings.Contains(p.body, `id="cesionario_razon_social-error"`) || strings.Contains(p.body, `id="monto-error"`) {
		t.Errorf("an error beside a valid field: %s", p.body)
	}
	form = cesionForm(key)
	form.Set("cesionario_rut", f.A.rut)
	p = b.post(path+"/ceder", form)
	wantStatus(t, "the emisor as cesionario", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="cesionario_rut-error">es el RUT del emisor`) {
		t.Errorf("the emisor as cesionario: %s", p.body)
	}
	form = cesionForm(key)
	form.Set("monto", "$3.571") // one peso over the total, as people write it
	p = b.post(path+"/ceder", form)
	wantStatus(t, "an amount over the total", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="monto-error">el monto va de 1 peso al total de la factura`) {
		t.Errorf("an amount over the total: %s", p.body)
	}
	if n := f.cesiones(t, f.A, d.ID).TotalCount; n != 0 {
		t.Fatalf("%d cesiones after refused forms", n)
	}

	// The same form sent twice at once: one cesión, both sent to the page.
	var wg sync.WaitGroup
	pages := make([]page, 2)
	for i := range pages {
		wg.Go(func() { pages[i] = b.post(path+"/ceder", cesionForm(key)) })
	}
	wg.Wait()
	for _, p := range pages {
		if p.status != http.StatusSeeOther || p.header.Get("Location") != path+"?hecho=cedida#cesiones" {
			t.Fatalf("the cesión: %d %s", p.status, p.body)
		}
	}
	list := f.cesiones(t, f.A, d.ID)
	if list.TotalCount != 1 || list.Data[0].Cesionario.Rut != rutFactoring || list.Data[0].Monto != 3570 {
		t.Fatalf("after a form sent twice: %+v", list)
	}
	p = b.get(path + "?hecho=cedida")
	if !strings.Contains(p.body, "Cesión firmada") || strings.Contains(p.body, `id="form-ceder"`) ||
		!strings.Contains(p.body, `<td class="num">1</td><td>Factoring Austral S.A.<br><small>96790240-3</small></td><td class="num">$3.570</td>`) {
		t.Errorf("the factura being ceded: %s", p.body)
	}
	// Another form (its own key) is refused: the factura has its cesión.
	p = b.post(path+"/ceder", cesionForm(newUUID()))
	wantStatus(t, "a second cesión", p, http.StatusConflict)
	if !strings.Contains(p.body, "La factura ya está cedida o en cesión") {
		t.Errorf("the second cesión's page: %s", p.body)
	}
	if n := f.cesiones(t, f.A, d.ID).TotalCount; n != 1 {
		t.Fatalf("%d cesiones after a second form", n)
	}

	// The fake registry records it (EOK) within seconds.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c := f.cesiones(t, f.A, d.ID).Data[0]; c.Estado == api.CesionAceptada {
			break
		} else if c.Estado == api.CesionRechazada || time.Now().After(deadline) {
			t.Fatalf("the cesión: %+v", c)
		}
	}
	today := time.Now().In(chile.Location()).Format("02-01-2006")
	p = b.get(path)
	if !strings.Contains(p.body, `<dd id="cedida">Cedida a Factoring Austral S.A. (96790240-3) el `+today+`</dd>`) ||
		!strings.Contains(p.body, "Aceptada: cedida<br><small>EOK") || strings.Contains(p.body, `id="form-ceder"`) {
		t.Errorf("the ceded factura: %s", p.body)
	}

	// A held factura: the section says why there is no form.
	p = b.get(Prefix + "documentos/" + f.A.dte)
	if !strings.Contains(p.body, "Se podrá ceder cuando el SII acepte la factura.") || strings.Contains(p.body, `id="form-ceder"`) {
		t.Errorf("the held factura: %s", p.body)
	}
	wantStatus(t, "ceding a held factura", b.post(Prefix+"documentos/"+f.A.dte+"/ceder", cesionForm(newUUID())), http.StatusConflict)
	if n := f.cesiones(t, f.A, f.A.dte).TotalCount; n != 0 {
		t.Fatalf("%d cesiones of a held factura", n)
	}
}

// Tenancy: A's session finds no page, form nor cesión of B's accepted
// factura, whatever its form says, and B's factura stays without one.
func (f *fixture) testCesionTenancy(t *testing.T) {
	t.Parallel()
	d := f.acceptedTo(t, f.B, f.A.rut, 4760) // 4.000 + 19% = 4.760
	b := f.session(t, f.A.writeKey)
	path := Prefix + "documentos/" + d.ID
	wantStatus(t, "B's factura", b.get(path), http.StatusNotFound)
	bad := cesionForm(newUUID())
	bad.Set("monto", "abc")
	for what, form := range map[string]url.Values{"a valid form": cesionForm(newUUID()), "a refused one": bad} {
		p := b.post(path+"/ceder", form)
		wantStatus(t, "ceding B's factura, "+what, p, http.StatusNotFound)
		if strings.Contains(p.body, "Cesiones") || strings.Contains(p.body, d.RazonSocialReceptor) {
			t.Errorf("%s: the 404 shows B's factura: %s", what, p.body)
		}
	}
	if n := f.cesiones(t, f.B, d.ID).TotalCount; n != 0 {
		t.Fatalf("A's forms made %d cesiones of B's factura", n)
	}
}

// Roles: who may write cedes (the API's POST /dte/{id}/cesiones asks a
// key that may write): a token without the admin role sees the form; the
// operator, switched to B, cedes B's factura, recorded for B only.
func (f *fixture) testCesionRoles(t *testing.T) {
	t.Parallel()
	signIn := f.tokenConsole(t)
	a := f.acceptedTo(t, f.A, rutB, 5950) // 5.000 + 19% = 5.950
	if p := signIn("token-A").get(Prefix + "documentos/" + a.ID); !strings.Contains(p.body, `id="form-ceder"`) {
		t.Errorf("a writing token without the admin role is not offered the form: %s", p.body)
	}
	d := f.acceptedTo(t, f.B, f.A.rut, 2380) // 2.000 + 19% = 2.380
	op := signIn("token-operador-A")
	if p := op.post(Prefix+"empresas/cambiar", url.Values{"empresa": {f.B.id}}); p.status != http.StatusSeeOther {
		t.Fatalf("the switch: %d %s", p.status, p.body)
	}
	path := Prefix + "documentos/" + d.ID
	m := claveField.FindStringSubmatch(op.get(path).body)
	if m == nil {
		t.Fatal("the operator is not offered the form on B's factura")
	}
	if p := op.post(path+"/ceder", cesionForm(m[1])); p.status != http.StatusSeeOther {
		t.Fatalf("the operator's cesión: %d %s", p.status, p.body)
	}
	if l := f.cesiones(t, f.B, d.ID); l.TotalCount != 1 || l.Data[0].Monto != 2380 {
		t.Fatalf("B's cesiones: %+v", l)
	}
	if _, err := f.b.Cesiones.List(context.Background(), f.A.id, d.ID, api.CesionListParams{}); err == nil {
		t.Fatal("A lists B's cesiones")
	}
}

// The types the registry takes, by the SII's list (sii-cesion-notes):
// facturas 33 and 34, the liquidación-factura 43 and the factura de
// compra 46; not the guía, though its copy is cedible with its factura.
func TestCedible(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    dte.TipoDTE
		want bool
	}{{33, true}, {34, true}, {43, true}, {46, true}, {39, false}, {41, false}, {52, false}, {56, false}, {61, false}, {110, false}} {
		if got := c.t.Transferable(); got != c.want {
			t.Errorf("TipoDTE(%d).Transferable() = %v, want %v", c.t, got, c.want)
		}
	}
}

// The amount as people type it: dots, a dollar sign, spaces; anything
// else, a decimal or a number not above 0 is refused beside the field;
// empty is the face's default (the total).
func TestReadCederMonto(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want int64
		bad  bool
	}{{"3570", 3570, false}, {"$3.570", 3570, false}, {" 1.234.567 ", 1234567, false}, {"", 0, false},
		{"3,5", 0, true}, {"tres", 0, true}, {"0", 0, true}, {"-5", 0, true}, {"99999999999999999999", 0, true}} {
		f, p := readCeder(url.Values{"monto": {c.in}})
		if _, bad := f.Errores["monto"]; bad != c.bad || (!c.bad && p.Monto != c.want) {
			t.Errorf("monto %q: %d, error %v; want %d, error %v", c.in, p.Monto, bad, c.want, c.bad)
		}
	}
}

// The section's template, from hand-made cesiones: the newest first with
// its number, the registry's code and text escaped, the recorded one's
// line, the count of those not shown; and the form's errors beside their
// fields and above it.
func TestCesionesTemplate(t *testing.T) {
	t.Parallel()
	c := &Console{logger: slog.New(slog.DiscardHandler)}
	if err := c.parseTemplates(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC) // 12:00 in Santiago
	rcs, glosa := "RCS", `Cesión <b>rechazada</b>`
	eok, ok := "EOK", "Envio Aceptado"
	ces := func(e api.EstadoCesion, monto int64, code, text *string) api.Cesion {
		return api.Cesion{Estado: e, Monto: monto, CodigoSII: code, GlosaSII: text, CreatedAt: at, UpdatedAt: at.Add(24 * time.Hour),
			Cesionario: api.Cesionario{Rut: rutFactoring, RazonSocial: "Factoring Austral S.A."}}
	}
	aceptada := ces(api.CesionAceptada, 1190, &eok, &ok)
	d := &api.DTE{ID: "0194d3c2-0000-7000-8000-000000000001", TipoDTE: 33, Folio: 7, Estado: dte.EstadoAceptado, Montos: api.Montos{MontoTotal: 1190}, Cedido: true, Cesion: &aceptada}
	render := func(v *cesionesView) string {
		t.Helper()
		w := httptest.NewRecorder()
		c.render(w, http.StatusOK, "documento", &view{Title: "Factura", CSRF: "tok", Write: true, Data: documentoView{DTE: d, Cesiones: v}})
		if w.Code != http.StatusOK {
			t.Fatalf("render: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	body := render(&cesionesView{Total: 60, Cedida: &aceptada,
		Filas: []cesionFila{{N: 60, Cesion: aceptada}, {N: 59, Cesion: ces(api.CesionRechazada, 1000, &rcs, &glosa)}}})
	for _, want := range []string{
		`<dd id="cedida">Cedida a Factoring Austral S.A. (96790240-3) el 21-11-2026</dd>`,
		`<td class="num">60</td><td>Factoring Austral S.A.<br><small>96790240-3</small></td><td class="num">$1.190</td>
<td>Aceptada: cedida<br><small>EOK: Envio Aceptado</small></td><td>20-11-2026 12:00</td>`,
		`<td class="num">59</td>`, `Rechazada<br><small>RCS: Cesión &lt;b&gt;rechazada&lt;/b&gt;</small>`,
		"Se muestran las 2 más recientes de 60.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the section lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, "<b>") || strings.Contains(body, `id="form-ceder"`) {
		t.Errorf("the recorded cesión's section: %s", body)
	}

	d.Cedido, d.Cesion = false, nil
	form := &cederForm{Clave: "k", Rut: rutFactoring, Monto: "1190", Errores: map[string]string{"cesionario_direccion": "tiene de 5 a 60 caracteres"},
		Otros: []string{"Solo se puede ceder una factura que el SII aceptó."}}
	body = render(&cesionesView{Ceder: form, Errores: form.Otros})
	for _, want := range []string{"Esta factura no tiene cesiones.", `action="/console/documentos/` + d.ID + `/ceder"`,
		`name="csrf" value="tok"`, `name="clave" value="k"`, `id="cesionario_rut" name="cesionario_rut" value="96790240-3"`,
		`id="cesionario_direccion" name="cesionario_direccion" value="" maxlength="200" aria-invalid="true" aria-describedby="cesionario_direccion-error"`,
		`<p class="campo-error" id="cesionario_direccion-error">tiene de 5 a 60 caracteres</p>`,
		`<div class="error" role="alert" id="ceder-errores"><ul><li>Solo se puede ceder una factura que el SII aceptó.</li></ul></div>`,
		`<button type="submit" id="ceder">Ceder factura</button>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the form lacks %q: %s", want, body)
		}
	}
	if strings.Contains(body, `id="cedida"`) || strings.Contains(body, `id="monto-error"`) {
		t.Errorf("the form's section: %s", body)
	}
	// Another type: no section at all.
	d.TipoDTE = 39
	if body = render(nil); strings.Contains(body, "Cesiones") {
		t.Errorf("a boleta's page has the section: %s", body)
	}
}
