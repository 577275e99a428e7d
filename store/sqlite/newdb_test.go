package sqlite_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/store/sqlite"
)

// The conformance suite opens a new database in nearly every test, and
// migrating an empty file (goose's migrations, then River's) takes about
// 2 s under -race: half of the suite's time. newDB gives each test a
// copy of one database migrated once per run instead; Open runs the
// migrations on it all the same, finding nothing to do, as on every
// restart of a server. What migrating an empty file does is still checked
// by the tests that open one of their own (TestOpenRefusesDamagedFiles,
// the TestMigrate* tests, Example).
var (
	templateOnce sync.Once
	templateDir  string
	templateErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if templateDir != "" {
		os.RemoveAll(templateDir)
	}
	os.Exit(code)
}

// newDB is the conformance suite's Backend.NewDB: a copy, under the
// test's temporary directory, of a database migrated once.
func newDB(t *testing.T) string {
	t.Helper()
	templateOnce.Do(func() {
		if templateDir, templateErr = os.MkdirTemp("", "dtekit-sqlite-template-"); templateErr != nil {
			return
		}
		s, err := sqlite.Open(context.Background(), filepath.Join(templateDir, sqlite.FileName), nil)
		if err != nil {
			templateErr = err
			return
		}
		templateErr = s.Close()
	})
	if templateErr != nil {
		t.Fatalf("migrating the template database: %v", templateErr)
	}
	loc := filepath.Join(t.TempDir(), sqlite.FileName)
	// Closed, the template is one file; a write-ahead log left beside it
	// would be copied too.
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(filepath.Join(templateDir, sqlite.FileName+suffix), loc+suffix); err != nil && !(suffix != "" && os.IsNotExist(err)) {
			t.Fatalf("copying the template database: %v", err)
		}
	}
	return loc
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
