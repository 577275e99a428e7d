package pgtest

import (
	"database/sql"
	"net/url"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

// TestSchemas: each URL is its own empty schema, dropped when its test
// ends.
func TestSchemas(t *testing.T) {
	var first string
	t.Run("a", func(t *testing.T) {
		u := URL(t)
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE t (x int)"); err != nil {
			t.Fatal(err)
		}
		other, err := sql.Open("pgx", URL(t))
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := other.Exec("SELECT * FROM t"); err == nil {
			t.Error("a table of one schema is visible from another URL")
		}
		p, _ := url.Parse(u)
		first = p.Query().Get("search_path")
	})
	admin, _ := server(t)
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = $1", first).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if first == "" || n != 0 {
		t.Errorf("schema %q still exists after its test ended", first)
	}
}
