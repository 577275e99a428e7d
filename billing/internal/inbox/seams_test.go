package inbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// The fakes of the room's seams, which stand in for the face in these
// tests.

// fakeTenants is the tests' Tenants: every company signs with the test
// certificate, verification trusts the test authority's keys with the
// room's signer policy, and every file is acknowledged at intake.
type fakeTenants struct {
	rm    *room
	creds *dtetest.Creds
}

func (f fakeTenants) SigningCert(context.Context, string) (*signer.Certificate, error) {
	return f.creds.Cert, nil
}

func (f fakeTenants) VerifyOptions(context.Context, string) (dte.VerifyOptions, error) {
	vo := f.rm.policy
	vo.Keys = f.creds.Keys
	return vo, nil
}

func (fakeTenants) AutoAcuse(context.Context, string) bool { return true }

// fakeRegistry is the tests' Registry: one fake SII per environment
// ("" is certificación, the company's), signed in with the test
// certificate; while down is set, the certification registry fails.
type fakeRegistry struct {
	fakes  map[string]*siitest.Fake
	cert   *signer.Certificate
	tokens *sii.TokenCache
	down   atomic.Bool
}

func newFakeRegistry(cert *signer.Certificate, fakes map[string]*siitest.Fake) *fakeRegistry {
	return &fakeRegistry{fakes: fakes, cert: cert, tokens: sii.NewTokenCache()}
}

func (r *fakeRegistry) Client(_ context.Context, _, ambiente string) (*sii.Client, error) {
	if ambiente == "" {
		ambiente = "certificacion"
	}
	if ambiente == "certificacion" && r.down.Load() {
		return nil, errors.New("the certification registry is down")
	}
	f, ok := r.fakes[ambiente]
	if !ok {
		return nil, fmt.Errorf("no registry for %q", ambiente)
	}
	return sii.New(sii.Config{Environment: sii.Environment(ambiente), Endpoints: f.Endpoints(), Certificate: r.cert,
		Tokens: r.tokens, Timeout: 5 * time.Second})
}

// fakeOutgoing is the tests' Outgoing: it keeps every answer queued, or,
// while noSender is set, queues none as a company without mail settings.
type fakeOutgoing struct {
	mu       sync.Mutex
	sent     []*Mail
	noSender bool
}

func (o *fakeOutgoing) QueueAnswer(_ context.Context, _ store.Tx, m *Mail) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.noSender {
		m.ID = ""
		return nil
	}
	o.sent = append(o.sent, m)
	return nil
}

// fakeCounter is the tests' Counter: it counts labels.
type fakeCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *fakeCounter) Add(_, label string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[label]++
}

func (c *fakeCounter) count(label string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[label]
}
