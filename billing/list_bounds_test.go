package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// TestListDeliveriesBounded: a page of deliveries shows each attempt
// without the receiver's response, so it stays small however much the
// receiver answered; GetDelivery still shows every response (issue 20,
// point 2). Here 10 deliveries hold 100 attempts each (the attempt log's
// length) with a response of 16 KiB (store.MaxAttemptResponse): 16 MB of
// responses. Without them an attempt is under 300 bytes of JSON (numbers,
// a time, a trigger, a class and its sentence), so the page is under
// 10 × 100 × 300 = 300 KB; it is checked against 1 MiB.
func TestListDeliveriesBounded(t *testing.T) {
	f := newDeliveryFixture(t, time.Time{}, DeliveryConfig{})
	ctx := context.Background()
	wh, err := f.s.CreateWebhook(ctx, f.empresa, WebhookInput{URL: "http://127.0.0.1:9/hook", Events: []string{string(webhook.EventDTECreated)}})
	if err != nil {
		t.Fatal(err)
	}
	const deliveries, attempts = 10, store.MaxLimit
	answer := bytes.Repeat([]byte("x"), store.MaxAttemptResponse)
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	var last string
	err = f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		for i := range deliveries {
			ev := &store.Event{EmpresaID: f.empresa, Type: string(webhook.EventDTECreated), Payload: []byte(`{}`)}
			if err := tx.InsertEvent(ctx, ev); err != nil {
				return err
			}
			d := &store.Delivery{EmpresaID: f.empresa, WebhookID: wh.ID, EventID: ev.ID, State: store.DeliveryFailed,
				Attempts: attempts, LastStatusCode: 500, LastError: "http_status: 500"}
			if err := tx.InsertDelivery(ctx, d); err != nil {
				return err
			}
			for a := 1; a <= attempts; a++ {
				err := tx.InsertDeliveryAttempt(ctx, &store.DeliveryAttempt{EmpresaID: f.empresa, DeliveryID: d.ID, WebhookID: wh.ID,
					Attempt: a, Trigger: store.TriggerManual, AttemptedAt: t0.Add(time.Duration(i*attempts+a) * time.Second),
					StatusCode: 500, ErrorClass: "http_status", Duration: time.Second, Response: answer})
				if err != nil {
					return err
				}
			}
			last = d.ID
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.s.ListDeliveries(ctx, f.empresa, wh.ID, "", store.MaxLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != deliveries || page.NextCursor != nil {
		t.Fatalf("%d deliveries listed, next cursor %v; want all %d on one page", len(page.Data), page.NextCursor, deliveries)
	}
	for _, d := range page.Data {
		if len(d.AttemptLog) != attempts {
			t.Fatalf("delivery %s lists %d attempts, want %d", d.ID, len(d.AttemptLog), attempts)
		}
		for _, a := range d.AttemptLog {
			if a.StatusCode == nil || *a.StatusCode != 500 {
				t.Fatalf("delivery %s attempt %d in a list: no status 500", d.ID, a.Attempt)
			}
			if a.Response != "" {
				t.Fatalf("delivery %s attempt %d in a list: a response of %d bytes; want none", d.ID, a.Attempt, len(a.Response))
			}
		}
	}
	b, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<20 {
		t.Errorf("a page of %d deliveries takes %d bytes of JSON; want at most 1 MiB", deliveries, len(b))
	}
	one, err := f.s.GetDelivery(ctx, f.empresa, wh.ID, last)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range one.AttemptLog {
		if len(a.Response) != store.MaxAttemptResponse {
			t.Fatalf("GetDelivery: attempt %d shows a response of %d bytes, want %d", a.Attempt, len(a.Response), store.MaxAttemptResponse)
		}
	}
	t.Logf("a page of %d deliveries of %d attempts: %d bytes of JSON", deliveries, attempts, len(b))
}
