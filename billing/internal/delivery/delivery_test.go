package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
	"github.com/dtekit/dtekit/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is a Deliverer over a fresh store alone, with one company, its
// clock stopped at the fixture's start.
type fixture struct {
	d       *Deliverer
	st      store.Store
	empresa string
	clock   *clocktest.Clock
	// failed is the Deliverer's Counter of failed attempts.
	failed *fakeCounter
}

// fakeCounter is the tests' Counter: it counts by company and label.
type fakeCounter struct {
	mu sync.Mutex
	n  map[[2]string]int
}

func (c *fakeCounter) Add(empresaID, label string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[[2]string]int{}
	}
	c.n[[2]string{empresaID, label}]++
}

func (c *fakeCounter) counts() map[[2]string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// testSealer stands in for billing's Keyring (the Sealer): the sealed
// form is the associated data followed by the plaintext, so opening with
// another owner's aad fails.
type testSealer struct{}

func (testSealer) Seal(plain, aad []byte) ([]byte, error) {
	return append(append([]byte{}, aad...), plain...), nil
}

func (testSealer) Open(sealed, aad []byte) ([]byte, error) {
	if !bytes.HasPrefix(sealed, aad) {
		return nil, errors.New("sealed for another owner")
	}
	return sealed[len(aad):], nil
}

func newFixture(t *testing.T, b backendtest.Backend, start time.Time) *fixture {
	t.Helper()
	ctx := context.Background()
	st := b.NewStore(t, store.JobsConfig{})
	clock := clocktest.New(start)
	failed := &fakeCounter{}
	d := New(Config{Store: st, Now: clock.Now, Logger: slog.New(slog.DiscardHandler), Sealer: testSealer{},
		AllowLoopback: true, Policy: webhook.DefaultRetryPolicy(), Rand: func() float64 { return 0.5 },
		RotationGrace: 24 * time.Hour, Timeout: 5 * time.Second, Workers: 4, Failed: failed})
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return &fixture{d: d, st: st, empresa: e.ID, clock: clock, failed: failed}
}

func (f *fixture) get(t *testing.T, id string) *store.Delivery {
	t.Helper()
	d, err := f.st.GetDelivery(context.Background(), f.empresa, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// pendingDelivery records a dte.created event and its delivery to the
// webhook, pending and due at now, with no job enqueued for it.
func (f *fixture) pendingDelivery(t *testing.T, webhookID string, now time.Time) store.Delivery {
	t.Helper()
	var dl store.Delivery
	err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		body, _ := webhook.MarshalEvent(webhook.EventDTECreated, now, webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: 1, Estado: "firmado"})
		ev := &store.Event{EmpresaID: f.empresa, Type: "dte.created", Payload: body}
		if err := tx.InsertEvent(ctx, ev); err != nil {
			return err
		}
		dl = store.Delivery{EmpresaID: f.empresa, WebhookID: webhookID, EventID: ev.ID, State: store.DeliveryPending, NextAttemptAt: now.Truncate(time.Millisecond)}
		return tx.InsertDelivery(ctx, &dl)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dl
}

// receiver is a loopback endpoint answering 204 and counting requests.
func receiver(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// waitFor polls cond until it holds, for at most a minute.
func waitFor(t *testing.T, cond func() bool) { t.Helper(); clocktest.Eventually(t, time.Minute, cond) }

// TestSweep: a pending delivery whose job was lost (here: never enqueued)
// is enqueued again by the sweep once 15 minutes late, once (a second
// sweep finds the job alive), and then delivered.
func TestSweep(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		now := time.Now()
		f := newFixture(t, b, now)
		ctx := context.Background()
		srv, requests := receiver(t)
		wh, _, err := f.d.CreateWebhook(ctx, f.empresa, srv.URL, []string{"dte.created"}, "")
		if err != nil {
			t.Fatal(err)
		}
		var lost, onTime store.Delivery
		err = f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for i, d := range []*store.Delivery{&lost, &onTime} {
				body, _ := webhook.MarshalEvent(webhook.EventDTECreated, now, webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: int64(i + 1), Estado: "firmado"})
				ev := &store.Event{EmpresaID: f.empresa, Type: "dte.created", Payload: body}
				if err := tx.InsertEvent(ctx, ev); err != nil {
					return err
				}
				due := now.Add(-16 * time.Minute)
				if i == 1 {
					due = now.Add(-14 * time.Minute) // late, but within the grace
				}
				*d = store.Delivery{EmpresaID: f.empresa, WebhookID: wh.ID, EventID: ev.ID, State: store.DeliveryPending, NextAttemptAt: due.Truncate(time.Millisecond)}
				if err := tx.InsertDelivery(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Registered (its queue declared), not started yet; the sweep is a
		// maintenance job.
		if err := periodic.Declare(f.st.Jobs(), 1); err != nil {
			t.Fatal(err)
		}
		if err := f.d.Register(f.st.Jobs()); err != nil {
			t.Fatal(err)
		}
		if n, err := f.d.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("first sweep: %d, %v (want 1)", n, err)
		}
		if n, err := f.d.Sweep(ctx); err != nil || n != 0 {
			t.Fatalf("second sweep: %d, %v (want 0: the job is alive)", n, err)
		}
		if err := f.st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer f.st.Jobs().Stop(ctx)
		waitFor(t, func() bool { return f.get(t, lost.ID).State == store.DeliverySucceeded })
		if d := f.get(t, onTime.ID); d.State != store.DeliveryPending || d.Attempts != 0 {
			t.Errorf("delivery within the grace: %+v", d)
		}
		if got := requests.Load(); got != 1 {
			t.Errorf("receiver got %d requests, want 1", got)
		}
	})
}

// TestLogCauseLeavesTheURLOut: the log line of a failed attempt keeps the
// network error but not the webhook URL, whose query may hold a token.
func TestLogCauseLeavesTheURLOut(t *testing.T) {
	err := fmt.Errorf("sending: %w", &url.Error{Op: "Post", URL: "https://hooks.example.com/in?token=s3cret",
		Err: errors.New("dial tcp 203.0.113.9:443: connection refused")})
	got := logCause(err)
	if strings.Contains(got, "s3cret") || strings.Contains(got, "hooks.example.com/in") {
		t.Errorf("logCause = %q: it carries the URL", got)
	}
	if want := "Post: dial tcp 203.0.113.9:443: connection refused"; got != want {
		t.Errorf("logCause = %q, want %q", got, want)
	}
	if got := logCause(errors.New("plain")); got != "plain" {
		t.Errorf("logCause(plain) = %q", got)
	}
}

// TestUpdateWebhookOff: a webhook turned off by UpdateWebhook sends no
// more scheduled attempts: its pending delivery ends failed, "webhook
// disabled", when its attempt comes due, and the receiver hears nothing.
// Turned on again, it keeps its URL, events and secret.
func TestUpdateWebhookOff(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		now := time.Now()
		f := newFixture(t, b, now)
		ctx := context.Background()
		srv, requests := receiver(t)
		wh, sec, err := f.d.CreateWebhook(ctx, f.empresa, srv.URL, []string{"dte.created"}, "")
		if err != nil {
			t.Fatal(err)
		}
		dl := f.pendingDelivery(t, wh.ID, now)
		off, on := false, true
		got, err := f.d.UpdateWebhook(ctx, f.empresa, wh.ID, WebhookChange{Active: &off})
		if err != nil || got.IsActive {
			t.Fatalf("UpdateWebhook off: %+v, %v", got, err)
		}
		if err := f.d.Run(ctx, outbox.DeliverArgs{EmpresaID: f.empresa, DeliveryID: dl.ID, Attempt: 1, Due: dl.NextAttemptAt.UnixMilli()}, 0); err != nil {
			t.Fatal(err)
		}
		if d := f.get(t, dl.ID); d.State != store.DeliveryFailed || d.LastError != "webhook disabled" || d.Attempts != 0 {
			t.Errorf("pending delivery of a webhook turned off: %+v", d)
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("the receiver got %d requests from a webhook turned off", n)
		}
		got, err = f.d.UpdateWebhook(ctx, f.empresa, wh.ID, WebhookChange{Active: &on})
		if err != nil || !got.IsActive || got.URL != wh.URL || fmt.Sprint(got.Events) != "[dte.created]" {
			t.Fatalf("UpdateWebhook on: %+v, %v", got, err)
		}
		if cur, ok := f.d.CurrentSecret(got); !ok || cur.Encode() != sec.Encode() {
			t.Error("turning the webhook off and on changed its secret")
		}
	})
}

// TestFailedAttemptsCounted, on both backends: an attempt the receiver
// answers 500 is recorded, then counted once on the Counter under its
// company and public category (http_status); a successful one is not
// counted.
func TestFailedAttemptsCounted(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		now := time.Now()
		f := newFixture(t, b, now)
		ctx := context.Background()
		// The retry the failure schedules waits in the delivery queue,
		// which no worker of this test takes.
		if err := Declare(f.st.Jobs(), 0); err != nil {
			t.Fatal(err)
		}
		ok, _ := receiver(t)
		broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}))
		t.Cleanup(broken.Close)
		var dls []store.Delivery
		for _, url := range []string{ok.URL, broken.URL} {
			wh, _, err := f.d.CreateWebhook(ctx, f.empresa, url, []string{"dte.created"}, "")
			if err != nil {
				t.Fatal(err)
			}
			dls = append(dls, f.pendingDelivery(t, wh.ID, now))
		}
		for _, dl := range dls {
			if err := f.d.Run(ctx, outbox.DeliverArgs{EmpresaID: f.empresa, DeliveryID: dl.ID, Attempt: 1, Due: dl.NextAttemptAt.UnixMilli()}, 0); err != nil {
				t.Fatal(err)
			}
		}
		if d := f.get(t, dls[1].ID); d.Attempts != 1 || d.LastStatusCode != 500 {
			t.Errorf("the failed attempt's record: %+v", d)
		}
		want := map[[2]string]int{{f.empresa, "http_status"}: 1}
		if got := f.failed.counts(); !maps.Equal(got, want) {
			t.Errorf("failed attempts counted %v, want %v", got, want)
		}
	})
}
