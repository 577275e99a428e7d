package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/golang-jwt/jwt/v5"
)

const (
	testEmpresa = "0b9d6c1e-7a43-4f0e-9a55-3c2d1e0f9a11"
	testIssuer  = "https://auth.example.test"
	testAud     = "dtekit"
)

// fakeKeys is an API-key resolver for the infrastructure tests.
func fakeKeys(_ context.Context, key string) (*api.Principal, error) {
	switch key {
	case "read-key":
		return &api.Principal{EmpresaID: testEmpresa, Credential: "apikey:r"}, nil
	case "write-key":
		return &api.Principal{EmpresaID: testEmpresa, Credential: "apikey:w", Write: true}, nil
	}
	return nil, errUnauthorized
}

func rsaKey(t testing.TB, bits int) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func pemPublic(t testing.TB, k *rsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func newInfraServer(t testing.TB, key *rsa.PrivateKey, rl RateLimit) *Server {
	t.Helper()
	kf, err := PEMKeyfunc(pemPublic(t, key))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{
		Billing:   stubBilling(t),
		JWT:       &JWTConfig{Keyfunc: kf, Issuer: testIssuer, Audience: testAud},
		RateLimit: rl,
		ReadyChecks: map[string]func(context.Context) error{
			"database": func(context.Context) error { return nil },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.apiKeys = fakeKeys
	s.tenantExists = func(_ context.Context, empresaID string) error {
		if empresaID == testEmpresa {
			return nil
		}
		return fault.Missing("empresa", empresaID)
	}
	return s
}

// stubBilling is a billing service over an empty SQLite store, shared by
// the tests of the HTTP layer that never reach it.
func stubBilling(t testing.TB) *billing.Service {
	t.Helper()
	stubOnce.Do(func() {
		kr, err := billing.NewKeyring(make([]byte, 32))
		if err != nil {
			stubErr = err
			return
		}
		st, err := sqlite.Open(context.Background(), filepath.Join(testDir, "stub.db"), nil)
		if err != nil {
			stubErr = err
			return
		}
		stub, stubErr = billing.New(billing.Config{Keyring: kr, Store: st})
	})
	if stubErr != nil {
		t.Fatal(stubErr)
	}
	return stub
}

var (
	stubOnce sync.Once
	stub     *billing.Service
	stubErr  error
)

func signToken(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func goodClaims() jwt.MapClaims {
	return jwt.MapClaims{
		"iss": testIssuer, "aud": testAud, "sub": "user-1",
		"exp": time.Now().Add(time.Hour).Unix(), "empresa_id": testEmpresa, "role": "admin",
	}
}

func TestRoutingErrorsAreEnvelopes(t *testing.T) {
	s := newInfraServer(t, rsaKey(t, 2048), RateLimit{})
	tt := &tester{t: t, h: s}

	r := tt.do(newReq("GET", "/nope", nil))
	if r.Status != 404 || r.Code() != fault.NotFound {
		t.Errorf("unknown path: %d %s", r.Status, r.Body)
	}
	r = tt.do(newReq("DELETE", "/healthz", nil))
	if r.Status != 405 || r.Code() != fault.MethodNotAllowed || !strings.Contains(r.Header.Get("Allow"), "GET") {
		t.Errorf("wrong method: %d %v %s", r.Status, r.Header, r.Body)
	}
	r = tt.do(newReq("GET", "/healthz", nil))
	if r.Status != 200 {
		t.Errorf("healthz: %d", r.Status)
	}
	r = tt.do(newReq("GET", "/readyz", nil))
	if r.Status != 200 {
		t.Errorf("readyz: %d %s", r.Status, r.Body)
	}
	r = tt.do(newReq("GET", "/api/v1/openapi.yaml", nil))
	if r.Status != 200 || !strings.HasPrefix(string(r.Body), "openapi: 3.1") {
		t.Errorf("openapi: %d", r.Status)
	}
	s.Drain()
	r = tt.do(newReq("GET", "/readyz", nil))
	if r.Status != 503 || r.Code() != fault.Unavailable {
		t.Errorf("readyz while draining: %d %s", r.Status, r.Body)
	}
}

func TestReadyzNamesFailedChecks(t *testing.T) {
	s, err := New(Config{Billing: stubBilling(t), ReadyChecks: map[string]func(context.Context) error{
		"database": func(context.Context) error { return nil },
		"jobs":     func(context.Context) error { return errors.New("runner stopped") },
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := (&tester{t: t, h: s}).do(newReq("GET", "/readyz", nil))
	if r.Status != 503 || !strings.Contains(string(r.Body), `"jobs":"runner stopped"`) || strings.Contains(string(r.Body), `"database"`) {
		t.Errorf("readyz: %d %s", r.Status, r.Body)
	}
}

func TestPanicAnswers500WithoutStack(t *testing.T) {
	s := newInfraServer(t, rsaKey(t, 2048), RateLimit{})
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /api/v1/billing/empresa", func(http.ResponseWriter, *http.Request) {
		panic("boom: secret detail")
	})
	r := (&tester{t: t, h: s}).do(newReq("GET", "/api/v1/billing/empresa", nil))
	if r.Status != 500 || r.Code() != fault.Internal {
		t.Fatalf("panic: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "boom") || strings.Contains(string(r.Body), "goroutine") {
		t.Errorf("panic leaked into the body: %s", r.Body)
	}
}

// authProbe registers a route that reports its principal.
func authProbe(s *Server, acc access) {
	s.mux = http.NewServeMux()
	s.handle("GET /api/v1/billing/empresa", acc, func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
		writeJSON(w, 200, map[string]any{
			"id": p.EmpresaID, "rut": "76543210-3", "razon_social": strconv.FormatBool(p.Admin),
			"giro": "g", "direccion": "d", "comuna": "c", "ciudad": "c", "ambiente": "certificacion",
			"fecha_resolucion": "2024-01-01", "numero_resolucion": 0,
		})
		return nil
	})
}

func TestAuthentication(t *testing.T) {
	key := rsaKey(t, 2048)
	other := rsaKey(t, 2048)
	s := newInfraServer(t, key, RateLimit{PerSecond: -1})
	authProbe(s, read)
	tt := &tester{t: t, h: s}
	const path = "/api/v1/billing/empresa"

	bearer := func(tok string) *http.Request { return newReq("GET", path, nil, "Authorization", "Bearer "+tok) }
	with := func(mut func(jwt.MapClaims)) jwt.MapClaims { c := goodClaims(); mut(c); return c }

	cases := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"no credential", newReq("GET", path, nil), 401},
		{"unknown key", newReq("GET", path, nil, "X-Api-Key", "nope"), 401},
		{"read key", newReq("GET", path, nil, "X-Api-Key", "read-key"), 200},
		{"both credentials", newReq("GET", path, nil, "X-Api-Key", "read-key", "Authorization", "Bearer x"), 401},
		{"basic scheme", newReq("GET", path, nil, "Authorization", "Basic dXNlcjpwYXNz"), 401},
		{"good token", bearer(signToken(t, jwt.SigningMethodRS256, key, goodClaims())), 200},
		{"other key", bearer(signToken(t, jwt.SigningMethodRS256, other, goodClaims())), 401},
		{"RS512", bearer(signToken(t, jwt.SigningMethodRS512, key, goodClaims())), 401},
		{"HS256 with the public key as secret", bearer(signToken(t, jwt.SigningMethodHS256, pemPublic(t, key), goodClaims())), 401},
		{"alg none", bearer(signToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, goodClaims())), 401},
		{"no exp", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { delete(c, "exp") }))), 401},
		{"expired", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))), 401},
		{"wrong issuer", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["iss"] = "https://evil.test" }))), 401},
		{"wrong audience", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["aud"] = "other" }))), 401},
		{"no empresa", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { delete(c, "empresa_id") }))), 401},
		{"garbage token", bearer("a.b.c"), 401},
		// Issue 20, point 11: a critical extension we do not understand, an
		// iat beyond the leeway in the future, an exp that is not a number.
		{"unknown crit", bearer(signTokenHeader(t, key, goodClaims(), map[string]any{"crit": []string{"exp-ext"}, "exp-ext": true})), 401},
		{"iat in the future", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(10 * time.Minute).Unix() }))), 401},
		{"iat within the leeway", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["iat"] = time.Now().Add(10 * time.Second).Unix() }))), 200},
		{"exp as text", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }))), 401},
		{"exp as a numeric string", bearer(signToken(t, jwt.SigningMethodRS256, key, with(func(c jwt.MapClaims) { c["exp"] = strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) }))), 401},
	}
	for _, c := range cases {
		r := tt.do(c.req)
		if r.Status != c.want {
			t.Errorf("%s: status %d, want %d: %s", c.name, r.Status, c.want, r.Body)
		}
		if c.want == 401 && r.Code() != fault.Unauthorized {
			t.Errorf("%s: code %s", c.name, r.Code())
		}
	}
}

func TestRoles(t *testing.T) {
	key := rsaKey(t, 2048)
	for _, c := range []struct {
		acc  access
		hdr  []string
		want int
		code fault.Code
	}{
		{write, []string{"X-Api-Key", "read-key"}, 403, fault.WriteNotAllowed},
		{write, []string{"X-Api-Key", "write-key"}, 200, ""},
		{admin, []string{"X-Api-Key", "write-key"}, 403, fault.Forbidden},
		{admin, []string{"Authorization", "Bearer " + signToken(t, jwt.SigningMethodRS256, key, func() jwt.MapClaims { c := goodClaims(); c["role"] = "user"; return c }())}, 403, fault.Forbidden},
		{admin, []string{"Authorization", "Bearer " + signToken(t, jwt.SigningMethodRS256, key, goodClaims())}, 200, ""},
	} {
		s := newInfraServer(t, key, RateLimit{PerSecond: -1})
		// The probe answers a certificate status, valid for the upload route.
		s.mux = http.NewServeMux()
		s.handle("POST /api/v1/billing/empresa/certificado/pfx", c.acc, func(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
			writeJSON(w, 200, map[string]any{"has_certificado": false})
			return nil
		})
		r := (&tester{t: t, h: s}).do(newReq("POST", "/api/v1/billing/empresa/certificado/pfx", nil, c.hdr...))
		if r.Status != c.want || (c.code != "" && r.Code() != c.code) {
			t.Errorf("access %d with %s: %d %s, want %d %s", c.acc, c.hdr[0], r.Status, r.Body, c.want, c.code)
		}
	}
}

func TestRateLimit(t *testing.T) {
	s := newInfraServer(t, rsaKey(t, 2048), RateLimit{PerSecond: 0.5, Burst: 2})
	authProbe(s, read)
	tt := &tester{t: t, h: s}
	for i := 0; i < 2; i++ {
		if r := tt.do(newReq("GET", "/api/v1/billing/empresa", nil, "X-Api-Key", "read-key")); r.Status != 200 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
	}
	r := tt.do(newReq("GET", "/api/v1/billing/empresa", nil, "X-Api-Key", "read-key"))
	if r.Status != 429 || r.Code() != fault.RateLimited {
		t.Fatalf("third request: %d %s", r.Status, r.Body)
	}
	// One token every 2 s: the wait is at most 2 s, written in whole seconds.
	if ra := r.Header.Get("Retry-After"); ra != "1" && ra != "2" {
		t.Errorf("Retry-After %q, want 1 or 2", ra)
	}
	// Another credential has its own bucket.
	if r := tt.do(newReq("GET", "/api/v1/billing/empresa", nil, "X-Api-Key", "write-key")); r.Status != 200 {
		t.Errorf("other credential: %d", r.Status)
	}
}

func TestPEMKeyfuncRefusesWeakOrForeignKeys(t *testing.T) {
	if _, err := PEMKeyfunc(pemPublic(t, rsaKey(t, 1024))); err == nil {
		t.Error("1024-bit key accepted")
	}
	if _, err := PEMKeyfunc([]byte("not pem")); err == nil {
		t.Error("no key accepted")
	}
}

// signTokenHeader signs claims with RS256 and extra header parameters.
func signTokenHeader(t testing.TB, key *rsa.PrivateKey, claims jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMetricsCarryNoTenant: by default /metrics names no company and no
// CAF (folios remaining are summed per document type); the operator's
// MetricsTenantLabels brings the per-company series back (issue 20,
// point 11).
func TestMetricsCarryNoTenant(t *testing.T) {
	const a, b = "0b9d6c1e-7a43-4f0e-9a55-3c2d1e0f9a11", "5d3c2b1a-0f9e-4d8c-8b7a-6f5e4d3c2b1a"
	folios := func(context.Context) ([]CAFFolios, error) {
		return []CAFFolios{{EmpresaID: a, TipoDTE: 33, CAFID: "caf-a33", Remaining: 70},
			{EmpresaID: b, TipoDTE: 33, CAFID: "caf-b33", Remaining: 5}, {EmpresaID: b, TipoDTE: 39, CAFID: "caf-b39", Remaining: 9}}, nil
	}
	for _, labels := range []bool{false, true} {
		s, err := New(Config{Billing: stubBilling(t), CAFFolios: folios, MetricsTenantLabels: labels})
		if err != nil {
			t.Fatal(err)
		}
		r := (&tester{t: t, h: s}).do(newReq("GET", "/metrics", nil))
		body := string(r.Body)
		if !labels {
			// By hand: 70 + 5 folios of tipo 33, 9 of tipo 39.
			for _, want := range []string{`dtekit_caf_folios_remaining{tipo_dte="33"} 75`, `dtekit_caf_folios_remaining{tipo_dte="39"} 9`} {
				if !strings.Contains(body, want) {
					t.Errorf("default /metrics lacks %s", want)
				}
			}
			for _, leak := range []string{a, b, "caf-", "empresa_id"} {
				if strings.Contains(body, leak) {
					t.Errorf("default /metrics carries %q", leak)
				}
			}
			continue
		}
		if want := `dtekit_caf_folios_remaining{caf_id="caf-b39",empresa_id="` + b + `",tipo_dte="39"} 9`; !strings.Contains(body, want) {
			t.Errorf("/metrics with tenant labels lacks %s", want)
		}
	}
}
