package email_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/emersion/go-smtp"
)

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// silentServer accepts connections and never says a word, like a server
// that hangs; it returns its port.
func silentServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				<-done
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { l.Close(); close(done) })
	return l.Addr().(*net.TCPAddr).Port
}

// TestCredentialsNeverCrossInClear is decided before any connection: the
// hosts below are not dialled (mail.example.com does not resolve here).
func TestCredentialsNeverCrossInClear(t *testing.T) {
	ctx := ctxFor(t, 5*time.Second)
	msg := []byte("Subject: x\r\n\r\nx\r\n")
	for _, host := range []string{"mail.example.com", "192.0.2.1", "10.0.0.1"} {
		err := email.Send(ctx, email.SMTPConfig{Host: host, Security: "none", Username: "u", Password: "secreto"}, "a@b.cl", []string{"c@d.cl"}, msg)
		if err == nil || !strings.Contains(err.Error(), "refuses to send credentials in clear text to \""+host+"\"") || !email.IsPermanent(err) {
			t.Errorf("Send to %s without TLS = %v, want a permanent refusal before dialling", host, err)
		}
		if strings.Contains(err.Error(), "secreto") {
			t.Errorf("the password is in the error: %v", err)
		}
		_, err = email.DialIMAP(ctx, email.IMAPConfig{Host: host, Security: "none", Username: "u", Password: "secreto"})
		if err == nil || !strings.Contains(err.Error(), "refuses to send credentials in clear text") || !email.IsPermanent(err) {
			t.Errorf("DialIMAP to %s without TLS = %v, want a permanent refusal before dialling", host, err)
		}
	}
	// Loopback passes the rule and fails only on the closed port.
	p := closedPort(t)
	for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
		err := email.Send(ctx, email.SMTPConfig{Host: host, Port: p, Security: "none", Username: "u", Password: "p"}, "a@b.cl", []string{"c@d.cl"}, msg)
		if err == nil || strings.Contains(err.Error(), "clear text") || !strings.Contains(err.Error(), "connect") || email.IsPermanent(err) {
			t.Errorf("Send to %s:%d without TLS = %v, want a temporary connect error", host, p, err)
		}
	}
	// Without credentials, plain text anywhere is the caller's choice.
	err := email.Send(ctx, email.SMTPConfig{Host: "127.0.0.1", Port: p, Security: "none"}, "a@b.cl", []string{"c@d.cl"}, msg)
	if err == nil || strings.Contains(err.Error(), "clear text") {
		t.Errorf("Send without credentials = %v, want only the connect error", err)
	}
}

// TestSendConfigErrors are permanent and name the setting.
func TestSendConfigErrors(t *testing.T) {
	ctx := ctxFor(t, 5*time.Second)
	ok := email.SMTPConfig{Host: "127.0.0.1", Port: closedPort(t)}
	cases := []struct {
		want     string
		cfg      email.SMTPConfig
		from     string
		to       []string
		permanet bool
	}{
		{`SMTP Security "ssl"`, email.SMTPConfig{Host: "h", Security: "ssl"}, "a@b.cl", []string{"c@d.cl"}, true},
		{"SMTP Port 70000 is out of range", email.SMTPConfig{Host: "h", Port: 70000}, "a@b.cl", []string{"c@d.cl"}, true},
		{"SMTP Host is empty", email.SMTPConfig{}, "a@b.cl", []string{"c@d.cl"}, true},
		{"SMTP send without recipients", ok, "a@b.cl", nil, true},
		{`SMTP envelope from "a@b.cl\r\nRCPT TO:<x@y.cl>": not a bare address`, ok, "a@b.cl\r\nRCPT TO:<x@y.cl>", []string{"c@d.cl"}, true},
		{`SMTP envelope to[1] "nobody": not an address`, ok, "a@b.cl", []string{"c@d.cl", "nobody"}, true},
	}
	for _, c := range cases {
		err := email.Send(ctx, c.cfg, c.from, c.to, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), c.want) || email.IsPermanent(err) != c.permanet {
			t.Errorf("Send = %v (permanent %v), want %q (permanent %v)", err, email.IsPermanent(err), c.want, c.permanet)
		}
	}
}

// TestSendAgainstTheRealServer classifies the answers of a real SMTP
// server: each case reaches the server and gets its own refusal.
func TestSendAgainstTheRealServer(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	ctx := ctxFor(t, 30*time.Second)
	raw, _, err := email.Compose(testDraft("x"))
	if err != nil {
		t.Fatal(err)
	}
	eleven := make([]string, emailtest.MaxRecipients+1)
	for i := range eleven {
		eleven[i] = bob.Address
	}
	wrongPassword := srv.SMTPConfig(alice)
	wrongPassword.Password = "otra"
	untrusted := srv.SMTPConfig(alice)
	untrusted.TLSConfig = nil // system roots: the self-signed certificate does not verify
	clear := srv.SMTPConfig(alice)
	clear.Security = "none" // loopback, so allowed: but the server offers AUTH only under TLS
	anonymous := srv.SMTPConfig(alice)
	anonymous.Username, anonymous.Password = "", ""
	closed := srv.SMTPConfig(alice)
	closed.Port = closedPort(t)

	cases := []struct {
		name      string
		cfg       email.SMTPConfig
		to        []string
		want      string
		permanent bool
	}{
		{"unknown recipient", srv.SMTPConfig(alice), []string{bob.Address, "nadie@receptor.cl"}, "RCPT TO <nadie@receptor.cl>: SMTP error 550", true},
		{"too many recipients", srv.SMTPConfig(alice), eleven, "RCPT TO <intercambio@receptor.cl>: SMTP error 452", false},
		{"wrong password", wrongPassword, []string{bob.Address}, "AUTH: SMTP error 535", true},
		{"untrusted certificate", untrusted, []string{bob.Address}, "the server's certificate does not verify: tls: failed to verify certificate", true},
		{"AUTH only under TLS", clear, []string{bob.Address}, "the server offers neither AUTH PLAIN nor AUTH LOGIN", true},
		{"AUTH required", anonymous, []string{bob.Address}, "MAIL FROM <dte@emisor.cl>: SMTP error 530", true},
		{"nothing listening", closed, []string{bob.Address}, "connect: ", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := email.Send(ctx, c.cfg, alice.Address, c.to, raw)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Send = %v, want %q", err, c.want)
			}
			if email.IsPermanent(err) != c.permanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, !c.permanent, c.permanent)
			}
			if strings.Contains(err.Error(), alice.Password) {
				t.Errorf("the password is in the error: %v", err)
			}
		})
	}
	if n := srv.Count(bob); n != 0 {
		t.Errorf("bob's INBOX has %d messages: a refused send delivered something", n)
	}
}

// TestSendGivesUpAtItsDeadline: a server that accepts and never answers
// holds Send for its Timeout, not the libraries' minutes.
func TestSendGivesUpAtItsDeadline(t *testing.T) {
	p := silentServer(t)
	for _, sec := range []string{"starttls", "tls", "none"} {
		start := time.Now()
		err := email.Send(context.Background(), email.SMTPConfig{Host: "127.0.0.1", Port: p, Security: sec, Timeout: 300 * time.Millisecond},
			"a@b.cl", []string{"c@d.cl"}, []byte("x"))
		elapsed := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) || email.IsPermanent(err) {
			t.Errorf("%s: Send = %v, want a temporary deadline error", sec, err)
		}
		if elapsed > 3*time.Second {
			t.Errorf("%s: Send took %v with a 300ms timeout", sec, elapsed)
		}
	}
	// The caller's context wins when it is shorter.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := email.Send(ctx, email.SMTPConfig{Host: "127.0.0.1", Port: p, Security: "none"}, "a@b.cl", []string{"c@d.cl"}, []byte("x"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("Send with a 200ms context = %v after %v", err, time.Since(start))
	}
}

// TestIsPermanent on errors built by hand, for the cases no server above
// gives.
func TestIsPermanent(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.DeadlineExceeded, false},
		{errors.New("connection reset"), false},
		{fmt.Errorf("wrapped: %w", &smtp.SMTPError{Code: 421}), false},
		{fmt.Errorf("wrapped: %w", &smtp.SMTPError{Code: 554}), true},
	} {
		if got := email.IsPermanent(c.err); got != c.want {
			t.Errorf("IsPermanent(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
