package delivery

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
	"github.com/dtekit/dtekit/webhook"
)

// concurrency is a loopback receiver that holds each request for a while
// before answering 204, and records, per path and for /a and /b together,
// how many it held at once at most.
type concurrency struct {
	hold     time.Duration
	mu       sync.Mutex
	now      map[string]int
	peak     map[string]int
	got      map[string]int
	peakBoth int
}

func (c *concurrency) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	c.mu.Lock()
	c.now[p]++
	c.got[p]++
	c.peak[p] = max(c.peak[p], c.now[p])
	c.peakBoth = max(c.peakBoth, c.now["/a"]+c.now["/b"])
	c.mu.Unlock()
	time.Sleep(c.hold)
	c.mu.Lock()
	c.now[p]--
	c.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// capsRig is a Deliverer over a SQLite store with 6 workers, a company
// cap of 3 and an endpoint cap of 2, its runner not yet started.
type capsRig struct {
	t  *testing.T
	st store.Store
	d  *Deliverer
	ob *outbox.Outbox
}

func newCapsRig(t *testing.T, timeout time.Duration) *capsRig {
	t.Helper()
	// The caps are the Deliverer's, not the store's: one backend suffices.
	st := backendtest.SQLite.NewStore(t, store.JobsConfig{})
	clock := clocktest.New(time.Now())
	d := New(Config{Store: st, Now: clock.Now, Logger: slog.New(slog.DiscardHandler), Sealer: testSealer{},
		AllowLoopback: true, Policy: webhook.DefaultRetryPolicy(), Rand: func() float64 { return 0 },
		RotationGrace: time.Hour, Timeout: timeout, Workers: 6, MaxPerCompany: 3, MaxPerEndpoint: 2})
	if err := periodic.Declare(st.Jobs(), 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	return &capsRig{t: t, st: st, d: d, ob: outbox.New(clock.Now)}
}

// empresa adds a company with webhooks to base+path for each path; it
// returns its id.
func (r *capsRig) empresa(rut, base string, paths ...string) string {
	r.t.Helper()
	ctx := context.Background()
	e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Ambiente: "certificacion"}
	if err := r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		r.t.Fatal(err)
	}
	for _, p := range paths {
		if _, _, err := r.d.CreateWebhook(ctx, e.ID, base+p, []string{"dte.created"}, ""); err != nil {
			r.t.Fatal(err)
		}
	}
	return e.ID
}

// publish records n dte.created events of the company: one delivery to
// each of its webhooks per event.
func (r *capsRig) publish(empresaID string, n int) {
	r.t.Helper()
	err := r.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for i := range n {
			data := webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: int64(i + 1), Estado: "firmado"}
			if _, err := r.ob.Publish(ctx, tx, empresaID, webhook.EventDTECreated, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		r.t.Fatal(err)
	}
}

// start starts the runner, stopped when the test ends.
func (r *capsRig) start() {
	r.t.Helper()
	if err := r.st.Jobs().Start(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.st.Jobs().Stop(sctx)
	})
}

// TestInFlightCaps: with 6 delivery workers, a company capped at 3
// attempts at once and an endpoint at 2, eight deliveries of one company
// to two slow endpoints never run more than 2 per endpoint nor 3 for the
// company, while another company's delivery goes through at once; the
// deliveries over a cap wait and all succeed, each with one attempt: the
// waits are not attempts.
func TestInFlightCaps(t *testing.T) {
	ctx := context.Background()
	r := newCapsRig(t, 1500*time.Millisecond)
	st := r.st
	rcv := &concurrency{hold: 400 * time.Millisecond, now: map[string]int{}, peak: map[string]int{}, got: map[string]int{}}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	busy, other := r.empresa("76192083-9", srv.URL, "/a", "/b"), r.empresa("11111111-1", srv.URL, "/c")
	r.publish(busy, 4) // 8 deliveries: 4 to /a, 4 to /b
	r.start()
	// Once the busy company holds its 3 slots, the other company's
	// delivery is made at once (3 workers are left).
	waitFor(t, func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		return rcv.now["/a"]+rcv.now["/b"] >= 3
	})
	r.publish(other, 1)
	start := time.Now()
	waitFor(t, func() bool {
		rcv.mu.Lock()
		defer rcv.mu.Unlock()
		return rcv.got["/c"] == 1
	})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the other company's delivery took %s beside the busy one", took)
	}
	// Every delivery succeeds, each with one attempt.
	all := func(empresaID string) []store.Delivery {
		var out []store.Delivery
		hooks, err := st.ListWebhooks(ctx, empresaID)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hooks {
			page, err := st.ListDeliveries(ctx, empresaID, h.ID, store.ListFilter{Limit: store.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, page.Items...)
		}
		return out
	}
	waitFor(t, func() bool {
		for _, dl := range all(busy) {
			if dl.State != store.DeliverySucceeded {
				return false
			}
		}
		return true
	})
	dls := all(busy)
	if len(dls) != 8 {
		t.Fatalf("%d deliveries of the busy company, want 8", len(dls))
	}
	for _, dl := range dls {
		atts, err := st.ListDeliveryAttempts(ctx, busy, dl.ID)
		if err != nil {
			t.Fatal(err)
		}
		if dl.Attempts != 1 || len(atts) != 1 || !atts[0].OK {
			t.Errorf("delivery %s: %d attempts, log %+v; want one, successful", dl.ID, dl.Attempts, atts)
		}
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.peakBoth != 3 {
		t.Errorf("the busy company held %d attempts at once, want its cap of 3", rcv.peakBoth)
	}
	if rcv.peak["/a"] > 2 || rcv.peak["/b"] > 2 {
		t.Errorf("an endpoint held %d and %d attempts at once, over its cap of 2", rcv.peak["/a"], rcv.peak["/b"])
	}
	if rcv.got["/a"] != 4 || rcv.got["/b"] != 4 {
		t.Errorf("the endpoints got %d and %d requests, want 4 each", rcv.got["/a"], rcv.got["/b"])
	}
}

// TestPingRateLimit: a webhook takes PingsPerMinute pings at once, then
// one more every 60/PingsPerMinute seconds; one too many is a
// RATE_LIMITED fault.Error with the wait, records nothing, and leaves the
// other webhooks' allowance alone. A ping of an unknown webhook is not
// found, not limited.
func TestPingRateLimit(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
		ctx := context.Background()
		if err := Declare(f.st.Jobs(), 1); err != nil {
			t.Fatal(err)
		}
		one, _, err := f.d.CreateWebhook(ctx, f.empresa, "http://127.0.0.1:9/a", []string{"dte.created"}, "")
		if err != nil {
			t.Fatal(err)
		}
		two, _, err := f.d.CreateWebhook(ctx, f.empresa, "http://127.0.0.1:9/b", []string{"dte.created"}, "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 { // the allowance is 5 a minute, as a burst
			if _, err := f.d.Ping(ctx, f.empresa, one.ID); err != nil {
				t.Fatalf("ping %d: %v", i+1, err)
			}
		}
		_, err = f.d.Ping(ctx, f.empresa, one.ID)
		fe := fault.As(err)
		// One token every 12 s (60 s / 5), none elapsed on the stopped clock.
		if fe == nil || fe.Kind != fault.KindRateLimited || fe.Code != fault.RateLimited || fe.RetryAfter != 12*time.Second ||
			!strings.Contains(fe.Message, "5 pings a minute") {
			t.Fatalf("sixth ping: %+v, want RATE_LIMITED after 12 s", fe)
		}
		page, err := f.st.ListDeliveries(ctx, f.empresa, one.ID, store.ListFilter{Limit: store.MaxLimit})
		if err != nil || len(page.Items) != 5 {
			t.Errorf("deliveries after a refused ping: %d, %v; want the 5 accepted", len(page.Items), err)
		}
		if _, err := f.d.Ping(ctx, f.empresa, two.ID); err != nil {
			t.Errorf("another webhook's ping: %v", err)
		}
		if _, err := f.d.Ping(ctx, f.empresa, newID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ping of an unknown webhook: %v, want not found", err)
		}
		f.clock.Advance(12 * time.Second)
		if _, err := f.d.Ping(ctx, f.empresa, one.ID); err != nil {
			t.Errorf("a ping 12 s later: %v", err)
		}
		if _, err := f.d.Ping(ctx, f.empresa, one.ID); fault.KindOf(err) != fault.KindRateLimited {
			t.Errorf("a second ping 12 s later: %v, want RATE_LIMITED", err)
		}
	})
}

// TestAttemptBound: an attempt ends at Config.Timeout however the
// receiver stalls, even when Client bounds nothing itself: at a host that
// accepts and never answers, and at one that trickles its answer a byte
// at a time. The attempt is logged as a timeout, with its duration.
func TestAttemptBound(t *testing.T) {
	const bound = 500 * time.Millisecond
	stalls := map[string]func(c net.Conn){
		"silent": func(c net.Conn) { io.Copy(io.Discard, c) },
		"trickle": func(c net.Conn) {
			// The request's head first, then the answer a byte at a time.
			r := bufio.NewReader(c)
			for line := ""; line != "\r\n"; {
				var err error
				if line, err = r.ReadString('\n'); err != nil {
					return
				}
			}
			go io.Copy(io.Discard, r)
			for _, b := range []byte("HTTP/1.1 200 OK\r\nX-Slow: " + strings.Repeat("a", 200)) {
				if _, err := c.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		},
	}
	for name, stall := range stalls {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var conns sync.WaitGroup
			t.Cleanup(func() { ln.Close(); conns.Wait() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					conns.Add(1)
					go func() { defer conns.Done(); defer c.Close(); stall(c) }()
				}
			}()
			f := newFixture(t, backendtest.SQLite, time.Now()) // the bound is the HTTP client's: one backend suffices
			// A client with no timeout of its own: only the attempt's
			// bound ends the wait.
			f.d = New(Config{Store: f.st, Now: time.Now, Logger: slog.New(slog.DiscardHandler), Sealer: testSealer{},
				AllowLoopback: true, Client: &http.Client{}, Policy: webhook.DefaultRetryPolicy(), Rand: func() float64 { return 0.5 },
				RotationGrace: time.Hour, Timeout: bound, Workers: 1})
			ctx := context.Background()
			wh, _, err := f.d.CreateWebhook(ctx, f.empresa, "http://"+ln.Addr().String()+"/hook", []string{"dte.created"}, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := Declare(f.st.Jobs(), 1); err != nil {
				t.Fatal(err)
			}
			rec, err := f.d.Ping(ctx, f.empresa, wh.ID)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := f.d.Run(ctx, outbox.DeliverArgs{EmpresaID: f.empresa, DeliveryID: rec.ID, Manual: true, Nonce: newID()}, 0); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > bound+1500*time.Millisecond {
				t.Errorf("the attempt took %s, bound %s", took, bound)
			}
			atts, err := f.st.ListDeliveryAttempts(ctx, f.empresa, rec.ID)
			if err != nil || len(atts) != 1 {
				t.Fatalf("attempts %+v, %v", atts, err)
			}
			if a := atts[0]; a.ErrorClass != string(webhook.ClassTimeout) || a.Duration < bound-50*time.Millisecond || a.Duration > bound+1500*time.Millisecond {
				t.Errorf("attempt %+v: want a timeout of about %s", a, bound)
			}
		})
	}
}
