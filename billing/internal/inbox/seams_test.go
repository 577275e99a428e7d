package inbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/internal/periodic"
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
// room's signer policy, and every file is acknowledged at intake unless
// noAcuse is set.
type fakeTenants struct {
	rm      *room
	creds   *dtetest.Creds
	noAcuse bool
}

func (f fakeTenants) SigningCert(context.Context, string) (*signer.Certificate, error) {
	return f.creds.Cert, nil
}

func (f fakeTenants) VerifyOptions(context.Context, string) (dte.VerifyOptions, error) {
	vo := f.rm.policy
	vo.Keys = f.creds.Keys
	return vo, nil
}

func (f fakeTenants) AutoAcuse(context.Context, string) bool { return !f.noAcuse }

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

// TestAutoAcuseSeam, on both backends: a file received while the
// company's Tenants says it acknowledges at intake queues one acuse job
// in the maintenance queue, in the file's transaction; received while it
// says no, the file is recorded all the same and queues none.
func TestAutoAcuseSeam(t *testing.T) {
	t.Parallel()
	ans := fixtureAnswers(t)
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			tenants := &fakeTenants{creds: ans.creds}
			rm := newRoom(t, be.open(t), ans.creds, Config{})
			tenants.rm = rm
			rm.ib.cfg.Tenants = tenants
			declareMaintenance(t, rm.st)
			queued := func() int64 {
				t.Helper()
				depth, err := rm.st.Jobs().QueueDepth(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for _, c := range depth[periodic.Queue] {
					n += c
				}
				return n
			}
			if _, err := rm.ib.Intake(ctx, rm.empresa, []byte("not xml 1"), Source{Origen: OrigenUpload}); err != nil {
				t.Fatal(err)
			}
			if n := queued(); n != 1 {
				t.Errorf("a file received with the acknowledgment on: %d jobs queued, want its acuse", n)
			}
			tenants.noAcuse = true
			res, err := rm.ib.Intake(ctx, rm.empresa, []byte("not xml 2"), Source{Origen: OrigenUpload})
			if err != nil || res.Duplicate {
				t.Fatalf("a file received with the acknowledgment off: %+v, %v", res, err)
			}
			if n := queued(); n != 1 {
				t.Errorf("a file received with the acknowledgment off: %d jobs queued, want only the first file's", n)
			}
		})
	}
}
