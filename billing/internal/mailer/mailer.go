// Package mailer is the billing service's room for e-mail: the mail it
// sends for each company (its documents to their receptors, its answers to
// its suppliers) and the mailbox it reads for each company (the suppliers'
// documents, the receptors' answers).
//
// A mail is composed when it is queued, in the transaction that decides it
// (store.Correo keeps the whole message), and a job sends those bytes; a
// send cut short by a crash is sent again with the same Message-ID, which
// the receiving side deduplicates. Each company's mailbox is read by a
// periodic job: a message is handed to the intake and recorded
// (store.Mensaje) before it is flagged in the mailbox, and never deleted,
// so a crash in between reads it again and the record recognizes it.
//
// The room knows nothing of billing.Service nor of the inbox: the face is
// behind small interfaces the room declares, Tenants (a company's mail
// settings and the mail of one of its documents), Handoff (where what the
// mailbox holds goes: the intake, the answers, the quota asked before each
// message) and Counter (the face's counts for /metrics). Config.Now stays
// a function value: the clock, which tests replace.
package mailer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/periodic"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/internal/textclip"
	"github.com/dtekit/dtekit/store"
)

// States of a mail (store.Correo.Estado), as the store keeps them:
// api.EstadoCorreo's, whose doc and transition table say what each means
// and how a mail moves between them.
const (
	Pendiente = string(api.CorreoPendiente)
	Enviado   = string(api.CorreoEnviado)
	Fallido   = string(api.CorreoFallido)
	// SinDireccion is a document's mail that was never composed: no
	// address is known for its receptor (no para, no e-mail on the
	// cliente, none on the SII's list of contribuyentes).
	SinDireccion = string(api.CorreoSinDireccion)
	// SinRemitente is a document's mail that was never composed: the
	// company has no address or SMTP server to send from.
	SinRemitente = string(api.CorreoSinRemitente)
)

// Where the document job found the receptor's address (Outgoing.Via),
// and the two reasons it sends nothing: the labels of Config.Counted.
const (
	ViaPara           = "para"
	ViaCliente        = "cliente"
	ViaContribuyentes = "contribuyentes"
)

// DocumentLabels are the labels Config.Counted receives, in order.
func DocumentLabels() []string {
	return []string{ViaCliente, ViaContribuyentes, SinDireccion, SinRemitente}
}

// Queue is the queue the jobs that send mail wait in, and MailboxQueue
// the one the reads of mailboxes wait in: a mailbox that hangs holds up
// no mail being sent, and neither holds up a submission, delivery or
// maintenance job.
const (
	Queue        = "mail"
	MailboxQueue = "mailbox"
)

// DefaultWorkers is the mail queue's budget by default, and
// DefaultMailboxWorkers the mailbox queue's.
const (
	DefaultWorkers        = 2
	DefaultMailboxWorkers = 2
)

// MaxBackoff is the longest a mailbox that keeps failing waits between
// periodic reads.
const MaxBackoff = time.Hour

// IMAPConnectTimeout bounds the dial, TLS handshake and greeting of a
// read, and IMAPTimeout each later call on the mailbox.
const (
	IMAPConnectTimeout = 10 * time.Second
	IMAPTimeout        = 30 * time.Second
)

// Settings are a company's mail settings, secrets opened.
type Settings struct {
	// Direccion is the company's intercambio address: the From of its mail.
	Direccion string
	// SMTP sends the company's mail; nil means it sends none.
	SMTP *email.SMTPConfig
	// IMAP is the company's mailbox; nil means none is read.
	IMAP *email.IMAPConfig
}

// Outgoing is a mail to queue.
type Outgoing struct {
	// ID is the mail's id, chosen by the caller so that queuing the same
	// mail twice records one (empty: a new id).
	ID         string
	EmpresaID  string
	Tipo       string
	DTEID      string
	RecibidoID string
	To         string
	Subject    string
	Text       string
	// InReplyTo is the Message-ID this mail answers, when known.
	InReplyTo   string
	Attachments []email.Attachment
	// Via says where a document's address came from (ViaPara,
	// ViaCliente, ViaContribuyentes).
	Via string
}

// Source says where a file read from the mailbox came from.
type Source struct {
	MensajeID string
	From      string
	Filename  string
}

// Config builds a Mailer.
type Config struct {
	Store  store.Store
	Now    func() time.Time
	Logger *slog.Logger
	// Tenants answers what the room asks about a company.
	Tenants Tenants
	// Handoff takes what the mailbox holds.
	Handoff Handoff
	// Counted, when set, is told once per document the document job
	// handled, after its transaction commits: where its address came
	// from, or why nothing was sent (DocumentLabels).
	Counted Counter
	// Limits bound each message read (zero: email's defaults).
	Limits email.Limits
	// Every is how often each mailbox is read (default 1 minute).
	Every time.Duration
	// ConnectTimeout bounds the dial, TLS handshake and greeting of a
	// read (default IMAPConnectTimeout).
	ConnectTimeout time.Duration
	// Backoff are the pauses between send attempts (the last repeats);
	// MaxAttempts the attempts before a mail is fallido.
	Backoff     []time.Duration
	MaxAttempts int
	// Workers is the mail queue's budget in this process, and
	// MailboxWorkers the mailbox queue's.
	Workers        int
	MailboxWorkers int
}

// Tenants is what the mailer asks the face about a company.
type Tenants interface {
	// MailSettings returns the company's mail settings (nil when it has
	// none).
	MailSettings(ctx context.Context, empresaID string) (*Settings, error)
	// DocumentMail builds the mail that carries one of the company's
	// documents to its receptor (nil: no address is known; the mail is
	// then recorded SinDireccion).
	DocumentMail(ctx context.Context, empresaID, dteID string) (*Outgoing, error)
}

// Handoff takes what a company's mailbox holds: the room reads and
// records messages, the face decides what their files are.
type Handoff interface {
	// Intake receives an EnvioDTE read from the mailbox.
	Intake(ctx context.Context, empresaID string, data []byte, src Source) error
	// Reply records an answer (RespuestaDTE, EnvioRecibos) a receptor
	// sent about the company's documents.
	Reply(ctx context.Context, empresaID string, data []byte, src Source) error
	// Admit is asked before each message is read from the company's
	// mailbox: an error (the company's quota of mail kept is reached) ends
	// the read, leaving the message unread in the mailbox.
	Admit(ctx context.Context, empresaID string) error
}

// Counter counts outcomes by company and label (the face's counters
// behind /metrics).
type Counter interface {
	Add(empresaID, label string)
}

// Mailer is the room. Build it with New and register its jobs.
type Mailer struct {
	cfg Config
	st  store.Store
	now func() time.Time
	log *slog.Logger
	// failing counts the reads of failing mailboxes running in this
	// process, at most maxFailing at once, so that mailboxes that fail
	// (and may hang) leave workers to those that work.
	mu         sync.Mutex
	failing    int
	maxFailing int
}

// New builds a Mailer.
func New(cfg Config) *Mailer {
	if cfg.Every <= 0 {
		cfg.Every = time.Minute
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = IMAPConnectTimeout
	}
	if len(cfg.Backoff) == 0 {
		cfg.Backoff = []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 12
	}
	return &Mailer{cfg: cfg, st: cfg.Store, now: cfg.Now, log: cfg.Logger, maxFailing: max(1, cfg.MailboxWorkers/2)}
}

// MailID is the id of the mail kind about record id: queuing the same
// mail twice records one.
func MailID(kind, id string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte("dtekit/mail/"+kind+"/"+id)).String()
}

// ErrNoSender reports a company with no address or SMTP server to send
// from.
var ErrNoSender = errors.New("billing: the company has no mail settings to send from (correo.direccion and correo.smtp)")

// Tx is what queuing a mail needs of the caller's transaction: the
// company's mails, and the job that sends one. A store.Tx is one.
type Tx interface {
	store.MailReader
	store.MailWriter
	store.JobWriter
}

// Enqueue composes o and queues it, in tx: the mail is recorded pending
// and its send job queued. A mail whose id is recorded already is left
// alone. It returns ErrNoSender when the company cannot send mail.
func (m *Mailer) Enqueue(ctx context.Context, tx Tx, o *Outgoing) (*store.Correo, error) {
	if o.ID == "" {
		o.ID = uuid.Must(uuid.NewV7()).String()
	}
	if c, err := tx.GetCorreo(ctx, o.EmpresaID, o.ID); err == nil {
		return c, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	s, err := m.cfg.Tenants.MailSettings(ctx, o.EmpresaID)
	if err != nil {
		return nil, err
	}
	if s == nil || s.SMTP == nil || s.Direccion == "" {
		return nil, ErrNoSender
	}
	raw, msgID, err := email.Compose(email.Draft{From: s.Direccion, To: o.To, Subject: o.Subject, Text: o.Text,
		Attachments: o.Attachments, InReplyTo: o.InReplyTo, Date: m.now()})
	if err != nil {
		return nil, fmt.Errorf("billing: composing mail %s to %q: %w", o.ID, o.To, err)
	}
	c := &store.Correo{ID: o.ID, EmpresaID: o.EmpresaID, Tipo: o.Tipo, DTEID: o.DTEID, RecibidoID: o.RecibidoID, Para: o.To,
		MessageID: msgID, Estado: Pendiente, Message: raw}
	if err := tx.InsertCorreo(ctx, c); err != nil {
		return nil, err
	}
	if _, err := tx.Enqueue(ctx, sendArgs{EmpresaID: c.EmpresaID, CorreoID: c.ID}, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// SendTimeout bounds one attempt at sending a mail, from dialling the
// server to its last answer: a process killed meanwhile has its job
// rescued soon after.
const SendTimeout = 45 * time.Second

// sendArgs sends one mail.
type sendArgs struct {
	EmpresaID string `json:"empresa_id"`
	CorreoID  string `json:"correo_id"`
}

// Kind names the job.
func (sendArgs) Kind() string { return "mail.send" }

// JobOpts: one job per mail; its retries are the mail's own schedule
// (Snooze), the job's attempts cover store failures.
func (sendArgs) JobOpts() store.JobOpts {
	return store.JobOpts{Queue: Queue, MaxAttempts: 25, UniqueByArgs: true}
}

// documentArgs builds and queues the mail of one of the company's
// documents to its receptor.
type documentArgs struct {
	EmpresaID string `json:"empresa_id"`
	DTEID     string `json:"dte_id"`
}

// Kind names the job.
func (documentArgs) Kind() string { return "mail.document" }

// JobOpts: one job per document.
func (documentArgs) JobOpts() store.JobOpts {
	return store.JobOpts{Queue: Queue, MaxAttempts: 10, UniqueByArgs: true}
}

// QueueDocument queues, in tx, the mail of one of the company's documents
// to its receptor (built by a job: it signs an envelope).
func (m *Mailer) QueueDocument(ctx context.Context, tx store.JobWriter, empresaID, dteID string) error {
	_, err := tx.Enqueue(ctx, documentArgs{EmpresaID: empresaID, DTEID: dteID}, nil)
	return err
}

// pollArgs names the periodic job that queues the read of every
// mailbox.
type pollArgs struct{}

// Kind names the job.
func (pollArgs) Kind() string { return "mail.poll" }

// Register declares the mail and mailbox queues and registers the room's
// jobs.
func (m *Mailer) Register(j store.Jobs) error {
	if err := j.DeclareQueue(Queue, m.cfg.Workers); err != nil {
		return err
	}
	if err := j.DeclareQueue(MailboxQueue, m.cfg.MailboxWorkers); err != nil {
		return err
	}
	// A send is bounded by SendTimeout; the job has room for its two
	// transactions besides.
	if err := j.Register(store.Worker{Kind: sendArgs{}.Kind(), Timeout: SendTimeout + 15*time.Second, Work: func(ctx context.Context, job *store.Job) error {
		a, err := store.DecodeArgs[sendArgs](job)
		if err != nil {
			return err
		}
		return m.send(ctx, a)
	}}); err != nil {
		return err
	}
	if err := j.Register(store.Worker{Kind: documentArgs{}.Kind(), Timeout: 30 * time.Second, Work: func(ctx context.Context, job *store.Job) error {
		a, err := store.DecodeArgs[documentArgs](job)
		if err != nil {
			return err
		}
		return m.document(ctx, a)
	}}); err != nil {
		return err
	}
	if err := j.Register(store.Worker{Kind: pollCompanyArgs{}.Kind(), Timeout: 2 * time.Minute, Work: func(ctx context.Context, job *store.Job) error {
		a, err := store.DecodeArgs[pollCompanyArgs](job)
		if err != nil {
			return err
		}
		return m.pollCompany(ctx, a)
	}}); err != nil {
		return err
	}
	return periodic.Register(j, periodic.Job{Args: pollArgs{}, Every: m.cfg.Every, Timeout: time.Minute, Queue: MailboxQueue, Run: m.PollAll})
}

// document builds the mail of a document and queues it. A document that
// cannot be mailed (no address for its receptor, no sender) is never
// left silent: its mail is recorded in a state that says why (the
// document's read model shows it), logged and counted.
func (m *Mailer) document(ctx context.Context, a documentArgs) error {
	o, err := m.cfg.Tenants.DocumentMail(ctx, a.EmpresaID, a.DTEID)
	if err != nil {
		return err
	}
	if o == nil {
		return m.unsent(ctx, a, "", SinDireccion,
			"no address for the receptor: no e-mail on the cliente with its RUT, none on the SII's list of contribuyentes")
	}
	o.ID = MailID("dte", a.DTEID)
	noSender := false
	err = m.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := m.Enqueue(ctx, tx, o); err != nil {
			if !errors.Is(err, ErrNoSender) {
				return err
			}
			noSender = true
			return nil
		}
		return tx.CompleteJob(ctx)
	})
	if err != nil {
		return err
	}
	if noSender {
		return m.unsent(ctx, a, o.To, SinRemitente,
			"the company has no mail settings to send from (correo.direccion and correo.smtp)")
	}
	m.count(a.EmpresaID, o.Via)
	return nil
}

// unsent records a document's mail that is not sent, in state estado
// with why, then logs and counts it; a document whose mail is recorded
// already is left as it is.
func (m *Mailer) unsent(ctx context.Context, a documentArgs, para, estado, why string) error {
	recorded := false
	err := m.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		id := MailID("dte", a.DTEID)
		if _, err := tx.GetCorreo(ctx, a.EmpresaID, id); err == nil {
			return tx.CompleteJob(ctx)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		c := &store.Correo{ID: id, EmpresaID: a.EmpresaID, Tipo: "dte", DTEID: a.DTEID, Para: para, Estado: estado, LastError: why}
		if err := tx.InsertCorreo(ctx, c); err != nil {
			return err
		}
		recorded = true
		return tx.CompleteJob(ctx)
	})
	if err != nil || !recorded {
		return err
	}
	m.log.Warn("billing: a document was not mailed to its receptor", "empresa_id", a.EmpresaID, "dte_id", a.DTEID, "estado", estado, "reason", why)
	m.count(a.EmpresaID, estado)
	return nil
}

// count reports a document job's outcome to Config.Counted.
func (m *Mailer) count(empresaID, label string) {
	if m.cfg.Counted != nil && label != "" {
		m.cfg.Counted.Add(empresaID, label)
	}
}

// send makes one attempt at a mail. A temporary failure waits its turn in
// the schedule; a permanent one, or the last attempt, leaves it fallido.
func (m *Mailer) send(ctx context.Context, a sendArgs) error {
	c, err := m.st.GetCorreo(ctx, a.EmpresaID, a.CorreoID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Estado != Pendiente {
		return nil
	}
	s, err := m.cfg.Tenants.MailSettings(ctx, a.EmpresaID)
	if err != nil {
		return err
	}
	var sendErr error
	if s == nil || s.SMTP == nil || s.Direccion == "" {
		sendErr = ErrNoSender
	} else {
		cfg := *s.SMTP
		cfg.Timeout = SendTimeout
		sendErr = email.Send(ctx, cfg, s.Direccion, []string{c.Para}, c.Message)
	}
	var wait time.Duration
	err = m.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetCorreo(ctx, a.EmpresaID, a.CorreoID)
		if err != nil {
			return err
		}
		if cur.Estado != Pendiente {
			return nil
		}
		cur.Attempts++
		cur.UpdatedAt = time.Time{}
		switch {
		case sendErr == nil:
			cur.Estado, cur.SentAt, cur.LastError = Enviado, m.now().UTC(), ""
		case errors.Is(sendErr, ErrNoSender) || email.IsPermanent(sendErr) || cur.Attempts >= m.cfg.MaxAttempts:
			cur.Estado, cur.LastError = Fallido, tenantError(sendErr)
		default:
			cur.LastError = tenantError(sendErr)
			wait = m.cfg.Backoff[min(cur.Attempts-1, len(m.cfg.Backoff)-1)]
		}
		if err := tx.UpdateCorreo(ctx, cur); err != nil {
			return err
		}
		if wait > 0 {
			return nil
		}
		return tx.CompleteJob(ctx)
	})
	if err != nil {
		return err
	}
	if sendErr != nil {
		m.log.Warn("billing: sending a mail failed", "empresa_id", a.EmpresaID, "correo_id", a.CorreoID, "category", email.Category(sendErr),
			"error", sendErr.Error(), "retry_in", wait.String())
	}
	if wait > 0 {
		return store.Snooze(wait)
	}
	return nil
}

// limit cuts text from outside (a server's answer, a message's headers)
// to n bytes of valid UTF-8, as the store keeps it.
func limit(s string, n int) string { return textclip.Clip(s, n) }

// tenantError is what the company is shown of a failed send: the
// failure's category (email.Category) and a sentence of ours, never the
// server's words nor an address, which go to the log.
func tenantError(err error) string {
	if errors.Is(err, ErrNoSender) {
		return err.Error()
	}
	c := email.Category(err)
	return c + ": " + categoryText[c]
}

// categoryText explains each category to the company.
var categoryText = map[string]string{
	email.CategoryDNS:      "the mail server's name does not resolve",
	email.CategoryRefused:  "the mail server cannot be reached (connection refused, or an address mail may not reach)",
	email.CategoryTimeout:  "the mail server did not answer in time",
	email.CategoryTLS:      "the secure connection to the mail server failed (TLS, its certificate, or STARTTLS not offered)",
	email.CategoryAuth:     "the mail server refused the user or password",
	email.CategoryRejected: "the mail server refused the request",
}

// PollAll queues the read of the mailbox of every company that has one:
// one job per company, so a mailbox that is slow or hangs holds up no
// other company's (each read is bounded by the IMAP timeouts and its
// job's). A company whose read is still queued or running gets no second
// one, and one whose mailbox is backed off (store.Buzon.Proximo) none.
func (m *Mailer) PollAll(ctx context.Context) error {
	now := m.now()
	return periodic.EachEmpresa(ctx, m.st, func(e *store.Empresa) error {
		s, err := m.cfg.Tenants.MailSettings(ctx, e.ID)
		if err != nil {
			m.log.Warn("billing: a company's mail settings cannot be read", "empresa_id", e.ID, "error", err.Error())
			return nil
		}
		if s == nil || s.IMAP == nil {
			return nil
		}
		if b, err := m.st.GetBuzon(ctx, e.ID); err == nil && b.Proximo.After(now) {
			return nil
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return m.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.Enqueue(ctx, pollCompanyArgs{EmpresaID: e.ID}, nil)
			return err
		})
	})
}

// pollCompanyArgs reads one company's mailbox.
type pollCompanyArgs struct {
	EmpresaID string `json:"empresa_id"`
}

// Kind names the job.
func (pollCompanyArgs) Kind() string { return "mail.poll_company" }

// JobOpts: one read per company at a time; a failed read waits for the
// next tick (and the mailbox's backoff) rather than retrying.
func (pollCompanyArgs) JobOpts() store.JobOpts {
	return store.JobOpts{Queue: MailboxQueue, MaxAttempts: 1, UniqueByArgs: true}
}

// pollCompany is the job that reads one company's mailbox. A mailbox
// that failed its last read takes one of the few places for failing
// mailboxes (half the workers); without one it waits for a later tick.
func (m *Mailer) pollCompany(ctx context.Context, a pollCompanyArgs) error {
	b, err := m.st.GetBuzon(ctx, a.EmpresaID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if b != nil && b.Proximo.After(m.now()) {
		return nil
	}
	if b != nil && b.Fallos > 0 {
		if !m.acquireFailing() {
			return nil
		}
		defer m.releaseFailing()
	}
	// Poll records a failure at the mailbox in its state and logs it; any
	// other failure (the settings, the store, the quota) is logged here.
	if _, err := m.Poll(ctx, a.EmpresaID); err != nil {
		if mbErr := (*MailboxError)(nil); !errors.As(err, &mbErr) {
			m.log.Warn("billing: reading a company's mailbox failed", "empresa_id", a.EmpresaID, "error", err.Error())
		}
	}
	return nil
}

func (m *Mailer) acquireFailing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failing >= m.maxFailing {
		return false
	}
	m.failing++
	return true
}

func (m *Mailer) releaseFailing() {
	m.mu.Lock()
	m.failing--
	m.mu.Unlock()
}

// MailboxError is a read that failed at the mailbox (the server, the
// network, the settings) rather than in the store: what backs the
// mailbox off. email.Category names it.
type MailboxError struct{ Err error }

func (e *MailboxError) Error() string { return e.Err.Error() }
func (e *MailboxError) Unwrap() error { return e.Err }

// Backoff is the pause before the next periodic read of a mailbox that
// failed fallos reads in a row: twice the interval, doubled at each
// failure, at most MaxBackoff.
func (m *Mailer) Backoff(fallos int) time.Duration {
	d := m.cfg.Every
	for range min(fallos, 20) {
		d *= 2
		if d >= MaxBackoff {
			return MaxBackoff
		}
	}
	return d
}

// record keeps the outcome of a read in the mailbox's state: a read that
// worked clears it, a mailbox failure backs the mailbox off; a failure
// of the store changes nothing.
func (m *Mailer) record(ctx context.Context, empresaID string, readErr error) {
	var mbErr *MailboxError
	if readErr != nil && !errors.As(readErr, &mbErr) {
		return
	}
	now := m.now().UTC()
	err := m.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		b, err := tx.GetBuzon(ctx, empresaID)
		if errors.Is(err, store.ErrNotFound) {
			b, err = &store.Buzon{EmpresaID: empresaID}, nil
		}
		if err != nil {
			return err
		}
		b.UltimoIntento, b.UpdatedAt = now, time.Time{}
		if readErr == nil {
			b.Fallos, b.UltimoError, b.UltimaLectura, b.Proximo = 0, "", now, time.Time{}
		} else {
			b.Fallos++
			b.UltimoError = email.Category(readErr)
			b.Proximo = now.Add(m.Backoff(b.Fallos))
		}
		return tx.PutBuzon(ctx, b)
	})
	if err != nil {
		m.log.Warn("billing: recording a mailbox's state failed", "empresa_id", empresaID, "error", err.Error())
	}
	if readErr != nil {
		m.log.Warn("billing: reading a company's mailbox failed", "empresa_id", empresaID, "category", email.Category(readErr),
			"error", readErr.Error())
	}
}

// MaxPerPoll bounds the messages one read of a mailbox takes.
const MaxPerPoll = 50

// Poll reads the company's mailbox once: each new message is handed to
// the intake, recorded, then flagged in the mailbox. A message that cannot
// be read within the limits is recorded as rechazado (with why) and
// flagged too, never retried forever.
//
// The outcome is recorded in the mailbox's state (store.Buzon): a failure
// at the mailbox, returned as a *MailboxError, backs it off. The result
// counts the messages taken, those skipped as read before and those
// refused.
func (m *Mailer) Poll(ctx context.Context, empresaID string) (*api.LecturaCorreo, error) {
	s, err := m.cfg.Tenants.MailSettings(ctx, empresaID)
	if err != nil || s == nil || s.IMAP == nil {
		return &api.LecturaCorreo{}, err
	}
	out, err := m.read(ctx, empresaID, *s.IMAP)
	m.record(ctx, empresaID, err)
	return out, err
}

// read is one read of a mailbox.
func (m *Mailer) read(ctx context.Context, empresaID string, cfg email.IMAPConfig) (*api.LecturaCorreo, error) {
	cfg.ConnectTimeout, cfg.Timeout = m.cfg.ConnectTimeout, IMAPTimeout
	mb, err := email.DialIMAP(ctx, cfg)
	if err != nil {
		return nil, &MailboxError{err}
	}
	defer mb.Close()
	lim := m.cfg.Limits
	if lim.MaxMessageBytes == 0 {
		lim.MaxMessageBytes = email.DefaultLimits().MaxMessageBytes
	}
	out := &api.LecturaCorreo{}
	// One message at a time: at most one body (MaxMessageBytes) is held,
	// and each is marked before the next is fetched, so the search does
	// not list it again.
	for range MaxPerPoll {
		if err := m.cfg.Handoff.Admit(ctx, empresaID); err != nil {
			return out, err
		}
		msgs, err := mb.Unprocessed(ctx, 1, lim.MaxMessageBytes)
		if err != nil {
			return out, &MailboxError{err}
		}
		if len(msgs) == 0 {
			break
		}
		f := msgs[0]
		refused, dup, err := m.take(ctx, empresaID, f, lim)
		if err != nil {
			// The intake failed (the store, say): leave the message for
			// the next read.
			return out, err
		}
		switch {
		case dup:
			out.Repetidos++
		case refused:
			out.Rechazados++
		default:
			out.Leidos++
		}
		if err := mb.MarkProcessed(ctx, f.UID); err != nil {
			return out, &MailboxError{err}
		}
	}
	return out, nil
}

// take hands one message to the intake and records it. It reports
// whether the message was refused and whether it was read before.
func (m *Mailer) take(ctx context.Context, empresaID string, f email.Fetched, lim email.Limits) (refused, dup bool, err error) {
	var msg *email.Message
	var why string
	if f.TooLarge {
		why = fmt.Sprintf("the message is %d bytes, more than the %d read", f.Size, lim.MaxMessageBytes)
	} else {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		msg, err = email.Parse(pctx, bytes.NewReader(f.Raw), lim)
		cancel()
		if err != nil {
			why = "the message cannot be read: " + err.Error()
			msg = nil
		}
	}
	digest := fmt.Sprintf("uid:%d:size:%d", f.UID, f.Size)
	if msg != nil {
		digest = msg.Digest
	} else if f.Raw != nil {
		h := sha256.Sum256(f.Raw)
		digest = hex.EncodeToString(h[:])
	}
	rec := &store.Mensaje{ID: MailID("mensaje", empresaID+"/"+digest), EmpresaID: empresaID, Digest: digest}
	if msg != nil {
		rec.MessageID, rec.From, rec.Subject = limit(msg.MessageID, 998), limit(msg.From, 254), limit(msg.Subject, 998)
	}
	// The digest decides: a different message that reuses a Message-ID is
	// another message.
	if _, err := m.st.FindMensaje(ctx, empresaID, digest); err == nil {
		return false, true, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, false, err
	}
	if why == "" {
		var notes []string
		n, overQuota := 0, false
		for _, a := range msg.Attachments {
			kind := rootOf(a.Data)
			src := Source{MensajeID: rec.ID, From: msg.From, Filename: a.Filename}
			switch kind {
			case "EnvioDTE":
				err = m.cfg.Handoff.Intake(ctx, empresaID, a.Data, src)
			case "RespuestaDTE", "EnvioRecibos":
				err = m.cfg.Handoff.Reply(ctx, empresaID, a.Data, src)
			default:
				continue
			}
			n++
			if err != nil {
				if isStoreFailure(err) {
					return false, false, err
				}
				if e := fault.As(err); e.Code == fault.LimitExceeded {
					overQuota = true
				}
				notes = append(notes, fmt.Sprintf("%s (%s): %v", a.Filename, kind, err))
				continue
			}
			notes = append(notes, fmt.Sprintf("%s (%s)", a.Filename, kind))
		}
		notes = append(notes, msg.Warnings...)
		switch {
		case n == 0:
			why = "no EnvioDTE, RespuestaDTE or EnvioRecibos attached"
			if len(notes) > 0 {
				why += ": " + strings.Join(notes, "; ")
			}
		case overQuota:
			// A file the company's quota refused is not dropped in
			// silence: the mail is refused, saying so.
			why = "over the company's quota of received files: " + strings.Join(notes, "; ")
		default:
			rec.Estado, rec.Detalle = "procesado", limit(strings.Join(notes, "; "), 2000)
		}
	}
	if why != "" {
		rec.Estado, rec.Detalle = "rechazado", limit(why, 2000)
		m.log.Warn("billing: a mail was refused", "empresa_id", empresaID, "uid", f.UID, "size", f.Size, "reason", rec.Detalle)
	}
	err = m.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		err := tx.InsertMensaje(ctx, rec)
		if store.ConflictOn(err) == store.ConstraintMensaje {
			dup = true
			return nil
		}
		return err
	})
	return rec.Estado == "rechazado", dup, err
}

// isStoreFailure reports whether err is the store failing (to retry the
// message later) rather than the file being bad.
func isStoreFailure(err error) bool {
	switch fault.KindOf(err) {
	case fault.KindInternal, fault.KindUnavailable:
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// rootOf names the root element of an XML file, "" when it is not XML.
func rootOf(data []byte) string {
	d := xml.NewDecoder(io.LimitReader(bytes.NewReader(data), 64<<10))
	d.Strict = false
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for range 64 {
		tok, err := d.RawToken()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local
		}
	}
	return ""
}
