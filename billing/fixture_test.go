package billing

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"github.com/dtekit/dtekit/store/backendtest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// TestMain runs up to four tests at a time unless -parallel says
// otherwise: most of this package's tests wait (for jobs, fake servers,
// retry delays and killed child processes) far more than they compute,
// and the default of one test per core left the cores idle half the time.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
	// -short is for iterating: the tests that run on both backends run on
	// SQLite only (the full suite runs both).
	if testing.Short() {
		backends = backends[:1]
	}
	pgtest.Main(m)
}

// testKEK is the key-encryption key of the tests' keyrings.
var testKEK = hex.EncodeToString([]byte("billing-tests-key-encryption-key"))

// backend is one store implementation the tests run against.
type backend struct {
	name string
	// dsn returns a fresh database for t: a file path or a PostgreSQL URL.
	dsn func(t testing.TB) string
}

var backends = []backend{
	{"sqlite", backendtest.SQLitePath},
	{"postgres", func(t testing.TB) string { return pgtest.URL(t) }},
}

// openStore opens a store of the named backend.
func openStore(ctx context.Context, kind, dsn string) (store.Store, error) {
	jobs := store.JobsConfig{PollInterval: 250 * time.Millisecond}
	switch kind {
	case "sqlite":
		return sqlite.Open(ctx, dsn, &sqlite.Options{Jobs: jobs})
	case "postgres":
		return postgres.Open(ctx, dsn, &postgres.Options{Jobs: jobs})
	}
	return nil, fmt.Errorf("unknown backend %q", kind)
}

// newService opens a Service over the store at dsn, closed when t ends.
func newService(t testing.TB, kind, dsn string, cfg Config) *Service {
	t.Helper()
	s, err := openService(kind, dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.st.Close() })
	return s
}

// openService opens a Service over the store at dsn; close s.st when done.
// A nil cfg.TrustedKeys trusts the test authority; a nil cfg.Keyring is
// under testKEK.
func openService(kind, dsn string, cfg Config) (*Service, error) {
	ctx := context.Background()
	st, err := openStore(ctx, kind, dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s store: %w", kind, err)
	}
	if cfg.Keyring == nil {
		kek, _ := ParseKEK(testKEK)
		if cfg.Keyring, err = NewKeyring(kek); err != nil {
			st.Close()
			return nil, err
		}
	}
	cfg.Store = st
	if cfg.TrustedKeys == nil {
		if credsVal == nil {
			st.Close()
			return nil, fmt.Errorf("openService: call creds first or give TrustedKeys")
		}
		cfg.TrustedKeys = credsVal.Keys
	}
	s, err := New(cfg)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// fixture is a service with one company ready to emit: the demo emisor,
// its certificate and a CAF for tipo 33 (folios 1–1000) unless noCAF.
type fixture struct {
	s   *Service
	emp *api.Empresa
	dsn string
}

func demoEmpresa() api.EmpresaInput {
	e := dtetest.DemoEmisor()
	return api.EmpresaInput{Rut: e.Rut, RazonSocial: e.RazonSocial, Giro: e.Giro, Direccion: e.Direccion, Comuna: e.Comuna,
		Ciudad: e.Ciudad, Ambiente: e.Ambiente, FechaResolucion: e.FechaResolucion, NumeroResolucion: e.NumeroResolucion,
		Acteco: e.Acteco}
}

func newFixture(t testing.TB, b backend, withCAF bool) *fixture {
	t.Helper()
	dsn := b.dsn(t)
	creds(t)
	s := newService(t, b.name, dsn, Config{})
	return &fixture{s: s, emp: setupEmpresa(t, s, withCAF), dsn: dsn}
}

// setupEmpresa creates the demo company with its certificate and, when
// withCAF, the 1–1000 CAF of tipo 33.
func setupEmpresa(t testing.TB, s *Service, withCAF bool) *api.Empresa {
	t.Helper()
	ctx := context.Background()
	c := creds(t)
	emp, err := s.Company.Create(ctx, demoEmpresa())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Company.UploadCertificate(ctx, emp.ID, api.CertificadoUpload{File: c.P12, Password: c.Password, RutFirmante: dtetest.SignerRUT}); err != nil {
		t.Fatal(err)
	}
	if withCAF {
		if _, err := s.CAFs.Register(ctx, emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: string(c.CAFFiles[33])}); err != nil {
			t.Fatal(err)
		}
	}
	return emp
}

// issueCAF issues a CAF of the demo emisor for a folio range.
func issueCAF(t testing.TB, tipo int, desde, hasta int64) string {
	t.Helper()
	c := creds(t)
	file, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: dtetest.EmisorRazonSocial,
		Tipo: tipo, Desde: desde, Hasta: hasta, FechaAutorizacion: time.Now().AddDate(0, 0, -3)})
	if err != nil {
		t.Fatal(err)
	}
	return string(file)
}

// facturaBody is a two-line factura request; n varies the first line's
// quantity so bodies can differ.
func facturaBody(n int) []byte {
	return []byte(fmt.Sprintf(`{"tipo_dte":33,"receptor":{"rut":"77.777.777-7","razon_social":"Pérez & Hijos Ltda.","giro":"Comercio","direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"},
"detalle":[{"nombre":"Artículo Ñandú","cantidad":%d,"precio":1990},{"nombre":"Servicio","cantidad":1,"precio":10000,"descuento_pct":5}],
"auto_send":false,"metadata":{"pedido":"A-%d"}}`, n, n))
}

// newKey returns a fresh Idempotency-Key.
func newKey() string { return newID() }

// crashStore is a store on which, while crash is set, transaction 2 of
// an emission never commits, as if the process died right after
// transaction 1: the statement that signs a pendiente row fails.
type crashStore struct {
	store.Store
	crash atomic.Bool
}

// errSimulatedCrash is what transaction 2 fails with on a crashStore.
var errSimulatedCrash = errors.New("billing test: simulated crash after transaction 1")

// SerialWrites forwards the wrapped store's answer, so the service groups
// its transactions as it would on that store.
func (c *crashStore) SerialWrites() bool {
	sw, ok := c.Store.(store.SerialWriter)
	return ok && sw.SerialWrites()
}

func (c *crashStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	return c.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error { return fn(ctx, crashTx{Tx: tx, s: c}) })
}

type crashTx struct {
	store.Tx
	s *crashStore
}

func (t crashTx) UpdateDTEIf(ctx context.Context, d *store.DTE, from string) (bool, error) {
	if t.s.crash.Load() && from == store.EstadoPendiente {
		return false, errSimulatedCrash
	}
	return t.Tx.UpdateDTEIf(ctx, d, from)
}

// newCrashFixture is newFixture over a crashStore.
func newCrashFixture(t testing.TB, b backend) (*fixture, *crashStore) {
	t.Helper()
	dsn := b.dsn(t)
	creds(t)
	st, err := openStore(context.Background(), b.name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	cs := &crashStore{Store: st}
	kek, _ := ParseKEK(testKEK)
	kr, err := NewKeyring(kek)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: cs, Keyring: kr, TrustedKeys: credsVal.Keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &fixture{s: s, emp: setupEmpresa(t, s, true), dsn: dsn}, cs
}
