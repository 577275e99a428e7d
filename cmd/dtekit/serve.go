package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/server"
	"github.com/dtekit/dtekit/server/console"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

const serveUsage = `usage: dtekit serve [--addr 127.0.0.1:8080] [--data DIR] [--database-url URL] [--demo] [--trust [IDK=]KEY.pem]... [flags]

Runs the REST API of contract 0.2.0 (OpenAPI document at /api/v1/openapi.yaml),
with /healthz, /readyz and /metrics. Records live in an embedded SQLite file
under --data unless --database-url (or DTEKIT_DATABASE_URL) names a
postgres:// database. SIGINT or SIGTERM stops it gracefully: requests in
flight and running jobs finish first.

--demo provisions, once, a certificación company with a generated test
certificate and CAFs for the twelve types (issued by a test authority the
server then trusts), a write-enabled API key and an admin JWT, writes them to
DIR/demo.json and prints a curl command that emits a factura. The test
authority's public key is DIR/demo-authority.pub.pem: "dtekit verify --trust
DIR/demo-authority.pub.pem" checks the demo's documents with it.

Documents emitted with auto_send (the default) go to the SII of their
company's ambiente (maullin or palena; DTEKIT_SII_URL sends them to a test
server such as "dtekit sii fake" instead). --demo submits them to a fake SII
inside the process, so a demo factura reaches aceptado within seconds; with
SQLite the fake keeps what it reviewed in DIR/demo-sii.journal, so a
restarted demo's registry still knows its documents.

CAFs are accepted when the SII signed them (its keys for IDK 100,
certificación, and 300, producción). --trust adds a test authority's public
key, for certificación CAFs, or for the IDK it names ("300=KEY.pem": tests
only): "--trust dtekit-demo/test-sii-authority.pub.pem" lets the server take
the CAFs "dtekit demo" made.

What the companies receive is checked against a signer policy, the one
"dtekit verify" takes: --signer RUT=SIGNER_RUT (repeatable) lists who may
sign for a company, the suppliers whose EnvioDTE files arrive (a document
signed by anyone else is not received) and the customers whose answers arrive
(an answer signed by anyone else changes nothing); once any is given, every
company without an entry is refused. --signer-is-rut-envia requires an
envelope's signers to be its RutEnvia; --valid-at-signing each certificate
valid when it signed. With no --signer, any valid signature is taken, and the
first answer of each kind about a document stands.

Webhooks may only target public HTTPS endpoints; --webhook-allow-loopback
also allows loopback addresses (and http://127.0.0.1:PORT), for tests and
local trials with examples/webhook-receiver. Never use it in production.

The companies' mail servers (PUT /empresa/correo) must be on public
addresses, checked at every connection, and on mail ports (25, 143, 465,
587, 993, 2525); --mail-allow-loopback and --mail-allow-private also allow
loopback and private addresses (never link-local or cloud metadata), and
--mail-ports changes the ports ("any": every port).

Environment (flags win):
  DTEKIT_DATABASE_URL   postgres://… database (default: SQLite under --data)
  DTEKIT_KEK            key-encryption key for certificates, CAF keys and webhook
                        secrets, 64 hex digits or base64 of 32 bytes; required
                        with PostgreSQL; with SQLite, DIR/kek.key is created if
                        unset on a new database. serve refuses any key but the
                        one the database's secrets are sealed under
  DTEKIT_JWT_PUBLIC_KEY PEM file with the RSA public key(s) of bearer tokens
  DTEKIT_JWKS_URL       JWKS URL of bearer tokens (instead of a PEM file)
  DTEKIT_JWT_ISSUER     required iss of bearer tokens
  DTEKIT_JWT_AUDIENCE   required aud of bearer tokens
  DTEKIT_RATE_LIMIT     requests per second per credential (default 20; -1 off)
  DTEKIT_RATE_BURST     burst per credential (default twice the rate)
  DTEKIT_UPLOAD_RATE_LIMIT
                        received files (POST /recibidos, /respuestas) per second
                        per company (default a tenth of the rate, burst 10; -1 off)
  DTEKIT_INBOX_MAX_RECEPCIONES
                        each company's quota of received files (default 100000)
  DTEKIT_INBOX_MAX_BYTES
                        of the bytes they keep (default 2 GiB)
  DTEKIT_INBOX_MAX_MENSAJES
                        of mails read (default 100000)
  DTEKIT_INBOX_RETENCION_DIAS
                        days refused files and mails read are kept (default 90);
                        as the --inbox-* flags
  DTEKIT_LOG_LEVEL      debug, info (default), warn or error
  DTEKIT_MAX_CONNECTIONS  connections served at once (default 1024)
  DTEKIT_METRICS_TENANT_LABELS  1 labels /metrics by company
  DTEKIT_SII_URL        base URL of a test SII for every submission
  DTEKIT_SII_TIMEOUT    bound of each exchange with the SII (default 30s; 5s
                        with --demo); a submission step held by a killed
                        process is rescued after eight of them plus 10s
  DTEKIT_JOBS_WORKERS   jobs run at once per queue, e.g. delivery=20,submission=4
                        (defaults submission=8 recovery=2 delivery=10
                        maintenance=2 mail=2 mailbox=2 cesion=2; 0: none in this process)
  DTEKIT_SIGNERS        the --signer entries, RUT=SIGNER_RUT separated by commas
  DTEKIT_SIGNER_IS_RUT_ENVIA  1: as --signer-is-rut-envia
  DTEKIT_VALID_AT_SIGNING     1: as --valid-at-signing
  DTEKIT_JOBS_RESCUE_AFTER  how long a job may run before it is taken for
                        abandoned and run again (default 2m)
  DTEKIT_MAIL_CA        PEM file of extra authorities for the companies' mail
                        servers (a private CA)
  DTEKIT_MAIL_POLL      how often each mailbox is read (default 1m, at least 5s)
  DTEKIT_MAIL_RETRY     pause before a failed mail is sent again (default 30s,
                        2m, 10m, 30m, then hourly)
  DTEKIT_MAIL_ALLOW_LOOPBACK  1: as --mail-allow-loopback
  DTEKIT_MAIL_ALLOW_PRIVATE   1: as --mail-allow-private
  DTEKIT_MAIL_PORTS     as --mail-ports
`

// Names of the files serve keeps in the data directory.
const (
	kekFileName = "kek.key"
)

// serveOptions are serve's flags, resolved against the environment.
type serveOptions struct {
	addr, data, dbURL                     string
	demo, webhookLoopback, tenantMetrics  bool
	trust                                 stringList
	jwtKeyFile, jwksURL, issuer, audience string
	rate, uploadRate                      float64
	burst, maxConns                       int
	inbox                                 billing.InboxConfig
	logLevel                              string
	shutdownTimeout, webhookTimeout       time.Duration
	policy                                signerPolicy
	mailNet                               mailNetwork
}

func runServe(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "serve")
	var o serveOptions
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (port 0 picks a free one)")
	fs.StringVar(&o.data, "data", "dtekit-data", "data directory (SQLite database, key file, demo files)")
	fs.StringVar(&o.dbURL, "database-url", env.getenv("DTEKIT_DATABASE_URL"), "postgres:// URL (default: SQLite under --data)")
	fs.BoolVar(&o.demo, "demo", false, "provision a demo company, API key and admin token (idempotent)")
	fs.Var(&o.trust, "trust", trustUsage)
	fs.BoolVar(&o.tenantMetrics, "metrics-tenant-labels", env.getenv("DTEKIT_METRICS_TENANT_LABELS") == "1",
		"label /metrics' folio gauges by company and CAF and its outcome counters by company (off: summed, no tenant named)")
	fs.BoolVar(&o.webhookLoopback, "webhook-allow-loopback", false, "let webhooks target loopback addresses, http://127.0.0.1:PORT too (tests and local trials only)")
	fs.DurationVar(&o.webhookTimeout, "webhook-timeout", 15*time.Second, "how long a webhook receiver has to answer one delivery attempt (1s to 60s); deliveries over a receiver's cap wait one to three of these between asks")
	fs.BoolVar(&o.mailNet.loopback, "mail-allow-loopback", env.getenv(mailLoopbackEnv) == "1",
		"let the companies' mail servers be on loopback addresses (tests and local trials only)")
	fs.BoolVar(&o.mailNet.private, "mail-allow-private", env.getenv(mailPrivateEnv) == "1",
		"let the companies' mail servers be on private addresses (10/8, 172.16/12, 192.168/16, fc00::/7; never link-local or metadata)")
	fs.StringVar(&o.mailNet.ports, "mail-ports", env.getenv(mailPortsEnv),
		"ports the companies' mail servers may use, e.g. 587,993, or any (default 25,143,465,587,993,2525)")
	fs.StringVar(&o.jwtKeyFile, "jwt-public-key", env.getenv("DTEKIT_JWT_PUBLIC_KEY"), "PEM file of the bearer tokens' RSA public key(s)")
	fs.StringVar(&o.jwksURL, "jwks-url", env.getenv("DTEKIT_JWKS_URL"), "JWKS URL of the bearer tokens' keys")
	fs.StringVar(&o.issuer, "jwt-issuer", env.getenv("DTEKIT_JWT_ISSUER"), "required iss of bearer tokens")
	fs.StringVar(&o.audience, "jwt-audience", env.getenv("DTEKIT_JWT_AUDIENCE"), "required aud of bearer tokens")
	fs.Float64Var(&o.rate, "rate-limit", envFloat(env, "DTEKIT_RATE_LIMIT"), "requests per second per credential (0: default 20; -1: off)")
	fs.IntVar(&o.burst, "rate-burst", int(envFloat(env, "DTEKIT_RATE_BURST")), "burst per credential (0: twice the rate)")
	fs.Float64Var(&o.uploadRate, "upload-rate-limit", envFloat(env, "DTEKIT_UPLOAD_RATE_LIMIT"),
		"received files per second per company (0: a tenth of --rate-limit, burst 10; -1: off)")
	fs.Int64Var(&o.inbox.MaxRecepciones, "inbox-max-recepciones", int64(envFloat(env, "DTEKIT_INBOX_MAX_RECEPCIONES")),
		"received files each company keeps at most (0: 100000); a company may choose fewer")
	fs.Int64Var(&o.inbox.MaxRecepcionBytes, "inbox-max-bytes", int64(envFloat(env, "DTEKIT_INBOX_MAX_BYTES")),
		"bytes each company's received files keep at most, XML and reports with their documents' (0: 2 GiB)")
	fs.Int64Var(&o.inbox.MaxMensajes, "inbox-max-mensajes", int64(envFloat(env, "DTEKIT_INBOX_MAX_MENSAJES")),
		"mails read each company keeps at most; at it its mailbox waits (0: 100000)")
	fs.Int64Var(&o.inbox.RetencionDias, "inbox-retencion-dias", int64(envFloat(env, "DTEKIT_INBOX_RETENCION_DIAS")),
		"days refused files and mails read are kept (0: 90); a company may choose its own")
	fs.IntVar(&o.maxConns, "max-connections", int(envFloat(env, "DTEKIT_MAX_CONNECTIONS")),
		"most connections served at once; more wait in the backlog (0: 1024)")
	fs.StringVar(&o.logLevel, "log-level", env.getenv("DTEKIT_LOG_LEVEL"), "debug, info, warn or error")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a graceful stop waits for requests and jobs")
	o.policy.define(fs, "COMPANY", true)
	o.policy.rutEnvia = env.getenv("DTEKIT_SIGNER_IS_RUT_ENVIA") == "1"
	o.policy.validAt = env.getenv("DTEKIT_VALID_AT_SIGNING") == "1"
	pos, code, ok := parseFlags(env, fs, serveUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "serve", "unexpected arguments %q", pos)
	}
	if err := checkNumericEnv(env); err != nil {
		return usageError(env, "serve", "%v", err)
	}
	if len(o.policy.signers) == 0 {
		o.policy.signers = parseSigners(env.getenv("DTEKIT_SIGNERS"))
	}
	if _, err := o.policy.options(); err != nil {
		return usageError(env, "serve", "%v", err)
	}
	for _, q := range []struct {
		flag string
		v    int64
	}{{"inbox-max-recepciones", o.inbox.MaxRecepciones}, {"inbox-max-bytes", o.inbox.MaxRecepcionBytes},
		{"inbox-max-mensajes", o.inbox.MaxMensajes}, {"inbox-retencion-dias", o.inbox.RetencionDias}} {
		if q.v < 0 {
			return usageError(env, "serve", "--%s %d: want 0 (the default) or more", q.flag, q.v)
		}
	}
	if o.webhookTimeout < time.Second || o.webhookTimeout > time.Minute {
		return usageError(env, "serve", "--webhook-timeout %s: want 1s to 60s", o.webhookTimeout)
	}
	if o.inbox.RetencionDias > 3660 {
		return usageError(env, "serve", "--inbox-retencion-dias %d: want at most 3660 days", o.inbox.RetencionDias)
	}
	if err := serve(ctx, env, o); err != nil {
		fmt.Fprintf(env.stderr, "dtekit serve: %s\n", errLine(err))
		return exitFail
	}
	return exitOK
}

// envFloat reads a numeric environment variable (0 when unset or bad;
// checkNumericEnv refuses a bad one before serve starts).
func envFloat(env *cmdEnv, name string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSpace(env.getenv(name)), 64)
	return v
}

// numericEnv are the variables serve reads with envFloat, and whether
// each takes whole numbers only.
var numericEnv = []struct {
	name  string
	whole bool
}{
	{"DTEKIT_RATE_LIMIT", false}, {"DTEKIT_RATE_BURST", true}, {"DTEKIT_UPLOAD_RATE_LIMIT", false},
	{"DTEKIT_INBOX_MAX_RECEPCIONES", true}, {"DTEKIT_INBOX_MAX_BYTES", true}, {"DTEKIT_INBOX_MAX_MENSAJES", true},
	{"DTEKIT_INBOX_RETENCION_DIAS", true}, {"DTEKIT_MAX_CONNECTIONS", true},
}

// checkNumericEnv refuses a numeric variable that is set but is not a
// number (or not a whole one where one is wanted): envFloat reads it as
// 0, the default, which would hide the mistake (DTEKIT_INBOX_MAX_BYTES=500MB
// would have meant 2 GiB).
func checkNumericEnv(env *cmdEnv) error {
	for _, v := range numericEnv {
		text := strings.TrimSpace(env.getenv(v.name))
		if text == "" {
			continue
		}
		if v.whole {
			if _, err := strconv.ParseInt(text, 10, 64); err != nil {
				return fmt.Errorf("%s=%q: want a whole number", v.name, text)
			}
		} else if _, err := strconv.ParseFloat(text, 64); err != nil {
			return fmt.Errorf("%s=%q: want a number", v.name, text)
		}
	}
	return nil
}

// newLogger returns serve's JSON logger on standard error.
func newLogger(env *cmdEnv, level string) (*slog.Logger, error) {
	var l slog.Level
	if level != "" {
		if err := l.UnmarshalText([]byte(level)); err != nil {
			return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
		}
	}
	return slog.New(slog.NewJSONHandler(env.stderr, &slog.HandlerOptions{Level: l})), nil
}

// rescueAfterEnv names the variable that sets how long a background job
// may stay running before it is taken for abandoned by a crashed process
// and run again (default store.DefaultRescueAfter; a job's own timeout
// still applies).
const rescueAfterEnv = "DTEKIT_JOBS_RESCUE_AFTER"

// backend is an opened store with the billing service over it.
type backend struct {
	st   store.Store
	bill *billing.Service
	desc string // what the log and banner say about the database
}

// openBackend opens the store named by dbURL (PostgreSQL) or the SQLite
// file under dataDir with the key-encryption key its secrets are sealed
// under (openKeyring), and builds the billing service over it.
func openBackend(ctx context.Context, env *cmdEnv, dataDir, dbURL string, trust caf.TrustedKeys, delivery billing.DeliveryConfig, mailNet mailNetwork, submit *billing.SubmitConfig, policy dte.VerifyOptions, inbox billing.InboxConfig, logger *slog.Logger) (*backend, error) {
	st, desc, err := openStore(ctx, env, dataDir, dbURL, logger)
	if err != nil {
		return nil, err
	}
	workers, err := parseWorkers(env.getenv(workersEnv))
	if err != nil {
		st.Close()
		return nil, err
	}
	mail, err := mailConfig(env, mailNet)
	if err != nil {
		st.Close()
		return nil, err
	}
	kr, err := openKeyring(ctx, env, st, dataDir, dbURL)
	if err != nil {
		st.Close()
		return nil, err
	}
	bill, err := billing.New(billing.Config{Store: st, Keyring: kr, TrustedKeys: trust, Logger: logger,
		Delivery: delivery, Submission: submit, Workers: workers, Mail: mail, SignerPolicy: policy, Inbox: inbox})
	if err != nil {
		st.Close()
		return nil, err
	}
	return &backend{st: st, bill: bill, desc: desc}, nil
}

// openStore opens the store named by dbURL (PostgreSQL) or the SQLite
// file under dataDir, its job runner not started; desc is what the log
// and banner say about the database.
func openStore(ctx context.Context, env *cmdEnv, dataDir, dbURL string, logger *slog.Logger) (st store.Store, desc string, err error) {
	jobs := store.JobsConfig{Logger: logger}
	if v := env.getenv(rescueAfterEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, "", fmt.Errorf("%s %q: want a positive duration such as 90s", rescueAfterEnv, v)
		}
		jobs.RescueAfter = d
	}
	switch {
	case dbURL == "":
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, "", err
		}
		path := filepath.Join(dataDir, sqlite.FileName)
		if st, err = sqlite.Open(ctx, path, &sqlite.Options{Jobs: jobs}); err != nil {
			return nil, "", err
		}
		return st, "SQLite " + path, nil
	case strings.HasPrefix(dbURL, "postgres://") || strings.HasPrefix(dbURL, "postgresql://"):
		if env.getenv("DTEKIT_KEK") == "" {
			return nil, "", errPostgresKEK
		}
		if st, err = postgres.Open(ctx, dbURL, &postgres.Options{Jobs: jobs}); err != nil {
			return nil, "", err
		}
		return st, "PostgreSQL", nil
	default:
		return nil, "", errors.New("--database-url must be a postgres:// URL (omit it for SQLite under --data)")
	}
}

// jwtConfig builds the bearer-token configuration from the options; nil
// when none is configured.
func jwtConfig(ctx context.Context, o serveOptions) (*server.JWTConfig, error) {
	if o.jwtKeyFile == "" && o.jwksURL == "" {
		return nil, nil
	}
	if o.jwtKeyFile != "" && o.jwksURL != "" {
		return nil, errors.New("give --jwt-public-key or --jwks-url, not both")
	}
	if o.issuer == "" || o.audience == "" {
		return nil, errors.New("bearer tokens need --jwt-issuer and --jwt-audience")
	}
	var kf jwt.Keyfunc
	var err error
	if o.jwtKeyFile != "" {
		data, rerr := os.ReadFile(o.jwtKeyFile)
		if rerr != nil {
			return nil, rerr
		}
		kf, err = server.PEMKeyfunc(data)
	} else {
		kf, err = server.JWKSKeyfunc(ctx, o.jwksURL)
	}
	if err != nil {
		return nil, err
	}
	return &server.JWTConfig{Keyfunc: kf, Issuer: o.issuer, Audience: o.audience}, nil
}

// serve runs the server until ctx ends, then stops it gracefully.
func serve(ctx context.Context, env *cmdEnv, o serveOptions) error {
	logger, err := newLogger(env, o.logLevel)
	if err != nil {
		return err
	}
	if o.dbURL == "" {
		// The data directory holds the SQLite database: one server at a
		// time. (On PostgreSQL it holds only the demo's keys, which
		// several servers may share.)
		release, err := lockDataDir(o.data)
		if err != nil {
			return err
		}
		defer release()
	} else if o.demo {
		if err := os.MkdirAll(o.data, 0o700); err != nil {
			return err
		}
	}
	var dm *demoState
	var trust caf.TrustedKeys // nil: the SII's keys
	if len(o.trust) > 0 {
		if trust, err = trustedKeys(o.trust); err != nil {
			return fmt.Errorf("--trust: %w", err)
		}
	}
	if o.demo {
		if dm, err = loadDemoKeys(o.data); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if trust == nil {
			trust = caf.SIIKeys()
		}
		trust = trust.With(dm.authority.IDK(), dm.authority.PublicKey())
	}
	// The demo's fake SII keeps its state in the data directory when this
	// server holds it alone (SQLite).
	siiDir := o.data
	if o.dbURL != "" {
		siiDir = ""
	}
	submit, stopSII, err := siiSubmission(env, o.demo, siiDir)
	if err != nil {
		return err
	}
	defer stopSII()
	policy, err := o.policy.options()
	if err != nil {
		return err
	}
	be, err := openBackend(ctx, env, o.data, o.dbURL, trust, billing.DeliveryConfig{AllowLoopback: o.webhookLoopback, Timeout: o.webhookTimeout}, o.mailNet, submit, policy, o.inbox, logger)
	if err != nil {
		return err
	}
	defer be.st.Close()

	jc, err := jwtConfig(ctx, o)
	if err != nil {
		return err
	}
	if dm != nil {
		if jc == nil {
			if o.issuer == "" {
				o.issuer = demoIssuer
			}
			if o.audience == "" {
				o.audience = demoAudience
			}
			jc = &server.JWTConfig{Keyfunc: dm.keyfunc(), Issuer: o.issuer, Audience: o.audience}
		}
		if err := dm.provision(ctx, be.bill, be.st, jc.Issuer, jc.Audience); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := dm.provisionSupplier(ctx, be.bill, be.st, jc.Issuer, jc.Audience); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}

	// The job runner works in the background until stopped.
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer stopJobs()
	if err := be.bill.Start(jobsCtx); err != nil {
		return fmt.Errorf("starting the job runner: %w", err)
	}
	srv, err := server.New(server.Config{
		Billing:         be.bill,
		JWT:             jc,
		RateLimit:       server.RateLimit{PerSecond: o.rate, Burst: o.burst},
		UploadRateLimit: server.RateLimit{PerSecond: o.uploadRate},
		Logger:          logger,
		ReadyChecks: map[string]func(context.Context) error{
			"database": be.st.Ping,
			// Fails from a write refused for want of space until a
			// probe write (or any other) succeeds again.
			"storage": be.st.Writable,
			"jobs": func(context.Context) error {
				if !be.st.Jobs().Running() {
					return errors.New("the job runner is stopped")
				}
				return nil
			},
		},
		CAFFolios:           func(ctx context.Context) ([]server.CAFFolios, error) { return cafFolios(ctx, be.st) },
		QueueDepth:          be.st.Jobs().QueueDepth,
		MetricsTenantLabels: o.tenantMetrics,
	})
	if err != nil {
		return err
	}
	cons, err := console.New(console.Config{Billing: be.bill, Authenticate: srv.Authenticate, Logger: logger,
		PerSecond: o.rate, Burst: o.burst})
	if err != nil {
		return err
	}
	root := http.NewServeMux()
	root.Handle(console.Prefix, cons)
	root.Handle("/", srv)
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           root,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(env.stdout, "dtekit serve: listening on %s (%s)\n", base, be.desc)
	fmt.Fprintf(env.stdout, "  OpenAPI document: %s/api/v1/openapi.yaml\n", base)
	fmt.Fprintf(env.stdout, "  Console: %s%s\n", base, console.Prefix)
	if dm != nil {
		dm.printWelcome(env.stdout, base)
	}
	logger.Info("listening", slog.String("addr", ln.Addr().String()), slog.String("database", be.desc))

	errc := make(chan error, 1)
	maxConns := o.maxConns
	if maxConns <= 0 {
		maxConns = server.DefaultMaxConnections
	}
	go func() { errc <- hs.Serve(server.LimitConnections(ln, maxConns)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Graceful stop: readiness fails first, requests in flight finish,
	// then the job runner lets running jobs finish.
	logger.Info("stopping")
	srv.Drain()
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	err = hs.Shutdown(sctx)
	if jerr := be.bill.Stop(sctx); jerr != nil {
		err = errors.Join(err, jerr)
	}
	stopJobs()
	logger.Info("stopped")
	fmt.Fprintln(env.stdout, "dtekit serve: stopped")
	return err
}

// cafFolios lists the folios left in every active CAF of every company's
// current environment (those emission draws from), for the
// dtekit_caf_folios_remaining gauge.
func cafFolios(ctx context.Context, st store.Store) ([]server.CAFFolios, error) {
	var out []server.CAFFolios
	for e, err := range store.Empresas(ctx, st) {
		if err != nil {
			return nil, err
		}
		cafs, err := st.ListCAFs(ctx, e.ID, 0)
		if err != nil {
			return nil, err
		}
		for i := range cafs {
			if cafs[i].IsActive && cafs[i].Ambiente == e.Ambiente {
				out = append(out, server.CAFFolios{EmpresaID: e.ID, TipoDTE: cafs[i].TipoDTE, CAFID: cafs[i].ID, Remaining: cafs[i].FoliosDisponibles()})
			}
		}
	}
	return out, nil
}
