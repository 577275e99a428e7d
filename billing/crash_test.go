package billing

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// The kill -9 tests (TestCrashRecovery, TestDeliveryKill9,
// TestSubmitKill9) run this test binary again as a child process that
// does only one test, named in -test.run, and reads its orders from an
// environment variable. The helpers below are what they share.

// crashChildCmd returns, not started, the command that runs the test named
// test in a child process with orders in the environment variable env. The
// child's stderr is collected in the returned buffer.
func crashChildCmd(test, env, orders string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+orders)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	return cmd, &stderr
}

// killCrashChild kills a child with SIGKILL, waits for it and fails t if
// the child panicked before it was killed.
func killCrashChild(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if strings.Contains(stderr.String(), "panic") {
		t.Fatalf("child: %s", stderr.String())
	}
}

// runJobsChild is the body of a child that runs background jobs until it
// is killed: it opens the SQLite database at path with crashJobs, builds
// the Service of cfg over it with the tests' keyring and the SII's CAF
// keys, and starts the job runner. It never returns: a failure is printed
// on stderr and ends the process with status 3.
func runJobsChild(path string, cfg Config) {
	ctx := context.Background()
	err := func() error {
		st, err := sqlite.Open(ctx, path, &sqlite.Options{Jobs: crashJobs})
		if err != nil {
			return err
		}
		kek, _ := ParseKEK(testKEK)
		if cfg.Keyring, err = NewKeyring(kek); err != nil {
			return err
		}
		cfg.Store, cfg.TrustedKeys = st, caf.SIIKeys()
		s, err := New(cfg)
		if err != nil {
			return err
		}
		return s.Start(ctx)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	time.Sleep(2 * time.Minute) // the parent kills it long before
	os.Exit(0)
}

// crashEnv carries the crash child's orders: backend, DSN and company id,
// one per line.
const crashEnv = "DTEKIT_BILLING_CRASH_CHILD"

// TestCrashChild is the process TestCrashRecovery kills: it emits with 8
// goroutines until killed, printing "ack <key> <id> <folio>" for each
// emission acknowledged (Emit returned). It does nothing when run
// on its own.
func TestCrashChild(t *testing.T) {
	orders := os.Getenv(crashEnv)
	if orders == "" {
		t.Skip("run by TestCrashRecovery")
	}
	part := strings.SplitN(orders, "\n", 3)
	s, err := openService(part[0], part[1], Config{TrustedKeys: caf.SIIKeys(), RecoveryAfter: time.Hour})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var out sync.Mutex
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute) // the parent kills it long before
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				key := newKey()
				res, err := emitBody(s, ctx, part[2], key, facturaBody(i%5+1))
				if err != nil {
					fmt.Fprintln(os.Stderr, "emit:", err)
					continue
				}
				var r struct {
					Folio int64 `json:"folio"`
				}
				_ = json.Unmarshal(res.Body, &r)
				out.Lock()
				// One write(2) per line: a line is either wholly in the pipe
				// or not at all when the kill comes.
				os.Stdout.WriteString(fmt.Sprintf("ack %s %s %d\n", key, res.ID, r.Folio))
				out.Unlock()
			}
		}()
	}
	wg.Wait()
	os.Exit(0)
}

type ack struct {
	key, id string
	folio   int64
}

// TestCrashRecovery kills a process emitting under load with SIGKILL at
// random moments, 20 times per backend (3 under -short), then checks that
// every acknowledged emission is stored, signed and verifiable, and, once
// recovery has run, that the folios taken are 1..N without gap or
// duplicate, each in exactly one signed document.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	rounds := 20
	if testing.Short() {
		rounds = 3
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			c := creds(t)
			dsn := b.dsn(t)
			s, err := openService(b.name, dsn, Config{})
			if err != nil {
				t.Fatal(err)
			}
			emp := setupEmpresa(t, s, false)
			if _, err := s.CAFs.Register(ctx, emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 1, 1000000)}); err != nil {
				t.Fatal(err)
			}
			s.st.Close()

			var acks []ack
			for round := 0; round < rounds; round++ {
				acks = append(acks, crashRound(t, b.name, dsn, emp.ID)...)
			}

			s, err = openService(b.name, dsn, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.st.Close()
			recovered, err := s.recoverPendingOlder(ctx, time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			// Every row: folios 1..N, each once, all signed.
			var folios []int64
			cursor := ""
			for {
				page, err := s.st.ListDTEs(ctx, emp.ID, store.DTEFilter{Cursor: cursor, Limit: store.MaxLimit})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range page.Items {
					if d.Estado != string(dte.EstadoFirmado) {
						t.Errorf("DTE %s folio %d is %s after recovery", d.ID, d.Folio, d.Estado)
					}
					folios = append(folios, d.Folio)
				}
				if page.NextCursor == "" {
					break
				}
				cursor = page.NextCursor
			}
			sort.Slice(folios, func(i, j int) bool { return folios[i] < folios[j] })
			for i, f := range folios {
				if f != int64(i+1) {
					t.Fatalf("folio set has a gap or a duplicate at position %d (folio %d) of %d", i, f, len(folios))
				}
			}
			// Every acknowledged emission is there, signed, verifies, and
			// its key replays it.
			for _, a := range acks {
				d, err := s.st.GetDTE(ctx, emp.ID, a.id)
				if err != nil {
					t.Fatalf("acknowledged DTE %s (folio %d) is missing: %v", a.id, a.folio, err)
				}
				if d.Folio != a.folio || d.Estado != string(dte.EstadoFirmado) {
					t.Errorf("acknowledged DTE %s: folio %d estado %s, acknowledged folio %d", a.id, d.Folio, d.Estado, a.folio)
				}
				if _, err := dte.Verify(d.XML, c.Keys); err != nil {
					t.Errorf("acknowledged DTE %s folio %d does not verify: %v", a.id, a.folio, err)
				}
				rec, err := s.st.GetIdempotency(ctx, emp.ID, emp.Ambiente, a.key)
				if err != nil || rec.State != store.IdempotencyDone || rec.DTEID != a.id {
					t.Errorf("key of DTE %s: %+v, %v", a.id, rec, err)
				}
			}
			if len(acks) == 0 {
				t.Fatal("no emission was acknowledged in any round")
			}
			// The independent check: xmlsec1 on documents finished by
			// recovery (never acknowledged) and on some acknowledged ones.
			acked := map[string]bool{}
			for _, a := range acks {
				acked[a.id] = true
			}
			checked := 0
			for _, f := range folios {
				d, err := s.st.GetDTEByFolio(ctx, emp.ID, emp.Ambiente, 33, f)
				if err != nil {
					t.Fatal(err)
				}
				if !acked[d.ID] || f%25 == 0 {
					xmlsecVerify(t, d.ID, d.XML)
					checked++
				}
			}
			t.Logf("xmlsec1 verified %d documents", checked)
			t.Logf("%s: %d rounds, %d acknowledged emissions, %d documents, %d finished by recovery",
				b.name, rounds, len(acks), len(folios), recovered)
		})
	}
}

// crashRound runs the child, waits for it to acknowledge emissions, kills
// it with SIGKILL after a random delay and returns what it acknowledged.
func crashRound(t *testing.T, kind, dsn, empresaID string) []ack {
	t.Helper()
	cmd, stderr := crashChildCmd("TestCrashChild", crashEnv, kind+"\n"+dsn+"\n"+empresaID)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan ack, 1024)
	done := make(chan []ack)
	go func() {
		var got []ack
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || f[0] != "ack" {
				continue
			}
			n, err := strconv.ParseInt(f[3], 10, 64)
			if err != nil {
				continue
			}
			a := ack{key: f[1], id: f[2], folio: n}
			got = append(got, a)
			select {
			case lines <- a:
			default:
			}
		}
		done <- got
	}()
	select {
	case <-lines:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child acknowledged nothing in 2 minutes; stderr:\n%s", stderr.String())
	}
	time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := <-done
	cmd.Wait()
	return got
}
