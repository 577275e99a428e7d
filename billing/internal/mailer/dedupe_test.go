package mailer

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

// withEnvio is a message with Message-ID id carrying an EnvioDTE whose
// content is body.
func withEnvio(id, body string) []byte {
	xml := "<EnvioDTE><SetDTE>" + body + "</SetDTE></EnvioDTE>"
	return []byte("From: dte@proveedor.cl\r\nTo: dte@empresa.cl\r\nSubject: DTE\r\nMessage-ID: " + id + "\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: application/xml\r\n" +
		"Content-Disposition: attachment; filename=\"EnvioDTE.xml\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString([]byte(xml)) + "\r\n--b--\r\n")
}

// storeWithEmpresa opens a store of b with one company, closed when t
// ends.
func storeWithEmpresa(t *testing.T, b backendtest.Backend) (store.Store, *store.Empresa) {
	t.Helper()
	ctx := context.Background()
	st := b.NewStore(t, store.JobsConfig{})
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return st, e
}

// TestMessagesByContent, on both backends: two different messages that
// share a Message-ID are both handed to the intake (issue 30: the second
// was skipped in silence); the very same message read again (a crash
// between the record and the flag, or a copy delivered twice) is
// recognized and skipped.
func TestMessagesByContent(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, testMessagesByContent)
}

func testMessagesByContent(t *testing.T, b backendtest.Backend) {
	ctx := context.Background()
	st, e := storeWithEmpresa(t, b)
	u := emailtest.User{Address: "dte@empresa.cl", Username: "e", Password: "pw"}
	srv := emailtest.Start(t, u)
	handoff := &fakeHandoff{}
	m := New(Config{Store: st, Now: time.Now, Logger: slog.New(slog.DiscardHandler),
		Tenants: fakeTenants{settings: func(string) (*Settings, error) {
			return &Settings{Direccion: u.Address, IMAP: new(srv.IMAPConfig(u))}, nil
		}},
		Handoff: handoff})
	first, other := withEnvio("<uno@proveedor.cl>", "factura 1"), withEnvio("<uno@proveedor.cl>", "factura 2")
	srv.Append(u, first)
	srv.Append(u, other)
	res, err := m.Poll(ctx, e.ID)
	if err != nil || res.Leidos != 2 || res.Repetidos != 0 {
		t.Fatalf("two messages with one Message-ID: %+v, %v; want both read", res, err)
	}
	// The first again, as a crash before the flag would leave it.
	srv.Append(u, first)
	res, err = m.Poll(ctx, e.ID)
	if err != nil || res.Leidos != 0 || res.Repetidos != 1 {
		t.Fatalf("the same message again: %+v, %v; want it skipped", res, err)
	}
	got := handoff.intake
	if len(got) != 2 || !strings.Contains(got[0], "factura 1") || !strings.Contains(got[1], "factura 2") {
		t.Errorf("the intake received %q", got)
	}
	page, err := st.ListMensajes(ctx, e.ID, store.ListFilter{})
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("the mails recorded: %+v, %v", page, err)
	}
}

// TestSendFailureShown, on both backends: a send that fails is recorded
// with its category and a sentence of ours, never the server's address.
func TestSendFailureShown(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, testSendFailureShown)
}

func testSendFailureShown(t *testing.T, b backendtest.Backend) {
	ctx := context.Background()
	st, e := storeWithEmpresa(t, b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // a closed port
	m := New(Config{Store: st, Now: time.Now, Logger: slog.New(slog.DiscardHandler), MaxAttempts: 1,
		Tenants: fakeTenants{settings: func(string) (*Settings, error) {
			return &Settings{Direccion: "dte@empresa.cl", SMTP: &email.SMTPConfig{Host: "127.0.0.1", Port: port, Security: "none"}}, nil
		}}})
	if err := m.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	var c *store.Correo
	err = st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c, err = m.Enqueue(ctx, tx, &Outgoing{EmpresaID: e.ID, Tipo: "dte", To: "compras@cliente.cl", Subject: "DTE", Text: "Adjunto."})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.send(ctx, sendArgs{EmpresaID: e.ID, CorreoID: c.ID}); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetCorreo(ctx, e.ID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Estado != Fallido || !strings.HasPrefix(got.LastError, "refused: ") || strings.Contains(got.LastError, "127.0.0.1") {
		t.Errorf("a send to a closed port: %s, %q; want fallido, refused, no address", got.Estado, got.LastError)
	}
}

// TestAdmitEndsTheRead, on both backends: the Handoff is asked before
// each message; once it refuses (the company's quota of mails), the read
// ends with its error, the messages read so far handed over and
// recorded, and the rest left unread in the mailbox for a later read.
func TestAdmitEndsTheRead(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		ctx := context.Background()
		st, e := storeWithEmpresa(t, b)
		u := emailtest.User{Address: "dte@empresa.cl", Username: "e", Password: "pw"}
		srv := emailtest.Start(t, u)
		two := 2
		handoff := &fakeHandoff{admit: &two}
		m := New(Config{Store: st, Now: time.Now, Logger: slog.New(slog.DiscardHandler),
			Tenants: fakeTenants{settings: func(string) (*Settings, error) {
				return &Settings{Direccion: u.Address, IMAP: new(srv.IMAPConfig(u))}, nil
			}},
			Handoff: handoff})
		for i := range 3 {
			srv.Append(u, withEnvio(fmt.Sprintf("<m%d@proveedor.cl>", i), fmt.Sprintf("factura %d", i+1)))
		}
		recorded := func() int {
			t.Helper()
			page, err := st.ListMensajes(ctx, e.ID, store.ListFilter{})
			if err != nil {
				t.Fatal(err)
			}
			return len(page.Items)
		}
		if _, err := m.Poll(ctx, e.ID); !errors.Is(err, errQuota) {
			t.Fatalf("a read with room for two messages: %v, want the quota's error", err)
		}
		if n, got := recorded(), len(handoff.intake); n != 2 || got != 2 {
			t.Fatalf("a read with room for two messages: %d recorded, %d handed over; want 2 and 2", n, got)
		}
		// Room again: the third message was left in the mailbox.
		handoff.admit = nil
		if _, err := m.Poll(ctx, e.ID); err != nil {
			t.Fatal(err)
		}
		if n, got := recorded(), handoff.intake; n != 3 || len(got) != 3 || !strings.Contains(got[2], "factura 3") {
			t.Errorf("after the next read: %d recorded, %d handed over; want the third too", n, len(got))
		}
	})
}
