package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mwFixture is a loopback server running Middleware around a recording
// handler.
type mwFixture struct {
	srv      *httptest.Server
	secret   Secret
	calls    atomic.Int32
	status   atomic.Int32 // what the handler answers
	mu       sync.Mutex
	got      [][]byte // bodies the handler read
	outcomes []Outcome
}

func newMWFixture(t *testing.T, opts MiddlewareOptions) *mwFixture {
	t.Helper()
	f := &mwFixture{secret: GenerateSecret()}
	f.status.Store(http.StatusNoContent)
	v, err := NewVerifier([]Secret{f.secret})
	if err != nil {
		t.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("handler reading body: %v", err)
		}
		d, ok := DeliveryFromContext(r.Context())
		if !ok || !bytes.Equal(d.Body, body) || d.ID != r.Header.Get(HeaderID) {
			t.Errorf("handler: delivery %+v, ok %v, does not match the body read", d, ok)
		}
		if r.ContentLength != int64(len(body)) {
			t.Errorf("handler: ContentLength %d, body %d bytes", r.ContentLength, len(body))
		}
		f.mu.Lock()
		f.got = append(f.got, body)
		f.mu.Unlock()
		w.WriteHeader(int(f.status.Load()))
	})
	opts.Observer = func(r *http.Request, o Outcome) {
		f.mu.Lock()
		f.outcomes = append(f.outcomes, o)
		f.mu.Unlock()
	}
	f.srv = httptest.NewServer(v.Middleware(handler, opts))
	t.Cleanup(f.srv.Close)
	return f
}

// post sends body with the given headers and returns status and response
// body.
func (f *mwFixture) post(t *testing.T, h http.Header, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (f *mwFixture) signed(t *testing.T, id string, body []byte) http.Header {
	t.Helper()
	h, err := Sign([]Secret{f.secret}, id, time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (f *mwFixture) lastOutcome(t *testing.T) Outcome {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.outcomes) == 0 {
		t.Fatal("observer not called")
	}
	return f.outcomes[len(f.outcomes)-1]
}

func TestMiddlewareVerified(t *testing.T) {
	f := newMWFixture(t, MiddlewareOptions{})
	// A body whose bytes a JSON re-encoding would change.
	body := []byte("{\"type\": \"dte.created\",\n \"data\": {\"monto\": 1.50, \"glosa\": \"a\\u00f1o\"}}")
	status, _ := f.post(t, f.signed(t, "msg_ok", body), bytes.NewReader(body))
	if status != http.StatusNoContent {
		t.Fatalf("status %d, want 204", status)
	}
	if !bytes.Equal(f.got[0], body) {
		t.Errorf("handler read %q, want the raw bytes %q", f.got[0], body)
	}
	o := f.lastOutcome(t)
	if o.Err != nil || o.Status != 204 || o.Delivery == nil || o.Delivery.ID != "msg_ok" {
		t.Errorf("outcome %+v", o)
	}
	if time.Since(o.Delivery.Timestamp) > time.Minute {
		t.Errorf("delivery timestamp %v", o.Delivery.Timestamp)
	}
}

func TestMiddlewareRejects(t *testing.T) {
	f := newMWFixture(t, MiddlewareOptions{})
	body := []byte(`{"a":1}`)
	good := f.signed(t, "msg_x", body)
	other, _ := Sign([]Secret{GenerateSecret()}, "msg_x", time.Now(), body)
	stale, _ := Sign([]Secret{f.secret}, "msg_x", time.Now().Add(-10*time.Minute), body)
	noSig := good.Clone()
	noSig.Del(HeaderSignature)
	cases := []struct {
		name string
		h    http.Header
		body []byte
		want error
	}{
		{"other secret", other, body, ErrNoMatchingSignature},
		{"tampered body", good, []byte(`{"a":2}`), ErrNoMatchingSignature},
		{"stale", stale, body, ErrTooOld},
		{"no signature", noSig, body, ErrMissingHeader},
		{"no headers", http.Header{}, body, ErrMissingHeader},
	}
	for _, c := range cases {
		status, text := f.post(t, c.h, bytes.NewReader(c.body))
		if status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", c.name, status)
		}
		if strings.TrimSpace(text) != "webhook verification failed" {
			t.Errorf("%s: body %q is not the generic one", c.name, text)
		}
		if o := f.lastOutcome(t); !errors.Is(o.Err, c.want) || o.Status != 401 || o.Delivery != nil {
			t.Errorf("%s: outcome %+v, want %v", c.name, o, c.want)
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("handler called %d times for unverifiable deliveries", n)
	}
}

// unsized hides a reader's type so the client sends it chunked, without
// Content-Length.
type unsized struct{ io.Reader }

func TestMiddlewareBodyCap(t *testing.T) {
	const limit = 1024
	f := newMWFixture(t, MiddlewareOptions{MaxBodyBytes: limit})
	exact := bytes.Repeat([]byte("a"), limit)
	over := bytes.Repeat([]byte("a"), limit+1)
	if status, _ := f.post(t, f.signed(t, "msg_exact", exact), bytes.NewReader(exact)); status != 204 {
		t.Errorf("body of exactly %d bytes: %d, want 204", limit, status)
	}
	if status, _ := f.post(t, f.signed(t, "msg_exact_chunked", exact), unsized{bytes.NewReader(exact)}); status != 204 {
		t.Errorf("chunked body of exactly %d bytes: %d, want 204", limit, status)
	}
	for name, r := range map[string]io.Reader{
		"with Content-Length": bytes.NewReader(over),
		"chunked":             unsized{bytes.NewReader(over)},
	} {
		status, _ := f.post(t, f.signed(t, "msg_over", over), r)
		if status != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: oversized body answered %d, want 413", name, status)
		}
		if o := f.lastOutcome(t); !errors.Is(o.Err, ErrBodyTooLarge) || o.Status != 413 {
			t.Errorf("%s: outcome %+v", name, o)
		}
	}
	if n := f.calls.Load(); n != 2 {
		t.Errorf("handler called %d times, want 2", n)
	}
	// Empty body, signed: verified and passed on.
	if status, _ := f.post(t, f.signed(t, "msg_empty", nil), nil); status != 204 {
		t.Errorf("empty body: %d", status)
	}
}

func TestMiddlewareDefaultCap(t *testing.T) {
	f := newMWFixture(t, MiddlewareOptions{})
	over := make([]byte, DefaultMaxBodyBytes+1)
	if status, _ := f.post(t, f.signed(t, "msg_big", over), bytes.NewReader(over)); status != 413 {
		t.Errorf("1 MiB + 1 body: %d, want 413", status)
	}
}

func TestMiddlewareDedup(t *testing.T) {
	f := newMWFixture(t, MiddlewareOptions{Deduper: NewMemoryDeduper(time.Hour, nil)})
	body := []byte(`{"n":1}`)
	send := func(id string) int {
		// Every attempt is signed anew, as a sender's retry is.
		status, _ := f.post(t, f.signed(t, id, body), bytes.NewReader(body))
		return status
	}
	if s := send("msg_1"); s != 204 {
		t.Fatalf("first delivery: %d", s)
	}
	if s := send("msg_1"); s != 200 {
		t.Fatalf("repeated delivery: %d, want 200", s)
	}
	if o := f.lastOutcome(t); !errors.Is(o.Err, ErrDuplicate) || o.Delivery == nil || o.Delivery.ID != "msg_1" {
		t.Errorf("duplicate outcome %+v", o)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("handler ran %d times for one id", n)
	}
	// A failed attempt releases the id, so the retry is processed.
	f.status.Store(http.StatusInternalServerError)
	if s := send("msg_2"); s != 500 {
		t.Fatalf("failing handler: %d", s)
	}
	f.status.Store(http.StatusNoContent)
	if s := send("msg_2"); s != 204 {
		t.Fatalf("retry after failure: %d, want 204 (processed)", s)
	}
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("handler ran %d times, want 3", n)
	}
	// An unverifiable delivery never claims its id.
	other, _ := Sign([]Secret{GenerateSecret()}, "msg_3", time.Now(), body)
	if s, _ := f.post(t, other, bytes.NewReader(body)); s != 401 {
		t.Fatalf("forged: %d", s)
	}
	if s := send("msg_3"); s != 204 {
		t.Fatalf("genuine delivery after a forged one with its id: %d, want 204", s)
	}
}

// failingDeduper fails every claim.
type failingDeduper struct{}

func (failingDeduper) Claim(context.Context, string) (bool, error) {
	return false, errors.New("store down")
}
func (failingDeduper) Release(context.Context, string) error { return nil }

func TestMiddlewareDedupStoreDown(t *testing.T) {
	f := newMWFixture(t, MiddlewareOptions{Deduper: failingDeduper{}})
	body := []byte(`{}`)
	if s, _ := f.post(t, f.signed(t, "msg_1", body), bytes.NewReader(body)); s != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503 so the sender retries", s)
	}
	if f.calls.Load() != 0 {
		t.Fatal("handler ran without a claim")
	}
}

func TestMiddlewarePanicReleases(t *testing.T) {
	secret := GenerateSecret()
	v, _ := NewVerifier([]Secret{secret})
	d := NewMemoryDeduper(time.Hour, nil)
	h := v.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), MiddlewareOptions{Deduper: d})
	body := []byte(`{}`)
	hdr, _ := Sign([]Secret{secret}, "msg_p", time.Now(), body)
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header = hdr
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic swallowed")
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	if first, _ := d.Claim(context.Background(), "msg_p"); !first {
		t.Error("id still claimed after the handler panicked")
	}
}

func TestMiddlewareImplicitStatus(t *testing.T) {
	secret := GenerateSecret()
	v, _ := NewVerifier([]Secret{secret})
	var got Outcome
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("ResponseController through the middleware: %v", err)
		}
	}), MiddlewareOptions{Observer: func(_ *http.Request, o Outcome) { got = o }})
	body := []byte(`{}`)
	hdr, _ := Sign([]Secret{secret}, "msg_i", time.Now(), body)
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header = hdr
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || got.Status != 200 || got.Err != nil {
		t.Errorf("recorder %d, outcome %+v", rec.Code, got)
	}
}

// errReader fails mid-body.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestMiddlewareReadError(t *testing.T) {
	v, _ := NewVerifier([]Secret{GenerateSecret()})
	var got Outcome
	h := v.Middleware(http.NotFoundHandler(), MiddlewareOptions{Observer: func(_ *http.Request, o Outcome) { got = o }})
	req := httptest.NewRequest(http.MethodPost, "/", errReader{})
	// Headers of the right form and age, so the body is read.
	req.Header = must(Sign([]Secret{GenerateSecret()}, "msg_r", time.Now(), nil))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 400 || got.Status != 400 || got.Err == nil {
		t.Errorf("read error: %d, outcome %+v", rec.Code, got)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// watchedBody records whether anything read it, and then yields n bytes
// followed by an error (a client that stalls and goes away) or io.EOF.
type watchedBody struct {
	read atomic.Bool
	n    int
	eof  bool // end with io.EOF instead of an error
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	if b.n == 0 {
		if b.eof {
			return 0, io.EOF
		}
		return 0, errors.New("client went away")
	}
	k := min(len(p), b.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	b.n -= k
	return k, nil
}

// TestMiddlewareHeadersBeforeBody: a request whose headers or timestamp
// fail is answered 401 without a single read of its body.
func TestMiddlewareHeadersBeforeBody(t *testing.T) {
	secret := GenerateSecret()
	now := time.Unix(1_800_000_000, 0)
	v, err := NewVerifier([]Secret{secret}, WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	h := v.Middleware(http.NotFoundHandler(), MiddlewareOptions{})
	good := must(Sign([]Secret{secret}, "msg_h", now, []byte("{}")))
	cases := map[string]func(http.Header){
		"no headers":         func(h http.Header) { clear(h) },
		"no signature":       func(h http.Header) { h.Del(HeaderSignature) },
		"stale timestamp":    func(h http.Header) { h.Set(HeaderTimestamp, "1799999000") },
		"future timestamp":   func(h http.Header) { h.Set(HeaderTimestamp, "1800001000") },
		"timestamp not int":  func(h http.Header) { h.Set(HeaderTimestamp, "1.8e9") },
		"id with dot":        func(h http.Header) { h.Set(HeaderID, "msg.h") },
		"no v1 entry":        func(h http.Header) { h.Set(HeaderSignature, "v2,abc") },
		"signature too long": func(h http.Header) { h.Set(HeaderSignature, strings.Repeat("v1,x ", 1000)) },
	}
	for name, edit := range cases {
		body := &watchedBody{n: 1 << 20}
		req := httptest.NewRequest(http.MethodPost, "/", body)
		req.ContentLength = 1 << 20
		req.Header = good.Clone()
		edit(req.Header)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, rec.Code)
		}
		if body.read.Load() {
			t.Errorf("%s: the body was read before the headers were refused", name)
		}
	}
	// Control: with the good headers the body is read (and the signature,
	// over other bytes, then fails).
	body := &watchedBody{n: 10, eof: true}
	req := httptest.NewRequest(http.MethodPost, "/", body)
	req.Header = good.Clone()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !body.read.Load() || rec.Code != http.StatusUnauthorized {
		t.Errorf("good headers: body read %v, status %d; want read, 401", body.read.Load(), rec.Code)
	}
}

// TestMiddlewareBufferFollowsBytes: a request announcing a 1 MiB body that
// sends 100 bytes costs the middleware a few KiB, not the announced size.
func TestMiddlewareBufferFollowsBytes(t *testing.T) {
	secret := GenerateSecret()
	v, err := NewVerifier([]Secret{secret})
	if err != nil {
		t.Fatal(err)
	}
	h := v.Middleware(http.NotFoundHandler(), MiddlewareOptions{})
	hdr := must(Sign([]Secret{secret}, "msg_b", time.Now(), nil))
	serve := func() int {
		req := httptest.NewRequest(http.MethodPost, "/", &watchedBody{n: 100})
		req.ContentLength = 1 << 20
		req.Header = hdr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := serve(); code != http.StatusBadRequest {
		t.Fatalf("truncated body: %d, want 400", code)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20
	for range n {
		serve()
	}
	runtime.ReadMemStats(&after)
	// The announced 1 MiB per request would be 20 MiB; the bound leaves
	// room for the recorder, the request and the error text.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 32<<10 {
		t.Errorf("%d bytes allocated per request announcing 1 MiB and sending 100 bytes, want at most 32 KiB", per)
	}
}
