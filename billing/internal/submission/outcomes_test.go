package submission

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
)

// fakeOutcomes is a test's Outcomes: it keeps what Settled was told, and
// for each document Accepted ran for, the state the document had in the
// transaction then; while fail is set, Accepted fails with it.
type fakeOutcomes struct {
	mu       sync.Mutex
	settled  []Settled
	accepted map[string]string
	fail     error
}

func (o *fakeOutcomes) Settled(s Settled) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.settled = append(o.settled, s)
}

func (o *fakeOutcomes) Accepted(ctx context.Context, tx store.Tx, d *store.DTE) error {
	if o.fail != nil {
		return o.fail
	}
	seen, err := tx.GetDTE(ctx, d.EmpresaID, d.ID)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.accepted[d.ID] = seen.Estado
	return nil
}

// TestOutcomesSeam, on both backends: a document the SII accepts runs
// Outcomes.Accepted inside the transaction that records the acceptance
// (which sees the document aceptado already), and Settled is told once
// that transaction commits; a rejected document is only told to
// Settled; when Accepted fails, the transaction rolls back whole: the
// document stays procesando and Settled is told nothing.
func TestOutcomesSeam(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b)
		out := &fakeOutcomes{accepted: map[string]string{}}
		f.sb.cfg.Outcomes = out
		ctx := context.Background()
		procesando := string(dte.EstadoProcesando)
		accepted, rejected, failing := f.addDTE(t, 1, procesando, false), f.addDTE(t, 2, procesando, false), f.addDTE(t, 3, procesando, false)
		settle := func(d *store.DTE, estado dte.Estado) error {
			return f.sb.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				locked, err := tx.GetDTEForUpdate(ctx, d.EmpresaID, d.ID)
				if err != nil {
					return err
				}
				return f.sb.transition(ctx, tx, locked, estado)
			})
		}
		if err := settle(accepted, dte.EstadoAceptado); err != nil {
			t.Fatal(err)
		}
		if err := settle(rejected, dte.EstadoRechazado); err != nil {
			t.Fatal(err)
		}
		out.fail = errors.New("the mail could not be queued")
		if err := settle(failing, dte.EstadoAceptado); !errors.Is(err, out.fail) {
			t.Fatalf("an acceptance whose Accepted fails: %v, want its error", err)
		}

		if len(out.accepted) != 1 || out.accepted[accepted.ID] != string(dte.EstadoAceptado) {
			t.Errorf("Accepted ran for %v (document → its state in the transaction), want only %s, aceptado", out.accepted, accepted.ID)
		}
		want := []Settled{{EmpresaID: f.empresa, DTEID: accepted.ID, TipoDTE: 33, Folio: 1, Estado: dte.EstadoAceptado},
			{EmpresaID: f.empresa, DTEID: rejected.ID, TipoDTE: 33, Folio: 2, Estado: dte.EstadoRechazado}}
		if len(out.settled) != len(want) || out.settled[0] != want[0] || out.settled[1] != want[1] {
			t.Errorf("Settled was told %+v, want %+v", out.settled, want)
		}
		got, err := f.st.GetDTE(ctx, f.empresa, failing.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Estado != procesando {
			t.Errorf("the document whose Accepted failed is %s, want procesando (rolled back)", got.Estado)
		}
		page, err := f.st.ListEvents(ctx, f.empresa, store.ListFilter{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		events := map[string]int{}
		for _, e := range page.Items {
			events[e.Type]++
		}
		if len(page.Items) != 2 || events["dte.accepted"] != 1 || events["dte.rejected"] != 1 {
			t.Errorf("events recorded %v, want one dte.accepted and one dte.rejected", events)
		}
	})
}
