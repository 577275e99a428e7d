package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/pgtest"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/postgres"
	"github.com/dtekit/dtekit/store/sqlite"
)

// attemptLog checks the webhook attempt log of a backend: append, list in
// order with every field, response cut at the bound, and the start of the
// current run of failures.
func attemptLog(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	e := &store.Empresa{Rut: "76192083-9", Ambiente: "certificacion", RazonSocial: "X"}
	w := &store.Webhook{URL: "https://hooks.example.com/", Events: []string{"dte.created"}, IsActive: true}
	ev := &store.Event{Type: "dte.created", Payload: []byte(`{}`)}
	d := &store.Delivery{}
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 123456000, time.UTC)
	var at []store.DeliveryAttempt
	for i, ok := range []bool{false, true, false, false} {
		at = append(at, store.DeliveryAttempt{Attempt: i + 1, Trigger: store.TriggerScheduled, AttemptedAt: t0.Add(time.Duration(i) * time.Hour),
			StatusCode: map[bool]int{true: 204, false: 500}[ok], ErrorClass: map[bool]string{true: "", false: "http"}[ok],
			Duration: 1500 * time.Microsecond, Response: []byte("r"), OK: ok})
	}
	at[2].StatusCode, at[2].ErrorClass, at[2].Error = 0, "timeout", "deadline exceeded"
	at[3].Response = []byte(strings.Repeat("x", store.MaxAttemptResponse+10))
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertEmpresa(ctx, e); err != nil {
			return err
		}
		w.EmpresaID, ev.EmpresaID = e.ID, e.ID
		if err := tx.InsertWebhook(ctx, w); err != nil {
			return err
		}
		if err := tx.InsertEvent(ctx, ev); err != nil {
			return err
		}
		*d = store.Delivery{EmpresaID: e.ID, WebhookID: w.ID, EventID: ev.ID}
		if err := tx.InsertDelivery(ctx, d); err != nil {
			return err
		}
		if since, err := tx.WebhookFailingSince(ctx, e.ID, w.ID); err != nil || !since.IsZero() {
			t.Errorf("no attempts: failing since %v, %v", since, err)
		}
		for i := range at {
			at[i].EmpresaID, at[i].DeliveryID, at[i].WebhookID = e.ID, d.ID, w.ID
			if err := tx.InsertDeliveryAttempt(ctx, &at[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ListDeliveryAttempts(ctx, e.ID, d.ID)
	if err != nil || len(got) != 4 {
		t.Fatalf("list: %d attempts, %v", len(got), err)
	}
	for i, g := range got {
		if g.Attempt != i+1 || !g.AttemptedAt.Equal(at[i].AttemptedAt) || g.StatusCode != at[i].StatusCode || g.OK != at[i].OK ||
			g.ErrorClass != at[i].ErrorClass || g.Error != at[i].Error || g.Duration != 1500*time.Microsecond || g.ID == "" {
			t.Errorf("attempt %d: %+v, want %+v", i+1, g, at[i])
		}
	}
	if len(got[3].Response) != store.MaxAttemptResponse {
		t.Errorf("response kept %d bytes", len(got[3].Response))
	}
	since, err := s.WebhookFailingSince(ctx, e.ID, w.ID)
	if err != nil || !since.Equal(at[2].AttemptedAt) {
		t.Errorf("failing since %v (%v), want %v", since, err, at[2].AttemptedAt)
	}
	if other, err := s.ListDeliveryAttempts(ctx, "another-empresa", d.ID); err != nil || len(other) != 0 {
		t.Errorf("another company sees %d attempts (%v)", len(other), err)
	}
}

func TestAttemptLogSQLite(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	attemptLog(t, s)
}

func TestAttemptLogPG(t *testing.T) {
	s, err := postgres.Open(context.Background(), pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	attemptLog(t, s)
}

// alertSettings checks the per-company alert settings of a backend.
func alertSettings(t *testing.T, s store.Store) {
	ctx := context.Background()
	defer s.Close()
	e := &store.Empresa{Rut: "76192083-9", Ambiente: "certificacion", RazonSocial: "X"}
	if err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertEmpresa(ctx, e) }); err != nil {
		t.Fatal(err)
	}
	if n, ok, err := s.LowStockThreshold(ctx, e.ID); err != nil || ok || n != 0 {
		t.Fatalf("unset: %d %v %v", n, ok, err)
	}
	for _, n := range []int64{50, 7} { // insert, then update
		err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.SetLowStockThreshold(ctx, e.ID, n)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.LowStockThreshold(ctx, e.ID); err != nil || !ok || got != n {
			t.Fatalf("after setting %d: %d %v %v", n, got, ok, err)
		}
	}
	err := s.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.SetLowStockThreshold(ctx, "no-such-empresa", 5)
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown company: %v", err)
	}
}

func TestAlertSettingsSQLite(t *testing.T) {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	alertSettings(t, s)
}

func TestAlertSettingsPG(t *testing.T) {
	s, err := postgres.Open(context.Background(), pgtest.URL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	alertSettings(t, s)
}
