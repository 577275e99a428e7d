package client_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/client"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/server"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestMain starts the throwaway PostgreSQL cluster the tests share (or
// uses DTEKIT_PG_URL).
func TestMain(m *testing.M) { billingtest.Main(m) }

const (
	jwtIssuer   = "https://auth.example.cl"
	jwtAudience = "dtekit-client-tests"
)

var (
	jwtOnce sync.Once
	jwtKey  *rsa.PrivateKey
	jwtErr  error
)

func signingKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	jwtOnce.Do(func() { jwtKey, jwtErr = rsa.GenerateKey(rand.Reader, 2048) })
	if jwtErr != nil {
		t.Fatal(jwtErr)
	}
	return jwtKey
}

// env is a real server in process: billing over a store of one backend,
// its job runner started, submitting to a fake SII and delivering
// webhooks to loopback, behind server.New on an httptest server.
type env struct {
	name  string
	b     *billing.Service
	url   string
	fake  *siitest.Fake
	creds *billingtest.Credentials
}

func newEnv(t *testing.T, be billingtest.Backend) *env {
	t.Helper()
	ctx := context.Background()
	fake := siitest.New(siitest.Options{AnySigner: true, Steps: []string{"SOK", "FOK"}, StepEvery: 50 * time.Millisecond}).Start()
	t.Cleanup(fake.Close)
	cfg := billing.Config{
		Submission: &billing.SubmitConfig{
			Endpoints:     func(sii.Environment) sii.Endpoints { return fake.Endpoints() },
			UploadBackoff: []time.Duration{0}, PollBackoff: []time.Duration{0}, Timeout: 5 * time.Second,
			BoletaCheckDelay: time.Second, BoletaSafetyDelay: time.Second},
		Delivery: billing.DeliveryConfig{AllowLoopback: true},
		Mail:     billing.MailConfig{Backoff: []time.Duration{time.Hour}, AllowLoopback: true, AnyPort: true},
	}
	b := billingtest.NewService(t, be.NewStore(t), cfg)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&signingKey(t).PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	kf, err := server.PEMKeyfunc(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Billing: b, RateLimit: server.RateLimit{PerSecond: -1},
		JWT: &server.JWTConfig{Keyfunc: kf, Issuer: jwtIssuer, Audience: jwtAudience}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &env{name: be.Name, b: b, url: hs.URL, fake: fake, creds: billingtest.Creds(t)}
}

// tenant is one company of an env with its clients: w writes (an API
// key with write access), r only reads, admin holds the admin role (a
// JWT from a TokenSource, as an ERP behind a login would).
type tenant struct {
	id, rut  string
	wkey     string
	w, r     *client.Client
	admin    *client.Client
	jwtCalls *atomic.Int64
}

var rutSeq atomic.Int64

// nextRUT returns a company RUT no other tenant of the process has, its
// check digit computed by chile.CheckDigit (the módulo-11 rule).
func nextRUT() string {
	n := 76100000 + int(rutSeq.Add(1))
	return chile.FormatRUT(n, chile.CheckDigit(n))
}

// tenant provisions a company through billing (the operator's path: no
// route creates companies) with the signing certificate and a CAF of
// each type of tipos, and its API keys (no route issues keys either).
func (e *env) tenant(t *testing.T, tipos ...dte.TipoDTE) *tenant {
	t.Helper()
	ctx := context.Background()
	rut := nextRUT()
	em, err := billingtest.Provision(ctx, e.b, e.creds, billingtest.Company{Rut: rut, RazonSocial: "Empresa " + rut, Tipos: tipos})
	if err != nil {
		t.Fatal(err)
	}
	wk, err := e.b.Keys.Create(ctx, em.ID, api.APIKeyInput{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	rk, err := e.b.Keys.Create(ctx, em.ID, api.APIKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	tn := &tenant{id: em.ID, rut: em.Rut, wkey: wk.Key, jwtCalls: new(atomic.Int64)}
	tn.w = e.client(t, client.WithAPIKey(wk.Key))
	tn.r = e.client(t, client.WithAPIKey(rk.Key))
	key := signingKey(t)
	tn.admin = e.client(t, client.WithTokenSource(client.TokenSourceFunc(func(context.Context) (string, error) {
		tn.jwtCalls.Add(1)
		return jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": jwtIssuer, "aud": jwtAudience, "sub": "admin@" + rut,
			"exp": time.Now().Add(time.Minute).Unix(), "empresa_id": em.ID, "role": server.RoleAdmin}).SignedString(key)
	})))
	return tn
}

func (e *env) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(e.url, append(opts, client.WithUserAgent("client-tests/1"),
		client.WithRetryPolicy(client.RetryPolicy{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}))...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond every 50 ms for up to 20 s.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAgainstServer runs every method against the real server on SQLite
// and on PostgreSQL: one server per backend, shared by parallel
// subtests that each work for companies of their own.
func TestAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server over each backend; run without -short")
	}
	for _, be := range billingtest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, be)
			for name, fn := range map[string]func(t *testing.T, e *env){
				"documents": testDocuments,
				"envelopes": testEnvelopes,
				"received":  testReceived,
				"catalog":   testCatalog,
				"cafs":      testCAFs,
				"settings":  testSettings,
				"mail":      testMail,
				"webhooks":  testWebhooks,
				"retry":     testRetryAfterLostAnswer,
				"tenancy":   testTenancy,
			} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					fn(t, e)
				})
			}
		})
	}
}

func must[T any](t *testing.T, what string) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}
