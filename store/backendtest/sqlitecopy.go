package backendtest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/store/sqlite"
)

// SQLitePath returns the path of a new SQLite database in t's temporary
// directory whose schema is already migrated: a copy of one database
// migrated once per process. Migrating an empty file (goose's migrations,
// then River's) takes about 2 s under the race detector, which nearly
// every test that opens a store would pay; opening the copy runs the
// migrations all the same and finds nothing to do, as a server's restart
// does. Migrating an empty file is tested in store/sqlite by the tests
// that open files of their own.
func SQLitePath(t testing.TB) string {
	t.Helper()
	template.once.Do(func() { template.files, template.err = migratedSQLite() })
	if template.err != nil {
		t.Fatalf("backendtest: migrating the template SQLite database: %v", template.err)
	}
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	for suffix, b := range template.files {
		if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// template holds the files of the database SQLitePath copies: "" and
// "-wal" (when not empty) → the file's bytes.
var template struct {
	once  sync.Once
	files map[string][]byte
	err   error
}

// migratedSQLite migrates a new database in a directory of its own, closes
// it and returns its files' bytes.
func migratedSQLite() (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "dtekit-sqlite-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, sqlite.FileName)
	st, err := sqlite.Open(context.Background(), path, nil)
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if suffix != "" && (os.IsNotExist(err) || err == nil && len(b) == 0) {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[suffix] = b
	}
	return files, nil
}
