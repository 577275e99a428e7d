package billing

import (
	"context"
	"errors"
	"github.com/dtekit/dtekit/store/backendtest"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/webhook"
)

// deliveryCrashEnv carries the delivery crash child's database path.
const deliveryCrashEnv = "DTEKIT_DELIVERY_CRASH_CHILD"

// crashJobs is the runner setting of the crash test: jobs left running by
// a killed process are rescued after 8 s (the delivery worker's timeout
// is 2 x 500 ms + 5 s).
var crashJobs = store.JobsConfig{Workers: 4, PollInterval: 50 * time.Millisecond, RescueAfter: 8 * time.Second}

// TestDeliveryCrashChild is the process TestDeliveryKill9 kills: it runs
// the delivery jobs of the database it is given until killed.
func TestDeliveryCrashChild(t *testing.T) {
	path := os.Getenv(deliveryCrashEnv)
	if path == "" {
		t.Skip("run by TestDeliveryKill9")
	}
	runJobsChild(path, Config{Delivery: DeliveryConfig{AllowLoopback: true, Policy: fastPolicy(), Timeout: 500 * time.Millisecond}})
}

// TestDeliveryKill9: a process delivering 40 events is killed with
// SIGKILL at random moments, again and again; after each restart the
// pending deliveries go on, and in the end every delivery has succeeded,
// no event is lost, and the receiver, deduplicating by webhook-id, has
// processed each event exactly once.
func TestDeliveryKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills child processes for about a minute; skipped with -short")
	}
	ctx := context.Background()
	secret := webhook.GenerateSecret()
	v, err := webhook.NewVerifier([]webhook.Secret{secret})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	processed := map[string]int{}
	requests, dups := 0, 0
	handler := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := webhook.DeliveryFromContext(r.Context())
		time.Sleep(100 * time.Millisecond) // slow, so kills land mid-delivery
		if rand.IntN(5) == 0 {
			http.Error(w, "injected", http.StatusInternalServerError)
			return
		}
		mu.Lock()
		processed[d.ID]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}), webhook.MiddlewareOptions{Deduper: webhook.NewMemoryDeduper(time.Hour, nil),
		Observer: func(_ *http.Request, o webhook.Outcome) {
			mu.Lock()
			requests++
			if errors.Is(o.Err, webhook.ErrDuplicate) {
				dups++
			}
			mu.Unlock()
		}})
	recv := httptest.NewServer(handler)
	defer recv.Close()

	path := backendtest.SQLitePath(t)
	st, err := sqlite.Open(ctx, path, &sqlite.Options{Jobs: crashJobs})
	if err != nil {
		t.Fatal(err)
	}
	kek, _ := ParseKEK(testKEK)
	kr, _ := NewKeyring(kek)
	s, err := New(Config{Store: st, Keyring: kr, TrustedKeys: caf.SIIKeys(), Delivery: DeliveryConfig{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Crash SpA", Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	wh, err := s.Webhooks.Create(ctx, e.ID, api.WebhookInput{URL: recv.URL, Events: []string{"dte.created"}, Secret: secret.Encode()})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var eventIDs []string
	for i := range n {
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			ev, err := s.outbox.Publish(ctx, tx, e.ID, webhook.EventDTECreated, webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: int64(i + 1), Estado: "firmado"})
			if err == nil {
				eventIDs = append(eventIDs, ev.ID)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	pending := func() int {
		st, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		p, err := st.ListDeliveries(ctx, e.ID, wh.ID, store.ListFilter{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, d := range p.Items {
			if d.State != store.DeliverySucceeded {
				left++
			}
		}
		if len(p.Items) != n {
			t.Fatalf("%d deliveries, want %d", len(p.Items), n)
		}
		return left
	}
	kills := 0
	deadline := time.Now().Add(3 * time.Minute)
	for left := pending(); left > 0; left = pending() {
		if time.Now().After(deadline) {
			t.Fatalf("%d deliveries still pending after 3 minutes and %d kills", left, kills)
		}
		cmd, stderr := crashChildCmd("TestDeliveryCrashChild", deliveryCrashEnv, path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The first rounds are killed quickly; later ones run long enough
		// for the rescue of jobs the earlier kills left running.
		run := time.Duration(300+rand.IntN(700)) * time.Millisecond
		if kills >= 8 {
			run = 10 * time.Second
		}
		time.Sleep(run)
		killCrashChild(t, cmd, stderr)
		kills++
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range eventIDs {
		if processed[id] != 1 {
			t.Errorf("event %s processed %d times", id, processed[id])
		}
	}
	if len(processed) != n {
		t.Errorf("%d events processed, want %d", len(processed), n)
	}
	t.Logf("%d kills; %d requests for %d events (%d repeats of a delivered id, answered as duplicates), each processed once", kills, requests, n, dups)
}
