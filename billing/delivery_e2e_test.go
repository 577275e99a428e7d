package billing

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// fastPolicy is the documented policy with its waits compressed to
// milliseconds, for tests that run the real job runner.
func fastPolicy() *webhook.RetryPolicy {
	p := webhook.DefaultRetryPolicy()
	p.Schedule = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond,
		400 * time.Millisecond, 500 * time.Millisecond, 500 * time.Millisecond}
	p.MinAfterThrottle = 50 * time.Millisecond
	return &p
}

// startReceiver builds examples/webhook-receiver and runs it on a loopback
// port with secret; it returns its URL and a function that stops it with
// SIGINT and returns its log lines.
func startReceiver(t *testing.T, secret string) (string, func() []string) {
	t.Helper()
	goTool := oracle.Tool(t, "go")
	bin := filepath.Join(t.TempDir(), "webhook-receiver")
	build := exec.Command(goTool, "build", "-o", bin, "../examples/webhook-receiver")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "DTEKIT_WEBHOOK_SECRET="+secret)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var mu sync.Mutex
	var lines []string
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := sc.Text()
			if _, a, ok := strings.Cut(l, "msg=listening addr="); ok {
				addrc <- a
			}
			mu.Lock()
			lines = append(lines, l)
			mu.Unlock()
		}
	}()
	select {
	case a := <-addrc:
		return "http://" + a + "/hooks", func() []string {
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Error("receiver did not stop")
			}
			cmd.Wait()
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), lines...)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("receiver did not start")
	}
	return "", nil
}

// faultProxy sits between dtekit and the receiver: it checks every
// request with the official Standard Webhooks library, answers 500 to the
// first attempt of every id, makes the second attempt of every other id
// time out, forwards the rest, and forwards every delivered request a
// second time (a lost acknowledgement) so the receiver must deduplicate.
type faultProxy struct {
	t        *testing.T
	target   string
	official *standardwebhooks.Webhook
	mu       sync.Mutex
	seen     map[string]int
	slow     map[string]bool
	order    []string
	verified int
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := p.official.Verify(body, r.Header); err != nil {
		p.t.Errorf("official library rejects a delivery: %v", err)
	}
	id := r.Header.Get("webhook-id")
	p.mu.Lock()
	p.verified++
	if p.seen[id] == 0 {
		p.slow[id] = len(p.seen)%2 == 0 // every other id, by order of arrival
	}
	p.seen[id]++
	n := p.seen[id]
	odd := p.slow[id]
	p.mu.Unlock()
	switch {
	case n == 1:
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	case n == 2 && odd:
		time.Sleep(4 * time.Second) // beyond the 3 s attempt timeout
		return
	}
	status := 0
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, p.target, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if status == 0 {
			status = resp.StatusCode
		}
	}
	if status >= 200 && status < 300 {
		p.mu.Lock()
		p.order = append(p.order, id)
		p.mu.Unlock()
	}
	w.WriteHeader(status)
}

// TestDeliveryEndToEnd: documents emitted with auto_send through the
// service and accepted by the fake SII reach the reference receiver
// (examples/webhook-receiver, its own process) as dte.created and
// dte.accepted, recorded in that order, verified, each event id processed
// once, although every id's first attempt was answered 500, half the
// second attempts timed out, and every delivered request arrived twice.
// (Arrival order across two events of one document is not guaranteed
// when their retries interleave; the envelope's estado and timestamp
// tell a receiver which is newer.)
func TestDeliveryEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the example receiver; skipped with -short")
	}
	ctx := context.Background()
	secret := webhook.GenerateSecret().Encode()
	recvURL, stop := startReceiver(t, secret)
	official, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &faultProxy{t: t, target: recvURL, official: official, seen: map[string]int{}, slow: map[string]bool{}}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	fake := siitest.New(siitest.Options{}).Start()
	defer fake.Close()
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	creds(t)
	fast := []time.Duration{0}
	// The attempt timeout leaves room for a loaded machine: a forwarded
	// attempt (two round trips to the receiver's process) must not time out
	// by accident, or it is sent again and counts one duplicate more.
	s := newService(t, "sqlite", backends[0].dsn(t), Config{Delivery: DeliveryConfig{AllowLoopback: true, Policy: fastPolicy(), Timeout: 3 * time.Second},
		Submission: &SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return fake.Endpoints() },
			UploadBackoff: fast, PollBackoff: fast, Timeout: 5 * time.Second}})
	emp := setupEmpresa(t, s, true)
	u, _ := url.Parse(ps.URL)
	wh, err := s.Webhooks.Create(ctx, emp.ID, api.WebhookInput{URL: "http://" + u.Host + "/hooks", Secret: secret,
		Events: []string{"dte.created", "dte.accepted"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	}()

	// Emitted with auto_send: the fake SII accepts them.
	const n = 6
	var ids []string
	for range n {
		res, err := emitBody(s, ctx, emp.ID, newKey(), submitBody(33, true))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	settled := func(want int) func() bool {
		return func() bool {
			p, err := s.st.ListDeliveries(ctx, emp.ID, wh.ID, store.ListFilter{Limit: store.MaxLimit})
			if err != nil || len(p.Items) != want {
				return false
			}
			for _, d := range p.Items {
				if d.State != store.DeliverySucceeded {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, settled(2*n))
	lines := stop()

	for _, id := range ids {
		if d, _ := s.Documents.Get(ctx, emp.ID, id, api.DTEGetParams{}); d.Estado != "aceptado" {
			t.Errorf("DTE %s is %s", id, d.Estado)
		}
	}
	// Every event id processed exactly once, dte.created before
	// dte.accepted for each document, and duplicates seen as such.
	processed := map[string]string{} // event id → type
	dups := 0
	for _, l := range lines {
		if !strings.Contains(l, "msg=delivery") {
			continue
		}
		id := field(l, "id")
		switch field(l, "outcome") {
		case "processed":
			if prev, ok := processed[id]; ok {
				t.Errorf("event %s (%s) processed twice", id, prev)
			}
			processed[id] = field(l, "type")
		case "duplicate":
			dups++
		default:
			t.Errorf("receiver line: %s", l)
		}
	}
	if len(processed) != 2*n || dups != 2*n {
		t.Fatalf("%d events processed (want %d), %d duplicates (want %d):\n%s", len(processed), 2*n, dups, 2*n, strings.Join(lines, "\n"))
	}
	events, _ := s.st.ListEvents(ctx, emp.ID, store.ListFilter{Limit: store.MaxLimit})
	byDTE := map[string][]string{}
	for i := len(events.Items) - 1; i >= 0; i-- { // oldest first
		e := events.Items[i]
		ev, _ := webhook.ParseEvent(e.Payload)
		d, _ := ev.DTE()
		if processed[e.ID] != e.Type {
			t.Errorf("event %s (%s) not processed as such", e.ID, e.Type)
		}
		if e.Type == "dte.accepted" && (d.Estado != "aceptado" || d.TrackID == nil || d.CodigoSII == "") {
			t.Errorf("dte.accepted payload %+v", d)
		}
		byDTE[d.ID] = append(byDTE[d.ID], e.Type)
	}
	for _, id := range ids {
		if got := strings.Join(byDTE[id], ","); got != "dte.created,dte.accepted" {
			t.Errorf("DTE %s: events %s", id, got)
		}
	}
	// The attempt logs show the injected faults.
	page, err := s.Webhooks.ListDeliveries(ctx, emp.ID, api.DeliveryListParams{WebhookID: wh.ID, ListParams: api.ListParams{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	timeouts := 0
	for _, d := range page.Data {
		if d.AttemptLog[0].StatusCode == nil || *d.AttemptLog[0].StatusCode != 500 {
			t.Errorf("delivery %s: first attempt %+v", d.ID, d.AttemptLog[0])
		}
		for _, a := range d.AttemptLog {
			if a.ErrorClass == "timeout" {
				timeouts++
			}
		}
	}
	if timeouts == 0 {
		t.Error("no attempt timed out")
	}
	t.Logf("%d deliveries, %d requests verified by the official library, %d timeouts, %d duplicates absorbed", len(page.Data), proxy.verified, timeouts, dups)
}

// field returns the value of key=value in a logfmt line (unquoted).
func field(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.Index(v[1:], `"`); j >= 0 {
			return v[1 : j+1]
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		return v[:j]
	}
	return v
}
