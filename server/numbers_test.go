package server

import (
	"bytes"
	"encoding/json"
	"github.com/dtekit/dtekit/api"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/store"
)

// TestNumbersAsSent, on both backends: a metadata integer beyond 2^53
// (2^53+1, -(2^64+1)) and a decimal with its trailing zero come back from
// GET /dte/{id} and the list with every digit they were sent with (a
// float64 would round 9007199254740993 to …992); a precio, cantidad or
// valor_dr given as a JSON string is refused with 400 INVALID_TYPE naming
// the field, as tipo_dte "33" is.
func TestNumbersAsSent(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f := newFixture(t, open(t), RateLimit{PerSecond: -1})
		req := factura(1)
		req["metadata"] = map[string]any{"pedido": json.Number("9007199254740993"), "saldo": json.Number("-18446744073709551617"),
			"tasa": json.Number("1.10"), "lista": []any{json.Number("9007199254740995")}}
		id, _ := f.emit(f.A, req)
		for _, target := range []string{apiBase + "/dte/" + id, apiBase + "/dte?limit=1"} {
			r := f.do("GET", target, nil, f.A.readHdr...)
			want(t, r, 200)
			for _, digits := range []string{`"pedido":9007199254740993`, `"saldo":-18446744073709551617`, `"tasa":1.10`, `"lista":[9007199254740995]`} {
				if !bytes.Contains(r.Body, []byte(digits)) {
					t.Errorf("GET %s: %s is not in %s", target, digits, truncate(r.Body))
				}
			}
		}
		for field, set := range map[string]func(m map[string]any){
			"detalle[0].precio":   func(m map[string]any) { m["detalle"].([]map[string]any)[0]["precio"] = "1990" },
			"detalle[0].cantidad": func(m map[string]any) { m["detalle"].([]map[string]any)[0]["cantidad"] = "2" },
			"descuentos_globales[0].valor_dr": func(m map[string]any) {
				m["descuentos_globales"] = []any{map[string]any{"tpo_mov": "D", "tpo_valor": "%", "valor_dr": "5"}}
			},
		} {
			req := factura(1)
			set(req)
			r := f.do("POST", apiBase+"/dte", req, append(f.A.writeHdr, "Idempotency-Key", newUUID())...)
			want(t, r, 400, fault.Validation)
			var env api.ErrorResponse
			r.JSON(t, &env)
			if len(env.Details) != 1 || env.Details[0].Field != field || env.Details[0].Code != "INVALID_TYPE" {
				t.Errorf("%s as a string: %+v, want one INVALID_TYPE detail on it", field, env.Details)
			}
		}
	})
}
