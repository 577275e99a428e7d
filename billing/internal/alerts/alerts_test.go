package alerts

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
	"github.com/dtekit/dtekit/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is an Alerts over a fresh store alone, with one company and an
// injected clock.
type fixture struct {
	a       *Alerts
	st      store.Store
	clock   *clocktest.Clock
	empresa string
}

func newFixture(t *testing.T, b backendtest.Backend, start time.Time) *fixture {
	t.Helper()
	ctx := context.Background()
	st := b.NewStore(t, store.JobsConfig{})
	clock := clocktest.New(start)
	// The events' deliveries are queued, for no worker here.
	if err := st.Jobs().DeclareQueue(outbox.DeliverQueue, 0); err != nil {
		t.Fatal(err)
	}
	a := New(Config{Store: st, Outbox: outbox.New(clock.Now), Now: clock.Now})
	e := &store.Empresa{Rut: "76192083-9", RazonSocial: "Comercial Los Andes SpA", Ambiente: "certificacion"}
	if err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	return &fixture{a: a, st: st, clock: clock, empresa: e.ID}
}

// subscribe registers an active webhook of the company for one event
// type (its secret is never opened here) and returns its id.
func (f *fixture) subscribe(t *testing.T, typ webhook.EventType) string {
	t.Helper()
	w := &store.Webhook{EmpresaID: f.empresa, URL: "https://hooks.example.com/dtekit", Events: []string{string(typ)},
		Secret: []byte("sealed"), IsActive: true}
	if err := f.st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error { return tx.InsertWebhook(ctx, w) }); err != nil {
		t.Fatal(err)
	}
	return w.ID
}

// deliveries returns the deliveries of a webhook.
func (f *fixture) deliveries(t *testing.T, webhookID string) []store.Delivery {
	t.Helper()
	p, err := f.st.ListDeliveries(context.Background(), f.empresa, webhookID, store.ListFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// eventsOf returns the company's events of one type, newest first.
func (f *fixture) eventsOf(t *testing.T, typ webhook.EventType) []store.Event {
	t.Helper()
	p, err := f.st.ListEvents(context.Background(), f.empresa, store.ListFilter{Limit: store.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Event
	for _, e := range p.Items {
		if e.Type == string(typ) {
			out = append(out, e)
		}
	}
	return out
}

// TestLowStockOncePerCrossing: 40 concurrent emissions' folio takes from a
// CAF of 50 folios cross the threshold of 20 exactly once; a new CAF lifts
// the count, and the next crossing fires again.
func TestLowStockOncePerCrossing(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
		ctx := context.Background()
		wh := f.subscribe(t, webhook.EventCAFLowStock)
		addCAF := func(desde, hasta int64) {
			err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.InsertCAF(ctx, &store.CAF{EmpresaID: f.empresa, TipoDTE: 33, FolioDesde: desde, FolioHasta: hasta,
					Ambiente: "certificacion", FechaAutorizacion: "2026-03-01", XML: []byte("<AUTORIZACION/>"), IsActive: true})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		take := func(n int) {
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
						rec, _, err := tx.TakeFolio(ctx, f.empresa, 33)
						if err != nil {
							return err
						}
						return f.a.CheckLowStock(ctx, tx, rec)
					})
					if err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
		}
		addCAF(1, 50)
		take(40) // 50 → 10 available: crosses 20 once
		evs := f.eventsOf(t, webhook.EventCAFLowStock)
		if len(evs) != 1 {
			t.Fatalf("%d caf.low_stock events, want 1", len(evs))
		}
		e, _ := webhook.ParseEvent(evs[0].Payload)
		data, err := e.CAFLowStock()
		if err != nil || data.FoliosDisponibles != 20 || data.Umbral != DefaultLowStockThreshold || data.FolioDesde != 1 || data.FolioHasta != 50 || data.TipoDTE != 33 {
			t.Fatalf("payload %+v %v", data, err)
		}
		if n := len(f.deliveries(t, wh)); n != 1 {
			t.Fatalf("%d deliveries of the crossing", n)
		}
		addCAF(51, 80) // 10 + 30 = 40 available
		take(5)        // 35: no crossing
		if n := len(f.eventsOf(t, webhook.EventCAFLowStock)); n != 1 {
			t.Fatalf("%d events without a new crossing", n)
		}
		take(20) // 15: crosses again
		if n := len(f.eventsOf(t, webhook.EventCAFLowStock)); n != 2 {
			t.Fatalf("%d events after the second crossing, want 2", n)
		}

		// The company's own threshold replaces the default.
		if as, err := f.a.Settings(ctx, f.empresa); err != nil || as.CAFLowStockThreshold != DefaultLowStockThreshold {
			t.Fatalf("default settings: %+v %v", as, err)
		}
		for _, bad := range []int64{-1, MaxLowStockThreshold + 1} {
			if _, err := f.a.UpdateSettings(ctx, f.empresa, api.AlertSettings{CAFLowStockThreshold: bad}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("threshold %d: %v", bad, err)
			}
		}
		if _, err := f.a.UpdateSettings(ctx, "no-such-empresa", api.AlertSettings{CAFLowStockThreshold: 5}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("unknown company: %v", err)
		}
		if _, err := f.a.UpdateSettings(ctx, f.empresa, api.AlertSettings{CAFLowStockThreshold: 12}); err != nil {
			t.Fatal(err)
		}
		if as, _ := f.a.Settings(ctx, f.empresa); as.CAFLowStockThreshold != 12 {
			t.Fatalf("settings after update: %+v", as)
		}
		take(3) // 12: crosses the company's threshold
		evs = f.eventsOf(t, webhook.EventCAFLowStock)
		e, _ = webhook.ParseEvent(evs[0].Payload)
		if d, _ := e.CAFLowStock(); len(evs) != 3 || d.Umbral != 12 || d.FoliosDisponibles != 12 || d.FolioDesde != 51 {
			t.Fatalf("%d events, latest %+v", len(evs), d)
		}
	})
}

// TestLowStockPerEnvironment: after the move to producción the
// certificación CAF's folios (which emission never draws from again) are
// no stock: the production CAF of 30 folios crosses the threshold of 20 on
// its own, and the event names its environment.
func TestLowStockPerEnvironment(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		f := newFixture(t, b, time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))
		ctx := context.Background()
		f.subscribe(t, webhook.EventCAFLowStock)
		err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			for _, c := range []*store.CAF{
				{EmpresaID: f.empresa, TipoDTE: 33, FolioDesde: 1, FolioHasta: 100000, Ambiente: "certificacion"},
				{EmpresaID: f.empresa, TipoDTE: 33, FolioDesde: 1, FolioHasta: 30, Ambiente: "produccion"},
			} {
				c.FechaAutorizacion, c.XML, c.IsActive = "2026-03-01", []byte("<AUTORIZACION/>"), true
				if err := tx.InsertCAF(ctx, c); err != nil {
					return err
				}
			}
			e, err := tx.GetEmpresa(ctx, f.empresa)
			if err != nil {
				return err
			}
			e.Ambiente = "produccion"
			return tx.UpdateEmpresa(ctx, e)
		})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 { // 30 → 20 available in producción
			err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				rec, _, err := tx.TakeFolio(ctx, f.empresa, 33)
				if err != nil {
					return err
				}
				return f.a.CheckLowStock(ctx, tx, rec)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		evs := f.eventsOf(t, webhook.EventCAFLowStock)
		if len(evs) != 1 {
			t.Fatalf("%d caf.low_stock events, want 1 (the certificación CAF's folios counted?)", len(evs))
		}
		e, _ := webhook.ParseEvent(evs[0].Payload)
		if d, err := e.CAFLowStock(); err != nil || d.FoliosDisponibles != 20 || d.Ambiente != "produccion" || d.FolioHasta != 30 {
			t.Fatalf("payload %+v %v", d, err)
		}
	})
}

// TestCertificadoExpiring: across days of injected clock, the daily check
// fires once at each of 30, 15, 7 and 1 days, never twice for one
// threshold, and after a gap only the nearest threshold.
func TestCertificadoExpiring(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		t0 := time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)
		notAfter := t0.Add(40 * 24 * time.Hour) // 2026-04-11 11:00 in Santiago
		f := newFixture(t, b, t0)
		ctx := context.Background()
		wh := f.subscribe(t, webhook.EventCertificadoExpiring)
		err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.PutCertificado(ctx, &store.Certificado{EmpresaID: f.empresa, RutFirmante: "13185095-6", Subject: "CN=Test",
				FechaVencimiento: notAfter, Sealed: []byte{1}, IsActive: true})
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for day := 0; day <= 41; day++ {
			f.clock.Set(t0.Add(time.Duration(day) * 24 * time.Hour))
			for range 2 { // the job may run twice a day (restart): no repeat
				if _, err := f.a.CheckCertificates(ctx); err != nil {
					t.Fatal(err)
				}
			}
			evs := f.eventsOf(t, webhook.EventCertificadoExpiring)
			if len(evs) > len(got) {
				e, _ := webhook.ParseEvent(evs[0].Payload)
				d, err := e.CertificadoExpiring()
				if err != nil || d.RutFirmante != "13185095-6" || d.FechaVencimiento != "2026-04-11" {
					t.Fatalf("day %d: payload %+v %v", day, d, err)
				}
				got = append(got, d.DiasParaVencimiento)
			}
		}
		if want := []int{30, 15, 7, 1}; len(got) != 4 || got[0] != 30 || got[1] != 15 || got[2] != 7 || got[3] != 1 {
			t.Fatalf("fired at %v days, want %v", got, want)
		}
		if n := len(f.deliveries(t, wh)); n != 4 {
			t.Fatalf("%d deliveries, want 4", n)
		}

		// A company whose check did not run from 35 to 6 days before expiry
		// hears about 7 days only, once.
		g := newFixture(t, b, t0)
		err = g.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.PutCertificado(ctx, &store.Certificado{EmpresaID: g.empresa, RutFirmante: "13185095-6", FechaVencimiento: notAfter, Sealed: []byte{1}, IsActive: true})
		})
		if err != nil {
			t.Fatal(err)
		}
		g.clock.Set(notAfter.Add(-6 * 24 * time.Hour))
		if n, err := g.a.CheckCertificates(ctx); err != nil || n != 1 {
			t.Fatalf("after a gap: %d fired, %v", n, err)
		}
		e, _ := webhook.ParseEvent(g.eventsOf(t, webhook.EventCertificadoExpiring)[0].Payload)
		if d, _ := e.CertificadoExpiring(); d.DiasParaVencimiento != 6 {
			t.Errorf("after a gap: %+v", d)
		}
	})
}
