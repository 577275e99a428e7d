package server

import (
	"context"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// TestAlertSettings: the caf.low_stock threshold is reachable over the
// API (issue 29, point 9): GET /empresa/alertas answers the default 20,
// PUT changes it for the company alone (write access, the field
// required, 0 to 1,000,000), and the next emission that leaves the
// company with that many folios fires caf.low_stock with it.
func TestAlertSettings(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f := newFixture(t, open(t), RateLimit{PerSecond: -1})
		const path = apiBase + "/empresa/alertas"
		threshold := func(c company) int64 {
			t.Helper()
			r := f.do("GET", path, nil, c.readHdr...)
			want(t, r, 200)
			var s struct {
				N *int64 `json:"caf_low_stock_threshold"`
			}
			r.JSON(t, &s)
			if s.N == nil {
				t.Fatalf("no caf_low_stock_threshold: %s", r.Body)
			}
			return *s.N
		}
		if n := threshold(f.A); n != 20 {
			t.Errorf("the default threshold is %d, want 20", n)
		}
		for _, tc := range []struct {
			name string
			body any
			code string
		}{
			{"missing", map[string]any{}, "caf_low_stock_threshold REQUIRED"},
			{"negative", map[string]any{"caf_low_stock_threshold": -1}, "caf_low_stock_threshold OUT_OF_RANGE"},
			{"too large", map[string]any{"caf_low_stock_threshold": 1_000_001}, "caf_low_stock_threshold OUT_OF_RANGE"},
			{"a fraction", map[string]any{"caf_low_stock_threshold": 2.5}, "caf_low_stock_threshold INVALID_TYPE"},
			{"unknown member", map[string]any{"caf_low_stock_threshold": 5, "umbral": 5}, "umbral UNKNOWN_FIELD"},
		} {
			r := f.do("PUT", path, tc.body, f.A.writeHdr...)
			want(t, r, 400, fault.Validation)
			if got := detailFields(t, r); len(got) != 1 || got[0] != tc.code {
				t.Errorf("%s: details %v, want [%s]", tc.name, got, tc.code)
			}
		}
		want(t, f.do("PUT", path, map[string]any{"caf_low_stock_threshold": 5}, f.A.readHdr...), 403, fault.WriteNotAllowed)
		if n := threshold(f.A); n != 20 {
			t.Errorf("after refused changes the threshold is %d, want 20", n)
		}

		// The fixture's CAF of 33 holds folios 1–1000: with a threshold of
		// 998, the second factura fires the event.
		r := f.do("PUT", path, map[string]any{"caf_low_stock_threshold": 998}, f.A.writeHdr...)
		want(t, r, 200)
		if n := threshold(f.A); n != 998 {
			t.Errorf("after PUT the threshold is %d, want 998", n)
		}
		if n := threshold(f.B); n != 20 {
			t.Errorf("the other company's threshold is %d, want 20", n)
		}
		f.emit(f.A, factura(1))
		f.emit(f.A, factura(1))
		f.emit(f.A, factura(1))
		page, err := f.st.ListEvents(context.Background(), f.A.id, store.ListFilter{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		var low []webhook.CAFLowStockData
		for _, e := range page.Items {
			if e.Type == string(webhook.EventCAFLowStock) {
				ev, err := webhook.ParseEvent(e.Payload)
				if err != nil {
					t.Fatal(err)
				}
				d, err := ev.CAFLowStock()
				if err != nil {
					t.Fatal(err)
				}
				low = append(low, d)
			}
		}
		if len(low) != 1 || low[0].FoliosDisponibles != 998 || low[0].Umbral != 998 {
			t.Errorf("caf.low_stock events after three facturas: %+v, want one at 998 folios, umbral 998", low)
		}
	})
}
