package webhook_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/webhook"
)

// slowPeer is a loopback server that takes connections and then answers
// as serve says, one connection at a time per goroutine; it closes every
// connection when the test ends.
func slowPeer(t *testing.T, serve func(c net.Conn, done <-chan struct{})) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c, done)
			}()
		}
	}()
	t.Cleanup(func() {
		close(done)
		ln.Close()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/hook"
}

// readRequest reads a request's head off c (the body is small and
// follows at once; it is not needed).
func readRequest(c net.Conn) {
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil || line == "\r\n" {
			return
		}
	}
}

// trickle writes s a byte at a time, every 50 ms, until done.
func trickle(c net.Conn, s string, done <-chan struct{}) {
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
		if _, err := c.Write([]byte{s[i%len(s)]}); err != nil {
			return
		}
	}
}

// TestSendTimeoutBoundsAttempt: with Sender.Timeout, one attempt ends at
// the bound however the receiver stalls, even over a client that bounds
// nothing itself: a host that accepts and never answers, one that
// trickles its headers a byte at a time, and one that sends 200 and then
// trickles its body.
func TestSendTimeoutBoundsAttempt(t *testing.T) {
	const bound = 400 * time.Millisecond
	// A receiver stalls for ever; the attempt must end within the bound
	// plus room for a loaded machine, far below the receivers' patience.
	const slack = 1500 * time.Millisecond
	sec := webhook.GenerateSecret()
	cases := []struct {
		name   string
		serve  func(c net.Conn, done <-chan struct{})
		class  webhook.ErrorClass
		status int
	}{
		{"silent", func(c net.Conn, done <-chan struct{}) { <-done }, webhook.ClassTimeout, 0},
		{"trickled headers", func(c net.Conn, done <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\n"))
			trickle(c, "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaa\r\n", done)
		}, webhook.ClassTimeout, 0},
		{"trickled body", func(c net.Conn, done <-chan struct{}) {
			readRequest(c)
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"))
			trickle(c, "ok", done)
		}, webhook.ClassNone, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := slowPeer(t, tc.serve)
			s := &webhook.Sender{Client: &http.Client{}, Timeout: bound}
			start := time.Now()
			res, err := s.Send(context.Background(), url, webhook.Message{ID: webhook.NewMessageID(), Body: []byte(`{}`), Secrets: []webhook.Secret{sec}})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if took > bound+slack || took < bound-50*time.Millisecond {
				t.Errorf("the attempt took %s, want about the %s bound", took, bound)
			}
			if res.Class != tc.class || res.Status != tc.status {
				t.Errorf("class %q status %d (%v), want %q %d", res.Class, res.Status, res.Err, tc.class, tc.status)
			}
			if tc.status == 200 && (len(res.Response) == 0 || !strings.HasPrefix("okokokokokokokokokok", string(res.Response))) {
				t.Errorf("the body kept is %q, want the bytes that came before the bound", res.Response)
			}
		})
	}
}
