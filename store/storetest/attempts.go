package storetest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
)

// deliveryTo inserts into company e a webhook, an event and one delivery
// of the event to the webhook.
func deliveryTo(t *testing.T, s store.Store, e *store.Empresa) (*store.Webhook, *store.Delivery) {
	t.Helper()
	w := &store.Webhook{EmpresaID: e.ID, URL: "https://hooks.example.com/" + e.Rut, Events: []string{"dte.created"}, IsActive: true}
	ev := &store.Event{EmpresaID: e.ID, Type: "dte.created", Payload: []byte(`{}`)}
	d := &store.Delivery{EmpresaID: e.ID}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := errors.Join(tx.InsertWebhook(ctx, w), tx.InsertEvent(ctx, ev)); err != nil {
			return err
		}
		d.WebhookID, d.EventID = w.ID, ev.ID
		return tx.InsertDelivery(ctx, d)
	})
	return w, d
}

// testAttemptLog: InsertDeliveryAttempt and ListDeliveryAttempts round
// trip every field, cut the response at MaxAttemptResponse, list the
// latest MaxLimit attempts oldest first, refuse a reused id and a
// delivery of another company; WebhookFailingSince follows the runs of
// failures; a transaction reads its own attempts.
func (h *harness) testAttemptLog(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76192083-9")
	b := empresa(t, s, "77888888-8")
	w, d := deliveryTo(t, s, a)
	wb, db := deliveryTo(t, s, b)

	t0 := time.Date(2026, 3, 2, 12, 0, 0, 123456789, time.UTC)
	long := []byte(strings.Repeat("x", store.MaxAttemptResponse+10))
	at := []store.DeliveryAttempt{
		{Attempt: 1, Trigger: store.TriggerScheduled, AttemptedAt: t0, StatusCode: 500, ErrorClass: "http",
			Duration: 1500 * time.Microsecond, Response: []byte("oops")},
		{Attempt: 2, Trigger: store.TriggerManual, AttemptedAt: t0.Add(time.Hour), StatusCode: 204,
			Duration: 2 * time.Millisecond, Response: []byte{}, OK: true},
		{Attempt: 3, Trigger: store.TriggerScheduled, AttemptedAt: t0.Add(2 * time.Hour), ErrorClass: "timeout",
			Error: "deadline exceeded", Duration: 10 * time.Second},
		{Attempt: 4, Trigger: store.TriggerScheduled, AttemptedAt: t0.Add(3 * time.Hour), StatusCode: 502, ErrorClass: "http",
			Response: long},
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		if since, err := tx.WebhookFailingSince(ctx, a.ID, w.ID); err != nil || !since.IsZero() {
			t.Errorf("no attempts: failing since %v, %v; want the zero time", since, err)
		}
		for i := range at {
			at[i].EmpresaID, at[i].DeliveryID, at[i].WebhookID = a.ID, d.ID, w.ID
			if err := tx.InsertDeliveryAttempt(ctx, &at[i]); err != nil {
				return err
			}
		}
		// The transaction reads its own attempts.
		if got, err := tx.ListDeliveryAttempts(ctx, a.ID, d.ID); err != nil || len(got) != 4 {
			t.Errorf("Tx.ListDeliveryAttempts: %d attempts, %v; want 4", len(got), err)
		}
		return nil
	})
	// Written back: a new id, the time at microsecond precision, the
	// response cut.
	if at[0].ID == "" || at[0].ID == at[1].ID {
		t.Errorf("ids written back: %q, %q", at[0].ID, at[1].ID)
	}
	if want := time.Date(2026, 3, 2, 12, 0, 0, 123456000, time.UTC); !at[0].AttemptedAt.Equal(want) {
		t.Errorf("AttemptedAt written back = %v, want %v", at[0].AttemptedAt, want)
	}
	if len(at[3].Response) != store.MaxAttemptResponse {
		t.Errorf("response written back with %d bytes, want %d", len(at[3].Response), store.MaxAttemptResponse)
	}

	got, err := s.ListDeliveryAttempts(ctx, a.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("ListDeliveryAttempts: %d attempts, want 4", len(got))
	}
	for i, g := range got {
		want := at[i]
		if g.ID != want.ID || g.EmpresaID != a.ID || g.DeliveryID != d.ID || g.WebhookID != w.ID || g.Attempt != want.Attempt ||
			g.Trigger != want.Trigger || !g.AttemptedAt.Equal(want.AttemptedAt) || g.StatusCode != want.StatusCode ||
			g.ErrorClass != want.ErrorClass || g.Error != want.Error || g.Duration != want.Duration ||
			!bytes.Equal(g.Response, want.Response) || g.OK != want.OK {
			t.Errorf("attempt %d:\n got  %+v\n want %+v", i+1, g, want)
		}
	}
	if len(got[3].Response) != store.MaxAttemptResponse || got[3].Response[0] != 'x' {
		t.Errorf("stored response: %d bytes, want %d", len(got[3].Response), store.MaxAttemptResponse)
	}
	if got[2].Response != nil {
		t.Errorf("no response stored as %q, want nil", got[2].Response)
	}

	// fail, ok, fail, fail: the run began with the third attempt.
	third := time.Date(2026, 3, 2, 14, 0, 0, 123456000, time.UTC)
	if since, err := s.WebhookFailingSince(ctx, a.ID, w.ID); err != nil || !since.Equal(third) || since.Location() != time.UTC {
		t.Errorf("failing since %v, %v; want %v", since, err, third)
	}
	// The other company's webhook has no attempts; nor does an unknown one.
	if since, err := s.WebhookFailingSince(ctx, b.ID, wb.ID); err != nil || !since.IsZero() {
		t.Errorf("B's webhook failing since %v, %v; want the zero time", since, err)
	}
	if since, err := s.WebhookFailingSince(ctx, a.ID, "no-such-webhook"); err != nil || !since.IsZero() {
		t.Errorf("an unknown webhook failing since %v, %v; want the zero time", since, err)
	}

	// A success ends the run; the next failure starts another.
	t4, t5 := time.Date(2026, 3, 2, 16, 0, 0, 0, time.UTC), time.Date(2026, 3, 2, 17, 0, 0, 0, time.UTC)
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDeliveryAttempt(ctx, &store.DeliveryAttempt{EmpresaID: a.ID, DeliveryID: d.ID, WebhookID: w.ID,
			Attempt: 5, Trigger: store.TriggerManual, AttemptedAt: t4, StatusCode: 200, OK: true})
	})
	if since, err := s.WebhookFailingSince(ctx, a.ID, w.ID); err != nil || !since.IsZero() {
		t.Errorf("after a success: failing since %v, %v; want the zero time", since, err)
	}
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDeliveryAttempt(ctx, &store.DeliveryAttempt{EmpresaID: a.ID, DeliveryID: d.ID, WebhookID: w.ID,
			Attempt: 6, Trigger: store.TriggerScheduled, AttemptedAt: t5, ErrorClass: "connect"})
	})
	if since, err := s.WebhookFailingSince(ctx, a.ID, w.ID); err != nil || !since.Equal(t5) {
		t.Errorf("after a new failure: failing since %v, %v; want %v", since, err, t5)
	}

	// A reused id is a conflict; a delivery of another company, an
	// unknown delivery, another webhook than the delivery's and an
	// unknown company are not found.
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		u := at[0]
		return tx.InsertDeliveryAttempt(ctx, &u)
	})
	wantConflict(t, err, store.ConstraintPrimaryKey, "InsertDeliveryAttempt with a used id")
	refused := map[string]store.DeliveryAttempt{
		"B's delivery as A's":      {EmpresaID: a.ID, DeliveryID: db.ID, WebhookID: wb.ID},
		"A's delivery as B's":      {EmpresaID: b.ID, DeliveryID: d.ID, WebhookID: w.ID},
		"an unknown delivery":      {EmpresaID: a.ID, DeliveryID: "no-such-delivery", WebhookID: w.ID},
		"another webhook than its": {EmpresaID: a.ID, DeliveryID: d.ID, WebhookID: wb.ID},
		"an unknown company":       {EmpresaID: "no-such-company", DeliveryID: d.ID, WebhookID: w.ID},
	}
	for name, r := range refused {
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			r.Attempt, r.Trigger = 1, store.TriggerScheduled
			return tx.InsertDeliveryAttempt(ctx, &r)
		})
		wantErr(t, err, store.ErrNotFound, "InsertDeliveryAttempt of "+name)
	}
	if got, err := s.ListDeliveryAttempts(ctx, b.ID, db.ID); err != nil || len(got) != 0 {
		t.Errorf("B's delivery has %d attempts (%v), want 0", len(got), err)
	}
	if got, err := s.ListDeliveryAttempts(ctx, b.ID, d.ID); err != nil || len(got) != 0 {
		t.Errorf("B lists %d of A's attempts (%v), want 0", len(got), err)
	}
	if got, err := s.ListDeliveryAttempts(ctx, a.ID, "no-such-delivery"); err != nil || len(got) != 0 {
		t.Errorf("an unknown delivery lists %d attempts (%v), want 0", len(got), err)
	}
}

// testAttemptLogLimit: a delivery with more than MaxLimit attempts lists
// its latest MaxLimit, oldest first.
func (h *harness) testAttemptLogLimit(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76192083-9")
	w, d := deliveryTo(t, s, a)
	const n = store.MaxLimit + 3
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := 1; i <= n; i++ {
			err := tx.InsertDeliveryAttempt(ctx, &store.DeliveryAttempt{EmpresaID: a.ID, DeliveryID: d.ID, WebhookID: w.ID,
				Attempt: i, Trigger: store.TriggerScheduled, AttemptedAt: t0.Add(time.Duration(i) * time.Minute), StatusCode: 500})
			if err != nil {
				return err
			}
		}
		return nil
	})
	got, err := s.ListDeliveryAttempts(ctx, a.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 || got[0].Attempt != 4 || got[99].Attempt != 103 {
		t.Fatalf("ListDeliveryAttempts: %d attempts, want 100 (attempts 4 to 103)", len(got))
	}
	for i := range got {
		if got[i].Attempt != i+4 {
			t.Fatalf("attempt at %d is %d, want %d", i, got[i].Attempt, i+4)
		}
	}
	// Every failure counts, listed or not: the run began with attempt 1.
	if since, err := s.WebhookFailingSince(ctx, a.ID, w.ID); err != nil || !since.Equal(t0.Add(time.Minute)) {
		t.Errorf("failing since %v, %v; want %v", since, err, t0.Add(time.Minute))
	}
}

// testLowStockThreshold: unset reads as not set; a set value (zero
// included) reads back and is replaced by the next; companies do not see
// each other's; an unknown company reads as not set and cannot set one;
// a transaction reads its own setting and a rollback undoes it.
func (h *harness) testLowStockThreshold(t *testing.T) {
	s, _ := h.open(t)
	ctx := ctxT(t)
	a := empresa(t, s, "76192083-9")
	b := empresa(t, s, "77888888-8")
	threshold := func(r store.Reader, empresaID string) (int64, bool) {
		t.Helper()
		n, ok, err := r.LowStockThreshold(ctx, empresaID)
		if err != nil {
			t.Fatalf("LowStockThreshold(%s): %v", empresaID, err)
		}
		return n, ok
	}
	if n, ok := threshold(s, a.ID); ok || n != 0 {
		t.Errorf("never set: %d, %v; want 0, false", n, ok)
	}
	for _, n := range []int64{50, 7, 0} { // insert, replace, zero
		write(t, s, func(ctx context.Context, tx store.Tx) error { return tx.SetLowStockThreshold(ctx, a.ID, n) })
		if got, ok := threshold(s, a.ID); !ok || got != n {
			t.Errorf("after setting %d: %d, %v; want %d, true", n, got, ok, n)
		}
	}
	if n, ok := threshold(s, b.ID); ok || n != 0 {
		t.Errorf("B after A set its own: %d, %v; want 0, false", n, ok)
	}
	if n, ok := threshold(s, "no-such-company"); ok || n != 0 {
		t.Errorf("an unknown company: %d, %v; want 0, false", n, ok)
	}
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.SetLowStockThreshold(ctx, "no-such-company", 5)
	})
	wantErr(t, err, store.ErrNotFound, "SetLowStockThreshold of an unknown company")

	errUndo := errors.New("undo")
	err = s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.SetLowStockThreshold(ctx, b.ID, 12); err != nil {
			return err
		}
		if n, ok := threshold(tx, b.ID); !ok || n != 12 {
			t.Errorf("Tx reads %d, %v; want 12, true", n, ok)
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) {
		t.Fatal(err)
	}
	if n, ok := threshold(s, b.ID); ok || n != 0 {
		t.Errorf("B after a rolled-back setting: %d, %v; want 0, false", n, ok)
	}
	if n, ok := threshold(s, a.ID); !ok || n != 0 {
		t.Errorf("A at the end: %d, %v; want 0, true", n, ok)
	}
}
