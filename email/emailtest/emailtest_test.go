package emailtest_test

import (
	"bytes"
	"testing"

	"github.com/dtekit/dtekit/email/emailtest"
)

// TestMailboxHelpers: what Append drops is what Messages and Count report,
// in order and byte for byte, for that user alone.
func TestMailboxHelpers(t *testing.T) {
	a := emailtest.User{Address: "A@x.cl", Username: "a", Password: "pa"}
	b := emailtest.User{Address: "b@x.cl", Username: "b", Password: "pb"}
	srv := emailtest.Start(t, a, b)
	one := []byte("Subject: one\r\n\r\nfirst\r\n")
	two := []byte("Subject: two\r\n\r\n\x00binary\xff\r\n")
	srv.Append(a, one)
	srv.Append(a, two)
	if n := srv.Count(a); n != 2 {
		t.Fatalf("Count(a) = %d, want 2", n)
	}
	if n := srv.Count(b); n != 0 {
		t.Fatalf("Count(b) = %d, want 0", n)
	}
	if n := srv.CountIn(a, "Nope"); n != 0 {
		t.Fatalf("CountIn of a missing mailbox = %d, want 0", n)
	}
	got := srv.Messages(a)
	if len(got) != 2 || !bytes.Equal(got[0], one) || !bytes.Equal(got[1], two) {
		t.Fatalf("Messages(a) = %q, want the two appended", got)
	}
	for i, f := range srv.Flags(a, "INBOX") {
		if len(f) != 0 {
			t.Errorf("message %d has flags %v after being read by Messages", i, f)
		}
	}
	if srv.IMAPBytesSent() == 0 {
		t.Error("IMAPBytesSent is 0 after two reads over IMAP")
	}
}
