package billing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/internal/clocktest"
)

// goroutines returns the stacks of the process's goroutines by their
// header line ("goroutine 12 [select]:" without its state), less the
// server side of the test's own HTTP receiver.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, " [")
		if strings.Contains(g, "net/http.(*conn).serve") || strings.Contains(g, "net/http/httptest") {
			continue
		}
		out[head] = g
	}
	return out
}

// started returns the stacks in now that are not in before.
func started(before, now map[string]string) []string {
	var out []string
	for id, g := range now {
		if _, ok := before[id]; !ok {
			out = append(out, g)
		}
	}
	return out
}

// TestStopUndoesNewAndStart: a Service built, started, made to emit (its
// group commits lead) and to deliver a webhook (its client keeps the
// connection alive), then stopped, leaves no goroutine behind once its
// store is closed; after Stop an emission is refused as unavailable and
// Start refuses to run again.
func TestStopUndoesNewAndStart(t *testing.T) {
	// Not parallel: it counts the process's goroutines, and sequential
	// tests run while the parallel ones wait.
	creds(t)
	var delivered atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	ctx := context.Background()
	before := goroutines()

	s, err := openService(backends[0].name, backends[0].dsn(t), Config{Delivery: DeliveryConfig{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.st.Close()
		}
	}()
	emp := setupEmpresa(t, s, true)
	if _, err := s.Webhooks.Create(ctx, emp.ID, api.WebhookInput{URL: recv.URL + "/hook", Events: []string{"dte.created"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	emitOK(t, s, emp.ID, facturaBody(1))
	clocktest.Eventually(t, time.Minute, func() bool { return delivered.Load() == 1 })
	// The check below can fail: the service runs goroutines of its own
	// now, the kept-alive connection of its webhook client among them.
	running := started(before, goroutines())
	if !strings.Contains(strings.Join(running, "\n"), "net/http.(*persistConn)") {
		t.Fatalf("no connection of the webhook client is kept alive among the %d goroutines started: the check proves nothing", len(running))
	}

	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	if _, err := emitBody(s, ctx, emp.ID, newKey(), facturaBody(2)); fault.KindOf(err) != fault.KindUnavailable {
		t.Errorf("an emission after Stop: %v, want unavailable", err)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("a stopped Service started again")
	}
	if err := s.st.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true
	var left []string
	deadline := time.Now().Add(10 * time.Second)
	for {
		if left = started(before, goroutines()); len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, g := range left {
		t.Errorf("a goroutine outlived Stop and the store's Close:\n%s", g)
	}
}
