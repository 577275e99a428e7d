package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/webhook"
)

// received is one request as the test receiver saw it.
type received struct {
	header http.Header
	body   []byte
}

// recorder is a loopback receiver that keeps every request and answers
// with the status its answer function picks.
type recorder struct {
	mu     sync.Mutex
	reqs   []received
	answer func(n int, w http.ResponseWriter)
	srv    *httptest.Server
}

func newRecorder(t *testing.T, answer func(n int, w http.ResponseWriter)) *recorder {
	rec := &recorder{answer: answer}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, received{r.Header.Clone(), body})
		n := len(rec.reqs)
		rec.mu.Unlock()
		rec.answer(n, w)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *recorder) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.reqs...)
}

func eventBody(t *testing.T) []byte {
	t.Helper()
	track := "8312764"
	b, err := webhook.MarshalEvent(webhook.EventDTEAccepted, time.Date(2026, 3, 2, 14, 5, 9, 0, time.UTC), webhook.DTEData{
		ID: "a3e9f0b1-2c4d-4e6f-8a0b-1c2d3e4f5a6b", TipoDTE: 33, Folio: 1042, Estado: "aceptado",
		RutReceptor: "76192083-9", RazonSocialReceptor: "Comercial Los Andes SpA", MontoTotal: 119000,
		FechaEmision: "2026-03-02", TrackID: &track,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loopbackClient is the guarded client with loopback allowed, as the
// server runs under --webhook-allow-loopback.
func loopbackClient(timeout time.Duration) *http.Client {
	return ssrf.NewClient(ssrf.Options{AllowLoopback: true, Timeout: timeout})
}

// TestSendInterop: every attempt verifies with the official Standard
// Webhooks library under each active secret; attempts share id and body
// and carry their own timestamp and signature.
func TestSendInterop(t *testing.T) {
	rec := newRecorder(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	oldSecret, newSecret := webhook.GenerateSecret(), webhook.GenerateSecret()
	body := eventBody(t)
	msg := webhook.Message{ID: "evt_01HQZ8K9V4", Body: body, Secrets: []webhook.Secret{newSecret, oldSecret}}
	clock := time.Now().Add(-2 * time.Minute)
	s := &webhook.Sender{Client: loopbackClient(5 * time.Second), Now: func() time.Time { return clock }}

	r1, err := s.Send(context.Background(), rec.srv.URL+"/hooks", msg)
	if err != nil {
		t.Fatal(err)
	}
	if r1.OK() || r1.Status != 500 || r1.Class != webhook.ClassHTTP {
		t.Fatalf("first attempt: %+v, want a 500 failure", r1)
	}
	clock = clock.Add(65 * time.Second)
	r2, err := s.Send(context.Background(), rec.srv.URL+"/hooks", msg)
	if err != nil {
		t.Fatal(err)
	}
	if !r2.OK() || r2.Status != 204 || r2.Class != webhook.ClassNone {
		t.Fatalf("second attempt: %+v, want 204", r2)
	}
	got := rec.all()
	if len(got) != 2 {
		t.Fatalf("%d requests received", len(got))
	}
	for i, g := range got {
		if string(g.body) != string(body) {
			t.Errorf("attempt %d: body differs from the frozen bytes", i+1)
		}
		if g.header.Get("webhook-id") != msg.ID || g.header.Get("Content-Type") != "application/json" {
			t.Errorf("attempt %d: headers %v", i+1, g.header)
		}
		for _, sec := range []webhook.Secret{oldSecret, newSecret} {
			official, err := standardwebhooks.NewWebhook(sec.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if err := official.Verify(g.body, g.header); err != nil {
				t.Errorf("attempt %d: the official library rejects it under %v: %v", i+1, sec, err)
			}
		}
		if e := strings.Count(g.header.Get("webhook-signature"), "v1,"); e != 2 {
			t.Errorf("attempt %d: %d v1 entries, want 2", i+1, e)
		}
	}
	if got[0].header.Get("webhook-timestamp") == got[1].header.Get("webhook-timestamp") ||
		got[0].header.Get("webhook-signature") == got[1].header.Get("webhook-signature") {
		t.Error("the retry reused the first attempt's timestamp or signature")
	}
	if ts := got[1].header.Get("webhook-timestamp"); ts != fmt.Sprint(clock.Unix()) || !r2.Time.Equal(clock) {
		t.Errorf("timestamp %s, result time %s, want the sender clock %d", ts, r2.Time, clock.Unix())
	}
	// A key the receiver does not hold alone fails the official check.
	official, _ := standardwebhooks.NewWebhook(webhook.GenerateSecret().Encode())
	if err := official.Verify(got[1].body, got[1].header); err == nil {
		t.Error("the official library accepted an unrelated key: the check above proves nothing")
	}
}

func TestSendClassifies(t *testing.T) {
	retryDate := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	answers := map[string]func(w http.ResponseWriter){
		"200": func(w http.ResponseWriter) { w.WriteHeader(200) },
		"204": func(w http.ResponseWriter) { w.WriteHeader(204) },
		"302": func(w http.ResponseWriter) {
			w.Header().Set("Location", "http://127.0.0.1:1/")
			w.WriteHeader(302)
		},
		"410": func(w http.ResponseWriter) { w.WriteHeader(410) },
		"429": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(429)
		},
		"503": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", retryDate)
			w.WriteHeader(503)
		},
		"400": func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "120") // ignored on 4xx other than 429
			w.WriteHeader(400)
		},
		"big": func(w http.ResponseWriter) {
			w.WriteHeader(500)
			w.Write([]byte(strings.Repeat("e", 100<<10)))
		},
		"slow": func(w http.ResponseWriter) { time.Sleep(600 * time.Millisecond) },
	}
	msg := webhook.Message{ID: "evt_c", Body: []byte(`{}`), Secrets: []webhook.Secret{webhook.GenerateSecret()}}
	s := &webhook.Sender{Client: loopbackClient(300 * time.Millisecond), MaxResponseBytes: 1024}
	type want struct {
		status int
		class  webhook.ErrorClass
		ok     bool
		gone   bool
		after  time.Duration // lower bound; 0: must be 0
	}
	wants := map[string]want{
		"200":  {200, webhook.ClassNone, true, false, 0},
		"204":  {204, webhook.ClassNone, true, false, 0},
		"302":  {302, webhook.ClassHTTP, false, false, 0},
		"410":  {410, webhook.ClassHTTP, false, true, 0},
		"429":  {429, webhook.ClassHTTP, false, false, 120 * time.Second},
		"503":  {503, webhook.ClassHTTP, false, false, 80 * time.Second},
		"400":  {400, webhook.ClassHTTP, false, false, 0},
		"big":  {500, webhook.ClassHTTP, false, false, 0},
		"slow": {0, webhook.ClassTimeout, false, false, 0},
	}
	for name, answer := range answers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answer(w) }))
		r, err := s.Send(context.Background(), srv.URL, msg)
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := wants[name]
		if r.Status != w.status || r.Class != w.class || r.OK() != w.ok || r.Gone() != w.gone {
			t.Errorf("%s: status %d class %q ok %v gone %v, want %+v (err %v)", name, r.Status, r.Class, r.OK(), r.Gone(), w, r.Err)
		}
		if (w.after == 0) != (r.RetryAfter == 0) || r.RetryAfter < w.after || r.RetryAfter > w.after+15*time.Second {
			t.Errorf("%s: RetryAfter %s, want about %s", name, r.RetryAfter, w.after)
		}
		if name == "big" && (len(r.Response) != 1024 || !r.Truncated) {
			t.Errorf("big: kept %d bytes, truncated %v", len(r.Response), r.Truncated)
		}
		if r.Duration <= 0 {
			t.Errorf("%s: duration %s", name, r.Duration)
		}
	}

	// Transport failures.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	tlsSrv := httptest.NewUnstartedServer(http.NotFoundHandler()) // certificate not trusted
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	stub := stubResolver{"hook.example.com": {netip.MustParseAddr("10.0.0.1")}}
	guarded := &webhook.Sender{Client: ssrf.NewClient(ssrf.Options{Resolver: stub, Timeout: 5 * time.Second})}
	patient := &webhook.Sender{Client: loopbackClient(5 * time.Second)}
	for _, c := range []struct {
		s     *webhook.Sender
		url   string
		class webhook.ErrorClass
	}{
		{patient, "http://" + closed + "/", webhook.ClassConnect},
		{patient, tlsSrv.URL, webhook.ClassTLS},
		{guarded, "https://hook.example.com/", webhook.ClassBlocked},
		{guarded, "https://127.0.0.1/", webhook.ClassBlocked},
		{guarded, "https://missing.example.com/", webhook.ClassDNS},
	} {
		r, err := c.s.Send(context.Background(), c.url, msg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Class != c.class || r.Status != 0 || r.Err == nil {
			t.Errorf("%s: class %q status %d err %v, want %q", c.url, r.Class, r.Status, r.Err, c.class)
		}
	}

	// Request errors are returned, not classified.
	if _, err := (&webhook.Sender{}).Send(context.Background(), "https://x.example.com/", msg); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := s.Send(context.Background(), "https://x.example.com/", webhook.Message{ID: "a.b", Body: nil, Secrets: msg.Secrets}); err == nil {
		t.Error("id with a dot accepted")
	}
	if _, err := s.Send(context.Background(), "https://x.example.com/", webhook.Message{ID: "evt", Body: nil}); err == nil {
		t.Error("no secret accepted")
	}
}

// stubResolver answers from a fixed table.
type stubResolver map[string][]netip.Addr

func (s stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestRetrySchedule checks the documented schedule by hand-computed values:
// attempt n+1 waits Schedule[n] ±20 %.
func TestRetrySchedule(t *testing.T) {
	p := webhook.DefaultRetryPolicy()
	fail := webhook.Result{Status: 500, Class: webhook.ClassHTTP}
	if p.Attempts() != 8 {
		t.Fatalf("%d attempts, want 8", p.Attempts())
	}
	mid := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	for i, m := range mid {
		attempt := i + 1
		for _, c := range []struct {
			u    float64
			want time.Duration
		}{{0.5, m}, {0, m * 8 / 10}, {0.75, m * 11 / 10}} {
			d, ok := p.Next(attempt, fail, c.u)
			if !ok || d != c.want {
				t.Errorf("after attempt %d (u=%v): %s %v, want %s", attempt, c.u, d, ok, c.want)
			}
		}
	}
	if _, ok := p.Next(8, fail, 0.5); ok {
		t.Error("a ninth attempt was scheduled")
	}
	// Sum of the mid schedule: 27 h 35 min 5 s.
	var total time.Duration
	for _, m := range mid {
		total += m
	}
	if total != 27*time.Hour+35*time.Minute+5*time.Second {
		t.Errorf("schedule spans %s", total)
	}
	for _, r := range []webhook.Result{{Status: 200}, {Status: 204}, {Status: 410, Class: webhook.ClassHTTP}} {
		if _, ok := p.Next(1, r, 0.5); ok {
			t.Errorf("status %d: retried", r.Status)
		}
	}
	// Timeouts and 429 wait at least a minute.
	if d, _ := p.Next(1, webhook.Result{Class: webhook.ClassTimeout}, 0.5); d != time.Minute {
		t.Errorf("after a timeout: %s, want 1m", d)
	}
	if d, _ := p.Next(1, webhook.Result{Status: 429, Class: webhook.ClassHTTP}, 0.5); d != time.Minute {
		t.Errorf("after a 429: %s, want 1m", d)
	}
	// Retry-After: honoured when longer, up to twice the scheduled wait.
	for _, c := range []struct {
		attempt int
		status  int
		after   time.Duration
		want    time.Duration
	}{
		{3, 503, 40 * time.Minute, 40 * time.Minute}, // base 30 min: within [base, 2 base]
		{3, 503, 5 * time.Hour, time.Hour},           // clamped to 2 base
		{3, 503, time.Minute, 30 * time.Minute},      // shorter: never hastens
		{1, 429, 10 * time.Minute, time.Minute},      // base 5 s: 2 base < 1 min floor
		{1, 429, 30 * time.Second, time.Minute},
		{2, 429, 7 * time.Minute, 7 * time.Minute},
	} {
		r := webhook.Result{Status: c.status, Class: webhook.ClassHTTP, RetryAfter: c.after}
		if d, ok := p.Next(c.attempt, r, 0.5); !ok || d != c.want {
			t.Errorf("attempt %d, %d Retry-After %s: %s, want %s", c.attempt, c.status, c.after, d, c.want)
		}
	}
	// Disable after 5 days of failure.
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if p.ShouldDisable(t0, t0.Add(5*24*time.Hour-time.Second)) || !p.ShouldDisable(t0, t0.Add(5*24*time.Hour)) || p.ShouldDisable(time.Time{}, t0) {
		t.Error("5-day disable rule")
	}
}

func TestClassifyWrapped(t *testing.T) {
	blocked := &ssrf.BlockedError{Addr: netip.MustParseAddr("10.0.0.1"), Range: "private"}
	if c := webhook.Classify(fmt.Errorf("post: %w", blocked)); c != webhook.ClassBlocked {
		t.Errorf("wrapped BlockedError: %q", c)
	}
	if c := webhook.Classify(context.DeadlineExceeded); c != webhook.ClassTimeout {
		t.Errorf("deadline: %q", c)
	}
	if c := webhook.Classify(errors.New("boom")); c != webhook.ClassRequest {
		t.Errorf("other: %q", c)
	}
}
