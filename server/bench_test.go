package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// Load benchmark shape: every iteration emits loadOps facturas in process
// (billing.Service.Emit) and loadOps through HTTP on a loopback listener, in
// alternating rounds, both with loadClients concurrent clients, and reports
// both rates, their ratio and the latency percentiles of each.
const (
	loadOps     = 200
	loadClients = 8
	loadRounds  = 4 // loadOps are split in rounds that alternate the paths
)

// BenchmarkEmitLoad compares emissions per second through the HTTP API with
// in-process billing at the same concurrency, on SQLite and on PostgreSQL.
// Metrics: http/inproc (the ratio of the rates; the goal on SQLite is at
// least 0.7), http-emit/s, inproc-emit/s, and p50/p99 latencies in
// milliseconds. Figures: docs/performance.md.
//
//	go test -run '^$' -bench EmitLoad -benchtime 3x ./server
func BenchmarkEmitLoad(b *testing.B) {
	backendsB(b, func(b *testing.B, st store.Store) {
		fx := newFixture(b, st, RateLimit{PerSecond: -1})
		// Room for every folio the benchmark takes.
		file, err := fx.creds.Authority.Issue(caftest.IssueRequest{RutEmisor: fx.A.rut, RazonSocial: fx.creds.Emisor.RazonSocial,
			Tipo: 33, Desde: 1001, Hasta: 200000, FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -7)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fx.b.CAFs.Register(context.Background(), fx.A.id, api.CAFInput{TipoDTE: 33, CAFXML: base64.StdEncoding.EncodeToString(file)}); err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(fx.srv)
		defer ts.Close()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: loadClients}, Timeout: time.Minute}
		body, _ := json.Marshal(factura(10))
		ctx := context.Background()

		inproc := func() error {
			// Decoded here too, as the HTTP path does.
			req, err := dte.DecodeRequest(bytes.NewReader(body))
			if err != nil {
				return err
			}
			_, _, err = fx.b.Documents.Emit(ctx, fx.A.id, api.EmitParams{IdempotencyKey: newUUID(), Request: req})
			return err
		}
		overHTTP := func() error {
			req, _ := http.NewRequest("POST", ts.URL+apiBase+"/dte", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Api-Key", fx.A.writeKey)
			req.Header.Set("Idempotency-Key", newUUID())
			res, err := client.Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			out, _ := io.ReadAll(res.Body)
			if res.StatusCode != 201 {
				b.Fatalf("emit: %d %s", res.StatusCode, out)
			}
			return nil
		}
		// Warm up both paths (connections, caches).
		if _, err := runLoad(20, loadClients, inproc); err != nil {
			b.Fatal(err)
		}
		if _, err := runLoad(20, loadClients, overHTTP); err != nil {
			b.Fatal(err)
		}
		var inLat, httpLat []time.Duration
		var inTime, httpTime time.Duration
		b.ResetTimer()
		// The two paths alternate in rounds, so that a change in the
		// machine's load during the run falls on both alike.
		for i := 0; i < b.N; i++ {
			for r := 0; r < loadRounds; r++ {
				start := time.Now()
				l, err := runLoad(loadOps/loadRounds, loadClients, inproc)
				if err != nil {
					b.Fatal(err)
				}
				inTime += time.Since(start)
				inLat = append(inLat, l...)
				start = time.Now()
				l, err = runLoad(loadOps/loadRounds, loadClients, overHTTP)
				if err != nil {
					b.Fatal(err)
				}
				httpTime += time.Since(start)
				httpLat = append(httpLat, l...)
			}
		}
		b.StopTimer()
		n := float64(b.N * loadOps)
		inRate, httpRate := n/inTime.Seconds(), n/httpTime.Seconds()
		b.ReportMetric(inRate, "inproc-emit/s")
		b.ReportMetric(httpRate, "http-emit/s")
		b.ReportMetric(httpRate/inRate, "http/inproc")
		b.ReportMetric(pct(inLat, 50), "inproc-p50-ms")
		b.ReportMetric(pct(inLat, 99), "inproc-p99-ms")
		b.ReportMetric(pct(httpLat, 50), "http-p50-ms")
		b.ReportMetric(pct(httpLat, 99), "http-p99-ms")
		b.ReportMetric(0, "ns/op")
	})
}

// runLoad runs op n times from c goroutines and returns each call's latency.
func runLoad(n, c int, op func() error) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				err := op()
				lat[i] = time.Since(start)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return lat, first
}

// pct returns the p-th percentile of lat in milliseconds.
func pct(lat []time.Duration, p int) float64 {
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return float64(s[i].Microseconds()) / 1000
}
