package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/webhook"
)

// logRecord is one captured log line: its level, message and attributes
// as text.
type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

// logCapture is a slog.Handler that keeps every record, for tests that
// check what operators read in the log.
type logCapture struct {
	mu   sync.Mutex
	recs []logRecord
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }

func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	c.mu.Lock()
	c.recs = append(c.recs, rec)
	c.mu.Unlock()
	return nil
}

func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

// find returns the records with this message whose attributes include
// every pair of want.
func (c *logCapture) find(msg string, want map[string]string) []logRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []logRecord
next:
	for _, r := range c.recs {
		if r.Msg != msg {
			continue
		}
		for k, v := range want {
			if r.Attrs[k] != v {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// TestOperatorOutcomes: what an operator sees of the SII's reviews and of
// failed webhook deliveries. Three facturas sent to a fake SII that
// accepts the first, accepts the second with reparos and rejects the
// third, and two webhooks that fail (one answers 500, one refuses the
// connection): /metrics counts one outcome of each estado and one failure
// of each of those two categories (zero for the others), and names no
// tenant unless told to; the queue gauge has a series per queue and
// state; each outcome and failure has its log line, a rejection as a
// warning.
func TestOperatorOutcomes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the job runner against a fake SII; run without -short")
	}
	t.Parallel()
	fake := siitest.New(siitest.Options{}).Start()
	defer fake.Close()
	logs := &logCapture{}
	fast := []time.Duration{0}
	// One attempt now, the next an hour later: each delivery fails once
	// within the test.
	policy := webhook.RetryPolicy{Schedule: []time.Duration{0, time.Hour}, DisableAfter: 24 * time.Hour}
	cfg := billing.Config{Logger: slog.New(logs),
		Submission: &billing.SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return fake.Endpoints() },
			UploadBackoff: fast, PollBackoff: fast},
		Delivery: billing.DeliveryConfig{AllowLoopback: true, Policy: &policy}}
	f := newFixtureWith(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1}, cfg)
	c := f.A
	fake.Register(f.creds.SignerRUT, c.rut)
	fake.Script(c.rut, 33, 2, siitest.Outcome{Result: siitest.Reparo, Detail: "REF-2-750"})
	fake.Script(c.rut, 33, 3, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer failing.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/hooks"
	ln.Close() // nothing listens there: the connection is refused
	hooks := map[string]string{}
	for _, u := range []string{failing.URL + "/hooks", closed} {
		r := f.do("POST", apiBase+"/webhooks", map[string]any{"url": u, "events": []string{"dte.created"}}, c.writeHdr...)
		want(t, r, 201)
		var wh api.Webhook
		r.JSON(t, &wh)
		hooks[u] = wh.ID
	}
	if err := f.b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}

	var ids []string
	for range 3 {
		body := factura(1)
		body["auto_send"] = true
		id, _ := f.emit(c, body)
		ids = append(ids, id)
	}
	estados := map[string]string{}
	attempts := func(hook string) int {
		r := f.do("GET", apiBase+"/webhooks/"+hook+"/deliveries", nil, c.readHdr...)
		var page struct {
			Data []struct{ Attempts int }
		}
		r.JSON(t, &page)
		n := 0
		for _, d := range page.Data {
			n += d.Attempts
		}
		return n
	}
	deadline := time.Now().Add(time.Minute)
	for {
		for _, id := range ids {
			d, err := f.b.Documents.Get(context.Background(), c.id, id, api.DTEGetParams{})
			if err != nil {
				t.Fatal(err)
			}
			estados[id] = string(d.Estado)
		}
		done := estados[ids[0]] == "aceptado" && estados[ids[1]] == "con_reparos" && estados[ids[2]] == "rechazado"
		if done && attempts(hooks[closed]) == 3 && attempts(hooks[failing.URL+"/hooks"]) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: estados %v, attempts %d and %d", estados, attempts(hooks[closed]), attempts(hooks[failing.URL+"/hooks"]))
		}
		time.Sleep(50 * time.Millisecond)
	}

	// /metrics: one outcome of each estado; three failures of each of
	// the two categories (one per dte.created), none of the others.
	r := f.do("GET", "/metrics", nil)
	want(t, r, 200)
	body := string(r.Body)
	for _, line := range []string{
		`dtekit_sii_outcomes_total{estado="aceptado"} 1`,
		`dtekit_sii_outcomes_total{estado="con_reparos"} 1`,
		`dtekit_sii_outcomes_total{estado="rechazado"} 1`,
		`dtekit_webhook_delivery_failures_total{category="http_status"} 3`,
		`dtekit_webhook_delivery_failures_total{category="refused"} 3`,
		`dtekit_webhook_delivery_failures_total{category="dns"} 0`,
		`dtekit_webhook_delivery_failures_total{category="timeout"} 0`,
		`dtekit_webhook_delivery_failures_total{category="private_address"} 0`,
		`dtekit_webhook_delivery_failures_total{category="tls"} 0`,
		`dtekit_webhook_delivery_failures_total{category="request"} 0`,
	} {
		if !strings.Contains(body, "\n"+line+"\n") {
			t.Errorf("/metrics lacks the line %s", line)
		}
	}
	// The queue gauge: each queue with each unfinished state (the
	// retries wait an hour in the delivery queue, scheduled).
	for _, q := range []string{"submission", "recovery", "delivery", "maintenance", "mail", "mailbox", "cesion", "default"} {
		for _, s := range []string{"available", "scheduled", "running", "retryable", "pending"} {
			if !regexp.MustCompile(fmt.Sprintf(`\ndtekit_job_queue_depth\{queue="%s",state="%s"\} \d+\n`, q, s)).MatchString(body) {
				t.Errorf("/metrics lacks dtekit_job_queue_depth of queue %s, state %s", q, s)
			}
		}
	}
	if !strings.Contains(body, `dtekit_job_queue_depth{queue="delivery",state="scheduled"} 6`) {
		t.Errorf("the six retries an hour away are not counted scheduled in the delivery queue:\n%s", grepLines(body, "dtekit_job_queue_depth"))
	}
	if strings.Contains(body, c.id) || strings.Contains(body, "empresa_id") {
		t.Error("/metrics names a tenant without --metrics-tenant-labels")
	}
	// With tenant labels, the counters carry the company.
	tl, err := New(Config{Billing: f.b, MetricsTenantLabels: true})
	if err != nil {
		t.Fatal(err)
	}
	body = string((&tester{t: t, h: tl}).do(newReq("GET", "/metrics", nil)).Body)
	for _, line := range []string{
		fmt.Sprintf(`dtekit_sii_outcomes_total{empresa_id="%s",estado="rechazado"} 1`, c.id),
		fmt.Sprintf(`dtekit_webhook_delivery_failures_total{category="refused",empresa_id="%s"} 3`, c.id),
	} {
		if !strings.Contains(body, line) {
			t.Errorf("/metrics with tenant labels lacks %s", line)
		}
	}

	// The log: one line per outcome, a rejection as a warning; one per
	// failed attempt with its category, never the URL.
	for i, e := range []struct {
		estado string
		level  slog.Level
	}{{"aceptado", slog.LevelInfo}, {"con_reparos", slog.LevelInfo}, {"rechazado", slog.LevelWarn}} {
		recs := logs.find("billing: the SII's review settled a document", map[string]string{"dte_id": ids[i], "estado": e.estado, "empresa_id": c.id})
		if len(recs) != 1 || recs[0].Level != e.level || recs[0].Attrs["folio"] != fmt.Sprint(i+1) {
			t.Errorf("log lines of the %s outcome of %s: %+v", e.estado, ids[i], recs)
		}
	}
	for hook, class := range map[string]string{hooks[closed]: "refused", hooks[failing.URL+"/hooks"]: "http_status"} {
		recs := logs.find("webhook delivery attempt failed", map[string]string{"webhook_id": hook, "class": class})
		if len(recs) != 3 || recs[0].Level != slog.LevelWarn {
			t.Errorf("log lines of the failures of webhook %s (%s): %+v", hook, class, recs)
		}
		if class == "http_status" && len(recs) > 0 && recs[0].Attrs["status"] != "500" {
			t.Errorf("the failure line of an answer 500 lacks its status: %+v", recs[0])
		}
	}
	for _, rec := range logs.find("webhook delivery attempt failed", nil) {
		if strings.Contains(fmt.Sprint(rec.Attrs), "/hooks") {
			t.Errorf("a failure's log line carries the webhook URL: %+v", rec)
		}
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
