package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/webhook"
)

// Flood parameters of the issue-9 acceptance test.
const (
	floodConns    = 1500
	floodDeclared = 1 << 20 // Content-Length each connection announces
	floodSent     = 1 << 10 // body bytes each connection actually sends
	// floodBoundPerConn is the memory bound stated for the receiver: heap
	// plus goroutine stacks in use, per stalled connection, counting both
	// ends of the loopback connection (they share this process). Announcing
	// 1 MiB must not cost anything near 1 MiB.
	floodBoundPerConn = 64 << 10
)

// TestFloodMemoryBound opens 1,500 loopback connections to the receiver
// (run, with its real http.Server settings), each sending well-formed
// headers with a fresh timestamp and a Content-Length of 1 MiB, then 1 KiB
// of body, and stalling. Once every connection's request is inside the
// middleware's body read, the memory in use may have grown by at most
// floodBoundPerConn per connection (96 MiB in all, against the 1.5 GiB an
// allocation of the announced length would take).
func TestFloodMemoryBound(t *testing.T) {
	secret := webhook.GenerateSecret()
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := startRun(t, ctx, []string{"-addr", "127.0.0.1:0", "-secret", secret.Encode()},
		func(string) string { return "" }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("receiver did not shut down")
		}
	}()

	base := inUse()
	// Headers that pass every check made before the body: signed with the
	// right secret over other bytes, so only the MAC would fail at the end.
	conns := make([]net.Conn, 0, floodConns)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	chunk := bytes.Repeat([]byte("x"), floodSent)
	for i := range floodConns {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		id := fmt.Sprintf("msg_flood_%d", i)
		h, err := webhook.Sign([]webhook.Secret{secret}, id, time.Now(), []byte("other"))
		if err != nil {
			t.Fatal(err)
		}
		var req strings.Builder
		fmt.Fprintf(&req, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", addr, floodDeclared)
		for k, v := range h {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v[0])
		}
		req.WriteString("\r\n")
		c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, req.String()); err != nil {
			t.Fatalf("connection %d: writing headers: %v", i, err)
		}
		if _, err := c.Write(chunk); err != nil {
			t.Fatalf("connection %d: writing body: %v", i, err)
		}
	}

	// Wait until every request is blocked reading its body.
	deadline := time.Now().Add(60 * time.Second)
	for {
		n := goroutinesIn("webhook.readBody")
		if n >= floodConns {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests reached the body read within 60 s", n, floodConns)
		}
		time.Sleep(50 * time.Millisecond)
	}
	used := inUse() - base
	per := used / floodConns
	t.Logf("%d stalled connections announcing %d bytes: %.1f MiB in use, %d bytes per connection (bound %d)",
		floodConns, floodDeclared, float64(used)/(1<<20), per, floodBoundPerConn)
	if per > floodBoundPerConn {
		t.Errorf("%d bytes in use per stalled connection, bound %d", per, floodBoundPerConn)
	}
}

// inUse is the heap and stack memory in use after a collection.
func inUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

// goroutinesIn counts the goroutines whose stack contains fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 64<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(fn+"(")) {
			n++
		}
	}
	return n
}
