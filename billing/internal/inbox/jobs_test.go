package inbox

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// rutSupplier is the supplier whose documents A receives.
const rutSupplier = "76086428-5"

// registryRoom is a room whose registry is a fake SII that knows A's
// signer.
func registryRoom(t *testing.T, st store.Store) (*room, *siitest.Fake) {
	t.Helper()
	ans := fixtureAnswers(t)
	fake := siitest.New(siitest.Options{}).Start()
	t.Cleanup(fake.Close)
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	rm := newRoom(t, st, ans.creds, Config{Registry: newFakeRegistry(ans.creds.Cert, map[string]*siitest.Fake{"certificacion": fake})})
	return rm, fake
}

// TestRefreshEveryOpenWindow, on both backends: 105 pending documents,
// more than a page of the store's listings, all received by the SII
// seven and a half days ago: every one, the oldest included, gets its
// window from the registry and its "por vencer" warning, once. A
// document accepted before its window was known is still asked (and
// gets its window and the registry's events); one whose window closed,
// one refused at reception and one decided long ago whose window never
// became known are not asked.
func TestRefreshEveryOpenWindow(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rm, fake := registryRoom(t, be.open(t))
			now := time.Now()
			received := now.Add(-7*24*time.Hour - 12*time.Hour).Truncate(time.Second)
			const pending = 105
			rec := &store.Recepcion{EmpresaID: rm.empresa, Digest: "d", Tipo: TipoEnvio, Origen: OrigenUpload, XML: []byte("<x/>")}
			var ids []string
			extra := map[string]*store.Recibido{
				"accepted, window unknown": {Estado: Aceptado},
				"accepted, window closed":  {Estado: Aceptado, PlazoVence: now.Add(-time.Hour), FechaRecepcionSII: now.Add(-8*24*time.Hour - time.Hour)},
				"refused at reception":     {Estado: Rechazado},
				"claimed long ago":         {Estado: Reclamado, CreatedAt: now.Add(-40 * 24 * time.Hour)},
			}
			err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
				ids = nil
				if err := tx.InsertRecepcion(ctx, rec); err != nil {
					return err
				}
				folio := int64(0)
				add := func(r *store.Recibido) error {
					folio++
					r.EmpresaID, r.RecepcionID, r.RutEmisor, r.TipoDTE, r.Folio = rm.empresa, rec.ID, rutSupplier, 33, folio
					r.DedupeKey = fmt.Sprintf("dte:%s:33:%d", rutSupplier, folio)
					return tx.InsertRecibido(ctx, r)
				}
				for range pending {
					r := &store.Recibido{Estado: Pendiente}
					if err := add(r); err != nil {
						return err
					}
					ids = append(ids, r.ID)
				}
				for _, r := range extra {
					if err := add(r); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for folio := int64(1); folio <= pending+int64(len(extra)); folio++ {
				seed := siitest.RCVSeed{RutEmisor: rutSupplier, RutReceptor: dtetest.EmisorRUT, Tipo: 33, Folio: folio, Received: received, FmaPago: 2}
				if folio > pending {
					seed.Events = []sii.RCVEvent{{Action: sii.RCVReceipt, RutResponsable: dtetest.EmisorRUT, At: received.Add(time.Hour)}}
				}
				fake.SeedRCV(seed)
			}
			if err := rm.ib.Refresh(ctx, rm.empresa); err != nil {
				t.Fatal(err)
			}
			wantEnd := received.Add(8 * 24 * time.Hour)
			missed := 0
			for i, id := range ids {
				r, err := rm.st.GetRecibido(ctx, rm.empresa, id)
				if err != nil {
					t.Fatal(err)
				}
				if !r.PlazoVence.Equal(wantEnd) || r.PlazoAvisadoAt.IsZero() || RCVOf(r) == nil {
					missed++
					if missed < 3 {
						t.Errorf("pending document %d (folio %d): window %v, warned %v, registry %v; want the window to close at %v, warned",
							i, r.Folio, r.PlazoVence, r.PlazoAvisadoAt, RCVOf(r), wantEnd)
					}
				}
			}
			if missed > 0 {
				t.Errorf("%d of %d pending documents missed", missed, pending)
			}
			ev, err := rm.st.ListEvents(ctx, rm.empresa, store.ListFilter{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if ev.TotalCount != pending {
				t.Errorf("%d events, want %d warnings", ev.TotalCount, pending)
			}
			for name, x := range extra {
				r, err := rm.st.GetRecibido(ctx, rm.empresa, x.ID)
				if err != nil {
					t.Fatal(err)
				}
				asked := RCVOf(r) != nil
				if want := name == "accepted, window unknown"; asked != want {
					t.Errorf("%s: asked the registry %v, want %v", name, asked, want)
				}
				if name == "accepted, window unknown" && (!r.PlazoVence.Equal(wantEnd) || len(RCVOf(r).Eventos) != 1) {
					t.Errorf("%s: window %v, registry %+v", name, r.PlazoVence, RCVOf(r))
				}
			}
			// Again: nothing new to warn of.
			if err := rm.ib.Refresh(ctx, rm.empresa); err != nil {
				t.Fatal(err)
			}
			if ev, _ := rm.st.ListEvents(ctx, rm.empresa, store.ListFilter{Limit: 1}); ev.TotalCount != pending {
				t.Errorf("after a second refresh: %d events, want %d", ev.TotalCount, pending)
			}
		})
	}
}

// TestAcceptAfterReceipt, on both backends: the receipt of goods (ERM) accepts a document;
// an acceptance (ACD) may follow it, as the registry allows, and is
// recorded; a claim may not (the registry's code 13), and is refused
// before asking it.
func TestAcceptAfterReceipt(t *testing.T) {
	t.Parallel()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			testAcceptAfterReceipt(t, be.open(t))
		})
	}
}

func testAcceptAfterReceipt(t *testing.T, st store.Store) {
	ctx := context.Background()
	rm, fake := registryRoom(t, st)
	rec := &store.Recepcion{EmpresaID: rm.empresa, Digest: "d", Tipo: TipoEnvio, Origen: OrigenUpload, XML: []byte("<x/>")}
	r := &store.Recibido{EmpresaID: rm.empresa, RutEmisor: rutSupplier, TipoDTE: 33, Folio: 9, DedupeKey: "k", Estado: Pendiente}
	err := rm.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertRecepcion(ctx, rec); err != nil {
			return err
		}
		r.RecepcionID = rec.ID
		return tx.InsertRecibido(ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
	fake.SeedRCV(siitest.RCVSeed{RutEmisor: rutSupplier, RutReceptor: dtetest.EmisorRUT, Tipo: 33, Folio: 9, FmaPago: 2})
	got, err := rm.ib.Decide(ctx, rm.empresa, r.ID, Decision{Accion: sii.RCVReceipt, Recinto: "Bodega"})
	if err != nil || got.Estado != Aceptado || RespuestasOf(got).Recibo == nil {
		t.Fatalf("the receipt: %v %+v", err, got)
	}
	got, err = rm.ib.Decide(ctx, rm.empresa, r.ID, Decision{Accion: sii.RCVAccept})
	if err != nil || got.Estado != Aceptado || RespuestasOf(got).Decision == nil || RespuestasOf(got).Decision.Accion != "ACD" {
		t.Fatalf("an acceptance after the receipt: %v %+v", err, got)
	}
	hist := fake.RCVHistory(rutSupplier, 33, 9)
	if len(hist) != 2 || hist[0].Action != sii.RCVReceipt || hist[1].Action != sii.RCVAccept {
		t.Errorf("the registry's history: %+v, want ERM then ACD", hist)
	}
	_, err = rm.ib.Decide(ctx, rm.empresa, r.ID, Decision{Accion: sii.RCVClaimContent, Motivo: "Precio distinto"})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.InvalidState {
		t.Errorf("a claim after the receipt and the acceptance: %v, want %s", err, fault.InvalidState)
	}
}
