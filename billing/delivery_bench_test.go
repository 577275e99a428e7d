package billing

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/webhook"
)

// benchWebhooks is the number of endpoints every event fans out to: as
// many as one company may have.
const benchWebhooks = MaxWebhooks

// BenchmarkDeliveryThroughput measures deliveries per second to a loopback
// receiver with benchWebhooks (16) webhooks subscribed to dte.created, each
// iteration one event (16 deliveries). "service" runs the whole path on a SQLite file:
// fan-out in the event's transaction, one job per delivery on the job
// runner (10 workers), signing, the guarded client, the attempt log and
// the delivery update. "sender" is the baseline in the same run: the same
// 16 signed requests per iteration sent by 10 goroutines with
// webhook.Sender and the same client, no store. The ratio service/sender is
// the cost of durability.
//
//	go test -run XXX -bench DeliveryThroughput -benchtime 20x ./billing
func BenchmarkDeliveryThroughput(b *testing.B) {
	var received atomic.Int64
	rec := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rec.Close()
	var rates [2]float64

	b.Run("sender", func(b *testing.B) {
		client := ssrf.NewClient(ssrf.Options{AllowLoopback: true})
		s := &webhook.Sender{Client: client}
		secret := webhook.GenerateSecret()
		body, _ := webhook.MarshalEvent(webhook.EventDTECreated, time.Now(), webhook.DTEData{ID: "x", TipoDTE: 33, Folio: 1, Estado: "firmado"})
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			work := make(chan int, benchWebhooks)
			for j := range benchWebhooks {
				work <- j
			}
			close(work)
			var wg sync.WaitGroup
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range work {
						res, err := s.Send(context.Background(), fmt.Sprintf("%s/h%d", rec.URL, j), webhook.Message{ID: fmt.Sprintf("evt_%d_%d", i, j), Body: body, Secrets: []webhook.Secret{secret}})
						if err != nil || !res.OK() {
							b.Errorf("send: %+v %v", res, err)
						}
					}
				}()
			}
			wg.Wait()
		}
		rates[0] = float64(b.N*benchWebhooks) / time.Since(start).Seconds()
		b.ReportMetric(rates[0], "deliveries/s")
	})

	b.Run("service", func(b *testing.B) {
		ctx := context.Background()
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"), &sqlite.Options{Jobs: store.JobsConfig{Workers: 10, PollInterval: 10 * time.Millisecond}})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		kr, _ := NewKeyring(make([]byte, KEKSize))
		s, err := New(Config{Store: st, Keyring: kr, Delivery: DeliveryConfig{AllowLoopback: true}})
		if err != nil {
			b.Fatal(err)
		}
		e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Bench SpA", Ambiente: "certificacion"}
		if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
			b.Fatal(err)
		}
		for j := range benchWebhooks {
			if _, err := s.Webhooks.Create(ctx, e.ID, api.WebhookInput{URL: fmt.Sprintf("%s/h%d", rec.URL, j), Events: []string{"dte.created"}}); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			b.Fatal(err)
		}
		defer s.Stop(ctx)
		hooks, _ := st.ListWebhooks(ctx, e.ID)
		base := received.Load()
		start := time.Now()
		events := 0
		for b.Loop() {
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				_, err := s.outbox.Publish(ctx, tx, e.ID, webhook.EventDTECreated, webhook.DTEData{ID: newID(), TipoDTE: 33, Folio: int64(events + 1), Estado: "firmado"})
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			events++
			// Wait until the receiver has this event's deliveries.
			for received.Load() < base+int64(events*benchWebhooks) {
				time.Sleep(time.Millisecond)
			}
		}
		// Every delivery recorded as succeeded before the clock stops.
		for !allDelivered(ctx, b, st, e.ID, hooks, events) {
			time.Sleep(5 * time.Millisecond)
		}
		rates[1] = float64(events*benchWebhooks) / time.Since(start).Seconds()
		b.ReportMetric(rates[1], "deliveries/s")
	})
	if rates[0] > 0 && rates[1] > 0 {
		b.Logf("service/sender throughput ratio: %.2f (%.0f vs %.0f deliveries/s)", rates[1]/rates[0], rates[1], rates[0])
	}
}

// allDelivered reports whether every webhook has n succeeded deliveries.
func allDelivered(ctx context.Context, b *testing.B, st store.Store, empresaID string, hooks []store.Webhook, n int) bool {
	for _, h := range hooks {
		p, err := st.ListDeliveries(ctx, empresaID, h.ID, store.ListFilter{Limit: 1})
		if err != nil {
			b.Fatal(err)
		}
		if p.TotalCount != int64(n) || len(p.Items) == 0 || p.Items[0].State != store.DeliverySucceeded {
			return false
		}
	}
	return true
}
