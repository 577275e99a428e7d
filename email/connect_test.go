package email

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"
)

// silentServer accepts connections and never writes a byte: a server
// that takes the TCP connection and then hangs.
func silentServer(t *testing.T) (host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	h, p, _ := net.SplitHostPort(ln.Addr().String())
	port, _ = strconv.Atoi(p)
	return h, port
}

// TestConnectTimeout: a server that accepts and never greets is given up
// on after ConnectTimeout, not after the call's whole Timeout (60 s by
// default), for every security mode of both protocols; and a Dial given
// in the settings is the one used.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	host, port := silentServer(t)
	const connect = 300 * time.Millisecond
	for _, sec := range []string{"tls", "starttls", "none"} {
		t.Run(sec, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := DialIMAP(context.Background(), IMAPConfig{Host: host, Port: port, Security: sec, Username: "u", Password: "p", ConnectTimeout: connect})
			if took := time.Since(start); err == nil || took > 5*connect || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("IMAP %s to a silent server: %v after %s, want a deadline within %s", sec, err, took, 5*connect)
			}
			start = time.Now()
			err = Send(context.Background(), SMTPConfig{Host: host, Port: port, Security: sec, ConnectTimeout: connect},
				"a@example.cl", []string{"b@example.cl"}, []byte("Subject: x\r\n\r\nx\r\n"))
			if took := time.Since(start); err == nil || took > 5*connect || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("SMTP %s to a silent server: %v after %s, want a deadline within %s", sec, err, took, 5*connect)
			}
		})
	}
	t.Run("dial", func(t *testing.T) {
		t.Parallel()
		refused := errors.New("not this address")
		var asked string
		dial := func(_ context.Context, _, address string) (net.Conn, error) { asked = address; return nil, refused }
		err := Send(context.Background(), SMTPConfig{Host: "mail.example.cl", Port: 587, Dial: dial},
			"a@example.cl", []string{"b@example.cl"}, []byte("Subject: x\r\n\r\nx\r\n"))
		if !errors.Is(err, refused) || asked != "mail.example.cl:587" {
			t.Errorf("Send through a Dial that refuses: %v (asked %q)", err, asked)
		}
	})
}
