package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/webhook"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// fixture runs newHandler on a loopback server.
type fixture struct {
	srv       *httptest.Server
	secret    webhook.Secret
	logs      *lockedBuffer
	processed atomic.Int32
}

func newFixture(t *testing.T, maxBody int64) *fixture {
	t.Helper()
	f := &fixture{secret: webhook.GenerateSecret(), logs: &lockedBuffer{}}
	v, err := webhook.NewVerifier([]webhook.Secret{f.secret})
	if err != nil {
		t.Fatal(err)
	}
	process := func(ctx context.Context, ev webhook.Event) (string, error) {
		f.processed.Add(1)
		return processEvent(ctx, ev)
	}
	logger := slog.New(slog.NewTextHandler(f.logs, nil))
	f.srv = httptest.NewServer(newHandler(v, webhook.NewMemoryDeduper(time.Hour, nil), maxBody, logger, process))
	t.Cleanup(f.srv.Close)
	return f
}

// deliver posts body signed with secret under id, returning the status.
func deliver(t *testing.T, url string, secret webhook.Secret, id string, body []byte) int {
	t.Helper()
	h, err := webhook.Sign([]webhook.Secret{secret}, id, time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func dteEvent(t *testing.T) []byte {
	t.Helper()
	body, err := webhook.MarshalEvent(webhook.EventDTERejected, time.Now(), webhook.DTEData{
		ID: "a3e9f0b1-2c4d-4e6f-8a0b-1c2d3e4f5a6b", TipoDTE: 61, Folio: 88, Estado: "rechazado",
		RutReceptor: "96790240-3", RazonSocialReceptor: "Distribuidora Austral Ltda",
		MontoTotal: 23800, FechaEmision: "2026-03-01",
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// requireLine finds the log line for a delivery id and checks its fields.
func requireLine(t *testing.T, lines []string, want ...string) {
	t.Helper()
	for _, l := range lines {
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			return
		}
	}
	t.Errorf("no log line with %q in:\n%s", want, strings.Join(lines, "\n"))
}

func TestReceiver(t *testing.T) {
	f := newFixture(t, 4096)
	body := dteEvent(t)

	if s := deliver(t, f.srv.URL, f.secret, "msg_1", body); s != http.StatusNoContent {
		t.Fatalf("verified delivery: %d, want 204", s)
	}
	if s := deliver(t, f.srv.URL, f.secret, "msg_1", body); s < 200 || s > 299 {
		t.Fatalf("repeated webhook-id: %d, want 2xx", s)
	}
	if n := f.processed.Load(); n != 1 {
		t.Fatalf("processed %d times, want once", n)
	}
	if s := deliver(t, f.srv.URL, webhook.GenerateSecret(), "msg_2", body); s != http.StatusUnauthorized {
		t.Fatalf("delivery signed with another secret: %d, want 401", s)
	}
	big := append(bytes.Repeat([]byte(" "), 4096), body...)
	if s := deliver(t, f.srv.URL, f.secret, "msg_3", big); s != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized delivery: %d, want 413", s)
	}
	if s := deliver(t, f.srv.URL, f.secret, "msg_4", []byte(`{"hello":"world"}`)); s != http.StatusBadRequest {
		t.Fatalf("verified non-event: %d, want 400", s)
	}
	unknown := []byte(`{"type":"dte.archived","timestamp":"2026-03-02T10:00:00Z","data":{}}`)
	if s := deliver(t, f.srv.URL, f.secret, "msg_5", unknown); s != http.StatusNoContent {
		t.Fatalf("unknown event type: %d, want 204", s)
	}
	// Unsigned request.
	resp, err := http.Post(f.srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || strings.Contains(string(text), "header") {
		t.Fatalf("unsigned: %d %q, want 401 with a generic body", resp.StatusCode, text)
	}

	lines := f.logs.lines()
	deliveries := 0
	for _, l := range lines {
		if strings.Contains(l, "msg=delivery") {
			deliveries++
		}
	}
	if deliveries != 7 {
		t.Errorf("%d delivery log lines for 7 requests:\n%s", deliveries, strings.Join(lines, "\n"))
	}
	requireLine(t, lines, "id=msg_1", "type=dte.rejected", "status=204", "outcome=processed", "folio 88 rechazado")
	requireLine(t, lines, "id=msg_1", "type=dte.rejected", "status=200", "outcome=duplicate")
	requireLine(t, lines, "id=unverified:msg_2", "type=-", "status=401", "outcome=rejected", "no matching signature")
	requireLine(t, lines, "id=unverified:msg_3", "status=413", "outcome=too_large")
	requireLine(t, lines, "id=msg_4", "status=400", "outcome=invalid_event")
	requireLine(t, lines, "id=msg_5", "type=dte.archived", "status=204", "outcome=processed", "ignored")
	requireLine(t, lines, "id=-", "status=401", "outcome=rejected", "missing header")
}

// startRun starts run in a goroutine and waits for its listening address;
// done receives what run returns once ctx is cancelled.
func startRun(t *testing.T, ctx context.Context, args []string, getenv func(string) string, logger *slog.Logger) (string, <-chan error) {
	t.Helper()
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, getenv, logger, func(a string) { addrc <- a }) }()
	select {
	case addr := <-addrc:
		return addr, done
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("receiver did not start")
	}
	return "", nil
}

func TestRunShutsDown(t *testing.T) {
	secret := webhook.GenerateSecret()
	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := startRun(t, ctx, []string{"-addr", "127.0.0.1:0"}, func(k string) string {
		if k == secretEnv {
			return secret.Encode()
		}
		return ""
	}, slog.New(slog.NewTextHandler(logs, nil)))
	if s := deliver(t, "http://"+addr+"/hooks", secret, "msg_run", dteEvent(t)); s != 204 {
		t.Fatalf("delivery: %d", s)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v after cancel", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after cancel")
	}
	requireLine(t, logs.lines(), "shut down")
}

func TestRunFlagErrors(t *testing.T) {
	noenv := func(string) string { return "" }
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, args := range [][]string{
		{},
		{"-secret", "whsec_short"},
		{"-secret", webhook.GenerateSecret().Encode(), "-max-body", "0"},
		{"-secret", webhook.GenerateSecret().Encode(), "extra"},
		{"-secret", webhook.GenerateSecret().Encode(), "-addr", "256.0.0.1:bad"},
	} {
		err := run(context.Background(), args, noenv, logger, nil)
		if err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
		if len(args) >= 2 && strings.Contains(fmt.Sprint(err), "short") {
			t.Errorf("error repeats the secret: %v", err)
		}
	}
}

// TestBinarySIGINT builds the example, starts it as a separate process on a
// loopback port, delivers one event, and checks that SIGINT ends it with
// status 0 after a clean shutdown.
func TestBinarySIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary; skipped with -short")
	}
	goTool := oracle.Tool(t, "go") // fails instead of skipping under DTEKIT_REQUIRE_ORACLES=1
	bin := filepath.Join(t.TempDir(), "webhook-receiver")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	secret := webhook.GenerateSecret()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), secretEnv+"="+secret.Encode())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var addr string
	deadline := time.After(20 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("receiver exited before listening")
			}
			if _, a, found := strings.Cut(l, "msg=listening addr="); found {
				addr = a
			}
		case <-deadline:
			t.Fatal("no listening line within 20 s")
		}
	}
	if s := deliver(t, "http://"+addr+"/", secret, "msg_bin", dteEvent(t)); s != 204 {
		t.Fatalf("delivery to the binary: %d", s)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest []string
	deadline = time.After(15 * time.Second)
	for open := true; open; {
		select {
		case l, ok := <-lines:
			if ok {
				rest = append(rest, l)
			}
			open = ok
		case <-deadline:
			t.Fatalf("stderr still open 15 s after SIGINT:\n%s", strings.Join(rest, "\n"))
		}
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case err := <-waitErr:
		if err != nil {
			t.Fatalf("exit after SIGINT: %v\n%s", err, strings.Join(rest, "\n"))
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15 s of SIGINT")
	}
	requireLine(t, rest, "id=msg_bin", "outcome=processed")
	requireLine(t, rest, "shut down")
}
