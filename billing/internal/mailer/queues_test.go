package mailer

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

// tarpit is a loopback listener that accepts connections and never
// answers: an IMAP server that takes the connection and hangs. It counts
// the connections it accepted.
type tarpit struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newTarpit(t *testing.T) *tarpit {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tarpit{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
		}
	}()
	t.Cleanup(p.close)
	return p
}

// close stops accepting and closes the connections held.
func (p *tarpit) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *tarpit) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

func (p *tarpit) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// queueRig is a mailer over a SQLite store with its job runner started:
// company S sends through a real SMTP server, and hanging companies read
// mailboxes on a tarpit.
type queueRig struct {
	st      store.Store
	m       *Mailer
	sender  *store.Empresa
	hanging []*store.Empresa
	srv     *emailtest.Server
	to      emailtest.User
	now     func() time.Time
}

func newQueueRig(t *testing.T, b backendtest.Backend, hanging int, pit *tarpit, now func() time.Time, connect time.Duration) *queueRig {
	t.Helper()
	ctx := context.Background()
	st := b.NewStore(t, store.JobsConfig{PollInterval: 20 * time.Millisecond})
	from := emailtest.User{Address: "dte@emisora.cl", Username: "s", Password: "pw-s"}
	to := emailtest.User{Address: "compras@cliente.cl", Username: "c", Password: "pw-c"}
	srv := emailtest.Start(t, from, to)
	r := &queueRig{st: st, srv: srv, to: to, now: now}
	company := func(rut string) *store.Empresa {
		e := &store.Empresa{Rut: rut, RazonSocial: "Empresa " + rut, Ambiente: "certificacion"}
		if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
			t.Fatal(err)
		}
		return e
	}
	r.sender = company("76192083-9")
	for i := range hanging {
		r.hanging = append(r.hanging, company(strconv.Itoa(77000000+i)+"-"+strconv.Itoa(i)))
	}
	sender := &Settings{Direccion: from.Address, SMTP: new(srv.SMTPConfig(from))}
	// The senders' certificate is the test server's; loopback in clear
	// is no issue here.
	hang := &Settings{Direccion: "dte@colgada.cl", IMAP: &email.IMAPConfig{Host: "127.0.0.1", Port: pit.port(), Security: "tls", Username: "u", Password: "p"}}
	r.m = New(Config{Store: st, Now: now, Logger: slog.New(slog.DiscardHandler), Every: time.Minute, ConnectTimeout: connect,
		Backoff: []time.Duration{time.Hour}, Workers: DefaultWorkers, MailboxWorkers: DefaultMailboxWorkers,
		Tenants: fakeTenants{settings: func(id string) (*Settings, error) {
			if id == r.sender.ID {
				return sender, nil
			}
			return hang, nil
		}},
		Handoff: &fakeHandoff{}})
	if err := periodic.Declare(st.Jobs(), 1); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Register(st.Jobs()); err != nil {
		t.Fatal(err)
	}
	if err := st.Jobs().Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = st.Jobs().Stop(ctx)
	})
	// First of all, the tarpit lets go: the reads it holds end at once.
	t.Cleanup(pit.close)
	return r
}

// send queues one mail of the sender company and waits until it is
// sent, or limit passes; it returns how long it took.
func (r *queueRig) send(t *testing.T, limit time.Duration) time.Duration {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	var c *store.Correo
	err := r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		c, err = r.m.Enqueue(ctx, tx, &Outgoing{EmpresaID: r.sender.ID, Tipo: "dte", To: r.to.Address, Subject: "DTE", Text: "Adjunto."})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for {
		got, err := r.st.GetCorreo(ctx, r.sender.ID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Estado == Enviado {
			return time.Since(start)
		}
		if got.Estado != Pendiente || time.Since(start) > limit {
			t.Fatalf("the mail is %s (%s) after %s", got.Estado, got.LastError, time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSendsNotStalledByMailboxes is issue 30's scenario: more companies
// whose IMAP servers accept and never answer than there are mailbox
// workers, read every tick, while another company sends mail. Its sends
// take at most twice their time alone (with the reads in the mail queue,
// each hanging read held a worker for the 60 s dial timeout and a send
// took up to a minute).
func TestSendsNotStalledByMailboxes(t *testing.T) {
	t.Parallel()
	pit := newTarpit(t)
	const hanging = 3 * DefaultMailboxWorkers
	// One backend: a comparison of latencies, which the queues' own
	// workers decide (storetest's QueueIsolation checks them on both).
	r := newQueueRig(t, backendtest.SQLite, hanging, pit, time.Now, IMAPConnectTimeout)
	// Alone: the median of a few sends (the job runner's latency varies
	// on a busy machine).
	median := func(limit time.Duration) time.Duration {
		var d []time.Duration
		for range 5 {
			d = append(d, r.send(t, limit))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	alone := median(10 * time.Second)
	if err := r.m.PollAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for pit.accepted() < DefaultMailboxWorkers {
		if time.Now().After(deadline) {
			t.Fatalf("the tarpit took %d connections, want the %d mailbox workers busy", pit.accepted(), DefaultMailboxWorkers)
		}
		time.Sleep(5 * time.Millisecond)
	}
	beside := median(30 * time.Second)
	t.Logf("a send alone: %s (median of 5); beside %d hanging mailboxes (%d accepted, %d mailbox workers): %s",
		alone.Round(time.Millisecond), hanging, pit.accepted(), DefaultMailboxWorkers, beside.Round(time.Millisecond))
	// 2x, with 100 ms for the runner's polling (20 ms) and the scheduler.
	if beside > 2*alone+100*time.Millisecond {
		t.Errorf("a send beside hanging mailboxes took %s, more than twice its %s alone", beside, alone)
	}
	if got := pit.accepted(); got > DefaultMailboxWorkers {
		t.Errorf("%d reads of hanging mailboxes ran at once, more than the %d mailbox workers", got, DefaultMailboxWorkers)
	}
}

// TestMailboxBackoff, on both backends: a mailbox whose reads fail is
// backed off, twice the interval doubled at each failure up to an hour,
// with the category of its failure and no detail; the periodic read
// passes it by until then; a read that works clears it. Its reads give
// up at the connect timeout, well before the call's.
func TestMailboxBackoff(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, testMailboxBackoff)
}

func testMailboxBackoff(t *testing.T, b backendtest.Backend) {
	pit := newTarpit(t)
	var mu sync.Mutex
	clock := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	const connect = 300 * time.Millisecond
	r := newQueueRig(t, b, 1, pit, now, connect)
	ctx := context.Background()
	id := r.hanging[0].ID
	var waits []time.Duration
	for range 8 {
		start := time.Now()
		_, err := r.m.Poll(ctx, id)
		var mbErr *MailboxError
		if !errors.As(err, &mbErr) || email.Category(err) != email.CategoryTimeout {
			t.Fatalf("a read of the hanging mailbox: %v, want a MailboxError in category timeout", err)
		}
		if took := time.Since(start); took > connect+2*time.Second {
			t.Fatalf("a read of the hanging mailbox took %s, want about the %s connect timeout", took, connect)
		}
		b, err := r.st.GetBuzon(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if b.UltimoError != email.CategoryTimeout || !b.UltimoIntento.Equal(now()) {
			t.Fatalf("the mailbox's state: %+v", b)
		}
		waits = append(waits, b.Proximo.Sub(now()))
		if len(waits) == 1 {
			// Backed off: the periodic read queues nothing.
			if err := r.m.PollAll(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if n := pit.accepted(); n != 1 {
				t.Fatalf("a backed-off mailbox was dialled again: %d connections", n)
			}
		}
		advance(b.Proximo.Sub(now()))
		if len(waits) == 3 {
			break // the long waits are computed, not slept through
		}
	}
	for f := 4; f <= 8; f++ {
		waits = append(waits, r.m.Backoff(f))
	}
	want := []time.Duration{2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute, 32 * time.Minute, time.Hour, time.Hour, time.Hour}
	if !slices.Equal(waits, want) {
		t.Errorf("the waits after each failure: %v, want %v", waits, want)
	}
}

// TestFailingMailboxesShareCapped, on both backends: mailboxes whose
// last read failed take at most half the mailbox workers at once (one of
// two): a second such read while one hangs gives way at once without
// dialling, and a mailbox that works is never held back.
func TestFailingMailboxesShareCapped(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, testFailingMailboxesShareCapped)
}

func testFailingMailboxesShareCapped(t *testing.T, b backendtest.Backend) {
	pit := newTarpit(t)
	r := newQueueRig(t, b, 2, pit, time.Now, time.Second)
	ctx := context.Background()
	for _, e := range r.hanging {
		b := &store.Buzon{EmpresaID: e.ID, Fallos: 1, UltimoError: email.CategoryTimeout}
		if err := r.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.PutBuzon(ctx, b) }); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- r.m.pollCompany(ctx, pollCompanyArgs{EmpresaID: r.hanging[0].ID}) }()
	deadline := time.Now().Add(5 * time.Second)
	for pit.accepted() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the first failing mailbox was not dialled")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := r.m.pollCompany(ctx, pollCompanyArgs{EmpresaID: r.hanging[1].ID}); err != nil {
		t.Fatal(err)
	}
	if took, n := time.Since(start), pit.accepted(); took > 500*time.Millisecond || n != 1 {
		t.Errorf("a second failing mailbox beside one that hangs: %s, %d connections; want it to give way at once", took, n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Its place free again, the second one is read (and fails).
	if err := r.m.pollCompany(ctx, pollCompanyArgs{EmpresaID: r.hanging[1].ID}); err != nil || pit.accepted() != 2 {
		t.Errorf("the second failing mailbox once the place is free: %v, %d connections", err, pit.accepted())
	}
}
