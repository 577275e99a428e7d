package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
	"github.com/google/uuid"
)

// The second company: a RUT with a hand-computed módulo-11 check digit
// (7·(2+3+4+5+6+7+2+3) = 224, 224 mod 11 = 4, 11−4 = 7).
const rutB = "77777777-7"

// hostileName is a receptor's razón social that must show as text.
const hostileName = `<script>alert("x")</script> & Cía`

// company is one tenant of the fixture.
type company struct {
	id, rut           string
	writeKey, readKey string
	// dte is one of its documents; recibidos are documents the other
	// company sent it, pending.
	dte       string
	recibidos []string
}

// fixture is the console over a real SQLite store and a fake SII, with
// two companies that each emitted a document and received five from
// the other.
type fixture struct {
	b       *billing.Service
	st      store.Store
	console *Console
	srv     *httptest.Server
	A, B    company
	be      billingtest.Backend // the store's backend and database,
	dsn     string              // for a second store on it

	// keysA is held by every test that creates company A's API keys or
	// counts them around a step that must create none: the subtests run
	// in parallel, and a count taken while another test mints a key
	// would blame the step under test.
	keysA sync.Mutex
}

// createKeyA issues an API key for company A under keysA.
func (f *fixture) createKeyA(t *testing.T, write bool) *api.APIKey {
	t.Helper()
	f.keysA.Lock()
	defer f.keysA.Unlock()
	k, err := f.b.Keys.Create(context.Background(), f.A.id, api.APIKeyInput{Write: write})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newUUID() string { return uuid.NewString() }

func newFixture(t testing.TB) *fixture { return newFixtureOn(t, billingtest.SQLite) }

// newFixtureOn is the fixture over the backend be.
func newFixtureOn(t testing.TB, be billingtest.Backend) *fixture {
	t.Helper()
	ctx := context.Background()
	fake := siitest.New(siitest.Options{AnySigner: true, Steps: []string{"SOK", "FOK"}, StepEvery: 100 * time.Millisecond}).Start()
	t.Cleanup(fake.Close)
	dsn := be.DSN(t)
	st, err := be.Open(ctx, dsn, store.JobsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := billingtest.NewService(t, st, billing.Config{
		Mail: billing.MailConfig{Backoff: []time.Duration{time.Hour}},
		Submission: &billing.SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return fake.Endpoints() },
			UploadBackoff: []time.Duration{0}, PollBackoff: []time.Duration{0}, Timeout: 5 * time.Second},
	})
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	creds := billingtest.Creds(t)
	f := &fixture{b: b, st: st, be: be, dsn: dsn}
	provision := func(c billingtest.Company) company {
		e, err := billingtest.Provision(ctx, b, creds, c)
		if err != nil {
			t.Fatal(err)
		}
		wk, err := b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: true})
		if err != nil {
			t.Fatal(err)
		}
		rk, err := b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: false})
		if err != nil {
			t.Fatal(err)
		}
		return company{id: e.ID, rut: e.Rut, writeKey: wk.Key, readKey: rk.Key}
	}
	f.A = provision(billingtest.Company{Tipos: []dte.TipoDTE{33}})
	f.B = provision(billingtest.Company{Rut: rutB, RazonSocial: "Empresa B de Prueba", Tipos: []dte.TipoDTE{33}, Hasta: 100})
	// Each company sends the other five facturas.
	send := func(from, to *company) { to.recibidos = f.deliver(t, *from, *to, 1000, 2000, 3000, 4000, 5000) }
	send(&f.B, &f.A)
	send(&f.A, &f.B)
	// 1.190 = 1.000 + 19% IVA, by hand.
	f.A.dte = f.emit(t, f.A, "76086428-5", hostileName, 1000, false)
	f.B.dte = f.emit(t, f.B, "76086428-5", "Cliente de B", 1000, false)

	c, err := New(Config{Billing: b, Authenticate: b.Keys.Authenticate, PerSecond: -1, SignInPerMinute: 60000})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	f.console = c
	mux.Handle(Prefix, c)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// deliver has company from emit one factura to company to per price,
// which to receives as a supplier's file once the (fake) SII accepted
// them, so that its registry knows them; it returns their ids at to.
func (f *fixture) deliver(t testing.TB, from, to company, precios ...int) []string {
	t.Helper()
	ctx := context.Background()
	creds := billingtest.Creds(t)
	cert, err := signer.Load(creds.P12, creds.Password)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, precio := range precios {
		id := f.emit(t, from, to.rut, "Cliente", precio, true)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			d, err := f.b.Documents.Get(ctx, from.id, id, api.DTEGetParams{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Estado == dte.EstadoAceptado {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("document %s still %s after 30 s", id, d.Estado)
			}
		}
		x, err := f.b.Documents.XML(ctx, from.id, id)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, x)
	}
	em := creds.Emisor
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: dte.Emisor{Rut: from.rut, FechaResolucion: em.FechaResolucion,
		NumeroResolucion: em.NumeroResolucion}, RutReceptor: to.rut}, cert, docs...)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := f.b.Received.Receive(ctx, to.id, api.ReceiveParams{XML: env})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Estado != "conforme" || len(rec.Recibidos) != len(precios) {
		t.Fatalf("the reception: %+v", rec)
	}
	return rec.Recibidos
}

// browser is an HTTP client with cookies that does not follow redirects.
type browser struct {
	t    *testing.T
	c    *http.Client
	base string
	// csrf is the last token a page carried.
	csrf string
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is one answer.
type page struct {
	status int
	header http.Header
	body   string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if m := csrfField.FindSubmatch(body); m != nil {
		b.csrf = string(m[1])
	}
	return page{res.StatusCode, res.Header, string(body)}
}

func (b *browser) get(path string) page {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

// post sends a form; the last page's CSRF token is added unless the
// form has one.
func (b *browser) post(path string, form url.Values) page {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", b.csrf)
	}
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// signIn opens the sign-in page and signs in with cred.
func (b *browser) signIn(cred string) page {
	b.t.Helper()
	if p := b.get(Prefix + "ingresar"); p.status != 200 {
		b.t.Fatalf("sign-in page: %d", p.status)
	}
	return b.post(Prefix+"ingresar", url.Values{"credencial": {cred}})
}

// session signs in and fails the test unless it worked.
func (f *fixture) session(t *testing.T, cred string) *browser {
	t.Helper()
	b := newBrowser(t, f.srv.URL)
	if p := b.signIn(cred); p.status != http.StatusSeeOther || p.header.Get("Location") != Prefix+"resumen" {
		t.Fatalf("sign-in: %d %s", p.status, p.body)
	}
	b.get(Prefix + "resumen") // its token
	return b
}

func wantStatus(t *testing.T, what string, p page, status int) {
	t.Helper()
	if p.status != status {
		t.Fatalf("%s: status %d, want %d: %.600s", what, p.status, status, p.body)
	}
}

// emit emits a factura of one line of precio from company from to the
// receptor rut, held unless send.
func (f *fixture) emit(t testing.TB, from company, rut, name string, precio int, send bool) string {
	t.Helper()
	body := fmt.Sprintf(`{"tipo_dte":33,"receptor":{"rut":%q,"razon_social":%q,"giro":"Comercio","direccion":"Calle 1","comuna":"Santiago"},
		"detalle":[{"nombre":"Artículo","cantidad":1,"precio":%d}],"auto_send":%t}`, rut, name, precio, send)
	req, err := dte.DecodeRequest(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := f.b.Documents.Emit(context.Background(), from.id, api.EmitParams{IdempotencyKey: newUUID(), Request: req})
	if err != nil {
		t.Fatal(err)
	}
	return out.ID
}
