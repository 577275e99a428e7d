package oracle

import (
	"database/sql"
	"os"
	"testing"
)

// The databases' own measure of their size on disk, for the tests that
// bound what a hostile input may store. They open a second connection of
// their own; the driver ("sqlite" or "pgx") must be registered by the
// caller (importing the store's backend does it).

// SQLiteSize returns a function that measures the SQLite database at
// path: its write-ahead log folded into the file first (a TRUNCATE
// checkpoint), so that what is measured is the database's pages and not
// the log's slack, then the file's size (and any log left).
func SQLiteSize(t testing.TB, path string) func() int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func() int64 {
		t.Helper()
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, p := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
}

// PostgresSize returns a function that measures tables of the PostgreSQL
// database at url (its search_path names the schema): the sum of their
// pg_total_relation_size, which counts each table with its indexes and
// its TOAST.
func PostgresSize(t testing.TB, url string, tables ...string) func() int64 {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func() int64 {
		t.Helper()
		var total int64
		for _, table := range tables {
			var n int64
			if err := db.QueryRow("SELECT pg_total_relation_size($1::regclass)", table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			total += n
		}
		return total
	}
}
