// Package billingtest provides what tests of code built on billing need,
// as net/http/httptest does for net/http: a fresh store of either
// backend, a Service over it, and a company provisioned with a signing
// certificate and CAFs issued by a test authority, so that it can emit at
// once.
//
// Nothing here touches the SII's keys: the CAFs come from a test
// authority (caf/caftest) that the Service is configured to trust, and
// the certificate is a throwaway one (signer/signertest).
//
// A test binary that uses the PostgreSQL backend calls Main from its
// TestMain, so that a throwaway cluster is started once and removed at
// the end (or set DTEKIT_PG_URL to use a running server).
package billingtest

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
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
	// DSN returns a fresh, empty database for t: a file path under
	// t.TempDir() (SQLite) or the URL of a new schema (PostgreSQL).
	DSN func(t testing.TB) string
}

// SQLite is the embedded backend, a file in a temporary directory.
var SQLite = Backend{Name: "sqlite", DSN: func(t testing.TB) string { return filepath.Join(t.TempDir(), sqlite.FileName) }}

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
// company provisioned here uses.
type Credentials struct {
	// Authority issues CAFs; TrustedKeys trusts it (and the SII's keys).
	Authority   *caftest.Authority
	TrustedKeys caf.TrustedKeys
	// Emisor is the demo company's data (ambiente certificación).
	Emisor dte.Emisor
	// P12 is the signing certificate, protected by Password, issued to
	// the person with RUT SignerRUT.
	P12       []byte
	Password  string
	SignerRUT string
	// CAFFiles holds a CAF of Emisor for folios 1–1000 of each type.
	CAFFiles map[dte.TipoDTE][]byte
}

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
type Company struct {
	// ID names a company that exists already: Provision completes it
	// instead of creating one. Empty means a new company.
	ID string
	// Rut and RazonSocial name a new company; empty means the demo
	// emisor's (Credentials.Emisor).
	Rut, RazonSocial string
	// Tipos lists the document types that get a CAF (folios 1–Hasta);
	// nil means none.
	Tipos []dte.TipoDTE
	// Hasta is the last folio of each CAF; zero means 1000.
	Hasta int64
}

// Provision makes sure a company is ready to emit: it creates the
// company (unless c.ID names one) with the demo emisor's address,
// activity and resolution, uploads creds' signing certificate unless the
// company has one, and registers a CAF, issued by creds.Authority and
// authorized a week ago, for each type of c.Tipos that has none. Each
// step already done is skipped, so running it again after an interrupted
// run completes what is missing.
func Provision(ctx context.Context, s *billing.Service, creds *Credentials, c Company) (*billing.Empresa, error) {
	em := creds.Emisor
	if c.Hasta == 0 {
		c.Hasta = 1000
	}
	var e *billing.Empresa
	var err error
	if c.ID != "" {
		if e, err = s.GetEmpresa(ctx, c.ID); err != nil {
			return nil, fmt.Errorf("billingtest: company %s: %w", c.ID, err)
		}
	} else {
		if c.Rut == "" {
			c.Rut, c.RazonSocial = em.Rut, em.RazonSocial
		}
		e, err = s.CreateEmpresa(ctx, billing.EmpresaInput{Rut: c.Rut, RazonSocial: c.RazonSocial, Giro: em.Giro,
			Direccion: em.Direccion, Comuna: em.Comuna, Ciudad: em.Ciudad, Ambiente: em.Ambiente,
			FechaResolucion: em.FechaResolucion, NumeroResolucion: em.NumeroResolucion, Acteco: em.Acteco})
		if err != nil {
			return nil, fmt.Errorf("billingtest: creating company %s: %w", c.Rut, err)
		}
	}
	cert, err := s.CertificateStatus(ctx, e.ID)
	if err != nil {
		return nil, fmt.Errorf("billingtest: certificate of %s: %w", e.Rut, err)
	}
	if !cert.HasCertificado {
		if len(creds.P12) == 0 {
			return nil, fmt.Errorf("billingtest: company %s has no certificate and the credentials carry none", e.Rut)
		}
		if _, err := s.UploadCertificate(ctx, e.ID, creds.P12, creds.Password, creds.SignerRUT); err != nil {
			return nil, fmt.Errorf("billingtest: certificate of %s: %w", e.Rut, err)
		}
	}
	have := map[dte.TipoDTE]bool{}
	for _, tipo := range c.Tipos {
		cafs, err := s.ListCAF(ctx, e.ID, billing.CAFFilter{TipoDTE: tipo, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("billingtest: CAFs of %s: %w", e.Rut, err)
		}
		have[tipo] = len(cafs.Data) > 0
	}
	fa := dte.ChileTime(time.Now()).AddDate(0, 0, -7)
	for _, tipo := range c.Tipos {
		if have[tipo] {
			continue
		}
		file, err := creds.Authority.Issue(caftest.IssueRequest{RutEmisor: e.Rut, RazonSocial: e.RazonSocial,
			Tipo: int(tipo), Desde: 1, Hasta: c.Hasta, FechaAutorizacion: fa})
		if err != nil {
			return nil, fmt.Errorf("billingtest: issuing a CAF of type %d: %w", tipo, err)
		}
		if _, err := s.RegisterCAF(ctx, e.ID, billing.CAFInput{TipoDTE: tipo, CAFXML: string(file)}); err != nil {
			return nil, fmt.Errorf("billingtest: registering the CAF of type %d: %w", tipo, err)
		}
	}
	return e, nil
}

// NewCompany is Provision for a test: it fails t on error.
func NewCompany(t testing.TB, s *billing.Service, c Company) *billing.Empresa {
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
