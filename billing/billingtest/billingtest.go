// Package billingtest provides what tests of code built on billing need,
// as net/http/httptest does for net/http: a fresh store of either
// backend, a Service over it, and a company provisioned with a signing
// certificate and CAFs issued by a test authority, so that it can emit at
// once.
//
// Nothing here touches the SII's keys: the CAFs come from a test
// authority (caf/caftest) that the Service is configured to trust, and
// the certificate is a throwaway one (signer/signertest). The
// provisioning itself is package demo's, which the binary's demo uses
// too without carrying this package's test code.
//
// A test binary that uses the PostgreSQL backend calls Main from its
// TestMain, so that a throwaway cluster is started once and removed at
// the end (or set DTEKIT_PG_URL to use a running server).
package billingtest

import (
	"context"
	"encoding/hex"
	"fmt"
	"github.com/dtekit/dtekit/store/backendtest"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/demo"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// Main runs the tests of a package that opens PostgreSQL stores: it
// starts the throwaway cluster they share, runs m and removes the
// cluster. Call it from TestMain.
func Main(m *testing.M) { pgtest.Main(m) }

// Backend is one store implementation.
type Backend struct {
	// Name is "sqlite" or "postgres", for subtest names.
	Name string
	// DSN returns a fresh database for t, its schema made and no records
	// in it: a file path under t.TempDir() (SQLite) or the URL of a new
	// schema (PostgreSQL).
	DSN func(t testing.TB) string
}

// SQLite is the embedded backend, a file in a temporary directory.
var SQLite = Backend{Name: "sqlite", DSN: backendtest.SQLitePath}

// Postgres is the PostgreSQL backend, a new schema of the shared
// throwaway cluster (see Main).
var Postgres = Backend{Name: "postgres", DSN: func(t testing.TB) string { return pgtest.URL(t) }}

// Backends returns both backends, SQLite first.
func Backends() []Backend { return []Backend{SQLite, Postgres} }

// Open opens the store at dsn with the given job settings (a zero
// PollInterval means 50 ms, quick enough for tests).
func (b Backend) Open(ctx context.Context, dsn string, jobs store.JobsConfig) (store.Store, error) {
	if jobs.PollInterval == 0 {
		jobs.PollInterval = 50 * time.Millisecond
	}
	switch b.Name {
	case SQLite.Name:
		return sqlite.Open(ctx, dsn, &sqlite.Options{Jobs: jobs})
	case Postgres.Name:
		return postgres.Open(ctx, dsn, &postgres.Options{Jobs: jobs})
	}
	return nil, fmt.Errorf("billingtest: unknown backend %q", b.Name)
}

// NewStore opens a fresh store of backend b, closed when t ends.
func (b Backend) NewStore(t testing.TB) store.Store {
	t.Helper()
	st, err := b.Open(context.Background(), b.DSN(t), store.JobsConfig{})
	if err != nil {
		t.Fatalf("billingtest: opening a %s store: %v", b.Name, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// KEK is the key-encryption key of the Keyring NewService gives a
// Service: fixed, so a test can reopen a database it wrote.
var KEK = []byte("billingtest-key-encryption-key!!")

// Credentials are the test authority and signing certificate every
// company provisioned here uses (package demo's).
type Credentials = demo.Credentials

var (
	credsOnce sync.Once
	credsVal  *Credentials
	credsErr  error
)

// SharedCredentials returns the process's test credentials, generated on
// first use (RSA keys take a moment) and shared afterwards.
func SharedCredentials() (*Credentials, error) {
	credsOnce.Do(func() {
		c, err := dtetest.New(nil)
		if err != nil {
			credsErr = err
			return
		}
		credsVal = &Credentials{Authority: c.Authority, TrustedKeys: c.Keys, Emisor: c.Emisor, P12: c.P12,
			Password: c.Password, SignerRUT: dtetest.SignerRUT, CAFFiles: c.CAFFiles}
	})
	if credsErr != nil {
		return nil, fmt.Errorf("billingtest: generating test credentials: %w", credsErr)
	}
	return credsVal, nil
}

// Creds is SharedCredentials for a test: it fails t on error.
func Creds(t testing.TB) *Credentials {
	t.Helper()
	c, err := SharedCredentials()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// New returns a Service over st built from cfg, whose empty Keyring and
// TrustedKeys are filled in: a Keyring under KEK and the test authority's
// keys (SharedCredentials).
func New(st store.Store, cfg billing.Config) (*billing.Service, error) {
	cfg.Store = st
	if cfg.Keyring == nil {
		kr, err := billing.NewKeyring(KEK)
		if err != nil {
			return nil, err
		}
		cfg.Keyring = kr
	}
	if cfg.TrustedKeys == nil {
		creds, err := SharedCredentials()
		if err != nil {
			return nil, err
		}
		cfg.TrustedKeys = creds.TrustedKeys
	}
	return billing.New(cfg)
}

// NewService is New for a test: it fails t on error, and stops the
// Service's job runner when t ends if the test started it.
func NewService(t testing.TB, st store.Store, cfg billing.Config) *billing.Service {
	t.Helper()
	s, err := New(st, cfg)
	if err != nil {
		t.Fatalf("billingtest: billing.New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Stop(ctx)
	})
	return s
}

// Company says which company Provision makes, or completes.
type Company = demo.Company

// Provision makes sure a company is ready to emit, as demo.Provision
// does: the binary's demo and the tests provision companies alike.
func Provision(ctx context.Context, s *billing.Service, creds *Credentials, c Company) (*api.Empresa, error) {
	return demo.Provision(ctx, s, creds, c)
}

// NewCompany is Provision for a test: it fails t on error.
func NewCompany(t testing.TB, s *billing.Service, c Company) *api.Empresa {
	t.Helper()
	e, err := Provision(context.Background(), s, Creds(t), c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// KEKHex is KEK in the hexadecimal form ParseKEK reads (as the command
// line's DTEKIT_KEK takes it).
func KEKHex() string { return hex.EncodeToString(KEK) }
