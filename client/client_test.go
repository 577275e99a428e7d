package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
)

// recorder is a fake server that answers from a script and records what
// each attempt carried.
type recorder struct {
	mu      sync.Mutex
	keys    []string
	answers []func(w http.ResponseWriter)
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	n := len(rec.keys)
	rec.keys = append(rec.keys, r.Header.Get("Idempotency-Key"))
	rec.mu.Unlock()
	rec.answers[min(n, len(rec.answers)-1)](w)
}

func envelope(status int, code, msg string, hdr ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-"+strconv.Itoa(status))
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":%q,"message":%q,"details":[{"field":"items.0.cantidad","code":"OUT_OF_RANGE","message":"must be positive"}]}`, code, msg)
	}
}

func ok(body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, body)
	}
}

// newTestClient returns a client of srv whose waits are recorded, not
// slept.
func newTestClient(t *testing.T, srv *httptest.Server, p RetryPolicy) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := New(srv.URL, WithAPIKey("dtk_test"), WithRetryPolicy(p))
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
	return c, &waits
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestRetriesKeepTheKey: a POST answered 503, then 429 with Retry-After: 2,
// then 201 is sent three times with one and the same generated
// Idempotency-Key (a version-4 UUID), waiting the 2 s the server asked
// before the third.
func TestRetriesKeepTheKey(t *testing.T) {
	t.Parallel()
	rec := &recorder{answers: []func(http.ResponseWriter){
		envelope(503, "SERVICE_UNAVAILABLE", "busy"),
		envelope(429, "RATE_LIMITED", "slow down", "Retry-After", "2"),
		ok(`{"id":"x"}`),
	}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, waits := newTestClient(t, srv, RetryPolicy{})
	var out struct{ ID string }
	resp, _, err := c.do(context.Background(), request{method: "POST", path: "/dte", body: map[string]int{"a": 1}, out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != "x" || resp.Attempts != 3 || resp.StatusCode != 201 {
		t.Errorf("answer %+v after %d attempts (status %d), want id x after 3 (201)", out, resp.Attempts, resp.StatusCode)
	}
	if len(rec.keys) != 3 || rec.keys[0] != rec.keys[1] || rec.keys[1] != rec.keys[2] || !uuidV4.MatchString(rec.keys[0]) {
		t.Errorf("idempotency keys sent %q: want one version-4 UUID, three times", rec.keys)
	}
	if resp.IdempotencyKey != rec.keys[0] {
		t.Errorf("Response.IdempotencyKey %q, sent %q", resp.IdempotencyKey, rec.keys[0])
	}
	if len(*waits) != 2 || (*waits)[1] != 2*time.Second || (*waits)[0] > DefaultRetryPolicy.BaseDelay {
		t.Errorf("waits %v: want a backoff of at most %v, then the Retry-After's 2s", *waits, DefaultRetryPolicy.BaseDelay)
	}
}

// TestCallersKeyAndNoRetryOn4xx: the caller's key is sent as given, and a
// 400 is not retried; its envelope becomes an *Error that errors.Is
// matches by code, with the field details and the request id.
func TestCallersKeyAndNoRetryOn4xx(t *testing.T) {
	t.Parallel()
	rec := &recorder{answers: []func(http.ResponseWriter){envelope(400, "VALIDATION_ERROR", "bad")}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, _ := newTestClient(t, srv, RetryPolicy{})
	_, _, err := c.do(context.Background(), request{method: "POST", path: "/dte", body: 1, idempotencyKey: "mine"})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err %v: want *Error", err)
	}
	if !errors.Is(err, fault.Validation) || errors.Is(err, fault.NotFound) {
		t.Errorf("errors.Is by code: Validation %v, NotFound %v", errors.Is(err, fault.Validation), errors.Is(err, fault.NotFound))
	}
	if e.StatusCode != 400 || e.RequestID != "req-400" || len(e.Field("items.0.cantidad")) != 1 || e.Message != "bad" {
		t.Errorf("error %+v", e)
	}
	if len(rec.keys) != 1 || rec.keys[0] != "mine" {
		t.Errorf("keys sent %q, want [mine] once", rec.keys)
	}
}

// TestRetriesAreBounded: attempts stop at MaxAttempts, a Retry-After past
// MaxElapsed ends the retries at once, and a cancelled context stops them.
func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	rec := &recorder{answers: []func(http.ResponseWriter){envelope(502, "INTERNAL_ERROR", "gateway")}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	c, _ := newTestClient(t, srv, RetryPolicy{MaxAttempts: 3})
	resp, _, err := c.do(context.Background(), request{method: "GET", path: "/dte"})
	if resp.Attempts != 3 || !errors.Is(err, fault.Internal) || len(rec.keys) != 3 || rec.keys[0] != "" {
		t.Errorf("attempts %d, err %v, keys %q: want 3 attempts of a GET without key", resp.Attempts, err, rec.keys)
	}

	rec2 := &recorder{answers: []func(http.ResponseWriter){envelope(429, "RATE_LIMITED", "later", "Retry-After", "3600")}}
	srv2 := httptest.NewServer(rec2)
	defer srv2.Close()
	c2, waits := newTestClient(t, srv2, RetryPolicy{MaxElapsed: time.Minute})
	resp, _, err = c2.do(context.Background(), request{method: "GET", path: "/dte"})
	if resp.Attempts != 1 || len(*waits) != 0 || !errors.Is(err, fault.RateLimited) {
		t.Errorf("Retry-After beyond MaxElapsed: %d attempts, waits %v, err %v; want 1, none, RATE_LIMITED", resp.Attempts, *waits, err)
	}
	var e *Error
	if errors.As(err, &e) && e.RetryAfter != "3600" {
		t.Errorf("RetryAfter %q, want 3600", e.RetryAfter)
	}

	ctx, cancel := context.WithCancel(context.Background())
	c3, _ := newTestClient(t, srv, RetryPolicy{MaxAttempts: 10})
	c3.sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
	resp, _, err = c3.do(ctx, request{method: "GET", path: "/dte"})
	if resp.Attempts != 1 || err == nil {
		t.Errorf("cancelled: %d attempts, err %v; want 1 and the last answer's error", resp.Attempts, err)
	}
}

// TestNetworkErrorRetried: a connection closed before any answer is
// retried with the same key.
func TestNetworkErrorRetried(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if n == 1 {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.WriteHeader(201)
		fmt.Fprint(w, `{}`)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv, RetryPolicy{})
	resp, _, err := c.do(context.Background(), request{method: "POST", path: "/dte", body: 1})
	if err != nil || resp.Attempts != 2 || len(keys) != 2 || keys[0] != keys[1] {
		t.Errorf("err %v, attempts %d, keys %q: want success at the 2nd attempt with one key", err, resp.Attempts, keys)
	}
}

// TestErrorWithoutEnvelope: a 502 from a proxy with an HTML body still
// gives an *Error with a code.
func TestErrorWithoutEnvelope(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		fmt.Fprint(w, "<html>not here</html>")
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv, RetryPolicy{})
	_, _, err := c.do(context.Background(), request{method: "GET", path: "/x"})
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 404 || e.Code != fault.Validation || e.Message == "" {
		t.Errorf("err %#v", err)
	}
}

// TestAllPages: the iterator walks three pages (2+2+1 items), following
// each next_cursor, and stops when the loop breaks.
func TestAllPages(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"":   `{"data":[1,2],"next_cursor":"c1","total_count":5}`,
		"c1": `{"data":[3,4],"next_cursor":"c2","total_count":5}`,
		"c2": `{"data":[5],"next_cursor":null,"total_count":5}`,
	}
	var asked []string
	fetch := func(ctx context.Context, cursor string) (*api.Page[int], error) {
		asked = append(asked, cursor)
		var p api.Page[int]
		return &p, json.Unmarshal([]byte(pages[cursor]), &p)
	}
	var got []int
	for v, err := range all(context.Background(), fetch) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if fmt.Sprint(got) != "[1 2 3 4 5]" || fmt.Sprint(asked) != "[ c1 c2]" {
		t.Errorf("items %v, cursors asked %q", got, asked)
	}
	asked = nil
	for v := range all(context.Background(), fetch) {
		if v == 3 {
			break
		}
	}
	if len(asked) != 2 {
		t.Errorf("after a break at the 3rd item, %d pages were fetched, want 2", len(asked))
	}
}

// TestNewRefuses: a relative URL, no credential, both credentials.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	ts := TokenSourceFunc(func(context.Context) (string, error) { return "t", nil })
	for name, err := range map[string]error{
		"relative": func() error { _, err := New("/api", WithAPIKey("k")); return err }(),
		"none":     func() error { _, err := New("http://x"); return err }(),
		"both":     func() error { _, err := New("http://x", WithAPIKey("k"), WithTokenSource(ts)); return err }(),
	} {
		if err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
}
