// Package backendtest opens fresh stores of both backends for the tests
// of the packages above store that may not use billing/billingtest (the
// rooms under billing/internal, which never import the face or its
// fixture): a SQLite file in the test's temporary directory, and a
// PostgreSQL schema of its own on the shared throwaway server
// (internal/pgtest: DTEKIT_PG_URL, or a private cluster).
//
//	func TestX(t *testing.T) {
//		backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
//			st := b.NewStore(t, store.JobsConfig{})
//			…
//		})
//	}
package backendtest

import (
	"context"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// Backend is one store implementation.
type Backend struct {
	// Name is "sqlite" or "postgres", for subtest names.
	Name string
	open func(t testing.TB, jobs store.JobsConfig) (store.Store, error)
}

// SQLite is the embedded backend: a file in the test's temporary
// directory (a copy of one migrated once: SQLitePath).
var SQLite = Backend{Name: "sqlite", open: func(t testing.TB, jobs store.JobsConfig) (store.Store, error) {
	return sqlite.Open(context.Background(), SQLitePath(t), &sqlite.Options{Jobs: jobs})
}}

// Postgres is the PostgreSQL backend: a new schema of the shared
// throwaway server, dropped when the test ends.
var Postgres = Backend{Name: "postgres", open: func(t testing.TB, jobs store.JobsConfig) (store.Store, error) {
	return postgres.Open(context.Background(), pgtest.URL(t), &postgres.Options{Jobs: jobs})
}}

// All returns both backends, SQLite first.
func All() []Backend { return []Backend{SQLite, Postgres} }

// PollInterval is how often the runner of a store NewStore opens looks
// for jobs unless told otherwise: quick enough for a test to wait on.
const PollInterval = 20 * time.Millisecond

// NewStore opens a fresh, empty store of b (migrated, its runner not
// started), closed when t ends. A zero jobs.PollInterval is PollInterval.
func (b Backend) NewStore(t testing.TB, jobs store.JobsConfig) store.Store {
	t.Helper()
	if jobs.PollInterval == 0 {
		jobs.PollInterval = PollInterval
	}
	st, err := b.open(t, jobs)
	if err != nil {
		t.Fatalf("backendtest: opening a %s store: %v", b.Name, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Each runs fn on each backend, as parallel subtests of t named after it.
func Each(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range All() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// Main runs a package's tests and then stops the private PostgreSQL
// cluster, if one was started; call it from TestMain.
func Main(m *testing.M) { pgtest.Main(m) }
