package billing

import (
	"context"
	"errors"

	"github.com/dtekit/dtekit/billing/internal/inbox"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// The face's side of the seams: each room declares, as small interfaces,
// what it asks of the face, and the face answers through the unexported
// types below (the Keyring is delivery.Sealer as it is, and each tally a
// room's Counter). The rooms never import the face, and the inbox and
// the mailer never import each other: the face carries between them.

// tenants answers the rooms' questions about a company: inbox.Tenants,
// mailer.Tenants and submission.Tenants.
type tenants struct{ s *Service }

var (
	_ inbox.Tenants      = tenants{}
	_ mailer.Tenants     = tenants{}
	_ submission.Tenants = tenants{}
)

// SigningCert opens the company's signing certificate.
func (t tenants) SigningCert(ctx context.Context, empresaID string) (*signer.Certificate, error) {
	return t.s.signingCert(ctx, empresaID)
}

// VerifyOptions is what verification trusts: the service's CAF keys and
// its signer policy, the same for every company.
func (t tenants) VerifyOptions(context.Context, string) (dte.VerifyOptions, error) {
	vo := t.s.cfg.SignerPolicy
	vo.Keys = t.s.trust
	return vo, nil
}

// AutoAcuse reports whether the company acknowledges every file at
// intake: yes unless its mail settings say no (and yes when they cannot
// be read, so no file goes unacknowledged).
func (t tenants) AutoAcuse(ctx context.Context, empresaID string) bool {
	p, err := t.s.correoPrefs(ctx, t.s.st, empresaID)
	return err != nil || p.AcuseAutomatico == nil || *p.AcuseAutomatico
}

// MailSettings returns the company's mail settings, secrets opened.
func (t tenants) MailSettings(ctx context.Context, empresaID string) (*mailer.Settings, error) {
	return t.s.mailSettings(ctx, empresaID)
}

// DocumentMail builds the mail of one of the company's documents to the
// address the face finds for its receptor.
func (t tenants) DocumentMail(ctx context.Context, empresaID, dteID string) (*mailer.Outgoing, error) {
	return t.s.documentMail(ctx, empresaID, dteID, "")
}

// registry is the inbox's Registry: the SII's registry of the company,
// through the submission settings (registryClient).
type registry struct{ s *Service }

var _ inbox.Registry = registry{}

// Client builds the company's registry client in one environment.
func (r registry) Client(ctx context.Context, empresaID, ambiente string) (*sii.Client, error) {
	return r.s.registryClient(ctx, empresaID, ambiente)
}

// answerMail is the inbox's Outgoing: an answer queued in the mailer.
type answerMail struct{ s *Service }

var _ inbox.Outgoing = answerMail{}

// QueueAnswer queues the answer m in tx, with its XML attached; a
// company that sends no mail gets its answer recorded without one (m.ID
// "").
func (a answerMail) QueueAnswer(ctx context.Context, tx store.Tx, m *inbox.Mail) error {
	_, err := a.s.mailer.Enqueue(ctx, tx, &mailer.Outgoing{ID: m.ID, EmpresaID: m.EmpresaID, Tipo: m.Tipo, RecibidoID: m.RecibidoID,
		To: m.To, Subject: m.Subject, Text: m.Text,
		Attachments: []email.Attachment{{Filename: m.Filename, ContentType: "application/xml", Data: m.XML}}})
	if errors.Is(err, mailer.ErrNoSender) {
		// Recorded without a mail: the company sends none.
		m.ID = ""
		return nil
	}
	return err
}

// mailHandoff is the mailer's Handoff: what a mailbox holds goes to the
// inbox, the mail quota is the inbox's.
type mailHandoff struct{ s *Service }

var _ mailer.Handoff = mailHandoff{}

// Intake hands an EnvioDTE read from the mailbox to the inbox.
func (h mailHandoff) Intake(ctx context.Context, empresaID string, data []byte, src mailer.Source) error {
	_, err := h.s.inbox.Intake(ctx, empresaID, data, mailSource(src))
	return err
}

// Reply hands a receptor's answer read from the mailbox to the inbox.
func (h mailHandoff) Reply(ctx context.Context, empresaID string, data []byte, src mailer.Source) error {
	_, err := h.s.inbox.Reply(ctx, empresaID, data, mailSource(src))
	return err
}

// Admit asks the inbox whether the company may keep one more mail.
func (h mailHandoff) Admit(ctx context.Context, empresaID string) error {
	return h.s.inbox.AdmitMail(ctx, empresaID)
}

// mailSource is where the inbox records a file read from the mailbox
// came from.
func mailSource(src mailer.Source) inbox.Source {
	return inbox.Source{Origen: inbox.OrigenCorreo, MensajeID: src.MensajeID, Remitente: src.From, Filename: src.Filename}
}

// issued is submission's Documents: what transaction 1 recorded of a
// document (its issuer snapshot) and the environment of its CAF.
type issued struct{ s *Service }

var _ submission.Documents = issued{}

// Emisor returns the issuer the document was emitted with.
func (issued) Emisor(d *store.DTE) (dte.Emisor, error) { return issuerOf(d) }

// Ambiente returns the document's environment (ambienteOf).
func (e issued) Ambiente(ctx context.Context, r store.Reader, d *store.DTE) (string, error) {
	return e.s.ambienteOf(ctx, r, d)
}

// siiReview is submission's Outcomes: each settled document counted for
// /metrics, and an accepted one mailed when its company mails then.
type siiReview struct{ s *Service }

var _ submission.Outcomes = siiReview{}

// Settled counts the outcome by company and state.
func (r siiReview) Settled(o submission.Settled) { r.s.siiOutcomes.Add(o.EmpresaID, string(o.Estado)) }

// Accepted queues the document's mail, in tx, when the company mails at
// acceptance.
func (r siiReview) Accepted(ctx context.Context, tx store.Tx, d *store.DTE) error {
	return r.s.mailOnAccepted(ctx, tx, d)
}
