package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	sqlite "modernc.org/sqlite"
)

// openCaching opens a one-connection caching pool on a new file.
func openCaching(t *testing.T) *sql.DB {
	t.Helper()
	db, err := openDB("file:" + filepath.Join(t.TempDir(), "c.db") + "?_txlock=immediate&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, b BLOB)"); err != nil {
		t.Fatal(err)
	}
	return db
}

// kept reports how many statements the pool's one connection keeps.
func kept(t *testing.T, db *sql.DB) int {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*cachingConn)
		if !ok {
			return fmt.Errorf("the connection is a %T", dc)
		}
		n = len(c.stmts)
		if c.lru.Len() != n {
			return fmt.Errorf("lru holds %d statements, the map %d", c.lru.Len(), n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCachingConnRebinds(t *testing.T) {
	db := openCaching(t)
	const ins = "INSERT INTO t (id, s, b) VALUES ($1, $2, $3)"
	rows := []struct {
		id int
		s  any
		b  any
	}{{1, "uno", []byte{1, 2}}, {2, nil, nil}, {3, "", []byte{}}, {4, "cuatro", nil}}
	for _, r := range rows {
		if _, err := db.Exec(ins, r.id, r.s, r.b); err != nil {
			t.Fatal(err)
		}
	}
	// A refused insert leaves the statement usable.
	if _, err := db.Exec(ins, 1, "again", nil); err == nil {
		t.Fatal("a duplicate id was accepted")
	}
	if _, err := db.Exec(ins, 5, "cinco", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Each row as SQLite stored it: the text, the type and hex of the blob.
	want := map[int]string{1: `"uno" blob 0102`, 2: `<nil> null `, 3: `"" blob `, 4: `"cuatro" null `, 5: `"cinco" blob 78`}
	for id, w := range want {
		var s sql.NullString
		var typ, hex string
		if err := db.QueryRow("SELECT s, typeof(b), hex(b) FROM t WHERE id = $1", id).Scan(&s, &typ, &hex); err != nil {
			t.Fatal(err)
		}
		got := "<nil>"
		if s.Valid {
			got = fmt.Sprintf("%q", s.String)
		}
		if got += " " + typ + " " + hex; got != w {
			t.Errorf("row %d: got %s, want %s", id, got, w)
		}
	}
	// CREATE TABLE, the insert, the select.
	if n := kept(t, db); n != 3 {
		t.Errorf("the connection keeps %d statements, want 3", n)
	}
}

// TestCachingConnNested runs a query again while a Rows of the same text
// is still open: the second run must not disturb the first.
func TestCachingConnNested(t *testing.T) {
	db := openCaching(t)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if _, err := db.Exec("INSERT INTO t (id, s) VALUES ($1, $2)", i, fmt.Sprint("s", i)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = "SELECT id, s FROM t WHERE id >= $1 ORDER BY id"
	outer, err := tx.QueryContext(ctx, q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var id int
		var s string
		if err := outer.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q, 3)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%s/%d", id, s, n))
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1:s1/1 2:s2/1 3:s3/1]" {
		t.Errorf("got %v", got)
	}
	// The statement is free again once the outer rows are closed.
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM t WHERE id >= $1", 2).Scan(&n); err != nil || n != 2 {
		t.Errorf("count = %d, %v; want 2", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestCachingConnBounded runs more distinct queries than a connection
// keeps: the oldest are closed, and still run right when they come back.
func TestCachingConnBounded(t *testing.T) {
	db := openCaching(t)
	for i := range maxConnStmts + 20 {
		var n int
		if err := db.QueryRow(fmt.Sprintf("SELECT %d + $1", i), 1).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	if n := kept(t, db); n != maxConnStmts {
		t.Errorf("the connection keeps %d statements, want %d", n, maxConnStmts)
	}
	var n int
	if err := db.QueryRow("SELECT 0 + $1", 7).Scan(&n); err != nil || n != 7 {
		t.Errorf("an evicted query again: %d, %v", n, err)
	}
}

// TestCachingConnUnwrap: functions of the driver that need its own
// connection find it behind the wrapper.
func TestCachingConnUnwrap(t *testing.T) {
	db := openCaching(t)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := sqlite.Limit(conn, 0 /* SQLITE_LIMIT_LENGTH */, -1); err != nil {
		t.Errorf("sqlite.Limit through the wrapper: %v", err)
	}
}
