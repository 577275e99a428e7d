package billing

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/store"
)

// cafSecrets lists the byte strings that would betray a CAF's private key
// in a copy of the database: each line of the RSASK PEM's base64 body,
// the key's DER, its private exponent and its two primes; each as raw
// bytes, in lower-case hexadecimal (how PostgreSQL writes a bytea as text)
// and in base64. The modulus and public exponent are not among them: they
// are public, in the CAF's DA/RSAPK that every TED carries.
func cafSecrets(t *testing.T, file []byte) map[string][]byte {
	t.Helper()
	c, err := caf.Parse(file)
	if err != nil || c.PrivateKey == nil {
		t.Fatalf("the test CAF: %v (key %v)", err, c != nil && c.PrivateKey != nil)
	}
	i, j := bytes.Index(file, []byte("<RSASK>")), bytes.Index(file, []byte("</RSASK>"))
	block, _ := pem.Decode(file[i+len("<RSASK>") : j])
	if i < 0 || j < i || block == nil {
		t.Fatal("the test CAF has no RSASK PEM")
	}
	raw := map[string][]byte{
		"DER of RSASK":     block.Bytes,
		"private exponent": c.PrivateKey.D.Bytes(),
		"prime p":          c.PrivateKey.Primes[0].Bytes(),
		"prime q":          c.PrivateKey.Primes[1].Bytes(),
	}
	body := strings.Fields(string(file[i+len("<RSASK>") : j]))
	for n, line := range body {
		if len(line) >= 24 && !strings.HasPrefix(line, "-----") && !strings.Contains(line, "KEY") {
			raw[fmt.Sprintf("RSASK PEM line %d", n)] = []byte(line)
		}
	}
	out := map[string][]byte{}
	for name, b := range raw {
		out[name] = b
		out[name+" (hex)"] = []byte(hex.EncodeToString(b))
		out[name+" (base64)"] = []byte(base64.StdEncoding.EncodeToString(b))
	}
	return out
}

// dbCopy returns what a copy of the database holds: the bytes of the
// SQLite file and of its write-ahead log and index, or, on PostgreSQL,
// every row of every table of the schema as text (what a dump shows).
func dbCopy(t *testing.T, kind, dsn string) []byte {
	t.Helper()
	if kind == "sqlite" {
		var all []byte
		for _, suffix := range []string{"", "-wal", "-shm"} {
			b, err := os.ReadFile(dsn + suffix)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) < 10 {
		t.Fatalf("the schema holds %d tables: %v", len(tables), tables)
	}
	var all bytes.Buffer
	for _, table := range tables {
		rows, err := db.QueryContext(ctx, `SELECT t::text FROM "`+table+`" t`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			all.WriteString(table + ": " + line + "\n")
		}
		rows.Close()
	}
	return all.Bytes()
}

// leaks names the secrets found in a copy of the database.
func leaks(copyBytes []byte, secrets map[string][]byte) []string {
	lower := bytes.ToLower(copyBytes)
	var found []string
	for name, s := range secrets {
		if bytes.Contains(copyBytes, s) || (strings.HasSuffix(name, "(hex)") && bytes.Contains(lower, s)) {
			found = append(found, name)
		}
	}
	return found
}

// oldWrites rewrites a CAF row many times as versions before this one
// did, on a connection without secure_delete (their setting): each rewrite
// moves the row within its page or to another, and SQLite leaves the bytes
// it moved away from in the file's free space.
func oldWrites(t *testing.T, path, cafID string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=secure_delete(0)&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for range 130 { // next_folio passes 127: its stored size grows
		if _, err := db.Exec("UPDATE cafs SET next_folio = next_folio + 1 WHERE id = $1", cafID); err != nil {
			t.Fatal(err)
		}
	}
}

// emitAndVerify emits a factura and checks its signature and stamp.
func emitAndVerify(t *testing.T, s *Service, empresaID string) {
	t.Helper()
	r := emitOK(t, s, empresaID, facturaBody(1))
	xml, err := s.Documents.XML(context.Background(), empresaID, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := dte.Verify(xml, creds(t).Keys)
	if err != nil || !rep.OK() {
		t.Fatalf("the document stamped with the CAF does not verify: %v %+v", err, rep)
	}
}

// TestCAFKeySealedAtRest: once a CAF is uploaded, and once a CAF stored in
// clear by an earlier version is migrated at start, neither the SQLite
// files nor a dump of the PostgreSQL tables hold its private key, and
// documents stamped with it verify (issue 20, point 3).
func TestCAFKeySealedAtRest(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name+"/upload", func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, b, false)
			file := []byte(issueCAF(t, 33, 1, 100))
			secrets := cafSecrets(t, file)
			if _, err := f.s.CAFs.Register(ctx, f.emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: string(file)}); err != nil {
				t.Fatal(err)
			}
			emitAndVerify(t, f.s, f.emp.ID)
			if found := leaks(dbCopy(t, b.name, f.dsn), secrets); len(found) > 0 {
				t.Errorf("after the upload, the database holds the CAF's %v", found)
			}
			// A new Service (no cached CAF) unseals the key to stamp.
			s2 := newService(t, b.name, f.dsn, Config{})
			emitAndVerify(t, s2, f.emp.ID)
		})
		t.Run(b.name+"/migration", func(t *testing.T) {
			ctx := context.Background()
			creds(t)
			dsn := b.dsn(t)
			s, err := openService(b.name, dsn, Config{})
			if err != nil {
				t.Fatal(err)
			}
			emp := setupEmpresa(t, s, false)
			// A CAF of each of the twelve types as versions before
			// sealing stored them: the document as uploaded, private key
			// included. Twelve span several pages of the table, so SQLite
			// splits pages and leaves copies of rows in free space, as a
			// real database's history does.
			secrets := map[string][]byte{}
			for i, tipo := range []int{33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112} {
				file := []byte(issueCAF(t, tipo, 1, 1000))
				for name, b := range cafSecrets(t, file) {
					secrets[fmt.Sprintf("CAF %d: %s", tipo, name)] = b
				}
				parsed, _ := caf.Parse(file)
				old := &store.CAF{EmpresaID: emp.ID, TipoDTE: tipo, FolioDesde: 1, FolioHasta: 1000, Ambiente: parsed.Ambiente(),
					FechaAutorizacion: parsed.FA, XML: file, IsActive: true}
				if err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, old) }); err != nil {
					t.Fatal(err)
				}
				if b.name == "sqlite" {
					oldWrites(t, dsn, old.ID)
				}
				if i == 5 {
					s.st.Close() // checkpointed into the database file
					if s, err = openService(b.name, dsn, Config{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			s.st.Close()
			// The search finds the key where it is in clear.
			if found := leaks(dbCopy(t, b.name, dsn), secrets); len(found) == 0 {
				t.Fatal("the key stored in clear is not found in the database copy: the search cannot see it")
			}

			s2 := newService(t, b.name, dsn, Config{})
			if err := s2.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s2.Stop(context.Background()) })
			if found := leaks(dbCopy(t, b.name, dsn), secrets); len(found) > 0 {
				t.Errorf("after the migration at start, the database holds the CAF's %v", found)
			}
			emitAndVerify(t, s2, emp.ID)
			// Starting again finds nothing to seal and still stamps.
			s3 := newService(t, b.name, dsn, Config{})
			if err := s3.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s3.Stop(context.Background()) })
			emitAndVerify(t, s3, emp.ID)
			if found := leaks(dbCopy(t, b.name, dsn), secrets); len(found) > 0 {
				t.Errorf("after a second start, the database holds the CAF's %v", found)
			}
		})
	}
}

// TestCAFPastedAsTextStamps: a CAF pasted as text (its ISO-8859-1
// characters carried in UTF-8) with Ñ in its razón social stamps documents
// whose TED verifies: the CAF stored is the one the SII signed, not its
// text read back as ISO-8859-1.
func TestCAFPastedAsTextStamps(t *testing.T) {
	t.Parallel()
	f := newFixture(t, backends[0], false)
	c := creds(t)
	file, err := c.Authority.Issue(caftest.IssueRequest{RutEmisor: dtetest.EmisorRUT, RazonSocial: "Comercial Ñandú Ltda.",
		Tipo: 33, Desde: 1, Hasta: 10, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	text := make([]rune, 0, len(file)) // ISO-8859-1 byte b is the character U+00b
	for _, b := range file {
		text = append(text, rune(b))
	}
	if _, err := f.s.CAFs.Register(context.Background(), f.emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: string(text)}); err != nil {
		t.Fatal(err)
	}
	emitAndVerify(t, f.s, f.emp.ID)
	emitAndVerify(t, newService(t, backends[0].name, f.dsn, Config{}), f.emp.ID)
}

// sealCutStore lets SealCAF succeed `left` times, then fails every Write
// that calls it, as a process killed in the middle of the migration.
type sealCutStore struct {
	store.Store
	left *int
}

func (c sealCutStore) Write(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	return c.Store.Write(ctx, func(ctx context.Context, tx store.Tx) error { return fn(ctx, sealCutTx{tx, c.left}) })
}

type sealCutTx struct {
	store.Tx
	left *int
}

func (t sealCutTx) SealCAF(ctx context.Context, c *store.CAF) error {
	if *t.left == 0 {
		return errKilled
	}
	*t.left--
	return t.Tx.SealCAF(ctx, c)
}

// TestCAFKeyMigrationResumes: a migration cut after its first CAF leaves
// that CAF sealed and the others as they were, every one of them usable,
// and the next start seals the rest.
func TestCAFKeyMigrationResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, backends[0], false)
	var ids []string
	for _, tipo := range []int{33, 34, 56} {
		file := []byte(issueCAF(t, tipo, 1, 100))
		parsed, _ := caf.Parse(file)
		old := &store.CAF{EmpresaID: f.emp.ID, TipoDTE: tipo, FolioDesde: 1, FolioHasta: 100, Ambiente: parsed.Ambiente(),
			FechaAutorizacion: parsed.FA, XML: file, IsActive: true}
		if err := f.s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertCAF(ctx, old) }); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, old.ID)
	}
	sealed := func() (n int) {
		for _, id := range ids {
			c, err := f.s.st.GetCAF(ctx, f.emp.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			if c.SealedKey != nil {
				n++
				if bytes.Contains(c.XML, []byte("RSASK")) {
					t.Errorf("CAF %s is sealed but its document still holds RSASK", id)
				}
			}
		}
		return n
	}
	left := 1
	n, err := sealCAFKeys(ctx, sealCutStore{f.s.st, &left}, f.s.keys)
	if !errors.Is(err, errKilled) || n != 1 {
		t.Fatalf("the cut migration: %d sealed, %v", n, err)
	}
	if got := sealed(); got != 1 {
		t.Fatalf("after the cut migration %d CAFs are sealed, want 1", got)
	}
	emitAndVerify(t, newService(t, backends[0].name, f.dsn, Config{}), f.emp.ID) // tipo 33: sealed or not, it stamps
	if err := f.s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	f.s.Stop(ctx)
	if got := sealed(); got != 3 {
		t.Errorf("after the next start %d CAFs are sealed, want 3", got)
	}
	if _, done, err := f.s.st.Setting(ctx, store.SettingCAFKeysSealed); !done || err != nil {
		t.Errorf("the completed migration is not recorded: %v, %v", done, err)
	}
	emitAndVerify(t, newService(t, backends[0].name, f.dsn, Config{}), f.emp.ID)
}
