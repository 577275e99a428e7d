package postgres_test

import (
	"context"
	"testing"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		NewDB: func(t *testing.T) string { return pgtest.URL(t) },
		Open: func(t *testing.T, loc string, jobs store.JobsConfig) (store.Store, error) {
			return postgres.Open(context.Background(), loc, &postgres.Options{Jobs: jobs})
		},
	})
}
