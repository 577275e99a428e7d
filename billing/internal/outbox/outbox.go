// Package outbox records the billing service's events and fans them out.
//
// An event is stored with its payload frozen (the exact bytes every
// delivery sends), in the transaction that changes what it reports, and
// in that same transaction one pending delivery is recorded, with its
// first attempt enqueued, for every active webhook of the company
// subscribed to its type. The package also holds what the producers and
// the consumer of events share: the arguments of the delivery job, which
// the delivery worker decodes, and the tracking payload of a document
// (store.DTE.Tracking), which submission writes and the document's events
// carry.
//
// It depends on store and webhook only, so billing and each of its
// subsystems can use it without a cycle.
package outbox

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// Tx is what the outbox needs of the caller's transaction: it records
// the event, reads the company's webhooks, records their deliveries and
// enqueues the first attempts. A store.Tx is one.
type Tx interface {
	store.EventWriter
	store.DeliveryReader
	store.DeliveryWriter
	store.JobWriter
}

// Outbox records events. Build it with New; it is safe for concurrent use.
type Outbox struct {
	now func() time.Time
}

// New returns an Outbox that stamps events and first attempts with now.
func New(now func() time.Time) *Outbox { return &Outbox{now: now} }

// newID returns a new record id (a UUIDv7, so ids sort by creation).
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// Publish records an event of type typ with data as its payload, frozen
// now, and fans it out to the subscribed webhooks, in the caller's
// transaction.
func (o *Outbox) Publish(ctx context.Context, tx Tx, empresaID string, typ webhook.EventType, data any) (*store.Event, error) {
	body, err := webhook.MarshalEvent(typ, o.now().UTC().Truncate(time.Second), data)
	if err != nil {
		return nil, err
	}
	ev := &store.Event{ID: newID(), EmpresaID: empresaID, Type: string(typ), Payload: body}
	return ev, o.Record(ctx, tx, ev)
}

// Record stores an event whose payload the caller froze (with an id of
// its choosing, which makes the event unique) and fans it out to the
// subscribed webhooks, in the caller's transaction.
func (o *Outbox) Record(ctx context.Context, tx Tx, ev *store.Event) error {
	if err := tx.InsertEvent(ctx, ev); err != nil {
		return err
	}
	return o.fanOut(ctx, tx, ev)
}

// PublishReceptor records an event about what a document's receptor
// answered (dte.receptor_*, dte.mercaderias_recibidas): the document's
// data with the answer, in the caller's transaction.
func (o *Outbox) PublishReceptor(ctx context.Context, tx Tx, d *store.DTE, typ webhook.EventType, a webhook.ReceptorData) error {
	data := dteData(d)
	data.Receptor = &a
	if _, err := o.Publish(ctx, tx, d.EmpresaID, typ, data); err != nil {
		return fmt.Errorf("billing: recording event %s for DTE %s: %w", typ, d.ID, err)
	}
	return nil
}

// PublishCesion records an event about a cesión of a document
// (dte.cedido, dte.cesion_rechazada): the document's data with the
// cesión, in the caller's transaction.
func (o *Outbox) PublishCesion(ctx context.Context, tx Tx, d *store.DTE, typ webhook.EventType, c webhook.CesionData) error {
	data := dteData(d)
	data.Cesion = &c
	if _, err := o.Publish(ctx, tx, d.EmpresaID, typ, data); err != nil {
		return fmt.Errorf("billing: recording event %s for DTE %s: %w", typ, d.ID, err)
	}
	return nil
}

// PublishDTE records an event about a document (dte.created, and once
// the SII has answered dte.accepted, dte.rejected or dte.repaired) with
// the document's data and its tracking, in the caller's transaction.
func (o *Outbox) PublishDTE(ctx context.Context, tx Tx, d *store.DTE, typ webhook.EventType) error {
	if _, err := o.Publish(ctx, tx, d.EmpresaID, typ, dteData(d)); err != nil {
		return fmt.Errorf("billing: recording event %s for DTE %s: %w", typ, d.ID, err)
	}
	return nil
}

// dteData is a document's data in its events, with the SII's side once
// known (dte.accepted, dte.rejected, dte.repaired).
func dteData(d *store.DTE) webhook.DTEData {
	data := webhook.DTEData{ID: d.ID, TipoDTE: d.TipoDTE, Folio: d.Folio, Estado: d.Estado,
		RutReceptor: d.RutReceptor, RazonSocialReceptor: d.RazonSocialReceptor, MontoTotal: d.MontoTotal,
		FechaEmision: d.FechaEmision, Ambiente: d.Ambiente}
	t := TrackingOf(d)
	data.TrackID = t.TrackID
	if t.CodigoSII != nil {
		data.CodigoSII = *t.CodigoSII
	}
	if t.GlosaSII != nil {
		data.GlosaSII = *t.GlosaSII
	}
	return data
}

// fanOut creates one delivery of ev for every active webhook of its
// company subscribed to its type, each with its first attempt enqueued, in
// the transaction that records the event.
func (o *Outbox) fanOut(ctx context.Context, tx Tx, ev *store.Event) error {
	hooks, err := tx.ListWebhooks(ctx, ev.EmpresaID)
	if err != nil {
		return fmt.Errorf("billing: listing webhooks for event %s: %w", ev.ID, err)
	}
	for i := range hooks {
		if h := &hooks[i]; h.IsActive && subscribed(h, ev.Type) {
			if _, err := o.newDelivery(ctx, tx, ev, h.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// subscribed reports whether h receives events of type typ.
func subscribed(h *store.Webhook, typ string) bool { return slices.Contains(h.Events, typ) }

// newDelivery records a pending delivery of ev to one webhook and
// enqueues its first attempt, due now.
func (o *Outbox) newDelivery(ctx context.Context, tx Tx, ev *store.Event, webhookID string) (*store.Delivery, error) {
	due := o.now().Truncate(time.Millisecond)
	d := &store.Delivery{ID: newID(), EmpresaID: ev.EmpresaID, WebhookID: webhookID, EventID: ev.ID,
		State: store.DeliveryPending, NextAttemptAt: due}
	if err := tx.InsertDelivery(ctx, d); err != nil {
		return nil, fmt.Errorf("billing: recording delivery of event %s to webhook %s: %w", ev.ID, webhookID, err)
	}
	if _, err := tx.Enqueue(ctx, DeliverArgs{EmpresaID: d.EmpresaID, DeliveryID: d.ID, Attempt: 1, Due: due.UnixMilli()}, nil); err != nil {
		return nil, fmt.Errorf("billing: enqueuing delivery %s: %w", d.ID, err)
	}
	return d, nil
}

// DeliverArgs is the job that makes one attempt of one delivery.
type DeliverArgs struct {
	EmpresaID  string `json:"empresa_id"`
	DeliveryID string `json:"delivery_id"`
	// Attempt is the position in the retry schedule of a scheduled
	// attempt (1 for the first); 0 for a manual one.
	Attempt int `json:"attempt,omitempty"`
	// Due is the delivery's NextAttemptAt (Unix ms) this scheduled job was
	// enqueued for; a job whose delivery moved on is stale and does
	// nothing, so a rescued or repeated job never sends twice for one
	// schedule slot.
	Due int64 `json:"due,omitempty"`
	// Manual marks a resend or ping: one attempt, no retries.
	Manual bool `json:"manual,omitempty"`
	// Nonce tells manual requests apart.
	Nonce string `json:"nonce,omitempty"`
}

// DeliverKind names the delivery job.
const DeliverKind = "webhook.deliver"

// DeliverQueue is the queue delivery jobs wait in: deliveries have their
// own workers, so a receiver that hangs holds up no submission, recovery
// or maintenance job.
const DeliverQueue = "delivery"

// Kind names the delivery job.
func (DeliverArgs) Kind() string { return DeliverKind }

// JobOpts: a delivery job retries only store failures (the webhook's own
// schedule is the delivery's, not the job's), a few times; it is unique by
// its arguments (delivery, slot, or manual nonce), so the sweep can
// re-enqueue a lost one without doubling one that lives. It waits in
// DeliverQueue.
func (DeliverArgs) JobOpts() store.JobOpts {
	return store.JobOpts{Queue: DeliverQueue, MaxAttempts: 6, UniqueByArgs: true}
}
