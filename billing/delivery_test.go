package billing

import (
	"context"
	"errors"
	"github.com/dtekit/dtekit/store/backendtest"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/outbox"

	"github.com/dtekit/dtekit/billing/fault"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/webhook"
)

// hookReceiver is a loopback endpoint recording what it gets.
type hookReceiver struct {
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []receivedReq
}

type receivedReq struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T, status int) *hookReceiver {
	r := &hookReceiver{}
	r.status.Store(int32(status))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, receivedReq{req.Header.Clone(), b})
		r.mu.Unlock()
		w.WriteHeader(int(r.status.Load()))
		io.WriteString(w, "answer from the receiver")
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) requests() []receivedReq {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]receivedReq(nil), r.got...)
}

// deliveryFixture is a Service on a fresh SQLite file with one company,
// an injected clock and jitter fixed at the middle (no jitter).
type deliveryFixture struct {
	s       *Service
	st      store.Store
	clock   *clocktest.Clock
	empresa string
}

func newDeliveryFixture(t *testing.T, start time.Time, cfg DeliveryConfig) *deliveryFixture {
	t.Helper()
	cfg.AllowLoopback = true
	return openDeliveryFixture(t, start, cfg)
}

// openDeliveryFixture is newDeliveryFixture with cfg as given: webhooks
// may point at loopback only if cfg allows it. A zero start means the real
// clock (and no f.clock).
func openDeliveryFixture(t *testing.T, start time.Time, cfg DeliveryConfig) *deliveryFixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, backendtest.SQLitePath(t), &sqlite.Options{Jobs: store.JobsConfig{PollInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	kr, err := NewKeyring(make([]byte, KEKSize))
	if err != nil {
		t.Fatal(err)
	}
	var clock *clocktest.Clock
	now := time.Now
	if !start.IsZero() {
		clock = clocktest.New(start)
		now = clock.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = func() float64 { return 0.5 }
	}
	s, err := New(Config{Store: st, Keyring: kr, Now: now, Delivery: cfg})
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return &deliveryFixture{s: s, st: st, clock: clock, empresa: e.ID}
}

// publishDTE records a dte event as emission does, in its own
// transaction, and returns the event.
func (f *deliveryFixture) publishDTE(t *testing.T, typ webhook.EventType, folio int64) *store.Event {
	t.Helper()
	var ev *store.Event
	err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		ev, err = f.s.outbox.Publish(ctx, tx, f.empresa, typ, webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: folio,
			Estado: "firmado", RutReceptor: "96790240-3", RazonSocialReceptor: "Distribuidora Austral Ltda",
			MontoTotal: 119000, FechaEmision: "2026-03-02"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// onlyDelivery returns the single delivery of a webhook.
func (f *deliveryFixture) deliveries(t *testing.T, webhookID string) []store.Delivery {
	t.Helper()
	p, err := f.st.ListDeliveries(context.Background(), f.empresa, webhookID, store.ListFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// due runs the scheduled attempt a delivery is waiting for, as its job
// would, with the clock moved to its time.
func (f *deliveryFixture) runDue(t *testing.T, d *store.Delivery, attempt int) {
	t.Helper()
	f.clock.Set(d.NextAttemptAt)
	if err := f.s.dlv.Run(context.Background(), outbox.DeliverArgs{EmpresaID: d.EmpresaID, DeliveryID: d.ID, Attempt: attempt, Due: d.NextAttemptAt.UnixMilli()}, 0); err != nil {
		t.Fatal(err)
	}
}

func (f *deliveryFixture) get(t *testing.T, id string) *store.Delivery {
	t.Helper()
	d, err := f.st.GetDelivery(context.Background(), f.empresa, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeliveryRetrySchedule: a receiver that always answers 500 gets the
// eight attempts of the documented schedule, at the documented times under
// the injected clock, each logged; then the delivery fails.
func TestDeliveryRetrySchedule(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	f := newDeliveryFixture(t, t0, DeliveryConfig{})
	rec := newHookReceiver(t, http.StatusInternalServerError)
	ctx := context.Background()
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: rec.srv.URL + "/hooks", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: rec.srv.URL + "/other", Events: []string{"dte.accepted"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := f.publishDTE(t, webhook.EventDTECreated, 1042)
	ds := f.deliveries(t, wh.ID)
	if len(ds) != 1 || ds[0].EventID != ev.ID || ds[0].State != store.DeliveryPending || !ds[0].NextAttemptAt.Equal(t0) {
		t.Fatalf("fan-out: %+v", ds)
	}
	if n := len(f.deliveries(t, other.ID)); n != 0 {
		t.Fatalf("a webhook not subscribed to dte.created got %d deliveries", n)
	}
	// Waits before attempts 2..8, by hand from the documented schedule.
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	d := &ds[0]
	for attempt := 1; attempt <= 8; attempt++ {
		at := d.NextAttemptAt
		f.runDue(t, d, attempt)
		// A second run of the same job (a rescue) sends nothing more.
		f.runDue(t, &store.Delivery{ID: d.ID, EmpresaID: d.EmpresaID, NextAttemptAt: at}, attempt)
		d = f.get(t, d.ID)
		if d.Attempts != attempt || d.LastStatusCode != 500 {
			t.Fatalf("after attempt %d: %+v", attempt, d)
		}
		if attempt < 8 {
			if got := d.NextAttemptAt.Sub(at); got != want[attempt-1] || d.State != store.DeliveryPending {
				t.Fatalf("wait after attempt %d: %s (state %s), want %s", attempt, got, d.State, want[attempt-1])
			}
		} else if d.State != store.DeliveryFailed || !d.NextAttemptAt.IsZero() {
			t.Fatalf("after the last attempt: %+v", d)
		}
	}
	got := rec.requests()
	if len(got) != 8 {
		t.Fatalf("receiver got %d requests, want 8", len(got))
	}
	for i, r := range got {
		if r.header.Get("webhook-id") != ev.ID || string(r.body) != string(ev.Payload) {
			t.Errorf("attempt %d: id %s, body changed %v", i+1, r.header.Get("webhook-id"), string(r.body) != string(ev.Payload))
		}
	}
	out, err := f.s.Webhooks.GetDelivery(ctx, f.empresa, d.ID, api.DeliveryParams{WebhookID: wh.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.AttemptLog) != 8 || out.EventType != "dte.created" {
		t.Fatalf("attempt log: %+v", out)
	}
	for i, a := range out.AttemptLog {
		if a.Attempt != i+1 || a.Trigger != "scheduled" || a.StatusCode == nil || *a.StatusCode != 500 ||
			a.ErrorClass != "http_status" || a.Error != "http_status: the receiver answered 500" || a.Response != "answer from the receiver" {
			t.Errorf("log entry %d: %+v", i, a)
		}
	}
	// The webhook is still active: 27.6 h of failure is under 5 days.
	hooks, _ := f.s.Webhooks.List(ctx, f.empresa)
	if !hooks[0].IsActive || !strings.HasPrefix(hooks[0].Secret, "whsec_…") {
		t.Errorf("webhook after the schedule: %+v", hooks[0])
	}
}

// TestDeliveryInterop: each attempt verifies with the official Standard
// Webhooks library; rotation signs with both secrets for 24 h, then with
// the new one only.
func TestDeliveryInteropAndRotation(t *testing.T) {
	t.Parallel()
	f := newDeliveryFixture(t, time.Now(), DeliveryConfig{})
	rec := newHookReceiver(t, http.StatusNoContent)
	ctx := context.Background()
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: rec.srv.URL, Events: []string{"dte.created", "dte.accepted"}})
	if err != nil {
		t.Fatal(err)
	}
	oldSecret := wh.Secret
	verify := func(r receivedReq, secrets ...string) {
		t.Helper()
		for _, s := range secrets {
			official, err := standardwebhooks.NewWebhook(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := official.Verify(r.body, r.header); err != nil {
				t.Errorf("official library rejects the delivery under %.10s…: %v", s, err)
			}
		}
	}
	f.publishDTE(t, webhook.EventDTECreated, 1)
	d := f.deliveries(t, wh.ID)[0]
	f.runDue(t, &d, 1)
	if d := f.get(t, d.ID); d.State != store.DeliverySucceeded || d.Attempts != 1 {
		t.Fatalf("delivery to a 204 receiver: %+v", d)
	}
	verify(rec.requests()[0], oldSecret)

	rot, err := f.s.Webhooks.RotateSecret(ctx, f.empresa, wh.ID, api.WebhookSecretParams{Secret: ""})
	if err != nil {
		t.Fatal(err)
	}
	if rot.Secret == oldSecret || !strings.HasPrefix(rot.Secret, "whsec_") {
		t.Fatalf("rotation answered %q", rot.Secret)
	}
	f.publishDTE(t, webhook.EventDTEAccepted, 1)
	d = f.deliveries(t, wh.ID)[0]
	f.runDue(t, &d, 1)
	r := rec.requests()[1]
	verify(r, oldSecret, rot.Secret)
	if n := strings.Count(r.header.Get("webhook-signature"), "v1,"); n != 2 {
		t.Errorf("during the grace: %d signatures, want 2", n)
	}
	// 24 h later the old secret no longer signs.
	f.clock.Advance(DefaultRotationGrace + time.Second)
	f.publishDTE(t, webhook.EventDTEAccepted, 2)
	d = f.deliveries(t, wh.ID)[0]
	f.runDue(t, &d, 1)
	r = rec.requests()[2]
	if n := strings.Count(r.header.Get("webhook-signature"), "v1,"); n != 1 {
		t.Errorf("after the grace: %d signatures, want 1", n)
	}
	// A given secret must be a valid whsec_ of 24 to 64 bytes.
	if _, err := f.s.Webhooks.RotateSecret(ctx, f.empresa, wh.ID, api.WebhookSecretParams{Secret: "whsec_short"}); fault.KindOf(err) != fault.KindValidation {
		t.Errorf("short secret: %v", err)
	}
	given := webhook.GenerateSecret().Encode()
	if w, err := f.s.Webhooks.RotateSecret(ctx, f.empresa, wh.ID, api.WebhookSecretParams{Secret: given}); err != nil || w.Secret != given {
		t.Errorf("given secret: %+v %v", w, err)
	}
	// Another company's webhook is not found.
	if _, err := f.s.Webhooks.RotateSecret(ctx, "other-empresa", wh.ID, api.WebhookSecretParams{Secret: ""}); fault.KindOf(err) != fault.KindNotFound {
		t.Errorf("other tenant: %v", err)
	}
}

// TestDeliveryDisables: 410 disables the webhook at once and stops the
// pending retries of its other deliveries; 5 days of failure disable too;
// a deleted webhook's pending deliveries end without a request.
func TestDeliveryDisables(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	f := newDeliveryFixture(t, t0, DeliveryConfig{})
	ctx := context.Background()
	rec := newHookReceiver(t, http.StatusInternalServerError)
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: rec.srv.URL, Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	f.publishDTE(t, webhook.EventDTECreated, 1)
	first := f.deliveries(t, wh.ID)[0]
	f.runDue(t, &first, 1) // 500: retry scheduled
	f.publishDTE(t, webhook.EventDTECreated, 2)
	second := f.deliveries(t, wh.ID)[0]
	rec.status.Store(http.StatusGone)
	f.runDue(t, &second, 1)
	if d := f.get(t, second.ID); d.State != store.DeliveryFailed || d.LastStatusCode != 410 {
		t.Fatalf("410: %+v", d)
	}
	if w, _ := f.st.GetWebhook(ctx, f.empresa, wh.ID); w.IsActive {
		t.Fatal("410 did not disable the webhook")
	}
	n := len(rec.requests())
	d := f.get(t, first.ID)
	f.runDue(t, d, 2)
	if d := f.get(t, first.ID); d.State != store.DeliveryFailed || d.LastError != "webhook disabled" || len(rec.requests()) != n {
		t.Fatalf("retry of a disabled webhook: %+v, %d requests (had %d)", d, len(rec.requests()), n)
	}
	// A disabled webhook gets no new deliveries.
	f.publishDTE(t, webhook.EventDTECreated, 3)
	if got := len(f.deliveries(t, wh.ID)); got != 2 {
		t.Fatalf("%d deliveries after disabling, want 2", got)
	}
	if _, err := f.s.Webhooks.Enable(ctx, f.empresa, wh.ID); err != nil {
		t.Fatal(err)
	}

	// Five days of failures disable it.
	rec.status.Store(http.StatusServiceUnavailable)
	f.publishDTE(t, webhook.EventDTECreated, 4)
	a := f.deliveries(t, wh.ID)[0]
	f.runDue(t, &a, 1)
	if w, _ := f.st.GetWebhook(ctx, f.empresa, wh.ID); !w.IsActive {
		t.Fatal("disabled after one failure")
	}
	f.clock.Advance(5*24*time.Hour - time.Minute)
	f.publishDTE(t, webhook.EventDTECreated, 5)
	b := f.deliveries(t, wh.ID)[0]
	f.runDue(t, &b, 1)
	if w, _ := f.st.GetWebhook(ctx, f.empresa, wh.ID); !w.IsActive {
		t.Fatal("disabled before 5 days")
	}
	f.clock.Advance(2 * time.Minute)
	f.publishDTE(t, webhook.EventDTECreated, 6)
	c := f.deliveries(t, wh.ID)[0]
	f.runDue(t, &c, 1)
	if w, _ := f.st.GetWebhook(ctx, f.empresa, wh.ID); w.IsActive {
		t.Fatal("not disabled after 5 days of failures")
	}

	// Deleting stops pending retries without a request.
	rec2 := newHookReceiver(t, http.StatusInternalServerError)
	wh2, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: rec2.srv.URL, Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	f.publishDTE(t, webhook.EventDTECreated, 7)
	p := f.deliveries(t, wh2.ID)[0]
	f.runDue(t, &p, 1)
	if err := f.s.Webhooks.Delete(ctx, f.empresa, wh2.ID); err != nil {
		t.Fatal(err)
	}
	p2 := f.get(t, p.ID)
	f.runDue(t, p2, 2)
	if d := f.get(t, p.ID); d.State != store.DeliveryFailed || d.LastError != "webhook deleted" || len(rec2.requests()) != 1 {
		t.Fatalf("retry of a deleted webhook: %+v, %d requests", d, len(rec2.requests()))
	}
	// Its deliveries stay readable.
	if page, err := f.s.Webhooks.ListDeliveries(ctx, f.empresa, api.DeliveryListParams{WebhookID: wh2.ID, ListParams: api.ListParams{Limit: 0}}); err != nil || len(page.Data) != 1 {
		t.Fatalf("deliveries of a deleted webhook: %+v %v", page, err)
	}
}

// TestDeliveryRetryAfter: a 429 with Retry-After waits as asked within
// bounds; a timeout waits at least a minute.
func TestDeliveryRetryAfter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	f := newDeliveryFixture(t, t0, DeliveryConfig{Timeout: 300 * time.Millisecond})
	ctx := context.Background()
	var mode atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case 0:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
		case 1:
			w.Header().Set("Retry-After", "420")
			w.WriteHeader(503)
		case 2:
			time.Sleep(time.Second)
		}
	}))
	defer srv.Close()
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: srv.URL, Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	f.publishDTE(t, webhook.EventDTECreated, 1)
	d := f.deliveries(t, wh.ID)[0]
	steps := []struct {
		mode int32
		want time.Duration
	}{
		{0, time.Minute},     // 429 after attempt 1: base 5 s, floor 60 s
		{1, 7 * time.Minute}, // 503 Retry-After 420 s after attempt 2: base 5 min, within 2x
		{2, 30 * time.Minute},
	}
	for i, s := range steps {
		mode.Store(s.mode)
		at := d.NextAttemptAt
		f.runDue(t, &d, i+1)
		d = *f.get(t, d.ID)
		if got := d.NextAttemptAt.Sub(at); got != s.want {
			t.Errorf("step %d: waits %s, want %s (%+v)", i, got, s.want, d)
		}
	}
	out, _ := f.s.Webhooks.GetDelivery(ctx, f.empresa, d.ID, api.DeliveryParams{WebhookID: wh.ID})
	if c := out.AttemptLog[2].ErrorClass; c != "timeout" || out.AttemptLog[2].StatusCode != nil {
		t.Errorf("timeout logged as %+v", out.AttemptLog[2])
	}
}

// TestDeliveryBlocked: with loopback not allowed, registration refuses a
// loopback URL, and a name resolving to a blocked address is refused at
// dial time and logged as blocked.
func TestDeliveryBlocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Loopback not allowed; the name hooks.example.com resolves (stub) to
	// the metadata address.
	f := openDeliveryFixture(t, time.Now(), DeliveryConfig{Resolver: stubResolver{"hooks.example.com": "169.254.169.254"}})
	for _, u := range []string{"http://127.0.0.1:8081/", "https://10.0.0.1/", "https://localhost/", "ftp://x.example.com/", "https://169.254.169.254/"} {
		if _, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: u, Events: []string{"dte.created"}}); fault.KindOf(err) != fault.KindValidation || fault.As(err).Details[0].Field != "url" {
			t.Errorf("CreateWebhook(%s): %v", u, err)
		}
	}
	for _, ev := range [][]string{nil, {"dte.archived"}, {"webhook.ping"}} {
		if _, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: "https://hooks.example.com/", Events: ev}); fault.KindOf(err) != fault.KindValidation {
			t.Errorf("events %q: %v", ev, err)
		}
	}
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: "https://hooks.example.com/dtekit", Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	f.publishDTE(t, webhook.EventDTECreated, 1)
	d := f.deliveries(t, wh.ID)[0]
	f.runDue(t, &d, 1)
	out, _ := f.s.Webhooks.GetDelivery(ctx, f.empresa, d.ID, api.DeliveryParams{WebhookID: wh.ID})
	// The tenant sees the category and a fixed sentence, never what the
	// name resolved to nor the resolver's address (issue 20, point 8).
	a := out.AttemptLog[0]
	if a.ErrorClass != "private_address" || a.Error == "" {
		t.Errorf("blocked attempt logged as %+v, want class private_address", a)
	}
	for _, leak := range []string{"169.254", "hooks.example.com", "dial", "lookup"} {
		if strings.Contains(a.Error, leak) || strings.Contains(out.LastError, leak) {
			t.Errorf("the tenant's view of the attempt reveals %q: error %q, last_error %q", leak, a.Error, out.LastError)
		}
	}
}

// TestDeliveryResendAndPing runs the job runner: a ping reaches the
// receiver once; a resend of a failed delivery succeeds with the same id
// and a fresh signature, logged as manual.
func TestDeliveryResendAndPing(t *testing.T) {
	t.Parallel()
	f := newDeliveryFixture(t, time.Time{}, DeliveryConfig{}) // the real clock
	ctx := context.Background()
	rec := newHookReceiver(t, http.StatusNoContent)
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: rec.srv.URL, Events: []string{"dte.created"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer f.s.Stop(ctx)
	ping, err := f.s.Webhooks.Ping(ctx, f.empresa, wh.ID)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		d, _ := f.st.GetDelivery(ctx, f.empresa, ping.ID)
		return d.State == store.DeliverySucceeded
	})
	r := rec.requests()[0]
	ev, err := webhook.ParseEvent(r.body)
	if err != nil || ev.Type != webhook.EventPing {
		t.Fatalf("ping body %s: %v", r.body, err)
	}
	if p, _ := ev.Ping(); p.WebhookID != wh.ID {
		t.Errorf("ping for %s", p.WebhookID)
	}

	rec.status.Store(http.StatusInternalServerError)
	f.publishDTE(t, webhook.EventDTECreated, 9)
	var dl store.Delivery
	waitFor(t, func() bool {
		for _, d := range f.deliveries(t, wh.ID) {
			if d.ID != ping.ID && d.Attempts >= 1 {
				dl = d
				return true
			}
		}
		return false
	})
	rec.status.Store(http.StatusOK)
	out, err := f.s.Webhooks.ResendDelivery(ctx, f.empresa, dl.ID, api.DeliveryParams{WebhookID: wh.ID})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		d, _ := f.st.GetDelivery(ctx, f.empresa, out.ID)
		return d.State == store.DeliverySucceeded
	})
	got, _ := f.s.Webhooks.GetDelivery(ctx, f.empresa, dl.ID, api.DeliveryParams{WebhookID: wh.ID})
	last := got.AttemptLog[len(got.AttemptLog)-1]
	if last.Trigger != "manual" || last.StatusCode == nil || *last.StatusCode != 200 || got.NextAttemptAt != nil {
		t.Errorf("after resend: %+v", got)
	}
	reqs := rec.requests()
	a, b := reqs[1], reqs[len(reqs)-1]
	if a.header.Get("webhook-id") != b.header.Get("webhook-id") || string(a.body) != string(b.body) {
		t.Error("resend changed the id or the bytes")
	}
	if _, err := f.s.Webhooks.ResendDelivery(ctx, f.empresa, dl.ID, api.DeliveryParams{WebhookID: "other-webhook"}); fault.KindOf(err) != fault.KindNotFound {
		t.Errorf("resend through another webhook: %v", err)
	}
	page, err := f.s.Webhooks.ListDeliveries(ctx, f.empresa, api.DeliveryListParams{WebhookID: wh.ID, ListParams: api.ListParams{Limit: 1}})
	if err != nil || len(page.Data) != 1 || page.NextCursor == nil {
		t.Fatalf("page of 1: %+v %v", page, err)
	}
}

// waitFor polls cond until it holds, for at most a minute.
func waitFor(t *testing.T, cond func() bool) { t.Helper(); clocktest.Eventually(t, time.Minute, cond) }

// stubResolver answers names from a table (one address each).
type stubResolver map[string]string

func (s stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, errors.New("no such host")
}
