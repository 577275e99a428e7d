package email_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
)

// TestConnectTimeout: a server that accepts and never greets is given up
// on after ConnectTimeout, not after the call's whole Timeout (60 s by
// default), for every security mode of both protocols; and a Dial given
// in the settings is the one used.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	port := silentServer(t)
	const connect = 300 * time.Millisecond
	msg := []byte("Subject: x\r\n\r\nx\r\n")
	for _, sec := range []string{"tls", "starttls", "none"} {
		t.Run(sec, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			_, err := email.DialIMAP(context.Background(), email.IMAPConfig{Host: "127.0.0.1", Port: port, Security: sec, Username: "u", Password: "p", ConnectTimeout: connect})
			if took := time.Since(start); err == nil || took > 5*connect || email.Category(err) != email.CategoryTimeout {
				t.Errorf("IMAP %s to a silent server: %v (%s) after %s, want a timeout within %s", sec, err, email.Category(err), took, 5*connect)
			}
			start = time.Now()
			err = email.Send(context.Background(), email.SMTPConfig{Host: "127.0.0.1", Port: port, Security: sec, ConnectTimeout: connect},
				"a@example.cl", []string{"b@example.cl"}, msg)
			if took := time.Since(start); err == nil || took > 5*connect || email.Category(err) != email.CategoryTimeout {
				t.Errorf("SMTP %s to a silent server: %v (%s) after %s, want a timeout within %s", sec, err, email.Category(err), took, 5*connect)
			}
		})
	}
	t.Run("dial", func(t *testing.T) {
		t.Parallel()
		refused := errors.New("not this address")
		var asked string
		dial := func(_ context.Context, _, address string) (net.Conn, error) { asked = address; return nil, refused }
		err := email.Send(context.Background(), email.SMTPConfig{Host: "mail.example.cl", Port: 587, Dial: dial},
			"a@example.cl", []string{"b@example.cl"}, msg)
		if !errors.Is(err, refused) || asked != "mail.example.cl:587" {
			t.Errorf("Send through a Dial that refuses: %v (asked %q)", err, asked)
		}
	})
}

// blockedErr is what a guarded Dial returns for an address it refuses.
type blockedErr struct{}

func (blockedErr) Error() string { return "address 10.0.0.1 (private) is not one mail may reach" }
func (blockedErr) Blocked() bool { return true }

// TestCategory: each kind of failure, met against real servers where it
// can be, gets its category, and the category carries none of the
// error's detail.
func TestCategory(t *testing.T) {
	t.Parallel()
	user := emailtest.User{Address: "dte@empresa.cl", Username: "u", Password: "right"}
	srv := emailtest.Start(t, user)
	hostPort := func(addr string) (string, int) {
		h, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		return h, n
	}
	trusted := &tls.Config{RootCAs: srv.RootCAs}
	ctx := context.Background()
	msg := []byte("Subject: x\r\n\r\nx\r\n")
	send := func(cfg email.SMTPConfig, to string) error {
		return email.Send(ctx, cfg, "dte@empresa.cl", []string{to}, msg)
	}
	imap := func(cfg email.IMAPConfig) error {
		mb, err := email.DialIMAP(ctx, cfg)
		if err == nil {
			mb.Close()
		}
		return err
	}
	sh, sp := hostPort(srv.SMTPAddr)
	ih, ip := hostPort(srv.IMAPSAddr)
	closed := closedPort(t)
	blocked := func(context.Context, string, string) (net.Conn, error) { return nil, blockedErr{} }
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		{"SMTP to a closed port", send(email.SMTPConfig{Host: "127.0.0.1", Port: closed, Security: "none"}, "b@empresa.cl"), email.CategoryRefused},
		{"IMAP to a closed port", imap(email.IMAPConfig{Host: "127.0.0.1", Port: closed, Username: "u"}), email.CategoryRefused},
		{"SMTP to a blocked address", send(email.SMTPConfig{Host: "mail.empresa.cl", Port: 587, Dial: blocked}, "b@empresa.cl"), email.CategoryRefused},
		{"SMTP with a wrong password", send(email.SMTPConfig{Host: sh, Port: sp, Username: "u", Password: "wrong", TLSConfig: trusted}, "b@empresa.cl"), email.CategoryAuth},
		{"IMAP with a wrong password", imap(email.IMAPConfig{Host: ih, Port: ip, Username: "u", Password: "wrong", TLSConfig: trusted}), email.CategoryAuth},
		{"SMTP with an untrusted certificate", send(email.SMTPConfig{Host: sh, Port: sp, Username: "u", Password: "right"}, "b@empresa.cl"), email.CategoryTLS},
		{"IMAP with an untrusted certificate", imap(email.IMAPConfig{Host: ih, Port: ip, Username: "u", Password: "right"}), email.CategoryTLS},
		{"SMTP to an unknown mailbox", send(email.SMTPConfig{Host: sh, Port: sp, Username: "u", Password: "right", TLSConfig: trusted}, "nadie@otra.cl"), email.CategoryRejected},
		{"IMAP of a missing folder", imap(email.IMAPConfig{Host: ih, Port: ip, Username: "u", Password: "right", Mailbox: "NoSuch", TLSConfig: trusted}), email.CategoryRejected},
		{"a name that does not resolve", &net.DNSError{Err: "no such host", Name: "mail.nowhere.invalid", IsNotFound: true}, email.CategoryDNS},
		{"nothing", nil, ""},
	} {
		got := email.Category(c.err)
		if got != c.want {
			t.Errorf("%s: %v is %q, want %q", c.what, c.err, got, c.want)
		}
		if c.err != nil && strings.Contains(got, "127.0.0.1") {
			t.Errorf("%s: the category %q names an address", c.what, got)
		}
	}
}
