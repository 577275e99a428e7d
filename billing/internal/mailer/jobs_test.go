package mailer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

// These tests run the room over a store alone, against real SMTP and IMAP
// servers (emailtest) on loopback.

// The mail users: the company sends as sender; receptor receives and
// also has the mailbox the company reads.
var (
	sender   = emailtest.User{Address: "dte@losandes.cl", Username: "losandes", Password: "clave-smtp"}
	receptor = emailtest.User{Address: "compras@cliente.cl", Username: "cliente", Password: "clave-imap"}
)

// closedPort is a loopback address nobody listens on: a dial there is
// refused at once, a failure a retry may cure.
func closedPort(t *testing.T) (string, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	l.Close()
	return "127.0.0.1", addr.Port
}

// settings is a Tenants whose every company has the mail settings it
// holds, changed by the tests, and mails no document.
type settings struct{ p atomic.Pointer[Settings] }

func (s *settings) MailSettings(context.Context, string) (*Settings, error) { return s.p.Load(), nil }

func (s *settings) DocumentMail(context.Context, string, string) (*Outgoing, error) {
	return nil, errors.New("this test mails no document")
}

func insertEmpresa(t *testing.T, st store.Store, rut string) string {
	t.Helper()
	e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Ambiente: "certificacion"}
	if err := st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// mailJobs counts the unfinished jobs of the mail queue.
func mailJobs(t *testing.T, st store.Store) int64 {
	t.Helper()
	depth, err := st.Jobs().QueueDepth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, q := range []string{Queue, MailboxQueue} {
		for _, c := range depth[q] {
			n += c
		}
	}
	return n
}

func getCorreo(t *testing.T, st store.Store, empresa, id string) *store.Correo {
	t.Helper()
	c, err := st.GetCorreo(context.Background(), empresa, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSendSchedule: a queued mail is composed once, with its send job,
// in the caller's transaction (queuing it again records nothing more);
// each attempt the server refuses for now waits its turn in the
// schedule (30 s, then 2 min, the last pause repeating) without using up
// the job, and the last attempt leaves the mail fallido; a sent mail is
// delivered byte for byte as stored, stamped with its instant, and never
// sent twice; a permanent refusal (550) or a company without a sender
// is fallido at the first attempt.
func TestSendSchedule(t *testing.T) {
	t.Parallel()
	srv := emailtest.Start(t, sender, receptor)
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.NewStore(t, store.JobsConfig{})
		ctx := context.Background()
		empresa := insertEmpresa(t, st, "76192083-9")
		clock := clocktest.New(time.Date(2026, 3, 2, 13, 4, 5, 0, time.UTC))
		var set settings
		good := srv.SMTPConfig(sender)
		host, port := closedPort(t)
		down := email.SMTPConfig{Host: host, Port: port, Security: "none"}
		set.p.Store(&Settings{Direccion: sender.Address, SMTP: &down})
		m := New(Config{Store: st, Now: clock.Now, Logger: slog.New(slog.DiscardHandler), Tenants: &set,
			Backoff: []time.Duration{30 * time.Second, 2 * time.Minute}, MaxAttempts: 4})
		// Registered, not started: the tests run the send job's body.
		if err := m.Register(st.Jobs()); err != nil {
			t.Fatal(err)
		}
		queue := func(o Outgoing) *store.Correo {
			t.Helper()
			var c *store.Correo
			err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				var err error
				c, err = m.Enqueue(ctx, tx, &o)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		acuse := Outgoing{ID: MailID("acuse", "r1"), EmpresaID: empresa, Tipo: "acuse", To: receptor.Address,
			Subject: "Acuse de recibo", Text: "Adjunto el acuse."}
		c := queue(acuse)
		if c.Estado != Pendiente || c.Attempts != 0 || len(c.Message) == 0 || c.MessageID == "" ||
			!bytes.Contains(c.Message, []byte("Subject: Acuse de recibo")) {
			t.Fatalf("queued mail %+v, want pendiente with its message composed", c)
		}
		queue(acuse)
		if n := mailJobs(t, st); n != 1 {
			t.Errorf("%d mail jobs after queuing one mail twice, want 1", n)
		}
		if res, err := st.Jobs().Enqueue(ctx, sendArgs{EmpresaID: empresa, CorreoID: c.ID}, nil); err != nil || !res.Duplicate {
			t.Errorf("the send job of the mail: %+v, %v; want it queued already", res, err)
		}

		// The server is down: 30 s, 2 min, 2 min, then fallido.
		for i, want := range []time.Duration{30 * time.Second, 2 * time.Minute, 2 * time.Minute, 0} {
			err := m.send(ctx, sendArgs{EmpresaID: empresa, CorreoID: c.ID})
			var snooze *store.SnoozeError
			if want == 0 {
				if err != nil {
					t.Fatalf("attempt %d: %v, want the job done", i+1, err)
				}
			} else if !errors.As(err, &snooze) || snooze.Delay != want {
				t.Fatalf("attempt %d: %v, want a snooze of %s", i+1, err, want)
			}
			got := getCorreo(t, st, empresa, c.ID)
			estado := Pendiente
			if want == 0 {
				estado = Fallido
			}
			if got.Attempts != i+1 || got.Estado != estado || !strings.HasPrefix(got.LastError, "refused:") {
				t.Fatalf("after attempt %d: %s, %d attempts, %q; want %s, %d, the refused dial", i+1, got.Estado, got.Attempts, got.LastError, estado, i+1)
			}
		}
		if err := m.send(ctx, sendArgs{EmpresaID: empresa, CorreoID: c.ID}); err != nil || getCorreo(t, st, empresa, c.ID).Attempts != 4 {
			t.Errorf("a fifth run of a fallido mail: %v; want nothing done", err)
		}

		// The server is up: sent once, as stored.
		set.p.Store(&Settings{Direccion: sender.Address, SMTP: &good})
		resultado := Outgoing{ID: MailID("resultado", "r1"), EmpresaID: empresa, Tipo: "resultado", To: receptor.Address,
			Subject: "Resultado " + b.Name, Text: "Adjunto el resultado."}
		c = queue(resultado)
		clock.Advance(time.Hour)
		for range 2 {
			if err := m.send(ctx, sendArgs{EmpresaID: empresa, CorreoID: c.ID}); err != nil {
				t.Fatal(err)
			}
		}
		got := getCorreo(t, st, empresa, c.ID)
		if got.Estado != Enviado || got.Attempts != 1 || got.LastError != "" || !got.SentAt.Equal(time.Date(2026, 3, 2, 14, 4, 5, 0, time.UTC)) {
			t.Errorf("sent mail %+v, want enviado at 14:04:05 after one attempt", got)
		}
		var delivered [][]byte
		for _, msg := range srv.Messages(receptor) {
			if bytes.Contains(msg, []byte("Subject: Resultado "+b.Name+"\r\n")) {
				delivered = append(delivered, msg)
			}
		}
		if len(delivered) != 1 || !bytes.Equal(delivered[0], got.Message) {
			t.Errorf("the receptor got %d copies; want one, the stored bytes", len(delivered))
		}

		// Refused for good: no such user.
		c = queue(Outgoing{ID: MailID("recibos", "r1"), EmpresaID: empresa, Tipo: "recibos", To: "nadie@cliente.cl", Subject: "Recibos", Text: "."})
		if err := m.send(ctx, sendArgs{EmpresaID: empresa, CorreoID: c.ID}); err != nil {
			t.Fatal(err)
		}
		if got := getCorreo(t, st, empresa, c.ID); got.Estado != Fallido || got.Attempts != 1 || !strings.HasPrefix(got.LastError, "rejected:") {
			t.Errorf("mail to an unknown user: %s after %d attempts, %q; want fallido at once, rejected (the 550)", got.Estado, got.Attempts, got.LastError)
		}

		// The company lost its sender after the mail was queued.
		c = queue(Outgoing{ID: MailID("acuse", "r2"), EmpresaID: empresa, Tipo: "acuse", To: receptor.Address, Subject: "Acuse", Text: "."})
		set.p.Store(nil)
		if err := m.send(ctx, sendArgs{EmpresaID: empresa, CorreoID: c.ID}); err != nil {
			t.Fatal(err)
		}
		if got := getCorreo(t, st, empresa, c.ID); got.Estado != Fallido || got.Attempts != 1 || got.LastError != ErrNoSender.Error() {
			t.Errorf("mail of a company without a sender: %s after %d attempts, %q; want fallido at once, saying why", got.Estado, got.Attempts, got.LastError)
		}
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := m.Enqueue(ctx, tx, &Outgoing{EmpresaID: empresa, Tipo: "acuse", To: receptor.Address, Subject: "Acuse", Text: "."})
			return err
		})
		if !errors.Is(err, ErrNoSender) {
			t.Errorf("queuing without a sender: %v, want ErrNoSender", err)
		}
	})
}

// TestSendRetriesOnTheRunner: on a started runner the send job snoozes
// through the mail's schedule and ends with the mail fallido after
// MaxAttempts attempts, although the job allows far more runs: a snooze
// is not a failed run.
func TestSendRetriesOnTheRunner(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.NewStore(t, store.JobsConfig{})
		ctx := context.Background()
		empresa := insertEmpresa(t, st, "76192083-9")
		host, port := closedPort(t)
		var set settings
		set.p.Store(&Settings{Direccion: sender.Address, SMTP: &email.SMTPConfig{Host: host, Port: port, Security: "none"}})
		m := New(Config{Store: st, Now: time.Now, Logger: slog.New(slog.DiscardHandler), Tenants: &set,
			Backoff: []time.Duration{10 * time.Millisecond}, MaxAttempts: 3, Workers: 1})
		if err := m.Register(st.Jobs()); err != nil {
			t.Fatal(err)
		}
		var c *store.Correo
		err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			c, err = m.Enqueue(ctx, tx, &Outgoing{EmpresaID: empresa, Tipo: "acuse", To: receptor.Address, Subject: "Acuse", Text: "."})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Jobs().Stop(context.Background()) })
		clocktest.Eventually(t, time.Minute, func() bool { return getCorreo(t, st, empresa, c.ID).Estado != Pendiente })
		clocktest.Eventually(t, time.Minute, func() bool { return mailJobs(t, st) == 0 })
		if got := getCorreo(t, st, empresa, c.ID); got.Estado != Fallido || got.Attempts != 3 {
			t.Errorf("mail to a server that is down: %s after %d attempts, want fallido after 3", got.Estado, got.Attempts)
		}
	})
}

// TestPollOnePerCompany: the periodic read queues one job per company
// with a mailbox (none for a company without one, and a company whose
// settings cannot be read holds up no other); a second tick while those
// jobs wait queues nothing; once a company's read has run, the next tick
// queues it again.
func TestPollOnePerCompany(t *testing.T) {
	t.Parallel()
	srv := emailtest.Start(t, sender, receptor)
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		st := b.NewStore(t, store.JobsConfig{})
		ctx := context.Background()
		withBox, broken, noBox := insertEmpresa(t, st, "76192083-9"), insertEmpresa(t, st, "96790240-3"), insertEmpresa(t, st, "76086428-5")
		box := srv.IMAPConfig(receptor)
		var reads atomic.Int32
		m := New(Config{Store: st, Now: time.Now, Logger: slog.New(slog.DiscardHandler), Workers: 1, MailboxWorkers: 1,
			Tenants: fakeTenants{settings: func(id string) (*Settings, error) {
				switch id {
				case withBox:
					reads.Add(1)
					return &Settings{Direccion: sender.Address, IMAP: &box}, nil
				case broken:
					return nil, errors.New("the sealed password cannot be opened")
				}
				return &Settings{Direccion: sender.Address}, nil
			}},
			Handoff: &fakeHandoff{}})
		if err := m.Register(st.Jobs()); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := m.PollAll(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := mailJobs(t, st); n != 1 {
			t.Errorf("%d mail jobs after two ticks, want 1 (the company with a mailbox)", n)
		}
		for _, id := range []string{broken, noBox} {
			if res, err := st.Jobs().Enqueue(ctx, pollCompanyArgs{EmpresaID: id}, nil); err != nil || res.Duplicate {
				t.Errorf("a read of company %s was queued: %+v, %v", id, res, err)
			}
		}
		if res, err := st.Jobs().Enqueue(ctx, pollCompanyArgs{EmpresaID: withBox}, nil); err != nil || !res.Duplicate {
			t.Errorf("the read of the company with a mailbox: %+v, %v; want it queued already", res, err)
		}

		// The reads run (the other two companies' find no mailbox);
		// then the next tick queues the company again.
		if err := st.Jobs().Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Jobs().Stop(context.Background()) })
		clocktest.Eventually(t, time.Minute, func() bool { return mailJobs(t, st) == 0 })
		before := reads.Load()
		if err := m.PollAll(ctx); err != nil {
			t.Fatal(err)
		}
		clocktest.Eventually(t, time.Minute, func() bool { return reads.Load() >= before+2 && mailJobs(t, st) == 0 })
	})
}
