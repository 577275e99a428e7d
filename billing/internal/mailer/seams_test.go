package mailer

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/store/backendtest"
)

func TestMain(m *testing.M) { backendtest.Main(m) }

// The fakes of the room's seams, which stand in for the face in these
// tests.

// fakeTenants is the tests' Tenants: settings answers a company's mail
// settings (by its id), document the mail of a document (by its id; nil
// when no address is known).
type fakeTenants struct {
	settings func(empresaID string) (*Settings, error)
	document func(dteID string) (*Outgoing, error)
}

func (f fakeTenants) MailSettings(_ context.Context, empresaID string) (*Settings, error) {
	return f.settings(empresaID)
}

func (f fakeTenants) DocumentMail(_ context.Context, _, dteID string) (*Outgoing, error) {
	if f.document == nil {
		return nil, errors.New("this test mails no document")
	}
	return f.document(dteID)
}

// fakeHandoff is the tests' Handoff: it keeps the files handed to the
// intake and the answers, in order, and admits every message, or, when
// admit is set, as many as it holds (the company's quota of mails).
type fakeHandoff struct {
	mu      sync.Mutex
	intake  []string
	replies []string
	admit   *int
}

func (h *fakeHandoff) Intake(_ context.Context, _ string, data []byte, _ Source) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.intake = append(h.intake, string(data))
	return nil
}

func (h *fakeHandoff) Reply(_ context.Context, _ string, data []byte, _ Source) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.replies = append(h.replies, string(data))
	return nil
}

// errQuota is what fakeHandoff's Admit answers once its quota is spent.
var errQuota = errors.New("the company's quota of mails is reached")

func (h *fakeHandoff) Admit(context.Context, string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.admit == nil {
		return nil
	}
	if *h.admit == 0 {
		return errQuota
	}
	*h.admit--
	return nil
}

// fakeCounter is the tests' Counter: it keeps the labels in order.
type fakeCounter struct {
	mu     sync.Mutex
	labels []string
}

func (c *fakeCounter) Add(_, label string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.labels = append(c.labels, label)
}
