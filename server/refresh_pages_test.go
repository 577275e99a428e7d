package server

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// TestRefreshEveryPendingThroughTheAPI, on both backends (issue 29, point
// 4): a company with more pending received documents than one page of
// the store (105 > 100) asks for the refresh through the API, and every
// one of them, the oldest (nearest its deadline) included, shows the
// window the registry gives: received 7 days and 12 hours ago, so the
// window closes 8 days after the SII's reception (Ley 19.983), in 12
// hours, and dias_restantes is 0 whole days. A document that already had
// a receipt of goods is accepted afterwards through the API, as the
// registry allows.
func TestRefreshEveryPendingThroughTheAPI(t *testing.T) {
	t.Parallel()
	for _, be := range billingtest.Backends() {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fake := newFake(t)
			f := submitting(t, be.NewStore(t), billing.Config{}, fake)
			ctx := context.Background()
			const pending, supplier = 105, "77777777-7"
			received := time.Now().Add(-7*24*time.Hour - 12*time.Hour).Truncate(time.Second)
			rec := &store.Recepcion{EmpresaID: f.A.id, Ambiente: "certificacion", Digest: "refresh-pages", Tipo: "envio",
				Origen: "upload", XML: []byte("<x/>")}
			ids := map[string]int64{}
			err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				clear(ids)
				if err := tx.InsertRecepcion(ctx, rec); err != nil {
					return err
				}
				for folio := int64(1); folio <= pending+1; folio++ {
					r := &store.Recibido{EmpresaID: f.A.id, Ambiente: "certificacion", RecepcionID: rec.ID, RutEmisor: supplier,
						TipoDTE: 33, Folio: folio, Estado: "pendiente", FechaEmision: received.Format("2006-01-02"), MontoTotal: 1190,
						DedupeKey: fmt.Sprintf("certificacion:dte:%s:33:%d", supplier, folio)}
					if err := tx.InsertRecibido(ctx, r); err != nil {
						return err
					}
					ids[r.ID] = folio
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for folio := int64(1); folio <= pending+1; folio++ {
				seed := siitest.RCVSeed{RutEmisor: supplier, RutReceptor: f.A.rut, Tipo: 33, Folio: folio, Received: received, FmaPago: 2}
				if folio == pending+1 {
					seed.Events = []sii.RCVEvent{{Action: sii.RCVReceipt, RutResponsable: f.A.rut, At: received.Add(time.Hour)}}
				}
				fake.SeedRCV(seed)
			}
			want(t, f.do("POST", apiBase+"/recibidos/actualizar", map[string]any{}, f.A.writeHdr...), 200)

			// Every document, read through the API page by page.
			wantEnd := received.Add(8 * 24 * time.Hour)
			seen, missed, cursor := 0, 0, ""
			receipt := ""
			for {
				q := url.Values{"limit": {"100"}}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				r := f.do("GET", apiBase+"/recibidos?"+q.Encode(), nil, f.A.readHdr...)
				want(t, r, 200)
				var page api.Page[api.Recibido]
				r.JSON(t, &page)
				for _, d := range page.Data {
					seen++
					if ids[d.ID] == pending+1 {
						receipt = d.ID
					}
					if d.PlazoVence == nil || !d.PlazoVence.Equal(wantEnd) || d.DiasRestantes == nil || *d.DiasRestantes != 0 {
						missed++
						if missed <= 3 {
							t.Errorf("folio %d: plazo_vence %v, dias_restantes %v; want %v and 0", ids[d.ID], d.PlazoVence, d.DiasRestantes, wantEnd)
						}
					}
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			if seen != pending+1 || missed != 0 {
				t.Errorf("%d documents listed, %d without their window; want %d, none", seen, missed, pending+1)
			}
			if receipt == "" {
				t.Fatal("the document with a receipt of goods was not listed")
			}
			want(t, f.do("POST", apiBase+"/recibidos/"+receipt+"/aceptar", nil, f.A.writeHdr...), 200)
		})
	}
}
