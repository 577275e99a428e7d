package billing

import (
	"context"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// blackHole is a loopback listener that accepts connections and never
// answers: what a delivery meets at a host that takes the connection and
// then hangs. It counts the connections it accepted, and those still open.
type blackHole struct {
	ln       net.Listener
	accepted atomic.Int64
	open     atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
}

// newBlackHole starts a black hole, closed with every connection it holds
// when t ends.
func newBlackHole(t testing.TB) *blackHole {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &blackHole{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			h.open.Add(1)
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
			// The client closing its end (its timeout) ends the hold.
			go func() {
				_, _ = io.Copy(io.Discard, c)
				h.open.Add(-1)
			}()
		}
	}()
	t.Cleanup(h.close)
	return h
}

// held is how many connections the black hole holds open.
func (h *blackHole) held() int64 { return h.open.Load() }

// close stops accepting and closes every connection held.
func (h *blackHole) close() {
	h.ln.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
}

// url is a webhook URL on the black hole.
func (h *blackHole) url() string { return "http://" + h.ln.Addr().String() + "/hook" }

// TestTenantStarvation is issue 20's scenario, scaled down: tenant A
// emits facturas that go to a fake SII, and the time for all of them to
// reach aceptado is measured alone, then beside tenant B, whose 100 pings
// go to webhooks on a host that accepts and never answers. A's documents
// must settle within 1.5 times their time alone: B's deliveries work on a
// queue of their own, under caps per company and per endpoint, and its
// pings are rate-limited.
//
// Before the fix, the 100 pings took the 10 workers of the one shared
// queue for 10 s (150 s at the production timeout) and A's documents
// waited behind them. The test fails if they share a queue again, under
// -race too, whatever the machine's speed (issue 29, point 10): each of
// B's attempts is held for deliveryHold, longer than A is given to
// settle; B may hold as many attempts as the submission queue has
// workers (the delivery queue has one more, the spare its room keeps for
// other companies). Sharing one
// queue, B's held attempts take every worker A needs, and A's facturas
// do not move until the first hold ends: the round fails on its bound,
// not on a ratio.
func TestTenantStarvation(t *testing.T) {
	if testing.Short() {
		t.Skip("times rounds of emissions alone, with the package's other tests held back; skipped with -short")
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testTenantStarvation(t, b) })
	}
}

func testTenantStarvation(t *testing.T, b backend) {
	const (
		// facturas per round: enough to keep the submission queue's
		// workers busy (three times as many); a round's time is what is
		// compared, and a starved round still waits for a whole hold.
		facturas = 12
		rounds   = 3
		webhooks = 10
		pings    = 100
		// workers is the budget of the submission queue and of the
		// delivery queue, and B's cap within the delivery queue.
		workers = 4
		// deliveryHold is how long one of B's attempts holds its
		// worker, and settleBound how long A's facturas may take in a
		// round: a round that waits for a hold to end fails.
		deliveryHold = 45 * time.Second
		settleBound  = 30 * time.Second
	)
	ctx := context.Background()
	creds(t)
	fake := siitest.New(siitest.Options{}).Start()
	t.Cleanup(fake.Close)
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	fast := []time.Duration{0}
	s := newService(t, b.name, b.dsn(t), Config{
		Submission: &SubmitConfig{Endpoints: func(sii.Environment) sii.Endpoints { return fake.Endpoints() },
			UploadBackoff: fast, PollBackoff: fast},
		Delivery: DeliveryConfig{AllowLoopback: true, Timeout: deliveryHold, Policy: fastPolicy(), MaxInFlightPerCompany: workers},
		// One delivery worker more than B's cap: the delivery room keeps
		// a fifth of its workers (here one) for companies with no attempt
		// running, so B can still hold exactly `workers` attempts, as
		// many as the submission queue has workers.
		Workers: Workers{Submission: workers, Delivery: workers + 1},
	})
	a := setupEmpresa(t, s, true)
	bEmp := setupOther(t, s)
	hole := newBlackHole(t)
	var hooks []*api.Webhook
	for range webhooks {
		wh, err := s.Webhooks.Create(ctx, bEmp.ID, api.WebhookInput{URL: hole.url(), Events: []string{"dte.created"}})
		if err != nil {
			t.Fatal(err)
		}
		hooks = append(hooks, wh)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		s.Stop(sctx)
	})
	// Before the service stops (cleanups run last first), the held
	// attempts end.
	t.Cleanup(hole.close)

	// settle emits the facturas and waits until every one is aceptado,
	// within a bound that keeps a starved run short.
	settle := func(what string, bound time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		ids := make([]string, 0, facturas)
		for range facturas {
			ids = append(ids, emitOK(t, s, a.ID, submitBody(33, true)).ID)
		}
		for _, id := range ids {
			for {
				d, err := s.Documents.Get(ctx, a.ID, id, api.DTEGetParams{})
				if err != nil {
					t.Fatal(err)
				}
				if d.Estado.Final() {
					if d.Estado != dte.EstadoAceptado {
						t.Fatalf("%s: DTE %s is %s, want aceptado", what, id, d.Estado)
					}
					break
				}
				if time.Since(start) > bound {
					t.Fatalf("%s: DTE %s still %s after %s", what, id, d.Estado, bound)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		return time.Since(start)
	}

	settle("warm-up", 2*settleBound) // the SII token, the first connections
	// Each time is the best of three rounds: the machine may be shared,
	// and only a slowdown in every round is B's doing.
	var alone, beside []time.Duration
	for range rounds {
		alone = append(alone, settle("A alone", settleBound))
	}
	accepted, limited := 0, 0
	for range rounds {
		// B pings again before each round, so its pressure lasts.
		for i := range pings {
			_, err := s.Webhooks.Ping(ctx, bEmp.ID, hooks[i%webhooks].ID)
			switch {
			case err == nil:
				accepted++
			case fault.As(err).Code == fault.RateLimited:
				limited++
			default:
				t.Fatalf("ping %d: %v", i, err)
			}
		}
		// B's deliveries hold every delivery worker before A starts.
		deadline := time.Now().Add(10 * time.Second)
		for hole.held() < workers {
			if time.Now().After(deadline) {
				t.Fatalf("the black hole holds %d attempts after 10 s, want %d", hole.held(), workers)
			}
			time.Sleep(10 * time.Millisecond)
		}
		beside = append(beside, settle("A beside B", settleBound))
	}
	bestAlone, bestBeside := slices.Min(alone), slices.Min(beside)
	t.Logf("%s: %d facturas settled in %s alone (rounds %v), %s beside B (rounds %v); B's %d ping calls: %d queued, %d refused; %d connections taken by the black hole",
		b.name, facturas, bestAlone.Round(time.Millisecond), roundMS(alone), bestBeside.Round(time.Millisecond), roundMS(beside),
		rounds*pings, accepted, limited, hole.accepted.Load())
	// The bound is 1.5×. Under the race detector (CI's test
	// command), on two shared cores, every write and poll of B's snoozed
	// deliveries costs several times more CPU and the single SQLite
	// writer is shared, so the bound there is 2.5×: still far below what
	// starvation gave before the queues (14× to 17×).
	num, bound := int64(3), "1.5"
	if raceEnabled {
		num, bound = 5, "2.5"
	}
	if limit := bestAlone * time.Duration(num) / 2; bestBeside > limit {
		t.Errorf("A's %d facturas took %s beside B, more than %s × %s alone (%s)", facturas, bestBeside, bound, bestAlone, limit)
	}
}

// roundMS rounds durations to milliseconds, for the log.
func roundMS(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
