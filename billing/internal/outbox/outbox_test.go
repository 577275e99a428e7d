package outbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/backendtest"
	"github.com/dtekit/dtekit/webhook"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// At is the instant of the tests' clock: the event's timestamp keeps its
// second, a delivery's due time its millisecond.
var at = time.Date(2026, 3, 2, 13, 4, 5, 678_900_000, time.UTC)

// world is an Outbox over a store alone with two companies: A with three
// webhooks (one subscribed to dte.created and dte.accepted, one to
// dte.accepted only, one to dte.created but paused) and B with one
// subscribed to dte.created.
type world struct {
	o                          *Outbox
	st                         store.Store
	a, b                       string
	both, acceptedOnly, paused string
	bHook                      string
}

func newWorld(t *testing.T, b backendtest.Backend) *world {
	t.Helper()
	st := b.NewStore(t, store.JobsConfig{})
	// The delivery queue is declared and left to no worker: the jobs
	// stay where the outbox put them.
	if err := st.Jobs().DeclareQueue(DeliverQueue, 0); err != nil {
		t.Fatal(err)
	}
	w := &world{o: New(func() time.Time { return at }), st: st}
	ctx := context.Background()
	err := st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, e := range []struct {
			id  *string
			rut string
		}{{&w.a, "76192083-9"}, {&w.b, "96790240-3"}} {
			emp := &store.Empresa{Rut: e.rut, RazonSocial: "Empresa " + e.rut, Ambiente: "certificacion"}
			if err := tx.InsertEmpresa(ctx, emp); err != nil {
				return err
			}
			*e.id = emp.ID
		}
		for _, h := range []struct {
			id      *string
			empresa string
			events  []string
			active  bool
		}{
			{&w.both, w.a, []string{"dte.created", "dte.accepted"}, true},
			{&w.acceptedOnly, w.a, []string{"dte.accepted"}, true},
			{&w.paused, w.a, []string{"dte.created"}, false},
			{&w.bHook, w.b, []string{"dte.created"}, true},
		} {
			wh := &store.Webhook{EmpresaID: h.empresa, URL: "https://hooks.example.cl/" + h.empresa, Events: h.events,
				Secret: []byte("sealed"), IsActive: h.active}
			if err := tx.InsertWebhook(ctx, wh); err != nil {
				return err
			}
			*h.id = wh.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// deliveries returns the deliveries to one webhook of a company.
func (w *world) deliveries(t *testing.T, empresa, hook string) []store.Delivery {
	t.Helper()
	page, err := w.st.ListDeliveries(context.Background(), empresa, hook, store.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// deliveryJobs counts the unfinished jobs of the delivery queue.
func (w *world) deliveryJobs(t *testing.T) int64 {
	t.Helper()
	depth, err := w.st.Jobs().QueueDepth(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range depth[DeliverQueue] {
		n += c
	}
	return n
}

const dteID = "0190f1a2-3b4c-7d5e-8f60-718293a4b5c6"

var created = webhook.DTEData{ID: dteID, TipoDTE: 33, Folio: 7, Estado: "firmado", RutReceptor: "96790240-3",
	RazonSocialReceptor: "Distribuidora Ñuñoa Ltda.", MontoTotal: 119000, FechaEmision: "2026-03-02"}

// The event as every delivery sends it, written by hand from the
// contract's event shape: the clock's second, no track id yet.
const createdPayload = `{"type":"dte.created","timestamp":"2026-03-02T13:04:05Z","data":{"id":"0190f1a2-3b4c-7d5e-8f60-718293a4b5c6",` +
	`"tipo_dte":33,"folio":7,"estado":"firmado","rut_receptor":"96790240-3","razon_social_receptor":"Distribuidora Ñuñoa Ltda.",` +
	`"monto_total":119000,"fecha_emision":"2026-03-02","track_id":null}}`

// TestPublishFansOut: an event is stored with its payload frozen as the
// bytes every delivery sends, and in the same transaction gets one
// pending delivery, due at once, with its first attempt enqueued, for
// each active webhook of its company subscribed to its type: none for a
// webhook of another type, a paused one or another company's, which
// cannot read the event either.
func TestPublishFansOut(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		w := newWorld(t, b)
		ctx := context.Background()
		var ev *store.Event
		err := w.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			ev, err = w.o.Publish(ctx, tx, w.a, webhook.EventDTECreated, created)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.st.GetEvent(ctx, w.a, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != "dte.created" || string(got.Payload) != createdPayload {
			t.Errorf("stored event %s:\n%s\nwant %s:\n%s", got.Type, got.Payload, "dte.created", createdPayload)
		}
		ds := w.deliveries(t, w.a, w.both)
		if len(ds) != 1 {
			t.Fatalf("deliveries to the subscribed webhook: %+v, want one", ds)
		}
		d := ds[0]
		due := time.Date(2026, 3, 2, 13, 4, 5, 678_000_000, time.UTC)
		if d.EventID != ev.ID || d.State != store.DeliveryPending || d.Attempts != 0 || !d.NextAttemptAt.Equal(due) {
			t.Errorf("delivery %+v, want pending, no attempt, due %s, of event %s", d, due, ev.ID)
		}
		for _, h := range []struct{ name, empresa, id string }{
			{"subscribed to another type", w.a, w.acceptedOnly},
			{"paused", w.a, w.paused},
			{"of company B", w.b, w.bHook},
		} {
			if ds := w.deliveries(t, h.empresa, h.id); len(ds) != 0 {
				t.Errorf("the webhook %s has deliveries %+v, want none", h.name, ds)
			}
		}
		if _, err := w.st.GetEvent(ctx, w.b, ev.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("company B reads A's event: %v, want not found", err)
		}
		// One job waits, and it is the first attempt of that delivery
		// at its due time: enqueuing those very arguments again finds
		// it (the job is unique by its arguments).
		if n := w.deliveryJobs(t); n != 1 {
			t.Errorf("%d delivery jobs, want 1", n)
		}
		res, err := w.st.Jobs().Enqueue(ctx, DeliverArgs{EmpresaID: w.a, DeliveryID: d.ID, Attempt: 1, Due: due.UnixMilli()}, nil)
		if err != nil || !res.Duplicate {
			t.Errorf("the first attempt's job: %+v, %v; want it enqueued already", res, err)
		}
	})
}

// TestPublishRolledBack: when the caller's transaction fails after the
// event was published, neither the event nor a delivery nor a job is
// left; an event whose data does not fit its type is refused before
// anything is written.
func TestPublishRolledBack(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		w := newWorld(t, b)
		ctx := context.Background()
		failure := errors.New("the caller's next statement failed")
		err := w.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if _, err := w.o.Publish(ctx, tx, w.a, webhook.EventDTECreated, created); err != nil {
				return err
			}
			return failure
		})
		if !errors.Is(err, failure) {
			t.Fatalf("Write = %v, want the caller's failure", err)
		}
		err = w.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := w.o.Publish(ctx, tx, w.a, webhook.EventDTECreated, webhook.CAFLowStockData{TipoDTE: 33})
			return err
		})
		if err == nil {
			t.Fatal("a dte.created event carrying a CAF's data was published")
		}
		evs, err := w.st.ListEvents(ctx, w.a, store.ListFilter{})
		if err != nil || len(evs.Items) != 0 {
			t.Errorf("events after the rollback: %+v, %v; want none", evs, err)
		}
		if ds := w.deliveries(t, w.a, w.both); len(ds) != 0 {
			t.Errorf("deliveries after the rollback: %+v, want none", ds)
		}
		if n := w.deliveryJobs(t); n != 0 {
			t.Errorf("%d delivery jobs after the rollback, want none", n)
		}
	})
}

// TestPublishDTE: a document's event carries its data (its environment
// included, so that a test document is told from a real one) and, once the
// SII has answered, its tracking (track id, code, text); an answer of its
// receptor rides along in dte.receptor_* events. An event recorded with
// the caller's id is one event: recording it again fails and leaves the
// first payload and its one delivery.
func TestPublishDTE(t *testing.T) {
	t.Parallel()
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		w := newWorld(t, b)
		ctx := context.Background()
		d := &store.DTE{ID: dteID, EmpresaID: w.a, TipoDTE: 33, Folio: 7, Estado: "aceptado", RutReceptor: "96790240-3",
			RazonSocialReceptor: "Distribuidora Ñuñoa Ltda.", MontoTotal: 119000, FechaEmision: "2026-03-02", Ambiente: "produccion"}
		track, code, glosa := "4567890123", "EPR", "Envio Procesado"
		if err := SetTracking(d, api.Tracking{TrackID: &track, CodigoSII: &code, GlosaSII: &glosa}); err != nil {
			t.Fatal(err)
		}
		err := w.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			if err := w.o.PublishDTE(ctx, tx, d, webhook.EventDTEAccepted); err != nil {
				return err
			}
			return w.o.PublishReceptor(ctx, tx, d, webhook.EventDTEReceptorRechazado,
				webhook.ReceptorData{Resultado: "rechazado", Codigo: 2, Glosa: "Rechazado", Motivo: "precio", RutReceptor: "96790240-3"})
		})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := w.st.ListEvents(ctx, w.a, store.ListFilter{})
		if err != nil || len(evs.Items) != 2 {
			t.Fatalf("events: %+v, %v; want two", evs, err)
		}
		data := `"id":"0190f1a2-3b4c-7d5e-8f60-718293a4b5c6","tipo_dte":33,"folio":7,"estado":"aceptado","rut_receptor":"96790240-3",` +
			`"razon_social_receptor":"Distribuidora Ñuñoa Ltda.","monto_total":119000,"fecha_emision":"2026-03-02","ambiente":"produccion",` +
			`"track_id":"4567890123","codigo_sii":"EPR","glosa_sii":"Envio Procesado"`
		want := map[string]string{
			"dte.accepted": `{"type":"dte.accepted","timestamp":"2026-03-02T13:04:05Z","data":{` + data + `}}`,
			"dte.receptor_rechazado": `{"type":"dte.receptor_rechazado","timestamp":"2026-03-02T13:04:05Z","data":{` + data +
				`,"receptor":{"resultado":"rechazado","codigo":2,"glosa":"Rechazado","motivo":"precio","rut_receptor":"96790240-3"}}}`,
		}
		for _, ev := range evs.Items {
			if string(ev.Payload) != want[ev.Type] {
				t.Errorf("%s:\n%s\nwant\n%s", ev.Type, ev.Payload, want[ev.Type])
			}
		}
		// dte.accepted reaches the two webhooks subscribed to it;
		// the receptor's answer none.
		if a, b := len(w.deliveries(t, w.a, w.both)), len(w.deliveries(t, w.a, w.acceptedOnly)); a != 1 || b != 1 {
			t.Errorf("deliveries: %d and %d, want one each", a, b)
		}

		// Record: the caller's id makes the event unique.
		mine := &store.Event{ID: "0190f1a2-3b4c-7d5e-8f60-0000000000e1", EmpresaID: w.a, Type: "dte.created", Payload: []byte(createdPayload)}
		record := func(payload string) error {
			return w.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				ev := *mine
				ev.Payload = []byte(payload)
				return w.o.Record(ctx, tx, &ev)
			})
		}
		if err := record(createdPayload); err != nil {
			t.Fatal(err)
		}
		if err := record(`{"type":"dte.created","data":{}}`); err == nil {
			t.Error("an event recorded twice under one id")
		}
		got, err := w.st.GetEvent(ctx, w.a, mine.ID)
		if err != nil || string(got.Payload) != createdPayload {
			t.Errorf("the event after a second record: %+v, %v; want the first payload", got, err)
		}
		if n := len(w.deliveries(t, w.a, w.both)); n != 2 {
			t.Errorf("%d deliveries to the webhook of both types, want 2 (dte.accepted, the recorded dte.created)", n)
		}
	})
}
