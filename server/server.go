// Package server is dtekit's REST API over HTTP: it maps the routes of the
// API contract 0.2.0 to billing calls and billing's errors to the
// contract's envelope and status codes. It holds no rule of its own beyond
// HTTP: authentication, rate limits, body limits, strict decoding, the
// OpenAPI document, health checks and metrics.
//
// A Server is an http.Handler; the caller owns the http.Server, its
// listener and its shutdown (see cmd/dtekit serve).
package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
)

// Config configures a Server.
type Config struct {
	// Billing serves every API call (required).
	Billing *billing.Service
	// JWT configures bearer tokens; nil refuses them (401).
	JWT *JWTConfig
	// RateLimit is the per-credential limit (zero value: defaults).
	RateLimit RateLimit
	// UploadRateLimit is the per-company limit of received files (POST
	// /recibidos and /respuestas), taken besides the per-credential one:
	// verifying and keeping a file costs more than any other call. Its
	// zero value is a tenth of RateLimit's rate (2 files a second by
	// default) with a burst of 10; a negative PerSecond turns it off, as
	// a RateLimit turned off does when this is left zero.
	UploadRateLimit RateLimit
	// Logger receives one JSON line per request and every internal error;
	// nil discards.
	Logger *slog.Logger
	// ReadyChecks are run by /readyz, by name (e.g. "database",
	// "migrations", "jobs"); any error answers 503.
	ReadyChecks map[string]func(context.Context) error
	// CAFFolios and QueueDepth feed the dtekit_caf_folios_remaining and
	// dtekit_job_queue_depth gauges at scrape time; nil omits them.
	// QueueDepth gives each queue's unfinished jobs by state
	// (store.Jobs.QueueDepth).
	CAFFolios  func(context.Context) ([]CAFFolios, error)
	QueueDepth func(context.Context) (map[string]map[string]int64, error)
	// MetricsTenantLabels labels dtekit_caf_folios_remaining by company
	// and CAF (empresa_id, caf_id), and dtekit_sii_outcomes_total and
	// dtekit_webhook_delivery_failures_total by company (empresa_id). Off
	// by default: /metrics then names no tenant, the folios are summed per
	// document type and the counters over companies.
	MetricsTenantLabels bool
	// Now is the clock of the rate limiter (nil: time.Now).
	Now func() time.Time
}

// Server is the API's http.Handler.
type Server struct {
	mux     *http.ServeMux
	logger  *slog.Logger
	billing *billing.Service
	apiKeys func(ctx context.Context, key string) (*api.Principal, error)
	// tenantExists answers nil when the company exists, a not-found
	// error when it does not (tests of the HTTP layer replace it).
	tenantExists func(ctx context.Context, empresaID string) error
	jwt          *JWTConfig
	limit        *limiters
	uploads      *limiters
	metrics      *metrics
	checks       map[string]func(context.Context) error
	draining     atomic.Bool
	// routeErr collects routes registered without an operation in the
	// OpenAPI document; New fails with it.
	routeErr error
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Billing == nil {
		return nil, errors.New("server: Config.Billing is required")
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	s := &Server{
		mux:     http.NewServeMux(),
		logger:  logger,
		billing: cfg.Billing,
		jwt:     cfg.JWT,
		limit:   newLimiters(cfg.RateLimit, now),
		uploads: newLimiters(uploadLimit(cfg.RateLimit, cfg.UploadRateLimit), now),
		metrics: newMetrics(cfg.CAFFolios, cfg.QueueDepth, cfg.Billing.Counts, cfg.MetricsTenantLabels),
		checks:  cfg.ReadyChecks,
	}
	s.apiKeys = s.billingAPIKey
	s.tenantExists = func(ctx context.Context, empresaID string) error {
		_, err := s.billing.Company.Get(ctx, empresaID)
		return err
	}
	s.routes()
	if s.routeErr != nil {
		return nil, s.routeErr
	}
	return s, nil
}

// Drain marks the server as shutting down: /readyz answers 503 from now on
// so load balancers stop sending requests, while requests in flight finish.
func (s *Server) Drain() { s.draining.Store(true) }

// access is what a route requires of its principal beyond authentication.
type access int

const (
	read access = iota
	write
	admin
)

// apiHandler serves one authenticated API route.
type apiHandler func(w http.ResponseWriter, r *http.Request, p *api.Principal) error

// handle registers an authenticated API route.
func (s *Server) handle(pattern string, acc access, h apiHandler) {
	checkQuery, err := queryChecker(pattern)
	if err != nil {
		// Every route is an operation of the embedded document; New
		// reports the first one that is not.
		s.routeErr = errors.Join(s.routeErr, err)
		return
	}
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, err := s.authenticate(r)
		if err != nil {
			// Failed attempts are limited per client address, so guessing
			// keys costs as much as using one.
			if ok, wait := s.limit.allow("addr:" + clientAddr(r)); !ok {
				s.writeError(w, r, rateLimited("", wait))
				return
			}
			s.writeError(w, r, err)
			return
		}
		setPrincipal(r.Context(), p)
		if ok, wait := s.limit.allow(p.Credential); !ok {
			s.writeError(w, r, rateLimited("", wait))
			return
		}
		switch {
		case acc == admin && !p.Admin:
			s.writeError(w, r, newError(http.StatusForbidden, fault.Forbidden, "this operation requires the admin role"))
			return
		case acc >= write && !p.Write:
			s.writeError(w, r, newError(http.StatusForbidden, fault.WriteNotAllowed,
				"this API key is read-only; ask the operator for write access"))
			return
		}
		if err := checkQuery(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := h(w, r, p); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// clientAddr is the host part of the request's remote address.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// routes registers every route of the server.
func (s *Server) routes() {
	s.mux.HandleFunc("GET /api/v1/openapi.yaml", serveOpenAPI)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.Handle("GET /metrics", s.metrics.handler())
	s.billingRoutes()
	s.inboxRoutes()
}

// readyTimeout bounds all readiness checks together.
const readyTimeout = 3 * time.Second

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		he := newError(http.StatusServiceUnavailable, fault.Unavailable, "the server is shutting down")
		s.writeError(w, r, he)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	names := make([]string, 0, len(s.checks))
	for name := range s.checks {
		names = append(names, name)
	}
	sort.Strings(names)
	failed := map[string]any{}
	for _, name := range names {
		if err := s.checks[name](ctx); err != nil {
			failed[name] = err.Error()
		}
	}
	if len(failed) > 0 {
		s.logger.LogAttrs(r.Context(), slog.LevelWarn, "not ready", slog.Any("checks", failed))
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"code":     fault.Unavailable,
			"message":  "not ready",
			"severity": "critical",
			"context":  map[string]any{"request_id": requestID(r.Context()), "checks": failed},
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// billingAPIKey resolves an API key through billing.
func (s *Server) billingAPIKey(ctx context.Context, key string) (*api.Principal, error) {
	bp, err := s.billing.Keys.Authenticate(ctx, key)
	if err != nil {
		if fault.KindOf(err) == fault.KindInternal || fault.KindOf(err) == fault.KindUnavailable {
			return nil, err
		}
		return nil, errUnauthorized
	}
	return bp, nil
}
