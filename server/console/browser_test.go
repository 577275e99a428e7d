package console

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// rutE is the company the browser moves to production; its check digit
// by hand from the right: 1·2+1·3+1·4+1·5+1·6+1·7+6·2+7·3 = 60,
// 60 mod 11 = 5, 11−5 = 6.
const rutE = "76111111-6"

// rutReceptor is the receptor of the documents the browser test emits,
// none other's (other tests count documents by receptor); its check
// digit by hand from the right: 0·2+1·3+2·4+3·5+4·6+5·7+6·2+7·3 = 118,
// 118 mod 11 = 8, 11−8 = 3.
const rutReceptor = "76543210-3"

// testBrowser drives a real headless Chromium (Debian's chromium)
// through the console, once at a phone's width (375 px) and once at a
// desktop's: sign in, Resumen, Documentos, a document with its PDF
// framed, the acceptance of a received document through its form and
// confirmation, the other pages, sign out. At the phone's width a
// company moves to production through Ajustes; at the desktop's (see
// browserActs) the forms that act: a factura emitted through Emitir
// and watched until the fake SII accepts it, then ceded through its
// page, a held document sent, a received document claimed, a CAF
// uploaded, a webhook paused, and a
// read-only session offered none of them. Every step is checked
// against the service afterwards. One browser process serves both
// widths.
func (f *fixture) testBrowser(t *testing.T) {
	exe := oracle.Tool(t, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	type CSS = chromedp.CSS
	// DTEKIT_CONSOLE_SCREENSHOTS names a directory where the test keeps
	// a picture of every page at both widths (the README's pictures:
	// DTEKIT_CONSOLE_SCREENSHOTS=$PWD/docs/images go test -run
	// TestConsole/Browser ./server/console/).
	dir := os.Getenv("DTEKIT_CONSOLE_SCREENSHOTS")
	acts := f.newActs(t)
	// A factura the SII accepted, with its cesión form (1.000 + 19% IVA).
	cedible := f.acceptedTo(t, f.A, rutB, 1190).ID
	for _, c := range []struct {
		name          string
		width, height int64
		recibido      string
	}{{"375px", 375, 812, f.A.recibidos[0]}, {"desktop", 1280, 900, f.A.recibidos[4]}} {
		t.Run(c.name, func(t *testing.T) {
			tab, cancelTab := chromedp.NewContext(browserCtx)
			defer cancelTab()
			ctx, cancel := context.WithTimeout(tab, 2*time.Minute)
			defer cancel()
			base := f.srv.URL + Prefix
			// A page fits the width: nothing scrolls sideways but tables.
			fits := func(what string) {
				t.Helper()
				ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
				if err != nil || !ok {
					t.Errorf("%s at %d px: wider than the window (%v)", what, c.width, err)
				}
			}
			must := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			// shot keeps the page as a picture when asked (see
			// screenshotDir).
			shot := func(name string) {
				t.Helper()
				if dir == "" {
					return
				}
				png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				must("screenshot "+name, err)
				must("screenshot "+name, os.WriteFile(filepath.Join(dir, fmt.Sprintf("console-%s-%s.png", name, c.name)), png, 0o644))
			}
			must("sign-in", chromedp.Do(ctx,
				chromedp.EmulateViewport(c.width, c.height),
				chromedp.Navigate(base+"resumen"), // no session: the sign-in form
				chromedp.WaitVisible(CSS(`#credencial`)),
			))
			shot("ingresar")
			must("sign-in", chromedp.Do(ctx,
				chromedp.SendKeys(CSS(`#credencial`), f.A.writeKey),
				chromedp.Click(CSS(`form.ingreso button`)),
				chromedp.WaitVisible(CSS(`#hoy`)),
			))
			title, err := chromedp.Run(ctx, chromedp.Title())
			must("title", err)
			if title != "Resumen · dtekit" {
				t.Fatalf("after sign-in: title %q", title)
			}
			fits("Resumen")
			shot("resumen")
			must("Documentos", chromedp.Do(ctx,
				chromedp.Click(CSS(`nav a[href="/console/documentos"]`)),
				chromedp.WaitVisible(CSS(`form.filtros`)),
			))
			fits("Documentos")
			shot("documentos")
			must("a document", chromedp.Do(ctx,
				chromedp.Click(CSS(`a[href="/console/documentos/`+f.A.dte+`"]`)),
				chromedp.WaitVisible(CSS(`iframe.pdf`)),
			))
			h1, err := chromedp.Run(ctx, chromedp.Text(CSS(`h1`)))
			must("h1", err)
			src, err := chromedp.Run(ctx, chromedp.AttributeValue(CSS(`iframe.pdf`), "src"))
			must("iframe", err)
			if !strings.HasPrefix(h1, "Factura (33) N° ") || src.Value != "/console/documentos/"+f.A.dte+"/pdf" {
				t.Fatalf("the document's page: h1 %q, iframe %q", h1, src.Value)
			}
			fits("the document")
			shot("documento")
			must("deciding", chromedp.Do(ctx,
				chromedp.Navigate(base+"recibidos/"+c.recibido),
				chromedp.WaitVisible(CSS(`#aceptar`)),
			))
			shot("recibido")
			must("deciding", chromedp.Do(ctx,
				chromedp.Click(CSS(`#aceptar`)),
				chromedp.WaitVisible(CSS(`#confirmar`)),
			))
			shot("confirmar")
			must("deciding", chromedp.Do(ctx,
				chromedp.Click(CSS(`#confirmar`)),
				chromedp.WaitVisible(CSS(`.aviso`)),
			))
			aviso, err := chromedp.Run(ctx, chromedp.Text(CSS(`.aviso`)))
			must("the notice", err)
			if aviso != "Registrado: Aceptación del contenido (ACD)." {
				t.Fatalf("after accepting: notice %q", aviso)
			}
			fits("the received document")
			// The other pages, each checked to fit (and kept as pictures
			// when asked).
			for _, page := range []struct{ name, path, sel string }{
				{"recibidos", "recibidos", "nav.pestanas"}, {"envios", "envios", "main table"},
				{"folios", "folios", "#umbral"}, {"webhooks", "webhooks", "main h1"}, {"emitir", "emitir", "#tipo"},
				{"ajustes", "ajustes", "#guardar-empresa"}, {"nota-credito", "emitir?desde=" + f.A.dte, "#ref_folio"},
				{"ceder", "documentos/" + cedible, "#form-ceder"},
			} {
				must(page.name, chromedp.Do(ctx, chromedp.Navigate(base+page.path), chromedp.WaitVisible(CSS(page.sel))))
				fits(page.name)
				shot(page.name)
			}
			r, err := f.b.Received.Get(context.Background(), f.A.id, c.recibido)
			if err != nil || r.Estado != api.RecibidoAceptado {
				t.Fatalf("the accepted document: %+v %v", r, err)
			}
			if c.width != 375 {
				f.browserActs(t, ctx, acts)
			}
			// Sign out: the console asks to sign in again.
			must("sign-out", chromedp.Do(ctx,
				chromedp.Click(CSS(`form.salir button`)),
				chromedp.WaitVisible(CSS(`#credencial`)),
			))
			if c.width != 375 {
				f.browserReadOnly(t, ctx)
				return
			}
			// At the phone's width, a company of its own moves to
			// production through Ajustes.
			e, err := billingtest.Provision(context.Background(), f.b, billingtest.Creds(t), billingtest.Company{Rut: rutE, RazonSocial: "Empresa E"})
			must("company E", err)
			k, err := f.b.Keys.Create(context.Background(), e.ID, api.APIKeyInput{Write: true})
			must("E's key", err)
			must("production", chromedp.Do(ctx,
				chromedp.SendKeys(CSS(`#credencial`), k.Key),
				chromedp.Click(CSS(`form.ingreso button`)),
				chromedp.WaitVisible(CSS(`#hoy`)),
				chromedp.Click(CSS(`nav a[href="/console/ajustes"]`)),
				chromedp.WaitVisible(CSS(`#cambiar-ambiente`)),
				chromedp.SetValue(CSS(`#numero_resolucion`), "80"),
				chromedp.SetValue(CSS(`#fecha_resolucion`), "2014-08-22"),
				chromedp.Click(CSS(`#cambiar-ambiente`)),
				chromedp.WaitVisible(CSS(`.aviso`)),
			))
			actual, err := chromedp.Run(ctx, chromedp.Text(CSS(`#ambiente-actual`)))
			must("the environment", err)
			if got, err := f.b.Company.Get(context.Background(), e.ID); err != nil || got.Ambiente != "produccion" || actual != "Producción" {
				t.Fatalf("after the move: page %q, company %+v %v", actual, got, err)
			}
			fits("Ajustes")
			shot("ajustes-produccion")
			must("sign-out", chromedp.Do(ctx,
				chromedp.Click(CSS(`form.salir button`)),
				chromedp.WaitVisible(CSS(`#credencial`)),
			))
		})
	}
}

// acts is what browserActs works on, made before the browser starts: a
// held document of A, a received document of A still pending, a webhook
// of A and a CAF of A in a file.
type acts struct {
	held, recibido, webhook, caf string
}

func (f *fixture) newActs(t *testing.T) acts {
	t.Helper()
	ctx := context.Background()
	var a acts
	a.held = f.emit(t, f.A, rutReceptor, "Cliente retenido", 2000, false)
	a.recibido = f.deliver(t, f.B, f.A, 6000)[0]
	// An https address the test never reaches: the webhook is paused
	// before anything of A could be delivered to it.
	w, err := f.b.Webhooks.Create(ctx, f.A.id, api.WebhookInput{URL: "https://hooks.example.com/navegador", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	a.webhook = w.ID
	// Notas de débito (56), a type A has no CAF of, so nothing overlaps.
	emp, err := f.b.Company.Get(ctx, f.A.id)
	if err != nil {
		t.Fatal(err)
	}
	file, err := billingtest.Creds(t).Authority.Issue(caftest.IssueRequest{RutEmisor: emp.Rut, RazonSocial: emp.RazonSocial,
		Tipo: 56, Desde: 1, Hasta: 10, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	a.caf = filepath.Join(t.TempDir(), "caf-56.xml")
	if err := os.WriteFile(a.caf, file, 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

// browserActs runs, signed in with A's write key, the forms that act,
// each checked against the service afterwards.
func (f *fixture) browserActs(t *testing.T, ctx context.Context, a acts) {
	type CSS = chromedp.CSS
	bg := context.Background()
	base := f.srv.URL + Prefix
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// estado is the state a document's page shows.
	estado := func() string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(CSS(`dl.datos dt:first-child + dd`)))
		must("the state", err)
		return s
	}
	// until reloads the page until its state is ok, for at most 30 s.
	until := func(what string, ok func(string) bool) string {
		t.Helper()
		s := estado()
		for deadline := time.Now().Add(30 * time.Second); !ok(s); s = estado() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the page still shows %q after 30 s", what, s)
			}
			must(what, chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond), chromedp.Reload(), chromedp.WaitVisible(CSS(`dl.datos`))))
		}
		return s
	}

	// The webhook is paused first, so that the emissions below notify no one.
	must("pausing the webhook", chromedp.Do(ctx,
		chromedp.Navigate(base+"webhooks/"+a.webhook),
		chromedp.Click(CSS(`#pausar`)),
		chromedp.WaitVisible(CSS(`#activar`)),
	))
	if w, err := f.b.Webhooks.Get(bg, f.A.id, a.webhook); err != nil || w.IsActive {
		t.Fatalf("the paused webhook: %+v %v", w, err)
	}

	// A factura through Emitir: 3 × 1.500 = 4.500 net, 855 IVA (19%),
	// 5.355 in all, by hand; sent to the SII (the box is checked).
	must("Emitir", chromedp.Do(ctx,
		chromedp.Navigate(base+"emitir"),
		chromedp.WaitVisible(CSS(`#rut`)),
		chromedp.SendKeys(CSS(`#rut`), rutReceptor),
		chromedp.SendKeys(CSS(`#razon_social`), "Comercial Navegador"),
		chromedp.SendKeys(CSS(`#giro`), "Comercio"),
		chromedp.SendKeys(CSS(`#direccion`), "Calle 2"),
		chromedp.SendKeys(CSS(`#comuna`), "Ñuñoa"),
		chromedp.SendKeys(CSS(`#nombre0`), "Lápiz"),
		chromedp.SendKeys(CSS(`#cantidad0`), "3"),
		chromedp.SendKeys(CSS(`#precio0`), "1500"),
		chromedp.Click(CSS(`#revisar`)),
		chromedp.WaitVisible(CSS(`#emitir`)),
	))
	totales, err := chromedp.Run(ctx, chromedp.Text(CSS(`#totales`)))
	must("the totals", err)
	if !strings.Contains(totales, "$5.355") {
		t.Fatalf("the preview's totals: %q", totales)
	}
	must("Emitir", chromedp.Do(ctx, chromedp.Click(CSS(`#emitir`)), chromedp.WaitVisible(CSS(`.aviso`))))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	must("the emitted document", err)
	id, ok := strings.CutPrefix(strings.TrimSuffix(loc, "?hecho=emitido"), base+"documentos/")
	if !ok {
		t.Fatalf("after emitting: at %s", loc)
	}
	until("the emitted factura", func(s string) bool { return s == "Aceptado" })
	if d, err := f.b.Documents.Get(bg, f.A.id, id, api.DTEGetParams{}); err != nil || d.Estado != dte.EstadoAceptado ||
		d.TipoDTE != 33 || d.MontoTotal != 5355 || d.RazonSocialReceptor != "Comercial Navegador" {
		t.Fatalf("the emitted factura: %+v %v", d, err)
	}
	f.browserCede(t, ctx, id)

	// The held document: its page's button sends it.
	must("sending", chromedp.Do(ctx,
		chromedp.Navigate(base+"documentos/"+a.held),
		chromedp.Click(CSS(`#enviar`)),
		chromedp.WaitVisible(CSS(`.aviso`)),
	))
	until("the sent document", func(s string) bool { return s != "Firmado" })
	if d, err := f.b.Documents.Get(bg, f.A.id, a.held, api.DTEGetParams{}); err != nil || d.Estado == dte.EstadoFirmado {
		t.Fatalf("the sent document: %+v %v", d, err)
	}

	// A claim of a received document, its kind chosen and its reason
	// typed, through the confirmation.
	const motivo = "Faltaron dos cajas"
	must("claiming", chromedp.Do(ctx,
		chromedp.Navigate(base+"recibidos/"+a.recibido),
		chromedp.WaitVisible(CSS(`#reclamar`)),
		chromedp.SetValue(CSS(`#tipo-reclamo`), "RFP"),
		chromedp.SendKeys(CSS(`#motivo`), motivo),
		chromedp.Click(CSS(`#reclamar`)),
		chromedp.WaitVisible(CSS(`#confirmar`)),
		chromedp.Click(CSS(`#confirmar`)),
		chromedp.WaitVisible(CSS(`.aviso`)),
	))
	aviso, err := chromedp.Run(ctx, chromedp.Text(CSS(`.aviso`)))
	must("the notice", err)
	if aviso != "Registrado: Reclamo por falta parcial de mercaderías (RFP)." {
		t.Errorf("after claiming: notice %q", aviso)
	}
	if r, err := f.b.Received.Get(bg, f.A.id, a.recibido); err != nil || r.Estado != api.RecibidoReclamado ||
		r.Respuestas.Decision == nil || r.Respuestas.Decision.Accion != "RFP" || r.Respuestas.Decision.Motivo != motivo {
		t.Fatalf("the claimed document: %+v %v", r, err)
	}

	// A CAF through Folios' file input: folios 1 to 10 are 10.
	must("uploading a CAF", chromedp.Do(ctx,
		chromedp.Navigate(base+"folios"),
		chromedp.SetUploadFiles(CSS(`#archivo`), []string{a.caf}),
		chromedp.Click(CSS(`#subir-caf`)),
		chromedp.WaitVisible(CSS(`.aviso`)),
	))
	aviso, err = chromedp.Run(ctx, chromedp.Text(CSS(`.aviso`)))
	must("the notice", err)
	if aviso != "CAF registrado." {
		t.Errorf("after uploading: notice %q", aviso)
	}
	if cafs, err := f.b.CAFs.List(bg, f.A.id, api.CAFListParams{TipoDTE: 56}); err != nil || cafs.TotalCount != 1 {
		t.Fatalf("A's CAFs of type 56: %+v %v", cafs, err)
	}
}

// browserReadOnly signs in with A's read-only key (the write session
// signed out): a held document's page offers no send button and
// Ajustes no form.
func (f *fixture) browserReadOnly(t *testing.T, ctx context.Context) {
	type CSS = chromedp.CSS
	base := f.srv.URL + Prefix
	err := chromedp.Do(ctx,
		chromedp.SendKeys(CSS(`#credencial`), f.A.readKey),
		chromedp.Click(CSS(`form.ingreso button`)),
		chromedp.WaitVisible(CSS(`#hoy`)),
		chromedp.Navigate(base+"documentos/"+f.A.dte),
		chromedp.WaitVisible(CSS(`iframe.pdf`)),
	)
	if err != nil {
		t.Fatalf("the read-only session: %v", err)
	}
	if d, err := f.b.Documents.Get(context.Background(), f.A.id, f.A.dte, api.DTEGetParams{}); err != nil || d.Estado != dte.EstadoFirmado {
		t.Fatalf("the held document: %+v %v", d, err)
	}
	none := func(what, sel string) {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+"`"+sel+"`"+`).length`))
		if err != nil || n != 0 {
			t.Errorf("read-only, %s: %d of %s (%v)", what, n, sel, err)
		}
	}
	none("a held document", `#enviar, form[action$="/enviar"]`)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("Ajustes", chromedp.Do(ctx, chromedp.Navigate(base+"ajustes"), chromedp.WaitVisible(CSS(`main h1`))))
	none("Ajustes", `main form`)
	must("sign-out", chromedp.Do(ctx,
		chromedp.Click(CSS(`form.salir button`)),
		chromedp.WaitVisible(CSS(`#credencial`)),
	))
}

// browserCede cedes the accepted factura id (5.355, see browserActs)
// through its page's form, the amount left at the total, and finds it
// listed; the service has the one cesión.
func (f *fixture) browserCede(t *testing.T, ctx context.Context, id string) {
	type CSS = chromedp.CSS
	err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+Prefix+"documentos/"+id),
		chromedp.WaitVisible(CSS(`#ceder`)),
		chromedp.SendKeys(CSS(`#cesionario_rut`), rutFactoring),
		chromedp.SendKeys(CSS(`#cesionario_razon_social`), "Factoring Austral S.A."),
		chromedp.SendKeys(CSS(`#cesionario_direccion`), "Av. Apoquindo 3000"),
		chromedp.SendKeys(CSS(`#cesionario_email`), "cesiones@factoring.cl"),
		chromedp.SendKeys(CSS(`#email_notificacion`), "finanzas@empresa.cl"),
		chromedp.Click(CSS(`#ceder`)),
		chromedp.WaitVisible(CSS(`#lista-cesiones`)),
	)
	if err != nil {
		t.Fatalf("ceding: %v", err)
	}
	row, err := chromedp.Run(ctx, chromedp.Text(CSS(`#lista-cesiones tbody tr`)))
	if err != nil {
		t.Fatalf("the cesión's row: %v", err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#form-ceder').length`))
	if err != nil || n != 0 || !strings.Contains(row, "Factoring Austral S.A.") || !strings.Contains(row, "$5.355") {
		t.Fatalf("after ceding: row %q, %d forms (%v)", row, n, err)
	}
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`)); err != nil || !ok {
		t.Errorf("the ceded factura's page is wider than the window (%v)", err)
	}
	l, err := f.b.Cesiones.List(context.Background(), f.A.id, id, api.CesionListParams{})
	if err != nil || l.TotalCount != 1 || l.Data[0].Monto != 5355 || l.Data[0].Cesionario.Rut != rutFactoring {
		t.Fatalf("the factura's cesiones: %+v %v", l, err)
	}
}
