package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/dtekit/dtekit/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		NewDB: func(t *testing.T) string { return filepath.Join(t.TempDir(), sqlite.FileName) },
		Open: func(t *testing.T, loc string, jobs store.JobsConfig) (store.Store, error) {
			return sqlite.Open(context.Background(), loc, &sqlite.Options{Jobs: jobs})
		},
	})
}
