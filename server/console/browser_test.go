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
	"github.com/dtekit/dtekit/internal/oracle"
)

// rutE is the company the browser moves to production; its check digit
// by hand from the right: 1·2+1·3+1·4+1·5+1·6+1·7+6·2+7·3 = 60,
// 60 mod 11 = 5, 11−5 = 6.
const rutE = "76111111-6"

// testBrowser drives a real headless Chromium (Debian's chromium)
// through the console, once at a phone's width (375 px) and once at a
// desktop's: sign in, Resumen, Documentos, a document with its PDF
// framed, and the acceptance of a received document through its form
// and confirmation. One browser process serves both widths.
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
	for _, c := range []struct {
		name          string
		width, height int64
		recibido      string
	}{{"375px", 375, 812, f.A.recibidos[0]}, {"desktop", 1280, 900, f.A.recibidos[4]}} {
		t.Run(c.name, func(t *testing.T) {
			tab, cancelTab := chromedp.NewContext(browserCtx)
			defer cancelTab()
			ctx, cancel := context.WithTimeout(tab, 60*time.Second)
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
			} {
				must(page.name, chromedp.Do(ctx, chromedp.Navigate(base+page.path), chromedp.WaitVisible(CSS(page.sel))))
				fits(page.name)
				shot(page.name)
			}
			r, err := f.b.Received.Get(context.Background(), f.A.id, c.recibido)
			if err != nil || r.Estado != api.RecibidoAceptado {
				t.Fatalf("the accepted document: %+v %v", r, err)
			}
			// Sign out: the console asks to sign in again.
			must("sign-out", chromedp.Do(ctx,
				chromedp.Click(CSS(`form.salir button`)),
				chromedp.WaitVisible(CSS(`#credencial`)),
			))
			if c.width != 375 {
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
