package billing

import (
	"context"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/store"
)

// ListDeliveries pages through a webhook's deliveries, newest first, each
// with its attempt log, whose attempts carry no response body (GetDelivery
// has them), so a page stays small whatever the receiver answered. A
// deleted webhook's deliveries stay readable.
func (r *WebhookService) ListDeliveries(ctx context.Context, empresaID string, p api.DeliveryListParams) (*api.Page[api.Delivery], error) {
	s := r.s
	webhookID, cursor := p.WebhookID, p.Cursor
	n, verr := pageLimit(p.Limit)
	if verr != nil {
		return nil, verr
	}
	page, err := s.st.ListDeliveries(ctx, empresaID, webhookID, store.ListFilter{Cursor: cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing deliveries", "webhook", webhookID)
	}
	// An empty page of a webhook the company does not have (another
	// tenant's id, or an unknown one) is not found, like every other id of
	// another tenant. A deleted webhook's deliveries stay readable: they are
	// scoped by company in the store.
	if len(page.Items) == 0 && cursor == "" {
		if _, err := s.st.GetWebhook(ctx, empresaID, webhookID); err != nil {
			return nil, storeErr(err, "listing deliveries", "webhook", webhookID)
		}
	}
	out := &api.Page[api.Delivery]{Data: make([]api.Delivery, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		d, err := delivery.Read(ctx, s.st, &page.Items[i])
		if err != nil {
			return nil, fault.Failed("reading a delivery", err)
		}
		// A list shows each attempt without the receiver's response, as
		// GitHub's list of deliveries does: up to 100 attempts of 16 KiB
		// on each of 100 deliveries would make a page of 160 MB. GET the
		// delivery for its responses.
		for j := range d.AttemptLog {
			d.AttemptLog[j].Response = ""
		}
		out.Data = append(out.Data, *d)
	}
	return out, nil
}

// GetDelivery returns one delivery of a webhook with its attempt log.
func (r *WebhookService) GetDelivery(ctx context.Context, empresaID, id string, p api.DeliveryParams) (*api.Delivery, error) {
	s := r.s
	webhookID := p.WebhookID
	d, err := s.st.GetDelivery(ctx, empresaID, id)
	if err == nil && d.WebhookID != webhookID {
		err = store.ErrNotFound
	}
	if err != nil {
		return nil, storeErr(err, "reading a delivery", "delivery", id)
	}
	out, err := delivery.Read(ctx, s.st, d)
	if err != nil {
		return nil, fault.Failed("reading a delivery", err)
	}
	return out, nil
}

// ResendDelivery sends a delivery again, once, now: same webhook-id and
// bytes, fresh timestamp and signature, no retries of its own. It works
// on any state; a success marks the delivery succeeded (and stops its
// pending retries). The attempt runs in the background; the answer is the
// delivery as it stands.
func (r *WebhookService) ResendDelivery(ctx context.Context, empresaID, id string, p api.DeliveryParams) (*api.Delivery, error) {
	s := r.s
	out, err := s.dlv.Resend(ctx, empresaID, p.WebhookID, id)
	if err != nil {
		return nil, storeErr(err, "resending a delivery", "delivery", id)
	}
	return out, nil
}

// Ping sends a webhook.ping test event to one webhook (active or
// not), once, in the background; the answer is the new delivery, whose
// attempt log shows the outcome.
func (r *WebhookService) Ping(ctx context.Context, empresaID, webhookID string) (*api.Delivery, error) {
	s := r.s
	out, err := s.dlv.Ping(ctx, empresaID, webhookID)
	if err != nil {
		return nil, storeErr(err, "pinging a webhook", "webhook", webhookID)
	}
	return out, nil
}
