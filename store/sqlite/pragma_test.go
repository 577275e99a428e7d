package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"
)

// TestPragmas checks, by asking SQLite itself, that the connections Open
// makes run with the settings the package promises.
func TestPragmas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	s, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	o := Options{BusyTimeout: 10 * time.Second}
	pragma := func(dsn, name string) string {
		t.Helper()
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v string
		if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
			t.Fatalf("PRAGMA %s: %v", name, err)
		}
		return v
	}
	for name, want := range map[string]string{
		"journal_mode":  "wal",
		"synchronous":   "2", // FULL
		"foreign_keys":  "1",
		"busy_timeout":  "10000",
		"query_only":    "0",
		"temp_store":    "2", // MEMORY
		"secure_delete": "1",
	} {
		if got := pragma(writerDSN(path, o), name); got != want {
			t.Errorf("writer: PRAGMA %s = %s, want %s", name, got, want)
		}
	}
	if got := pragma(readerDSN(path, o), "query_only"); got != "1" {
		t.Errorf("reader: PRAGMA query_only = %s, want 1", got)
	}
	// Immediate transactions: while one writer transaction is open, a
	// second connection cannot even begin one.
	w1, _ := sql.Open("sqlite", writerDSN(path, Options{BusyTimeout: time.Millisecond}))
	w2, _ := sql.Open("sqlite", writerDSN(path, Options{BusyTimeout: time.Millisecond}))
	defer w1.Close()
	defer w2.Close()
	tx1, err := w1.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback()
	if tx2, err := w2.Begin(); err == nil {
		tx2.Rollback()
		t.Error("a second BEGIN succeeded while a writer transaction was open: transactions are not immediate")
	}
}
