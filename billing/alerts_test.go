package billing

import (
	"context"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/webhook"
)

// TestLowStockConcurrentEmission: 16 emissions at once through Emit,
// on both backends, from a CAF of 30 folios: caf.low_stock is recorded
// once, at 20 folios left.
func TestLowStockConcurrentEmission(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := newFixture(t, b, false)
			ctx := context.Background()
			if _, err := f.s.CAFs.Register(ctx, f.emp.ID, api.CAFInput{TipoDTE: 33, CAFXML: issueCAF(t, 33, 1, 30)}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := emitBody(f.s, ctx, f.emp.ID, newKey(), facturaBody(i+1)); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			page, err := f.s.st.ListEvents(ctx, f.emp.ID, store.ListFilter{Limit: store.MaxLimit})
			if err != nil {
				t.Fatal(err)
			}
			var low []webhook.CAFLowStockData
			for _, e := range page.Items {
				if e.Type == string(webhook.EventCAFLowStock) {
					ev, _ := webhook.ParseEvent(e.Payload)
					d, err := ev.CAFLowStock()
					if err != nil {
						t.Fatal(err)
					}
					low = append(low, d)
				}
			}
			if len(low) != 1 || low[0].FoliosDisponibles != 20 || low[0].FolioHasta != 30 {
				t.Fatalf("caf.low_stock events: %+v", low)
			}
		})
	}
}
