package billing

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/dtekit/dtekit/billing/internal/alerts"
	"github.com/dtekit/dtekit/billing/internal/cesiones"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/billing/internal/inbox"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// Config builds a Service. Store and Keyring are required; every other
// field's zero value is its production default (the field says which).
// What runs by default is turned off explicitly, never by a zero:
// Mail.Off, or a negative budget in Workers. Submission, the one
// subsystem off by default, is turned on by giving its settings.
type Config struct {
	// Store keeps every record and runs the background jobs (required).
	Store store.Store
	// Keyring seals certificate keys and webhook secrets at rest
	// (required).
	Keyring *Keyring
	// TrustedKeys verifies the SII's signature (FRMA) over registered
	// CAFs. Nil means caf.SIIKeys(); tests pass a test authority's Keys.
	TrustedKeys caf.TrustedKeys
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives operational messages (ids, never bodies or
	// secrets); nil discards them.
	Logger *slog.Logger
	// IdempotencyTTL is how long completed Idempotency-Keys are kept;
	// zero means 24 hours (contract §8).
	IdempotencyTTL time.Duration
	// Delivery configures webhook delivery (SSRF guard, retry policy);
	// the zero value is the production setting.
	Delivery DeliveryConfig
	// Submission turns on the submission of documents to the SII and
	// configures it (see SubmitConfig); nil means this process submits
	// nothing.
	Submission *SubmitConfig
	// RecoveryAfter is how old a borrador emission must be before the
	// recovery job finishes it; zero means 30 seconds.
	RecoveryAfter time.Duration
	// Workers sets how many background jobs of each kind of work this
	// process runs at once; the zero value is the production setting.
	Workers Workers
	// SignerPolicy says who may sign what the companies receive, as
	// "dtekit verify --signer" does: the EnvioDTE files of suppliers
	// (AuthorizedSigners keyed by the emisor's RUT, SignerIsRutEnvia,
	// ValidAtSigning) and the answers of customers (AuthorizedSigners
	// keyed by the receptor answering, ValidAtSigning). Its Keys are not
	// read (TrustedKeys are). The zero value checks no signer.
	SignerPolicy dte.VerifyOptions
	// Mail configures the mail of every company: reading its mailbox
	// and sending its documents and answers (see MailConfig); each
	// company's servers are its own settings (Mail.UpdateSettings).
	Mail MailConfig
	// Limits caps the clientes, productos and CAFs one company may hold;
	// the zero value is the production setting.
	Limits Limits
	// Inbox bounds what every company's inbox keeps (see InboxConfig);
	// the zero value is the production default.
	Inbox InboxConfig
}

// Defaults of Config.
const (
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultRecoveryAfter  = 30 * time.Second
)

// Service is the billing application. Build it with New; it is safe for
// concurrent use.
type Service struct {
	// The resources, as the REST API groups them.
	Documents *DocumentService
	Envelopes *EnvelopeService
	Received  *ReceivedService
	Catalog   *CatalogService
	CAFs      *CAFService
	Company   *CompanyService
	Mail      *MailService
	Webhooks  *WebhookService
	Keys      *KeyService
	Cesiones  *CesionService
	// ConsoleSessions keeps the web console's sessions (no API route).
	ConsoleSessions *ConsoleSessionService

	cfg  Config
	st   store.Store
	cafs sync.Map // CAF id → *caf.CAF, parsed once
	// issuers caches each company's data and certificate for emission.
	issuers sync.Map // empresa id → *cachedIssuer
	// group shares the commits of concurrent emissions' first
	// transactions, finishes those of their second: two leaders, so that
	// on PostgreSQL a group taking folios and a group storing signed
	// documents run at once on two connections (one and the same on a
	// store whose writes run one at a time).
	group, finishes *txGroup
	// emits counts the emissions under way, for Stop.
	emits emissions
	// recoveryUntil holds, per company id, the latest Before of a
	// committed recovery job (a time.Time; see enqueueRecovery).
	recoveryUntil sync.Map
	// onSigned runs inside transaction 2 of every emission, after the
	// document is firmado (e.g. to enqueue its submission to the SII).
	onSigned []func(ctx context.Context, tx store.Tx, d *store.DTE) error
	keys     *Keyring
	trust    caf.TrustedKeys
	now      func() time.Time
	log      *slog.Logger
	certs    certCache
	ttl      time.Duration
	recAge   time.Duration
	// recDelay is how long after the end of its window a recovery job
	// runs: RecoveryAfter, or groupTimeout when longer.
	recDelay time.Duration
	dlv      *delivery.Deliverer
	// alerts records caf.low_stock and certificado.expiring.
	alerts *alerts.Alerts
	// sub submits documents to the SII; nil when Config.Submission is.
	sub *submission.Submitter
	// outbox records events and fans them out to webhooks.
	outbox *outbox.Outbox
	// inbox receives suppliers' documents and customers' answers.
	inbox *inbox.Inbox
	// mailer sends and reads each company's mail.
	mailer *mailer.Mailer
	// ces cedes documents to factoring companies.
	ces *cesiones.Room
	// mailDial dials every mail connection under the address and port
	// rules of Config.Mail.
	mailDial email.DialFunc
	// siiTokens caches the tokens of the registry clients.
	siiTokens *sii.TokenCache
	// siiOutcomes, deliveryFailures, documentMails and answerMails count
	// what Counts reports.
	siiOutcomes, deliveryFailures, documentMails, answerMails tally
}

// New builds a Service from cfg.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("billing: Config.Store is required")
	}
	if cfg.Keyring == nil {
		return nil, errors.New("billing: Config.Keyring is required")
	}
	s := &Service{cfg: cfg, st: cfg.Store, keys: cfg.Keyring, trust: cfg.TrustedKeys, now: cfg.Now, log: cfg.Logger,
		ttl: cfg.IdempotencyTTL, recAge: cfg.RecoveryAfter}
	s.resources()
	s.group = newTxGroup(cfg.Store, groupLinger, s.enqueueRecovery)
	s.finishes = newTxGroup(cfg.Store, groupLinger, nil)
	if sw, ok := cfg.Store.(store.SerialWriter); ok && sw.SerialWrites() {
		// One leader: two would only take turns at the one writer, each
		// with a commit of its own.
		s.finishes = s.group
	}
	if s.trust == nil {
		s.trust = caf.SIIKeys()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.ttl <= 0 {
		s.ttl = DefaultIdempotencyTTL
	}
	if s.recAge <= 0 {
		s.recAge = DefaultRecoveryAfter
	}
	s.recDelay = max(s.recAge, groupTimeout)
	s.outbox = outbox.New(s.now)
	s.dlv = s.newDeliverer(cfg.Delivery)
	s.alerts = alerts.New(alerts.Config{Store: s.st, Outbox: s.outbox, Now: s.now})
	s.newMail()
	if cfg.Submission != nil {
		s.sub = s.newSubmitter(*cfg.Submission)
		s.onSigned = append(s.onSigned, s.sub.Signed)
	}
	s.onSigned = append(s.onSigned, s.mailOnSigned)
	s.ces = s.newCesiones()
	if err := s.registerJobs(); err != nil {
		return nil, err
	}
	return s, nil
}
