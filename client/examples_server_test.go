package client_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/server"
	"github.com/dtekit/dtekit/store"
)

// exampleServer is a dtekit server in the example's process: a SQLite
// store in a temporary directory, one company provisioned with the test
// certificate and CAFs, and a write API key of it. Examples have no
// *testing.T, so it panics on error and stop removes everything.
type exampleServer struct {
	URL, Key string
	stops    []func()
}

func startExample(tipos ...dte.TipoDTE) *exampleServer {
	ctx := context.Background()
	es := &exampleServer{}
	check := func(err error) {
		if err != nil {
			es.stop()
			panic(err)
		}
	}
	dir, err := os.MkdirTemp("", "dtekit-client-example-")
	check(err)
	es.stops = append(es.stops, func() { os.RemoveAll(dir) })
	st, err := billingtest.SQLite.Open(ctx, filepath.Join(dir, "dtekit.db"), store.JobsConfig{})
	check(err)
	es.stops = append(es.stops, func() { st.Close() })
	b, err := billingtest.New(st, billing.Config{Delivery: billing.DeliveryConfig{AllowLoopback: true}})
	check(err)
	check(b.Start(ctx))
	es.stops = append(es.stops, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Stop(ctx)
	})
	creds, err := billingtest.SharedCredentials()
	check(err)
	em, err := billingtest.Provision(ctx, b, creds, billingtest.Company{Tipos: tipos})
	check(err)
	key, err := b.Keys.Create(ctx, em.ID, api.APIKeyInput{Write: true})
	check(err)
	srv, err := server.New(server.Config{Billing: b, RateLimit: server.RateLimit{PerSecond: -1}})
	check(err)
	hs := httptest.NewServer(srv)
	es.stops = append(es.stops, hs.Close)
	es.URL, es.Key = hs.URL, key.Key
	return es
}

// stop closes the server, the service and the store, and removes the
// directory, in that order.
func (es *exampleServer) stop() {
	for i := len(es.stops) - 1; i >= 0; i-- {
		es.stops[i]()
	}
	es.stops = nil
}
