package storetest

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// childCommand re-executes the test binary to run only t, in child mode
// kind, on the database at loc.
func childCommand(t *testing.T, kind, loc string) *exec.Cmd {
	var parts []string
	for _, p := range strings.Split(t.Name(), "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(parts, "/"), "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), envChild+"="+kind, envChildLoc+"="+loc)
	return cmd
}

// durableChild writes clientes one transaction each and prints "ACK n"
// after each commit, until killed.
func durableChild(t *testing.T, b Backend, loc string) {
	s, err := b.Open(t, loc, testJobs)
	if err != nil {
		t.Fatalf("child: opening %s: %v", loc, err)
	}
	ctx := context.Background()
	e := os.Getenv(envChildEmpresa)
	start, _ := strconv.Atoi(os.Getenv(envChildStart))
	for n := start; ; n++ {
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.InsertCliente(ctx, &store.Cliente{EmpresaID: e, Rut: strconv.Itoa(n), RazonSocial: "durable"})
		})
		if err != nil {
			t.Fatalf("child: write %d: %v", n, err)
		}
		fmt.Fprintf(os.Stdout, "ACK %d\n", n) // os.Stdout is unbuffered
	}
}

const (
	envChildEmpresa = "DTEKIT_STORETEST_EMPRESA"
	envChildStart   = "DTEKIT_STORETEST_START"
)

// testDurability kills -9 a process that is writing, at a random moment,
// three times: every write it reported committed is there afterwards.
func (h *harness) testDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("kills child processes")
	}
	loc := h.b.NewDB(t)
	s := h.openAt(t, loc, testJobs)
	a := empresa(t, s, "81000000-0")
	next := 0
	for round := range 3 {
		cmd := childCommand(t, "durable", loc)
		cmd.Env = append(cmd.Env, envChildEmpresa+"="+a.ID, envChildStart+"="+strconv.Itoa(next))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill after a random number of acknowledgements, between lines.
		killAt := 20 + rand.IntN(80)
		acked := -1
		sc := bufio.NewScanner(stdout)
		timeout := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
		for sc.Scan() {
			var n int
			if _, err := fmt.Sscanf(sc.Text(), "ACK %d", &n); err != nil {
				continue
			}
			acked = n
			if n-next+1 >= killAt {
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
				cmd.Process.Kill()
				break
			}
		}
		// Acknowledgements printed before the kill landed count too.
		for sc.Scan() {
			var n int
			if _, err := fmt.Sscanf(sc.Text(), "ACK %d", &n); err == nil {
				acked = n
			}
		}
		cmd.Wait()
		timeout.Stop()
		if acked < next {
			t.Fatalf("round %d: the child acknowledged nothing; its output:\n%s", round, stderr.String())
		}
		for n := next; n <= acked; n++ {
			if _, err := s.GetClienteByRut(ctxT(t), a.ID, strconv.Itoa(n)); err != nil {
				t.Fatalf("round %d: acknowledged write %d lost after kill -9: %v", round, n, err)
			}
		}
		// The write that may have been in flight is either there or not;
		// continue after it.
		next = acked + 2
	}
	// The store is still writable after the crashes.
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertCliente(ctx, &store.Cliente{EmpresaID: a.ID, Rut: "after", RazonSocial: "x"})
	})
}
