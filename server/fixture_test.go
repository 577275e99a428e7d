package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// Shared, slow-to-generate credentials: the test authority with its CAFs
// and signing certificate (billingtest), and the JWT signing key.
var (
	jwtOnce sync.Once
	jwtKey  *rsa.PrivateKey
	jwtErr  error
)

func sharedCreds(t testing.TB) (*billingtest.Credentials, *rsa.PrivateKey) {
	t.Helper()
	cr := billingtest.Creds(t)
	jwtOnce.Do(func() { jwtKey, jwtErr = rsa.GenerateKey(rand.Reader, 2048) })
	if jwtErr != nil {
		t.Fatal(jwtErr)
	}
	return cr, jwtKey
}

// The second company of the tenant tests: a RUT with a hand-computed
// módulo-11 check digit (7·(2+3+4+5+6+7+2+3) = 224, 224 mod 11 = 4, 11−4 = 7).
const rutB = "77777777-7"

// company is one tenant of the fixture with its credentials.
type company struct {
	id, rut           string
	writeKey, readKey string
	adminTok, userTok string
	// operTok is the server operator's token (role operador) of the company.
	operTok           string
	writeHdr, readHdr []string
	adminHdr, userHdr []string
}

// fixture is a server over a real store with two companies, each with a
// certificate and CAFs, and every kind of credential.
type fixture struct {
	t     testing.TB
	st    store.Store
	b     *billing.Service
	srv   *Server
	tt    *tester
	creds *billingtest.Credentials
	A, B  company
}

// backends runs f once per store backend (billingtest.Backends): SQLite
// in a temporary file and PostgreSQL in a throwaway schema.
func backends(t *testing.T, f func(t *testing.T, open func(t *testing.T) store.Store)) {
	for _, b := range billingtest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			f(t, func(t *testing.T) store.Store { return b.NewStore(t) })
		})
	}
}

// backendsB is backends for benchmarks, with the job runner's default
// polling.
func backendsB(b *testing.B, f func(b *testing.B, st store.Store)) {
	for _, be := range billingtest.Backends() {
		b.Run(be.Name, func(b *testing.B) {
			st, err := be.Open(context.Background(), be.DSN(b), store.JobsConfig{PollInterval: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			f(b, st)
		})
	}
}

func newFixture(t testing.TB, st store.Store, rl RateLimit) *fixture {
	t.Helper()
	return newFixtureWith(t, st, rl, billing.Config{})
}

// newFixtureWith is newFixture with a service built from cfg.
func newFixtureWith(t testing.TB, st store.Store, rl RateLimit, cfg billing.Config) *fixture {
	t.Helper()
	cr, key := sharedCreds(t)
	b := billingtest.NewService(t, st, cfg)
	kf, err := PEMKeyfunc(pemPublic(t, key))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{Billing: b, JWT: &JWTConfig{Keyfunc: kf, Issuer: testIssuer, Audience: testAud}, RateLimit: rl,
		QueueDepth: st.Jobs().QueueDepth})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, st: st, b: b, srv: srv, tt: &tester{t: t, h: srv}, creds: cr}
	ctx := context.Background()
	f.A = f.provision(ctx, billingtest.Company{Tipos: []dte.TipoDTE{33, 39, 61}})
	f.B = f.provision(ctx, billingtest.Company{Rut: rutB, RazonSocial: "Empresa B de Prueba", Tipos: []dte.TipoDTE{33}, Hasta: 100})
	return f
}

// provision creates a company through billing (billingtest.Provision:
// the operator's path) with its certificate and CAFs, then its API keys
// and JWTs.
func (f *fixture) provision(ctx context.Context, want billingtest.Company) company {
	t := f.t
	t.Helper()
	e, err := billingtest.Provision(ctx, f.b, f.creds, want)
	if err != nil {
		t.Fatal(err)
	}
	rut := e.Rut
	wk, err := f.b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	rk, err := f.b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: false})
	if err != nil {
		t.Fatal(err)
	}
	_, key := sharedCreds(t)
	tok := func(role string) string {
		return signToken(t, jwt.SigningMethodRS256, key, jwt.MapClaims{"iss": testIssuer, "aud": testAud, "sub": "u-" + role,
			"exp": time.Now().Add(time.Hour).Unix(), "empresa_id": e.ID, "role": role})
	}
	c := company{id: e.ID, rut: rut, writeKey: wk.Key, readKey: rk.Key, adminTok: tok("admin"), userTok: tok("user"), operTok: tok(RoleOperador)}
	c.writeHdr = []string{"X-Api-Key", c.writeKey}
	c.readHdr = []string{"X-Api-Key", c.readKey}
	c.adminHdr = []string{"Authorization", "Bearer " + c.adminTok}
	c.userHdr = []string{"Authorization", "Bearer " + c.userTok}
	return c
}

// do sends a request and validates the answer against the OpenAPI document.
func (f *fixture) do(method, target string, body any, hdr ...string) *response {
	f.t.Helper()
	return f.tt.do(newReq(method, target, body, hdr...))
}

// want fails the test unless r has the status (and, when given, the code).
func want(t testing.TB, r *response, status int, code ...fault.Code) {
	t.Helper()
	if r.Status != status || (len(code) > 0 && r.Code() != code[0]) {
		c := fault.Code("")
		if len(code) > 0 {
			c = code[0]
		}
		t.Fatalf("status %d %s, want %d %s: %s", r.Status, r.Code(), status, c, truncate(r.Body))
	}
}

// multipartBody builds a certificate upload form; parts with a nil value
// are left out.
func multipartBody(t testing.TB, file []byte, fields map[string]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if file != nil {
		fw, err := mw.CreateFormFile("file", "cert.p12")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(file)
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func (f *fixture) upload(ct string, body []byte, hdr ...string) *response {
	f.t.Helper()
	req := newReq("POST", "/api/v1/billing/empresa/certificado/pfx", body, hdr...)
	req.Header.Set("Content-Type", ct)
	return f.tt.do(req)
}

// factura is a valid emission request of a factura 33 with n lines.
func factura(n int) map[string]any {
	lines := make([]map[string]any, n)
	for i := range lines {
		lines[i] = map[string]any{"nombre": fmt.Sprintf("Artículo %d", i+1), "cantidad": 2, "precio": 1500 + i}
	}
	return map[string]any{
		"tipo_dte": 33,
		"receptor": map[string]any{"rut": "76086428-5", "razon_social": "Cliente de Prueba SpA", "giro": "Servicios",
			"direccion": "Av. Providencia 1234", "comuna": "Providencia", "ciudad": "Santiago"},
		"detalle":   lines,
		"auto_send": false,
	}
}

// emit emits a document and returns its id.
func (f *fixture) emit(c company, body any) (string, *response) {
	f.t.Helper()
	r := f.do("POST", "/api/v1/billing/dte", body, append(c.writeHdr, "Idempotency-Key", newUUID())...)
	want(f.t, r, http.StatusCreated)
	var out api.EmitResponse
	r.JSON(f.t, &out)
	return out.ID, r
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
