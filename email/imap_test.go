package email_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
)

// TestDialIMAPRefusals: each refusal names its step and is classified.
func TestDialIMAPRefusals(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	ctx := ctxFor(t, 30*time.Second)
	wrong := srv.IMAPConfig(bob)
	wrong.Password = "otra"
	untrusted := srv.IMAPConfig(bob)
	untrusted.TLSConfig = nil
	missing := srv.IMAPConfig(bob)
	missing.Mailbox = "No/Existe"
	same := srv.IMAPConfig(bob)
	same.ProcessedMailbox = "inbox"
	noUser := srv.IMAPConfig(bob)
	noUser.Username = ""
	closed := srv.IMAPConfig(bob)
	closed.Port = closedPort(t)
	for _, c := range []struct {
		name      string
		cfg       email.IMAPConfig
		want      string
		permanent bool
	}{
		{"wrong password", wrong, `LOGIN as "receptor": imap: NO [AUTHENTICATIONFAILED]`, true},
		{"untrusted certificate", untrusted, "TLS handshake: the server's certificate does not verify", true},
		{"missing mailbox", missing, `SELECT "No/Existe": imap: NO`, false},
		{"processed mailbox is the one read", same, `IMAP ProcessedMailbox "inbox" is the mailbox read`, true},
		{"no username", noUser, "IMAP Username is empty", true},
		{"nothing listening", closed, "connect: ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mb, err := email.DialIMAP(ctx, c.cfg)
			if err == nil {
				mb.Close()
				t.Fatalf("DialIMAP succeeded, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || email.IsPermanent(err) != c.permanent {
				t.Fatalf("DialIMAP = %v (permanent %v), want %q (permanent %v)", err, email.IsPermanent(err), c.want, c.permanent)
			}
			if strings.Contains(err.Error(), "otra") || strings.Contains(err.Error(), bob.Password) {
				t.Errorf("a password is in the error: %v", err)
			}
		})
	}
}

// TestDialIMAPGivesUpAtItsDeadline against a server that never greets.
func TestDialIMAPGivesUpAtItsDeadline(t *testing.T) {
	p := silentServer(t)
	for _, sec := range []string{"tls", "starttls", "none"} {
		start := time.Now()
		_, err := email.DialIMAP(context.Background(), email.IMAPConfig{Host: "127.0.0.1", Port: p, Security: sec, Username: "u", Timeout: 300 * time.Millisecond})
		if !errors.Is(err, context.DeadlineExceeded) || email.IsPermanent(err) || time.Since(start) > 3*time.Second {
			t.Errorf("%s: DialIMAP = %v after %v, want a temporary deadline error within the timeout", sec, err, time.Since(start))
		}
	}
}

// TestMailboxBetweenCalls: the per-call timeout does not tear down an idle
// connection, and a call cut by its context leaves a Mailbox that says to
// dial again instead of talking out of step.
func TestMailboxBetweenCalls(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	cfg := srv.IMAPConfig(bob)
	// A second per call: a LIST under the race detector on a busy
	// machine took more than the 300 ms this test once gave it.
	cfg.Timeout = time.Second
	mb, err := email.DialIMAP(ctxFor(t, 5*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer mb.Close()
	time.Sleep(2200 * time.Millisecond) // idle for more than two timeouts
	if _, err := mb.Unprocessed(ctxFor(t, 5*time.Second), 10, 0); err != nil {
		t.Fatalf("Unprocessed after an idle spell: %v", err)
	}
	if _, err := mb.Unprocessed(ctxFor(t, 5*time.Second), 0, 0); err == nil || !strings.Contains(err.Error(), "max 0 is not positive") {
		t.Errorf("Unprocessed(max 0) = %v", err)
	}

	// A context already done: nothing is sent, the Mailbox stays usable.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mb.Unprocessed(cancelled, 10, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Unprocessed with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := mb.Unprocessed(ctxFor(t, 5*time.Second), 10, 0); err != nil {
		t.Fatalf("Unprocessed after a call refused for its context: %v", err)
	}
	// A context that ends mid-call: 40 MiB cannot cross in 5ms.
	srv.Append(bob, append([]byte("Subject: big\r\n\r\n"), make([]byte, 40<<20)...))
	short, cancelShort := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancelShort()
	if _, err := mb.Unprocessed(short, 10, 50<<20); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Unprocessed cut by its context = %v, want context.DeadlineExceeded", err)
	}
	err = mb.MarkProcessed(ctxFor(t, 5*time.Second), 1)
	if err == nil || !strings.Contains(err.Error(), "the connection was lost earlier") || !strings.Contains(err.Error(), "dial again") {
		t.Fatalf("a call after a cut one = %v, want to be told to dial again", err)
	}
	if err := mb.Close(); err != nil {
		t.Errorf("Close of a lost Mailbox: %v", err)
	}
}
