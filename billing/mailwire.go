package billing

import (
	"context"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/internal/inbox"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// newMail builds the inbox and mail rooms and wires them to each other
// through the face (seams.go).
func (s *Service) newMail() {
	s.siiTokens = sii.NewTokenCache()
	workers := budget(s.cfg.Workers.Mail, DefaultMailWorkers)
	mailboxWorkers := budget(s.cfg.Workers.Mailbox, DefaultMailboxWorkers)
	if s.cfg.Mail.Off {
		workers, mailboxWorkers = 0, 0
	}
	s.mailDial = s.cfg.Mail.mailDialer()
	s.mailer = mailer.New(mailer.Config{Store: s.st, Now: s.now, Logger: s.log, Tenants: tenants{s}, Handoff: mailHandoff{s},
		Counted: &s.documentMails, Limits: s.cfg.Mail.Limits, Every: s.cfg.Mail.Every, Backoff: s.cfg.Mail.Backoff, Workers: workers,
		MailboxWorkers: mailboxWorkers})
	ic := inbox.Config{Store: s.st, Outbox: s.outbox, Now: s.now, Logger: s.log, Tenants: tenants{s}, Outgoing: answerMail{s},
		Counted: &s.answerMails}
	if s.cfg.Submission != nil {
		ic.Registry = registry{s}
	}
	ic.Limits, ic.PurgeEvery = s.cfg.Inbox.limits(), s.cfg.Inbox.PurgeEvery
	s.inbox = inbox.New(ic)
}

// registryClient builds the SII registry client of a company in one
// environment (the company's current one when ambiente is ""), with its
// certificate: a received document is asked about and decided in the
// environment it belongs to.
func (s *Service) registryClient(ctx context.Context, empresaID, ambiente string) (*sii.Client, error) {
	emp, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	cert, err := s.signingCert(ctx, empresaID)
	if err != nil {
		return nil, err
	}
	if ambiente == "" {
		ambiente = emp.Ambiente
	}
	sc := s.cfg.Submission
	env := sii.Environment(ambiente)
	cfg := sii.Config{Environment: env, Certificate: cert, HTTPClient: sc.HTTPClient, Timeout: sc.Timeout, Tokens: s.siiTokens, Clock: s.now}
	if sc.Endpoints != nil {
		cfg.Endpoints = sc.Endpoints(env)
	}
	return sii.New(cfg)
}

// mailOnSigned queues, in the emission's transaction, the mail of a
// document to its receptor when the company mails at signing.
func (s *Service) mailOnSigned(ctx context.Context, tx store.Tx, d *store.DTE) error {
	return s.mailWhen(ctx, tx, d, api.EnviarAlFirmar)
}

// mailOnAccepted queues, in the transaction that records the SII's
// acceptance, the mail of a document when the company mails then.
func (s *Service) mailOnAccepted(ctx context.Context, tx store.Tx, d *store.DTE) error {
	return s.mailWhen(ctx, tx, d, api.EnviarAlAceptar)
}

// mailWhen queues the mail of d when the company's setting is when.
func (s *Service) mailWhen(ctx context.Context, tx store.Tx, d *store.DTE, when api.CuandoEnviar) error {
	if dte.TipoDTE(d.TipoDTE).IsBoleta() {
		return nil
	}
	p, err := s.correoPrefs(ctx, tx, d.EmpresaID)
	if err != nil {
		return err
	}
	if p.EnviarDTE != when || p.SMTP == nil {
		return nil
	}
	return s.mailer.QueueDocument(ctx, tx, d.EmpresaID, d.ID)
}
