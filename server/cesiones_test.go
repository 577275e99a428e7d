package server

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
)

// cesionBody is a valid cesión request to a factoring company.
func cesionBody() map[string]any {
	return map[string]any{
		"cesionario": map[string]any{"rut": "96790240-3", "razon_social": "Factoring Austral S.A.",
			"direccion": "Av. Apoquindo 3000", "email": "cesiones@factoring.cl"},
		"email_notificacion": "finanzas@empresa.cl",
	}
}

// accept marks a document aceptado in the store, as the SII's review
// would (this service does not submit: the end-to-end test of cmd/dtekit
// takes the real path).
func accept(t *testing.T, st store.Store, empresaID, id string) {
	t.Helper()
	err := st.Write(context.Background(), func(ctx context.Context, tx store.Tx) error {
		d, err := tx.GetDTEForUpdate(ctx, empresaID, id)
		if err != nil {
			return err
		}
		d.Estado = "aceptado"
		return tx.UpdateDTE(ctx, d)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCesiones, on both backends: POST /dte/{id}/cesiones refuses each
// precondition with its field and code (a document not accepted, a
// boleta, an invalid cesionario or amount), records a cesión pendiente
// (202) whose replay answers the same bytes, refuses a second one (409
// ALREADY_CEDED) and a key reused with another body (422); GET shows it
// on the document and in the list; another company's key finds neither
// the document nor its cesiones (404), and a read-only key cannot cede
// (403). Every answer is checked against the OpenAPI document.
func TestCesiones(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		st := open(t)
		f := newFixture(t, st, RateLimit{PerSecond: -1})
		c := f.A
		id, _ := f.emit(c, factura(2))
		path := apiBase + "/dte/" + id + "/cesiones"
		post := func(body any, key string, hdr ...string) *response {
			if hdr == nil {
				hdr = c.writeHdr
			}
			return f.do("POST", path, body, append(slices.Clone(hdr), "Idempotency-Key", key)...)
		}

		// Not accepted by the SII yet.
		r := post(cesionBody(), newUUID())
		want(t, r, 409, fault.InvalidState)
		if got := detailFields(t, r); !slices.Equal(got, []string{"estado DTE_NOT_ACCEPTED"}) {
			t.Errorf("firmado: details %v", got)
		}
		accept(t, st, c.id, id)

		// The request's own fields, every problem at once.
		bad := cesionBody()
		bad["cesionario"] = map[string]any{"rut": "96790240-4", "razon_social": "F", "direccion": "Av", "email": "no-es-correo"}
		bad["monto"] = -1
		bad["ultimo_vencimiento"] = "2026-02-30"
		bad["email_notificacion"] = ""
		r = post(bad, newUUID())
		want(t, r, 400, fault.Validation)
		wantDetails := []string{"cesionario.rut INVALID_RUT", "cesionario.direccion TOO_LONG", "cesionario.email INVALID_FORMAT",
			"email_notificacion REQUIRED", "monto OUT_OF_RANGE", "ultimo_vencimiento INVALID_FORMAT"}
		if got := detailFields(t, r); !slices.Equal(got, wantDetails) {
			t.Errorf("invalid request: details %v, want %v", got, wantDetails)
		}
		// Addresses net/mail reads as bare addresses but the registry
		// refuses (no dot in the domain, an address literal): refused
		// here, not queued for an upload that cannot leave.
		for _, addr := range []string{"finanzas@empresa", "a@[10.0.0.1]"} {
			b := cesionBody()
			b["email_notificacion"] = addr
			r = post(b, newUUID())
			want(t, r, 400, fault.Validation)
			if got := detailFields(t, r); !slices.Equal(got, []string{"email_notificacion INVALID_FORMAT"}) {
				t.Errorf("email_notificacion %q: details %v", addr, got)
			}
		}
		// The cesionario is the emisor; the amount over the total.
		same := cesionBody()
		same["cesionario"].(map[string]any)["rut"] = c.rut
		r = post(same, newUUID())
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"cesionario.rut SAME_AS_EMISOR"}) {
			t.Errorf("cesionario = emisor: details %v", got)
		}
		over := cesionBody()
		over["monto"] = 1_000_000_000
		r = post(over, newUUID())
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"monto OUT_OF_RANGE"}) {
			t.Errorf("monto over the total: details %v", got)
		}

		// A read-only key, another company's key, another company's id.
		want(t, post(cesionBody(), newUUID(), c.readHdr...), 403)
		want(t, post(cesionBody(), newUUID(), f.B.writeHdr...), 404, fault.NotFound)
		want(t, f.do("GET", path, nil, f.B.readHdr...), 404, fault.NotFound)

		// Recorded, and replayed.
		key := newUUID()
		r = post(cesionBody(), key)
		want(t, r, 202)
		first := r.Body
		var ces api.Cesion
		r.JSON(t, &ces)
		// factura(2): 2 × 1500 + 2 × 1501 = 6002 net, 1140 IVA (19 %), 7142 total.
		if ces.Estado != api.CesionPendiente || ces.DTEID != id || ces.Monto != 7142 || ces.Cesionario.Rut != "96790240-3" ||
			ces.TrackID != nil || ces.Intentos != 0 || ces.EmailNotificacion != "finanzas@empresa.cl" {
			t.Errorf("cesión %+v", ces)
		}
		r = post(cesionBody(), key)
		want(t, r, 202)
		if !bytes.Equal(r.Body, first) || r.Header.Get("X-Idempotency-Replay") != "true" {
			t.Errorf("replay %s (header %q), want %s", r.Body, r.Header.Get("X-Idempotency-Replay"), first)
		}
		other := cesionBody()
		other["monto"] = 1000
		want(t, post(other, key), 422, fault.IdempotencyMismatch)
		// A second cesión while the first is in flight.
		want(t, post(other, newUUID()), 409, fault.AlreadyCeded)

		// The document shows it; the list has it.
		r = f.do("GET", apiBase+"/dte/"+id, nil, c.readHdr...)
		want(t, r, 200)
		var doc api.DTE
		r.JSON(t, &doc)
		if doc.Cesion == nil || doc.Cesion.ID != ces.ID || doc.Cedido {
			t.Errorf("document's cesión %+v, cedido %v", doc.Cesion, doc.Cedido)
		}
		r = f.do("GET", path, nil, c.readHdr...)
		want(t, r, 200)
		var page api.Page[api.Cesion]
		r.JSON(t, &page)
		if page.TotalCount != 1 || len(page.Data) != 1 || page.Data[0].ID != ces.ID {
			t.Errorf("list %+v", page)
		}

		// A double POST (two keys at once, four of them): one cesión.
		other2, _ := f.emit(c, factura(1))
		accept(t, st, c.id, other2)
		statuses := make([]int, 4)
		codes := make([]fault.Code, 4)
		var wg sync.WaitGroup
		for i := range statuses {
			wg.Go(func() {
				r := f.do("POST", apiBase+"/dte/"+other2+"/cesiones", cesionBody(), append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...)
				statuses[i], codes[i] = r.Status, r.Code()
			})
		}
		wg.Wait()
		ok := 0
		for i := range statuses {
			switch {
			case statuses[i] == 202:
				ok++
			case statuses[i] != 409 || codes[i] != fault.AlreadyCeded:
				t.Errorf("a concurrent cesión: %d %s", statuses[i], codes[i])
			}
		}
		if p, err := st.ListCesiones(context.Background(), c.id, other2, store.ListFilter{}); ok != 1 || err != nil || p.TotalCount != 1 {
			t.Errorf("%d concurrent cesiones accepted, %v recorded (%v), want 1", ok, p, err)
		}

		// A boleta is not cedible.
		bol, _ := f.emit(c, map[string]any{"tipo_dte": 39, "receptor": map[string]any{"rut": "66666666-6", "razon_social": "Consumidor final"},
			"detalle": []map[string]any{{"nombre": "Empanada", "cantidad": 1, "precio": 2500}}, "ind_servicio": 3, "auto_send": false})
		accept(t, st, c.id, bol)
		r = f.do("POST", apiBase+"/dte/"+bol+"/cesiones", cesionBody(), append(slices.Clone(c.writeHdr), "Idempotency-Key", newUUID())...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"tipo_dte NOT_CEDIBLE"}) {
			t.Errorf("boleta: details %v", got)
		}
	})
}
