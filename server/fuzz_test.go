package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// FuzzEmit sends arbitrary requests at the emit endpoint and around it:
// the method, the path after /api/v1/billing/dte, the content type, the
// Idempotency-Key and the body all come from the fuzzer. Whatever arrives,
// the server must not fail (no 500: a panic or an unclassified error would
// answer one) and every error must be the contract's envelope with the
// request id; a 201 must be an emission answer.
func FuzzEmit(f *testing.F) {
	st, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	fx := newFixture(f, st, RateLimit{PerSecond: -1})
	doc, _ := loadSpec(f)
	valid, _ := json.Marshal(factura(2))
	seeds := []struct {
		method byte
		path   string
		ct     string
		key    string
		body   []byte
	}{
		{0, "", "application/json", "3f2b8f0e-4a1c-4d6e-9b7a-2c5d8e1f0a3b", valid},
		{0, "", "application/json", "3f2b8f0e-4a1c-4d6e-9b7a-2c5d8e1f0a3b", bytes.Replace(valid, []byte(`"cantidad":2`), []byte(`"cantidad":3`), 1)},
		{0, "", "application/json; charset=utf-8", "not-a-uuid", valid},
		{0, "", "application/json", "", []byte(`{"tipo_dte":33,"receptor":{"rut":"1-9","razon_social":"x","zz":1},"detalle":[{"nombre":"a","precios":1}]}`)},
		{0, "", "application/json", "0a6d9d5e-1c2b-4f3a-8e7d-6b5a4c3d2e1f", []byte(`{"tipo_dte":"33"}`)},
		{0, "", "application/json", "0a6d9d5e-1c2b-4f3a-8e7d-6b5a4c3d2e1f", []byte(`{"tipo_dte":33,"detalle":[{"cantidad":1e999999}]}`)},
		{0, "", "application/json", "0a6d9d5e-1c2b-4f3a-8e7d-6b5a4c3d2e10", []byte(`[{}]`)},
		{0, "", "application/json", "0a6d9d5e-1c2b-4f3a-8e7d-6b5a4c3d2e11", []byte(`{"tipo_dte":33} trailing`)},
		{0, "", "text/plain", "0a6d9d5e-1c2b-4f3a-8e7d-6b5a4c3d2e12", valid},
		{0, "", "", "", nil},
		{1, "", "", "", nil},
		{1, "/../dte", "", "", nil},
		{2, "/x", "application/json", "", valid},
		{3, "/%2e%2e/caf", "", "", nil},
		{0, "//", "application/json", "", valid},
		{1, "?limit=0&tipo_dte=x&cursor=%ff", "", "", nil},
		{0, "", "multipart/form-data; boundary=x", "", []byte("--x\r\n")},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.ct, s.key, s.body)
	}
	methods := []string{"POST", "GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}
	f.Fuzz(func(t *testing.T, m byte, path, ct, key string, body []byte) {
		u, err := url.Parse("/api/v1/billing/dte" + path)
		if err != nil {
			u = &url.URL{Path: "/api/v1/billing/dte" + path}
		}
		req := &http.Request{Method: methods[int(m)%len(methods)], URL: u, Header: http.Header{}, Host: "example.com",
			RemoteAddr: "192.0.2.1:1234", Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		req = req.WithContext(context.Background())
		req.Header.Set("X-Api-Key", fx.A.writeKey)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		fx.srv.ServeHTTP(rec, req)
		res := rec.Result()
		out, _ := io.ReadAll(res.Body)
		switch {
		case res.StatusCode >= 500:
			t.Fatalf("%s %s → %d: %s", req.Method, u, res.StatusCode, out)
		case res.StatusCode >= 400:
			if req.Method == "HEAD" {
				return // no body by definition
			}
			checkEnvelope(t, doc, req, res.StatusCode, res.Header, out)
		case res.StatusCode == 201:
			var em struct {
				ID    string `json:"id"`
				Folio int64  `json:"folio"`
			}
			if err := json.Unmarshal(out, &em); err != nil || !isUUID(em.ID) || em.Folio < 1 {
				t.Fatalf("201 without an emission answer: %s", out)
			}
		case res.StatusCode == 200:
			if req.Method != "GET" && req.Method != "HEAD" || !strings.HasPrefix(u.Path, "/api/v1/billing/dte") {
				t.Fatalf("%s %s → 200", req.Method, u)
			}
		default:
			t.Fatalf("%s %s → unexpected %d: %s", req.Method, u, res.StatusCode, out)
		}
	})
	_ = store.ErrNotFound
}
