// Package pgtest gives tests a real, throwaway PostgreSQL without Docker.
//
// URL returns the connection URL of a fresh schema, dropped when the test
// ends. The server is either the one named by the environment variable
// DTEKIT_PG_URL (CI's .ci/run starts one cluster for the whole run and sets
// it), or a private cluster that the test binary starts on first use from
// Debian's PostgreSQL package (/usr/lib/postgresql/<major>/bin, or the
// directory in DTEKIT_PG_BIN): initdb into a temporary directory, the
// server listening only on a unix socket in that directory, run as the
// `postgres` user when the test runs as root (initdb refuses root). The
// server is a child process that receives SIGINT when the test binary
// exits, however it exits; the next start removes directories left behind
// by binaries that were killed. Packages may call Main from TestMain to
// stop the server and remove its directory as soon as their tests end.
//
// When PostgreSQL is not installed the test is skipped, or fails under
// DTEKIT_REQUIRE_ORACLES=1 (as in CI); a server that fails to start always
// fails the test.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/dtekit/dtekit/internal/oracle"
)

// EnvURL names the environment variable holding the URL of a PostgreSQL
// server to use instead of starting one.
const EnvURL = "DTEKIT_PG_URL"

// EnvBin names the environment variable holding the directory of the
// PostgreSQL programs (initdb, postgres).
const EnvBin = "DTEKIT_PG_BIN"

var (
	mu      sync.Mutex
	started *cluster // the private cluster, once started
	baseURL string   // URL of the server in use
	admin   *sql.DB  // connection to baseURL, for CREATE/DROP SCHEMA
	failure error    // the start failure, reported to every later test
)

// URL returns a connection URL whose search_path is a new empty schema of
// its own; the schema is dropped when t ends.
func URL(t testing.TB) string {
	t.Helper()
	db, base := server(t)
	schema := "t_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: bad server URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Main runs the tests of a package and then stops the private cluster
// (if one was started) and removes its directory. Use it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if admin != nil {
		admin.Close()
	}
	if started != nil {
		started.stop()
	}
	mu.Unlock()
	os.Exit(code)
}

// server returns the admin connection and URL of the server, starting the
// private cluster when needed.
func server(t testing.TB) (*sql.DB, string) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if admin != nil {
		return admin, baseURL
	}
	if failure != nil {
		t.Fatalf("pgtest: %v", failure)
	}
	base := os.Getenv(EnvURL)
	if base == "" {
		bin := binDir()
		if bin == "" {
			msg := "PostgreSQL not installed (apt-get install -y postgresql, or set " + EnvBin + " or " + EnvURL + ")"
			if oracle.Required() {
				t.Fatalf("DTEKIT_REQUIRE_ORACLES=1 but %s", msg)
			}
			t.Skip(msg)
		}
		c, err := startCluster(bin)
		if err != nil {
			failure = err
			t.Fatalf("pgtest: %v", err)
		}
		started = c
		base = c.url
	}
	db, err := sql.Open("pgx", base)
	if err == nil {
		db.SetMaxOpenConns(4)
		err = waitReady(db, 2*time.Minute)
	}
	if err != nil {
		failure = fmt.Errorf("PostgreSQL at %s (%s) is not answering: %w", redact(base), EnvURL, err)
		t.Fatalf("pgtest: %v", failure)
	}
	admin, baseURL = db, base
	return admin, baseURL
}

func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

func waitReady(db *sql.DB, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// binDir finds the newest /usr/lib/postgresql/<major>/bin holding initdb.
func binDir() string {
	if d := os.Getenv(EnvBin); d != "" {
		return d
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool { return major(matches[i]) > major(matches[j]) })
	if len(matches) == 0 {
		return ""
	}
	return filepath.Dir(matches[0])
}

func major(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// cluster is a private PostgreSQL server.
type cluster struct {
	dir  string
	url  string
	cmd  *exec.Cmd
	done chan struct{}
}

const dirPrefix = "dtekit-pgtest-"

// startCluster initdbs and starts a server in a new temporary directory.
func startCluster(bin string) (*cluster, error) {
	removeStale()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	// The owner pid lets a later start tell a stale directory.
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	cred, err := credential(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb in %s: %v\n%s", data, err, out)
	}
	c := &cluster{dir: dir, done: make(chan struct{})}
	c.url = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres",
		RawQuery: url.Values{"host": {dir}, "port": {"5432"}, "sslmode": {"disable"}}.Encode()}).String()
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	started := make(chan error, 1)
	// Pdeathsig fires when the thread that started the child exits, so
	// start it from a locked thread that lives as long as the process.
	go func() {
		runtime.LockOSThread()
		cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
			"-c", "listen_addresses=", "-c", "unix_socket_directories="+dir, "-p", "5432",
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=300", "-c", "shared_buffers=32MB")
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGINT}
		err := cmd.Start()
		c.cmd = cmd
		started <- err
		if err != nil {
			return
		}
		cmd.Wait()
		logf.Close()
		close(c.done)
		select {} // keep the thread (and so the server's parent) alive
	}()
	if err := <-started; err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting postgres: %w", err)
	}
	db, err := sql.Open("pgx", c.url)
	if err == nil {
		err = waitReady(db, 2*time.Minute)
		db.Close()
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		c.stop()
		return nil, fmt.Errorf("postgres did not come up: %v\n%s", err, log)
	}
	return c, nil
}

// stop shuts the server down (fast shutdown) and removes its directory.
func (c *cluster) stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-c.done
		}
	}
	os.RemoveAll(c.dir)
}

// credential returns the identity to run PostgreSQL with: the postgres
// user when running as root (initdb refuses root), else nil (ourselves).
// The directory is handed to that user.
func credential(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errors.New("running as root but there is no postgres user to run PostgreSQL as (apt-get install -y postgresql creates it)")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// removeStale deletes cluster directories whose owning test binary is
// gone (its server died with it, by SIGINT).
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == nil {
			continue // still running
		}
		if _, err := os.Stat(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			continue // its server has not finished shutting down
		}
		os.RemoveAll(d)
	}
}
