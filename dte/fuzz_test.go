package dte

import (
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzTotals decodes arbitrary JSON as an emission request, validates it
// (ValidateAt) and computes its totals. ComputeTotals must never panic; it
// must succeed on every request Validate accepts; it must fail only with a
// one-detail *ValidationError; and whatever it returns must agree with an
// independent recomputation in math/big (see checkTotalsInvariants).
func FuzzTotals(f *testing.F) {
	seeds := []*EmitirDTERequest{
		tlReq(33, tlLine("3", "450"), tlLine("2.5", "1990", tlDsc("10"), tlRcg("5")), tlLine("1", "300", tlExe)),
		tlGlobals(tlReq(33, tlLine("1", "10000", tlCode(27)), tlLine("1", "500", tlNF)), tlGlobal("D", "%", "10"), tlGlobalX("R", "$", "30", 2)),
		tlTaxes(tlReq(46, tlLine("1", "10000"), tlLine("1", "2000", tlCode(27))), ImpuestoRetencion{TipoImp: 15}),
		tlTaxes(tlReq(46, tlLine("1", "12345")), ImpuestoRetencion{TipoImp: 16, TasaImp: "8"}),
		tlGlobals(tlReq(39, tlLine("1", "5000"), tlLine("1", "1000", tlExe)), tlGlobal("D", "%", "10")),
		tlGlobals(tlReq(41, tlLine("1", "3000")), tlGlobal("D", "$", "500")),
		tlReq(34, tlLine("4", "12500")),
		tlComisiones(tlReq(43, tlLine("", "", tlMonto("100000"), tlLiq), tlLine("1", "-20000", tlLiq)),
			ComisionDTE{TipoMovim: "C", Glosa: "c", ValComNeto: 10000}, ComisionDTE{TipoMovim: "O", Glosa: "o", ValComNeto: -1250}),
		tlReq(52, tlLine("5", "")),
		tlRef(tlReq(56, tlLine("2", "7990")), 1),
		tlRef(tlReq(61, LineaDetalle{Nombre: "corrige giro"}), 2),
		tlGlobals(tlExport(110, "DOLAR USA", "873.15", 0, tlLine("3", "10.12345"), tlLine("1", "1050.75", tlDsc("10"))), tlGlobal("D", "%", "7")),
		tlExport(111, "EURO", "", 21, tlLine("1", "250.25")),
		tlExport(112, "DOLAR USA", "950", 0, tlLine("3", "99.99")),
	}
	for _, s := range seeds {
		b, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// The realistic requests of the other packages' tests, when present.
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "requests", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"tipo_dte":33,"detalle":[{"nombre":"x","cantidad":"1e3","precio":-1}]}`))
	f.Add([]byte(`{"tipo_dte":110,"detalle":[{"nombre":"x","monto_item":1.00005}],"export_data":{"tpo_moneda":"PESO CL","tpo_cambio":0}}`))

	f.Fuzz(func(t *testing.T, data []byte) {
		var r EmitirDTERequest
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		// The validator's verdict does not gate ComputeTotals, which must
		// be safe on any input; a valid request may still be refused by
		// ComputeTotals with a field error (e.g. a discount larger than the
		// amount it applies to), which is checked like any other failure.
		valid := ValidateAt(&r, fuzzToday) == nil
		tot, err := ComputeTotals(&r)
		if valid && err != nil {
			t.Fatalf("Validate accepts the request but ComputeTotals refuses it: %v", err)
		}
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Details) != 1 || ve.Details[0].Code == "" || ve.Details[0].Message == "" {
				t.Fatalf("error %#v is not a one-detail *ValidationError", err)
			}
			return
		}
		checkTotalsInvariants(t, &r, tot)
	})
}

// fuzzToday fixes the validator's "today" so fuzzing is deterministic.
var fuzzToday = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fzRat parses a computed amount; an empty Decimal is zero.
func fzRat(t *testing.T, what string, d Decimal) *big.Rat {
	t.Helper()
	if d == "" {
		return new(big.Rat)
	}
	r := d.Rat()
	if r == nil {
		t.Fatalf("%s = %q is not a decimal number", what, d)
	}
	return r
}

// checkTotalsInvariants recomputes what can be recomputed from the request
// and the published amounts with math/big, independently of the int64
// fixed-point code under test.
func checkTotalsInvariants(t *testing.T, r *EmitirDTERequest, tot *Totals) {
	t.Helper()
	places := 0
	if r.TipoDTE.IsExport() {
		places = 4
	}
	if len(tot.Detalle) != len(r.Detalle) {
		t.Fatalf("%d line totals for %d lines", len(tot.Detalle), len(r.Detalle))
	}
	hundred := big.NewRat(100, 1)
	pctOf := func(base *big.Rat, pct Decimal) *big.Rat {
		p := pct.Rat()
		if p == nil {
			t.Fatalf("percentage %q accepted but not a decimal", pct)
		}
		v := new(big.Rat).Mul(base, p)
		return DecimalFromRat(v.Quo(v, hundred), 0).Rat()
	}
	for i, lt := range tot.Detalle {
		l := r.Detalle[i]
		if lt.NroLinDet != i+1 {
			t.Fatalf("line %d numbered %d", i, lt.NroLinDet)
		}
		got := fzRat(t, "MontoItem", lt.MontoItem)
		if lt.MontoItem.Places() > places {
			t.Fatalf("MontoItem %s has more than %d decimals", lt.MontoItem, places)
		}
		if l.MontoItem.IsSet() || !l.Precio.IsSet() {
			continue
		}
		qty := big.NewRat(1, 1)
		if l.Cantidad.IsSet() {
			qty = l.Cantidad.Rat()
		}
		gross := DecimalFromRat(new(big.Rat).Mul(qty, l.Precio.Rat()), places).Rat()
		want := new(big.Rat).Set(gross)
		if l.DescuentoPct.IsSet() {
			d := pctOf(gross, l.DescuentoPct)
			if !d.IsInt() || d.Cmp(fzRat(t, "DescuentoMonto", lt.DescuentoMonto)) != 0 {
				t.Fatalf("line %d DescuentoMonto %q, want %s", i, lt.DescuentoMonto, d.RatString())
			}
			want.Sub(want, d)
		}
		if l.RecargoPct.IsSet() {
			rc := pctOf(want, l.RecargoPct)
			if rc.Cmp(fzRat(t, "RecargoMonto", lt.RecargoMonto)) != 0 {
				t.Fatalf("line %d RecargoMonto %q, want %s", i, lt.RecargoMonto, rc.RatString())
			}
			want.Add(want, rc)
		}
		if got.Cmp(want) != 0 {
			t.Fatalf("line %d MontoItem %s, want %s", i, lt.MontoItem, want.RatString())
		}
	}

	tt := tot.Totales
	neto, exe, iva := fzRat(t, "MntNeto", tt.MntNeto), fzRat(t, "MntExe", tt.MntExe), fzRat(t, "IVA", tt.IVA)
	total := fzRat(t, "MntTotal", tt.MntTotal)
	switch {
	case r.TipoDTE.IsExport():
		if tt.TpoMoneda == "" || tt.MntExe == "" || tt.MntNeto != "" || tt.IVA != "" || len(tt.ImptoReten) > 0 {
			t.Fatalf("export Totales %+v", tt)
		}
		if r.ExportData.FormaPagoExp != nil && *r.ExportData.FormaPagoExp == 21 {
			if total.Sign() != 0 {
				t.Fatalf("sin pago MntTotal %s", tt.MntTotal)
			}
		} else if total.Cmp(exe) != 0 {
			t.Fatalf("export MntTotal %s ≠ MntExe %s", tt.MntTotal, tt.MntExe)
		}
		if om := tot.OtraMoneda; om != nil {
			rate := r.ExportData.TpoCambio.Rat()
			if rate == nil || om.TpoMoneda != "PESO CL" {
				t.Fatalf("OtraMoneda %+v from tpo_cambio %q", om, r.ExportData.TpoCambio)
			}
			if w := DecimalFromRat(new(big.Rat).Mul(total, rate), 0); w != om.MntTotOtrMnda {
				t.Fatalf("MntTotOtrMnda %s, want %s", om.MntTotOtrMnda, w)
			}
		}
	case r.TipoDTE == BoletaElectronica:
		gross := new(big.Rat).Add(neto, iva)
		if w := DecimalFromRat(new(big.Rat).Quo(gross, big.NewRat(119, 100)), 0); tt.MntNeto != "" && w != tt.MntNeto {
			t.Fatalf("boleta MntNeto %s, want %s from gross %s", tt.MntNeto, w, gross.RatString())
		}
		if new(big.Rat).Add(gross, exe).Cmp(total) != 0 {
			t.Fatalf("boleta MntTotal %s ≠ %s + %s + %s", tt.MntTotal, tt.MntNeto, tt.IVA, tt.MntExe)
		}
	default:
		if tt.MntNeto != "" {
			w := DecimalFromRat(new(big.Rat).Mul(neto, big.NewRat(19, 100)), 0)
			if w != tt.IVA || tt.TasaIVA != "19" {
				t.Fatalf("IVA %s (TasaIVA %s), want %s on MntNeto %s", tt.IVA, tt.TasaIVA, w, tt.MntNeto)
			}
		}
		sum := new(big.Rat).Add(neto, exe)
		sum.Add(sum, iva)
		ret := new(big.Rat)
		for _, it := range tt.ImptoReten {
			m := fzRat(t, "MontoImp", it.MontoImp)
			if it.Retencion {
				sum.Sub(sum, m)
				if it.TipoImp != 53 {
					ret.Add(ret, m)
				}
			} else {
				sum.Add(sum, m)
			}
		}
		if tt.IVANoRet != "" && new(big.Rat).Sub(iva, ret).Cmp(fzRat(t, "IVANoRet", tt.IVANoRet)) != 0 {
			t.Fatalf("IVANoRet %s ≠ IVA %s − retained %s", tt.IVANoRet, tt.IVA, ret.RatString())
		}
		if c := tt.Comisiones; c != nil {
			for _, v := range []Decimal{c.ValComNeto, c.ValComExe, c.ValComIVA} {
				sum.Sub(sum, fzRat(t, "Comisiones", v))
			}
		}
		if sum.Cmp(total) != 0 {
			t.Fatalf("MntTotal %s, want %s from %+v", tt.MntTotal, sum.RatString(), tt)
		}
		if r.TipoDTE != LiquidacionFacturaElectronica && total.Sign() < 0 {
			t.Fatalf("negative MntTotal %s on type %d", tt.MntTotal, r.TipoDTE)
		}
	}
}
