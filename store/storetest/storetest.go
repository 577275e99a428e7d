// Package storetest is the conformance suite every store.Store
// implementation passes: records round-trip, uniqueness rules report the
// right conflict, every method is scoped by company, companies are found
// by RUT, Ping answers, the attempt log and the alert threshold keep what
// they are given, sealed secrets are found and rewritten across
// companies, cursors stay stable under concurrent inserts, folios are
// handed out once under concurrency, a company keeps a produccion
// numbering beside its certificacion one (CAF ranges, folios, documents,
// Idempotency-Keys and lists per environment; MigrateAmbientes checks a
// database of the schema before it), the inbox's received files are
// numbered once each under concurrency and its records deduplicate, a
// failed Write leaves nothing behind (its jobs included), and background
// jobs retry on their kind's
// schedule, stay unique, run periodically, wait in declared queues each
// worked within its own budget, can be snoozed without using up an
// attempt, and are rescued after their worker's process is killed, while
// the runner reports whether it runs.
//
// Coverage names, for every per-room interface store.Reader and store.Tx
// are composed of (store.DTEReader, store.InboxWriter, …), the subtests
// that are its conformance tests; its test fails when a method is called
// by none of them.
//
// A backend's test calls Run with a Backend:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, storetest.Backend{NewDB: …, Open: …})
//	}
//
// The rescue test re-executes the test binary (running only itself) to
// get a worker process it can kill -9; the calling test must therefore be
// reachable with -test.run, which any top-level test is.
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// Backend tells the suite how to create and open databases.
type Backend struct {
	// NewDB returns the location (file path, URL) of a new empty database
	// that lives until the test ends.
	NewDB func(t *testing.T) string
	// Open opens the database at loc with the given job runner settings.
	// The suite closes the store.
	Open func(t *testing.T, loc string, jobs store.JobsConfig) (store.Store, error)
	// Exec, when set, runs SQL statements on the closed database at loc,
	// outside the store: the suite uses it to take a database back to an
	// older schema and check that opening it migrates what it holds.
	Exec func(t *testing.T, loc string, stmts ...string)
}

// ExecWith is a Backend.Exec for a database/sql driver that opens loc as
// its data source name ("sqlite", "pgx").
func ExecWith(driver string) func(t *testing.T, loc string, stmts ...string) {
	return func(t *testing.T, loc string, stmts ...string) {
		t.Helper()
		db, err := sql.Open(driver, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
}

// testJobs are runner settings fast enough for tests.
var testJobs = store.JobsConfig{PollInterval: 50 * time.Millisecond, Workers: 4}

// Run runs the whole suite against b.
func Run(t *testing.T, b Backend) {
	if child := childMode(); child != nil {
		child.run(t, b)
		return
	}
	h := &harness{b: b}
	t.Run("Empresa", h.testEmpresa)
	t.Run("EmpresasIterator", h.testEmpresasIterator)
	t.Run("EmpresaByRut", h.testEmpresaByRut)
	t.Run("EmpresaSettings", h.testEmpresaSettings)
	t.Run("Ping", h.testPing)
	t.Run("Certificado", h.testCertificado)
	t.Run("CAF", h.testCAF)
	t.Run("CAFPage", h.testCAFPage)
	t.Run("CAFOverlapConcurrent", h.testCAFOverlapConcurrent)
	t.Run("TakeFolioConcurrent", h.testTakeFolioConcurrent)
	t.Run("SerialWrites", h.testSerialWrites)
	t.Run("DTE", h.testDTE)
	t.Run("Ambientes", h.testAmbientes)
	t.Run("RecibidosAmbiente", h.testRecibidosAmbiente)
	t.Run("AmbienteCAFOverlapConcurrent", h.testAmbienteCAFOverlapConcurrent)
	t.Run("DTEList", h.testDTEList)
	t.Run("PageBytes", h.testPageBytes)
	t.Run("CursorConcurrentInserts", h.testCursorConcurrentInserts)
	t.Run("Cliente", h.testCliente)
	t.Run("Producto", h.testProducto)
	t.Run("CatalogSearch", h.testCatalogSearch)
	t.Run("CatalogSearchMigrates", h.testCatalogSearchMigrates)
	t.Run("Webhook", h.testWebhook)
	t.Run("APIKey", h.testAPIKey)
	t.Run("Idempotency", h.testIdempotency)
	t.Run("IdempotencyConcurrent", h.testIdempotencyConcurrent)
	t.Run("MixedOutcomes", h.testMixedOutcomes)
	t.Run("EventDeliveryEnvio", h.testEventDeliveryEnvio)
	t.Run("Recepcion", h.testRecepcion)
	t.Run("RecepcionNumeroConcurrent", h.testRecepcionNumeroConcurrent)
	t.Run("Recibido", h.testRecibido)
	t.Run("RecibidoList", h.testRecibidoList)
	t.Run("Correo", h.testCorreo)
	t.Run("Mensaje", h.testMensaje)
	t.Run("CorreoConfig", h.testCorreoConfig)
	t.Run("InboxSettings", h.testInboxSettings)
	t.Run("InboxUsagePurge", h.testInboxUsagePurge)
	t.Run("Buzon", h.testBuzon)
	t.Run("DTEIntercambio", h.testDTEIntercambio)
	t.Run("Cesion", h.testCesion)
	t.Run("CesionConcurrent", h.testCesionConcurrent)
	t.Run("DTECedido", h.testDTECedido)
	t.Run("ConsoleSession", h.testConsoleSession)
	t.Run("ConsoleSessionConcurrent", h.testConsoleSessionConcurrent)
	t.Run("Contribuyentes", h.testContribuyentes)
	t.Run("AttemptLog", h.testAttemptLog)
	t.Run("AttemptLogLimit", h.testAttemptLogLimit)
	t.Run("LowStockThreshold", h.testLowStockThreshold)
	t.Run("Sealed", h.testSealed)
	t.Run("TenantScoping", h.testTenantScoping)
	t.Run("Rollback", h.testRollback)
	t.Run("Nested", h.testNested)
	t.Run("Reopen", h.testReopen)
	t.Run("Durability", h.testDurability)
	t.Run("Jobs", func(t *testing.T) {
		t.Run("Transactional", h.testJobsTransactional)
		t.Run("RetrySchedule", h.testJobsRetry)
		t.Run("Discard", h.testJobsDiscard)
		t.Run("Unique", h.testJobsUnique)
		t.Run("Periodic", h.testJobsPeriodic)
		t.Run("Registration", h.testJobsRegistration)
		t.Run("QueueDeclare", h.testJobsQueueDeclare)
		t.Run("QueueIsolation", h.testJobsQueueIsolation)
		t.Run("QueueDepth", h.testJobsQueueDepth)
		t.Run("Snooze", h.testJobsSnooze)
		t.Run("Running", h.testJobsRunning)
		t.Run("CompleteInTx", h.testJobsCompleteInTx)
		t.Run("Rescue", h.testJobsRescue)
	})
}

type harness struct{ b Backend }

// open creates a new database and opens it; the store is closed when t
// ends.
func (h *harness) open(t *testing.T) (store.Store, string) {
	t.Helper()
	loc := h.b.NewDB(t)
	return h.openAt(t, loc, testJobs), loc
}

func (h *harness) openAt(t *testing.T, loc string, jc store.JobsConfig) store.Store {
	t.Helper()
	s, err := h.b.Open(t, loc, jc)
	if err != nil {
		t.Fatalf("opening the store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the store: %v", err)
		}
	})
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// write runs fn in a transaction and fails the test on error.
func write(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := s.Write(ctxT(t), fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// empresa inserts a company with a unique RUT-like value.
func empresa(t *testing.T, s store.Store, rut string) *store.Empresa {
	t.Helper()
	e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Giro: "Servicios", Direccion: "Calle 1",
		Comuna: "Santiago", Ciudad: "Santiago", Ambiente: "certificacion", FechaResolucion: "2014-08-22",
		NumeroResolucion: 80, Acteco: []int64{620200}}
	write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) })
	return e
}

func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want %v", what, err, target)
	}
}

func wantConflict(t *testing.T, err error, constraint, what string) {
	t.Helper()
	if got := store.ConflictOn(err); got != constraint {
		t.Errorf("%s: got error %v, want a conflict on %s", what, err, constraint)
	}
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("%s: error %v does not match store.ErrConflict", what, err)
	}
}
