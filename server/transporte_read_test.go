package server

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// TestReadGuiaTransporte: a guía de despacho emitted with transport data
// reads them back on GET /dte/{id} and in the list, with the request's
// field names and values as sent (written here by hand from
// testdata/requests/guia_despacho.json); a guía with part of the block (in
// certificación, where that is an advertencia) reads back just that part;
// a factura without one has no transporte key. Every answer is checked
// against the OpenAPI document (fixture.do). On both backends.
func TestReadGuiaTransporte(t *testing.T) {
	t.Parallel()
	guia, err := os.ReadFile(filepath.Join("..", "testdata", "requests", "guia_despacho.json"))
	if err != nil {
		t.Fatal(err)
	}
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f := newFixture(t, open(t), RateLimit{PerSecond: -1})
		const apiBase = "/api/v1/billing"
		c := f.provision(context.Background(), billingtest.Company{Rut: "96512340-7", RazonSocial: "Distribuidora Bío-Bío Ltda.",
			Tipos: []dte.TipoDTE{33, 52}, Hasta: 10})
		emit := func(body any) string {
			t.Helper()
			r := f.do("POST", apiBase+"/dte", body, append(c.writeHdr, "Idempotency-Key", newUUID())...)
			want(t, r, 201)
			var out api.EmitResponse
			r.JSON(t, &out)
			return out.ID
		}
		// transporteOf is the transporte member of a document's JSON
		// (nil, false when the key is absent).
		transporteOf := func(body map[string]any) (any, bool) {
			v, ok := body["transporte"]
			return v, ok
		}
		get := func(id string) map[string]any {
			t.Helper()
			r := f.do("GET", apiBase+"/dte/"+id, nil, c.readHdr...)
			want(t, r, 200)
			var m map[string]any
			r.JSON(t, &m)
			return m
		}

		full := emit(guia)
		wantFull := map[string]any{
			"patente":           "KXRT45",
			"rut_transportista": "77123456-9",
			"chofer":            map[string]any{"rut": "16789012-1", "nombre": "Juan Ñancucheo Pérez"},
			"direccion_destino": "Obra Los Canelos, Camino a Penco 1480",
			"comuna_destino":    "Penco",
			"ciudad_destino":    "Penco",
		}
		if got, ok := transporteOf(get(full)); !ok {
			t.Errorf("GET /dte/{id} of a guía with transporte has no transporte")
		} else if d := cmp.Diff(wantFull, got); d != "" {
			t.Errorf("GET /dte/{id} transporte (-want +got):\n%s", d)
		}

		part := map[string]any{
			"tipo_dte": 52, "ind_traslado": 5,
			"receptor":   map[string]any{"rut": "76354771-K", "razon_social": "Ferretería O'Brien & Cía. Ltda.", "giro": "Ferretería", "direccion": "Av. Pedro de Valdivia 2210", "comuna": "Concepción", "ciudad": "Concepción"},
			"detalle":    []map[string]any{{"nombre": "Andamio modular", "cantidad": 4, "precio": 15000}},
			"transporte": map[string]any{"patente": "BBCL12", "chofer": map[string]any{"rut": "11111111-1", "nombre": "Ana Pérez"}},
		}
		partial := emit(part)
		wantPart := map[string]any{"patente": "BBCL12", "chofer": map[string]any{"rut": "11111111-1", "nombre": "Ana Pérez"}}
		if got, _ := transporteOf(get(partial)); !cmp.Equal(wantPart, got) {
			t.Errorf("GET /dte/{id} of a partial transporte (-want +got):\n%s", cmp.Diff(wantPart, got))
		}

		fact := emit(factura(1))
		if got, ok := transporteOf(get(fact)); ok {
			t.Errorf("a factura without transporte reads transporte %v", got)
		}

		// The list shows the same.
		r := f.do("GET", apiBase+"/dte?limit=10", nil, c.readHdr...)
		want(t, r, 200)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		r.JSON(t, &page)
		seen := 0
		for _, it := range page.Items {
			got, ok := transporteOf(it)
			switch it["id"] {
			case full:
				seen++
				if d := cmp.Diff(wantFull, got); d != "" {
					t.Errorf("list: the guía's transporte (-want +got):\n%s", d)
				}
			case partial:
				seen++
				if d := cmp.Diff(wantPart, got); d != "" {
					t.Errorf("list: the partial guía's transporte (-want +got):\n%s", d)
				}
			case fact:
				seen++
				if ok {
					t.Errorf("list: the factura reads transporte %v", got)
				}
			}
		}
		if seen != 3 {
			t.Errorf("the list showed %d of the 3 documents", seen)
		}
	})
}
