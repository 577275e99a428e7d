package billing

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"time"

	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/internal/ssrf"
	"github.com/dtekit/dtekit/webhook"
)

// DeliveryConfig configures webhook delivery (Config.Delivery). The zero
// value is the production setting.
type DeliveryConfig struct {
	// AllowLoopback lets webhooks point at loopback addresses, and accepts
	// http://127.0.0.1:PORT/… URLs then: tests and local trials only
	// (dtekit serve --webhook-allow-loopback). Never the default.
	AllowLoopback bool
	// Client replaces the guarded HTTP client that sends deliveries
	// (tests); nil builds the guarded client, which dials public
	// addresses only (and loopback with AllowLoopback).
	Client *http.Client
	// Resolver replaces the DNS resolver of the guarded client (tests);
	// nil means net.DefaultResolver, which satisfies it.
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	// Policy replaces webhook.DefaultRetryPolicy() (tests compress it).
	Policy *webhook.RetryPolicy
	// Rand returns uniform numbers in [0, 1) for the retry jitter; nil
	// means math/rand/v2.
	Rand func() float64
	// RotationGrace is how long a replaced secret keeps signing beside
	// the new one; zero means DefaultRotationGrace.
	RotationGrace time.Duration
	// Timeout bounds one attempt whole (name resolution, connect, TLS,
	// request, response headers and body), whatever Client does; zero
	// means 15 seconds. A receiver that takes the connection and never
	// answers, or answers a byte at a time, is cut there.
	Timeout time.Duration
	// MaxInFlightPerCompany caps the attempts of one company that run at
	// once in this process; an attempt over it waits (it is not failed,
	// dropped or counted as an attempt) until one ends. Zero means half
	// the delivery workers (Workers.Delivery), at least 1, so that one
	// company's slow receivers leave the rest to the others.
	MaxInFlightPerCompany int
	// MaxInFlightPerEndpoint caps, in the same way, the attempts to one
	// webhook; zero means 3 (never above MaxInFlightPerCompany).
	MaxInFlightPerEndpoint int
}

// DefaultRotationGrace is how long a rotated-out webhook secret keeps
// signing deliveries beside the new one.
const DefaultRotationGrace = 24 * time.Hour

// newDeliverer builds the webhook delivery subsystem, cfg's zero fields
// resolved to their defaults.
func (s *Service) newDeliverer(cfg DeliveryConfig) *delivery.Deliverer {
	dc := delivery.Config{Store: s.st, Now: s.now, Logger: s.log, Sealer: s.keys,
		AllowLoopback: cfg.AllowLoopback, Client: cfg.Client, Resolver: cfg.Resolver,
		Policy: webhook.DefaultRetryPolicy(), Rand: cfg.Rand, RotationGrace: cfg.RotationGrace, Timeout: cfg.Timeout,
		Workers: budget(s.cfg.Workers.Delivery, DefaultDeliveryWorkers), Failed: &s.deliveryFailures}
	dc.MaxPerCompany, dc.MaxPerEndpoint = cfg.MaxInFlightPerCompany, cfg.MaxInFlightPerEndpoint
	if cfg.Policy != nil {
		dc.Policy = *cfg.Policy
	}
	if dc.Rand == nil {
		dc.Rand = rand.Float64
	}
	if dc.RotationGrace <= 0 {
		dc.RotationGrace = DefaultRotationGrace
	}
	if dc.Timeout <= 0 {
		dc.Timeout = ssrf.DefaultTimeout
	}
	return delivery.New(dc)
}
