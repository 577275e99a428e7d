package server

import (
	"bytes"
	"context"
	"github.com/dtekit/dtekit/api"
	"testing"

	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// TestEmitFromStoredRecords: an emission names a cliente, catalog
// productos and an earlier document by id; the service fills what the
// request leaves out (explicit fields win), the strict decoder and the
// validation gate apply as before, and the Idempotency-Key compares the
// request as sent.
func TestEmitFromStoredRecords(t *testing.T) {
	t.Parallel()
	be := billingtest.Backends()[0]
	f := newFixture(t, be.NewStore(t), RateLimit{PerSecond: -1})
	c := f.provision(context.Background(), billingtest.Company{Rut: "11111111-1", RazonSocial: "Empresa Catálogo", Tipos: []dte.TipoDTE{33, 61}})
	const apiBase = "/api/v1/billing"
	id := func(r *response) string {
		t.Helper()
		var v struct{ ID string }
		r.JSON(t, &v)
		return v.ID
	}
	r := f.do("POST", apiBase+"/clientes", map[string]any{"rut": "76086428-5", "razon_social": "Cliente del Catálogo SpA", "giro": "Comercio",
		"direccion": "Av. Apoquindo 4500", "comuna": "Las Condes", "ciudad": "Santiago"}, c.writeHdr...)
	want(t, r, 201)
	cliente := id(r)
	r = f.do("POST", apiBase+"/productos", map[string]any{"codigo": "RES-1", "nombre": "Resma papel carta", "precio_unitario": 4990, "unidad": "UN"}, c.writeHdr...)
	want(t, r, 201)
	resma := id(r)
	r = f.do("POST", apiBase+"/productos", map[string]any{"codigo": "CUR-1", "nombre": "Curso de capacitación", "precio_unitario": 100000, "es_exento": true}, c.writeHdr...)
	want(t, r, 201)
	curso := id(r)

	body := map[string]any{"tipo_dte": 33, "cliente_id": cliente, "auto_send": false,
		"receptor": map[string]any{"direccion": "Huérfanos 1234"}, // wins over the cliente's
		"detalle": []map[string]any{
			{"producto_id": resma, "cantidad": 10},
			{"producto_id": resma, "cantidad": 2, "precio": 4500, "nombre": "Resma papel carta (oferta)"},
			{"producto_id": curso, "cantidad": 1},
		}}
	key := newUUID()
	r = f.do("POST", apiBase+"/dte", body, append(c.writeHdr, "Idempotency-Key", key)...)
	want(t, r, 201)
	var em api.EmitResponse
	r.JSON(t, &em)
	// By hand: 10 × 4,990 = 49,900 and 2 × 4,500 = 9,000 are taxable:
	// neto 58,900, IVA 19 % = 11,191; the course is exempt: 100,000.
	// Total 58,900 + 11,191 + 100,000 = 170,091.
	if em.MontoTotal != 170091 {
		t.Errorf("monto_total %d, want 170091", em.MontoTotal)
	}
	r = f.do("GET", apiBase+"/dte/"+em.ID, nil, c.readHdr...)
	want(t, r, 200)
	var d api.DTE
	r.JSON(t, &d)
	if d.RutReceptor != "76086428-5" || d.RazonSocialReceptor != "Cliente del Catálogo SpA" {
		t.Errorf("receptor %s %q, want the cliente's", d.RutReceptor, d.RazonSocialReceptor)
	}
	if len(d.Detalle) != 3 || d.Detalle[0].Nombre != "Resma papel carta" || d.Detalle[0].Precio != "4990" || d.Detalle[0].Unidad != "UN" ||
		d.Detalle[1].Nombre != "Resma papel carta (oferta)" || d.Detalle[1].Precio != "4500" ||
		d.Detalle[2].Nombre != "Curso de capacitación" || d.Detalle[2].IndExe == nil || *d.Detalle[2].IndExe != 1 {
		t.Errorf("detalle %+v", d.Detalle)
	}
	if d.MontoNeto == nil || *d.MontoNeto != 58900 || d.MontoExento == nil || *d.MontoExento != 100000 || d.IVA == nil || *d.IVA != 11191 {
		t.Errorf("amounts neto %v exento %v iva %v", deref(d.MontoNeto), deref(d.MontoExento), deref(d.IVA))
	}
	r = f.do("GET", apiBase+"/dte/"+em.ID+"/xml", nil, c.readHdr...)
	want(t, r, 200)
	for _, s := range []string{"<DirRecep>Hu\xe9rfanos 1234</DirRecep>", "<CmnaRecep>Las Condes</CmnaRecep>", "<GiroRecep>Comercio</GiroRecep>"} {
		if !contains(r.Body, s) {
			t.Errorf("the signed XML lacks %q", s)
		}
	}

	// The same key and body after the catalog changed: the first answer.
	want(t, f.do("PUT", apiBase+"/productos/"+resma, map[string]any{"precio_unitario": 5990}, c.writeHdr...), 200)
	r = f.do("POST", apiBase+"/dte", body, append(c.writeHdr, "Idempotency-Key", key)...)
	want(t, r, 201)
	var again api.EmitResponse
	r.JSON(t, &again)
	if r.Header.Get("X-Idempotency-Replay") != "true" || again.ID != em.ID || again.MontoTotal != em.MontoTotal {
		t.Errorf("replay after a catalog change: %+v (replay %q)", again, r.Header.Get("X-Idempotency-Replay"))
	}

	// A nota de crédito referring to the factura by id.
	nc := map[string]any{"tipo_dte": 61, "cliente_id": cliente, "auto_send": false,
		"detalle":     []map[string]any{{"producto_id": resma, "cantidad": 1}},
		"referencias": []map[string]any{{"dte_id": em.ID, "codigo_ref": 3, "razon_ref": "Devolución de una resma"}}}
	r = f.do("POST", apiBase+"/dte", nc, append(c.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 201)
	r = f.do("GET", apiBase+"/dte/"+id(r), nil, c.readHdr...)
	want(t, r, 200)
	var n api.DTE
	r.JSON(t, &n)
	if len(n.Referencias) != 1 || n.Referencias[0].TipoDocRef != dte.RefTipo(33) || n.Referencias[0].FolioRef != em.Folio || n.Referencias[0].FechaRef != d.FechaEmision {
		t.Errorf("referencias %+v, want tipo 33 folio %d fecha %s", n.Referencias, em.Folio, d.FechaEmision)
	}
	if n.Detalle[0].Precio != "5990" {
		t.Errorf("the nota takes the producto's price at its emission (5990), got %s", n.Detalle[0].Precio)
	}

	// Ids the company does not have: one detail each, no folio taken.
	other := f.B
	r = f.do("POST", apiBase+"/clientes", map[string]any{"rut": "96790240-3", "razon_social": "Cliente de B"}, other.writeHdr...)
	want(t, r, 201)
	ofB := id(r)
	bad := map[string]any{"tipo_dte": 33, "cliente_id": ofB,
		"detalle":     []map[string]any{{"producto_id": newUUID(), "cantidad": 1}, {"nombre": "x", "cantidad": 1, "precio": 1}},
		"referencias": []map[string]any{{"dte_id": "not-a-uuid", "razon_ref": "x"}}}
	r = f.do("POST", apiBase+"/dte", bad, append(c.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 400, fault.Validation)
	var env api.ErrorResponse
	r.JSON(t, &env)
	got := map[string]dte.DetailCode{}
	for _, fe := range env.Details {
		got[fe.Field] = fe.Code
	}
	for _, field := range []string{"cliente_id", "detalle[0].producto_id", "referencias[0].dte_id"} {
		if got[field] != fault.DetailNotFound {
			t.Errorf("detail on %s: %q, want NOT_FOUND (details %+v)", field, got[field], env.Details)
		}
	}
	// An unknown member is still refused by the strict decoder.
	r = f.do("POST", apiBase+"/dte", `{"tipo_dte":33,"cliente_id":"`+cliente+`","cliente":"x","detalle":[{"producto_id":"`+resma+`","cantidad":1}]}`,
		append(c.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 400, fault.Validation)
	// The next factura takes the next folio: the failures took none.
	r = f.do("POST", apiBase+"/dte", map[string]any{"tipo_dte": 33, "cliente_id": cliente, "auto_send": false,
		"detalle": []map[string]any{{"producto_id": resma, "cantidad": 1}}}, append(c.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 201)
	var next api.EmitResponse
	r.JSON(t, &next)
	if next.Folio != em.Folio+1 {
		t.Errorf("folio %d after %d: a refused request took a folio", next.Folio, em.Folio)
	}
}

func contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }
