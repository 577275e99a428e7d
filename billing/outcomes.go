package billing

import (
	"sort"
	"sync"

	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/billing/internal/inbox"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/dte"
)

// Count is one counter of Counts: how many times Label happened to the
// company EmpresaID in this process.
type Count struct {
	EmpresaID string
	Label     string
	N         uint64
}

// Counts are the service's outcome counters since this process built it,
// per company, for an operator's metrics (the server's /metrics sums them
// over companies unless told to label tenants). Each list is sorted by
// label, then company.
type Counts struct {
	// SIIOutcomes counts the documents whose review by the SII this
	// process settled, by their final estado (SIIOutcomeLabels).
	SIIOutcomes []Count
	// DeliveryFailures counts failed webhook delivery attempts, scheduled
	// and manual, by public category (DeliveryFailureLabels).
	DeliveryFailures []Count
	// DocumentMails counts the documents the mail job handled, by where
	// the receptor's address came from or why nothing was sent
	// (DocumentMailLabels).
	DocumentMails []Count
	// AnswerMails counts the answers to suppliers the inbox recorded
	// (acknowledgments, decisions, receipts), by where the supplier's
	// address came from or why nothing was mailed (AnswerMailLabels).
	AnswerMails []Count
}

// AnswerMailLabels are the labels of Counts.AnswerMails: the address
// came with the supplier's file (remitente: the mail's sender, or the
// upload's correo_emisor) or from the SII's list (contribuyentes), or the
// answer was not mailed for want of an address (sin_direccion) or of the
// company's mail settings (sin_remitente).
func AnswerMailLabels() []string { return inbox.AnswerLabels() }

// DocumentMailLabels are the labels of Counts.DocumentMails: the address
// came from the cliente's e-mail (cliente) or the SII's list
// (contribuyentes), or the document was not mailed for want of an
// address (sin_direccion) or of the company's mail settings
// (sin_remitente).
func DocumentMailLabels() []string { return mailer.DocumentLabels() }

// SIIOutcomeLabels are the labels of Counts.SIIOutcomes: the final
// states of a review (accepted, accepted with objections, rejected).
func SIIOutcomeLabels() []string {
	return []string{string(dte.EstadoAceptado), string(dte.EstadoConReparos), string(dte.EstadoRechazado)}
}

// DeliveryFailureLabels are the labels of Counts.DeliveryFailures: the
// public categories of a failed attempt, as its attempt log shows them.
func DeliveryFailureLabels() []string { return delivery.FailureCategories() }

// Counts returns the outcome counters as they stand.
func (s *Service) Counts() Counts {
	return Counts{SIIOutcomes: s.siiOutcomes.snapshot(), DeliveryFailures: s.deliveryFailures.snapshot(),
		DocumentMails: s.documentMails.snapshot(), AnswerMails: s.answerMails.snapshot()}
}

// tally counts labels per company; safe for concurrent use.
type tally struct {
	mu sync.Mutex
	n  map[tallyKey]uint64
}

type tallyKey struct{ empresaID, label string }

// Add counts one label of a company: a tally is the rooms' Counter
// (delivery's, inbox's and mailer's).
func (t *tally) Add(empresaID, label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[tallyKey]uint64{}
	}
	t.n[tallyKey{empresaID, label}]++
}

func (t *tally) snapshot() []Count {
	t.mu.Lock()
	out := make([]Count, 0, len(t.n))
	for k, n := range t.n {
		out = append(out, Count{EmpresaID: k.empresaID, Label: k.label, N: n})
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Label != out[j].Label {
			return out[i].Label < out[j].Label
		}
		return out[i].EmpresaID < out[j].EmpresaID
	})
	return out
}
