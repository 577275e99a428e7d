package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestExportAmountsDoNotMixCurrencies: the monto_* fields of an export
// document are pesos, and its own currency's amounts are in
// montos_moneda_extranjera.
//
// testdata/requests/factura_exportacion.json, by hand: 600 × 12.50 = 7,500
// plus 400 × 27.65 = 11,060 less 2 % (221.20, a line discount is a whole
// amount: 221) = 10,839; MntExe = MntTotal = 18,339 DOLAR USA. At
// tpo_cambio 935.27 that is 17,151,916.53 pesos, 17,151,917 as an integer.
func TestExportAmountsDoNotMixCurrencies(t *testing.T) {
	t.Parallel()
	be := billingtest.Backends()[0]
	f := newFixture(t, be.NewStore(t), RateLimit{PerSecond: -1})
	c := f.provision(context.Background(), billingtest.Company{Rut: "11111111-1", RazonSocial: "Exportadora", Tipos: []dte.TipoDTE{110}})
	b, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), "testdata", "requests", "factura_exportacion.json"))
	if err != nil {
		t.Fatal(err)
	}
	type amounts struct {
		MontoExento *int64 `json:"monto_exento"`
		MontoTotal  int64  `json:"monto_total"`
		Moneda      *struct {
			TpoMoneda   string   `json:"tpo_moneda"`
			MontoExento *float64 `json:"monto_exento"`
			MontoTotal  float64  `json:"monto_total"`
			TpoCambio   *float64 `json:"tpo_cambio"`
		} `json:"montos_moneda_extranjera"`
	}
	read := func(body []byte) amounts {
		t.Helper()
		id, r := f.emit(c, json.RawMessage(body))
		var em amounts
		r.JSON(t, &em)
		g := f.do("GET", "/api/v1/billing/dte/"+id, nil, c.readHdr...)
		want(t, g, 200)
		var a amounts
		g.JSON(t, &a)
		if em.MontoTotal != a.MontoTotal {
			t.Errorf("the emission answered monto_total %d, the document reads %d", em.MontoTotal, a.MontoTotal)
		}
		return a
	}

	a := read(b)
	if a.MontoTotal != 17151917 || a.MontoExento == nil || *a.MontoExento != 17151917 {
		t.Errorf("CLP amounts: monto_total %d, monto_exento %v; want 17151917 both", a.MontoTotal, deref(a.MontoExento))
	}
	if m := a.Moneda; m == nil || m.TpoMoneda != "DOLAR USA" || m.MontoTotal != 18339 || m.MontoExento == nil || *m.MontoExento != 18339 ||
		m.TpoCambio == nil || *m.TpoCambio != 935.27 {
		t.Errorf("montos_moneda_extranjera = %+v, want DOLAR USA 18339 exento and total at 935.27", m)
	}

	// Without tpo_cambio there is no peso amount: monto_total 0 and
	// monto_exento null, never the dollars.
	var req map[string]any
	json.Unmarshal(b, &req)
	delete(req["export_data"].(map[string]any), "tpo_cambio")
	nb, _ := json.Marshal(req)
	a = read(nb)
	if a.MontoTotal != 0 || a.MontoExento != nil {
		t.Errorf("without a conversion: monto_total %d, monto_exento %v; want 0 and null", a.MontoTotal, deref(a.MontoExento))
	}
	if m := a.Moneda; m == nil || m.MontoTotal != 18339 || m.TpoCambio != nil {
		t.Errorf("without a conversion: montos_moneda_extranjera = %+v", m)
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
