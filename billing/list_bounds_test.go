package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
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
	t.Parallel()
	f := newDeliveryFixture(t, time.Time{}, DeliveryConfig{})
	ctx := context.Background()
	wh, err := f.s.Webhooks.Create(ctx, f.empresa, api.WebhookInput{URL: "http://127.0.0.1:9/hook", Events: []string{string(webhook.EventDTECreated)}})
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
	page, err := f.s.Webhooks.ListDeliveries(ctx, f.empresa, api.DeliveryListParams{WebhookID: wh.ID, ListParams: api.ListParams{Limit: store.MaxLimit}})
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
	one, err := f.s.Webhooks.GetDelivery(ctx, f.empresa, last, api.DeliveryParams{WebhookID: wh.ID})
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

// TestListCAFPages: the CAF list is paged like every other list (a
// company gathers CAFs for as long as it issues documents), in the order
// the CAFs were registered, and is_active marks, on every page, the CAF
// emission takes folios from: the active one with folios left and the
// lowest range of its type, wherever the list shows it.
func TestListCAFPages(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, true) // 33: 1-1000
			ctx := context.Background()
			s, id := f.s, f.emp.ID
			// 34 registered from the highest range down: 1-100, the last
			// one registered, is the one in use.
			for _, r := range [][2]int64{{201, 300}, {101, 200}, {1, 100}} {
				if _, err := s.CAFs.Register(ctx, id, api.CAFInput{TipoDTE: 34, CAFXML: issueCAF(t, 34, r[0], r[1])}); err != nil {
					t.Fatal(err)
				}
			}
			type row struct {
				tipo   int
				desde  int64
				active bool
			}
			want := []row{{33, 1, true}, {34, 201, false}, {34, 101, false}, {34, 1, true}}
			var got []row
			cursor := ""
			for pages := 0; ; pages++ {
				p, err := s.CAFs.List(ctx, id, api.CAFListParams{ListParams: api.ListParams{Cursor: cursor, Limit: 2}})
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Data) != 2 || p.TotalCount != 4 {
					t.Fatalf("page %d: %d CAFs, total %d; want 2 of 4", pages, len(p.Data), p.TotalCount)
				}
				for _, c := range p.Data {
					got = append(got, row{int(c.TipoDTE), c.FolioDesde, c.IsActive})
					one, err := s.CAFs.Get(ctx, id, c.ID)
					if err != nil || one.IsActive != c.IsActive {
						t.Errorf("GetCAF(%s): %+v, %v; the list says is_active %v", c.ID, one, err, c.IsActive)
					}
				}
				if p.NextCursor == nil {
					break
				}
				cursor = *p.NextCursor
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("CAFs over the pages (tipo, folio_desde, is_active):\n got  %v\n want %v", got, want)
			}
			p, err := s.CAFs.List(ctx, id, api.CAFListParams{TipoDTE: 34, ListParams: api.ListParams{Limit: 1}})
			if err != nil || len(p.Data) != 1 || p.TotalCount != 3 || p.NextCursor == nil || p.Data[0].FolioDesde != 201 {
				t.Errorf("the first CAF of type 34: %+v, %v", p, err)
			}
			if _, err := s.CAFs.List(ctx, id, api.CAFListParams{ListParams: api.ListParams{Limit: api.MaxLimit + 1}}); fault.KindOf(err) != fault.KindValidation {
				t.Errorf("limit %d: %v, want a validation error", api.MaxLimit+1, err)
			}
		})
	}
}
