package delivery

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/webhook"
)

// TestSpareWorkersForOtherCompanies: with 6 delivery workers and a company
// cap of 3, two companies whose two webhooks each hang (a tarpit that
// answers nothing until the attempt's bound) would hold all 6 workers, and
// a third company's delivery would wait for the first attempt to time out
// (3 s). A worker is kept spare for companies with no attempt running: the
// two hold 5 at most, and the third company's delivery arrives at once
// (measured below a second; the bound is 3 s), before any tarpit attempt
// ends.
func TestSpareWorkersForOtherCompanies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName), &sqlite.Options{Jobs: store.JobsConfig{PollInterval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := clocktest.New(time.Now())
	const timeout = 3 * time.Second
	d := New(Config{Store: st, Now: clock.Now, Logger: slog.New(slog.DiscardHandler), Seal: testSeal, Open: testOpen,
		AllowLoopback: true, Policy: webhook.DefaultRetryPolicy(), Rand: func() float64 { return 0 },
		RotationGrace: time.Hour, Timeout: timeout, Workers: 6, MaxPerCompany: 3, MaxPerEndpoint: 2})
	if err := periodic.Declare(st.Jobs(), 1); err != nil {
		t.Fatal(err)
	}
	if err := d.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		hanging int
		fastAt  time.Time
	)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/rapido" {
			mu.Lock()
			fastAt = time.Now()
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		mu.Lock()
		hanging++
		mu.Unlock()
		select { // a tarpit: nothing until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
		mu.Lock()
		hanging--
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	empresa := func(rut string) string {
		e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Ambiente: "certificacion"}
		if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	a, b, c := empresa("76192083-9"), empresa("11111111-1"), empresa("22222222-2")
	for _, h := range []struct{ empresa, path string }{{a, "/a1"}, {a, "/a2"}, {b, "/b1"}, {b, "/b2"}, {c, "/rapido"}} {
		if _, _, err := d.CreateWebhook(ctx, h.empresa, srv.URL+h.path, []string{"dte.created"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	ob := outbox.New(clock.Now)
	publish := func(empresaID string, n int) {
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for i := range n {
				data := webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: int64(i + 1), Estado: "firmado"}
				if _, err := ob.Publish(ctx, tx, empresaID, webhook.EventDTECreated, data); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	publish(a, 3) // 6 deliveries to tarpits
	publish(b, 3) // 6 more
	if err := st.Jobs().Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st.Jobs().Stop(sctx)
	})
	start := time.Now()
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return hanging >= 5
	})
	time.Sleep(100 * time.Millisecond) // room for a sixth, if one could start
	mu.Lock()
	held := hanging
	mu.Unlock()
	if held > 5 {
		t.Errorf("the two hanging companies hold %d of the 6 workers; want one spare", held)
	}
	publish(c, 1)
	sent := time.Now()
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !fastAt.IsZero()
	})
	mu.Lock()
	took := fastAt.Sub(sent)
	mu.Unlock()
	t.Logf("the third company's delivery took %s beside two hanging companies (%s after they began)", took, fastAt.Sub(start))
	if took >= time.Second {
		t.Errorf("the third company's delivery took %s beside two hanging companies, want under 1 s (an attempt's bound is %s)", took, timeout)
	}
}
