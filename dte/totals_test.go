package dte

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The expected values in this file are computed by hand from the rules of
// the SII domain notes §2 (the arithmetic is in each case's comment); none
// comes from running ComputeTotals.

type tlOpt func(*LineaDetalle)

// ln builds a line of cantidad q and precio p ("" leaves a field absent).
func tlLine(q, p string, opts ...tlOpt) LineaDetalle {
	l := LineaDetalle{Nombre: "item", Cantidad: Decimal(q), Precio: Decimal(p)}
	for _, o := range opts {
		o(&l)
	}
	return l
}

func tlInt(n int) *int       { return &n }
func tlInt64(n int64) *int64 { return &n }

func tlExe(l *LineaDetalle)           { l.IndExe = tlInt(1) }
func tlNF(l *LineaDetalle)            { l.IndExe = tlInt(2) }
func tlDsc(p string) tlOpt            { return func(l *LineaDetalle) { l.DescuentoPct = Decimal(p) } }
func tlRcg(p string) tlOpt            { return func(l *LineaDetalle) { l.RecargoPct = Decimal(p) } }
func tlCode(c int) tlOpt              { return func(l *LineaDetalle) { l.CodImpAdic = tlInt(c) } }
func tlMonto(m string) tlOpt          { return func(l *LineaDetalle) { l.MontoItem = Decimal(m) } }
func tlLiq(l *LineaDetalle)           { l.TipoDocLiq = "33" }
func tlMI(n int, m string) LineTotals { return LineTotals{NroLinDet: n, MontoItem: Decimal(m)} }
func tlGlobal(tipo, mov, val string) DscRcgGlobal {
	return DscRcgGlobal{TpoMov: tipo, TpoValor: mov, ValorDR: Decimal(val)}
}
func tlGlobalX(tipo, mov, val string, ind int) DscRcgGlobal {
	g := tlGlobal(tipo, mov, val)
	g.IndExeDR = tlInt(ind)
	return g
}

// rq builds a request of type t with the given lines.
func tlReq(t TipoDTE, lines ...LineaDetalle) *EmitirDTERequest {
	return &EmitirDTERequest{
		TipoDTE:  t,
		Receptor: Receptor{Rut: "76086428-5", RazonSocial: "Cliente SpA"},
		Detalle:  lines,
	}
}

func tlGlobals(r *EmitirDTERequest, g ...DscRcgGlobal) *EmitirDTERequest {
	r.DescuentosGlobales = g
	return r
}

func tlTaxes(r *EmitirDTERequest, t ...ImpuestoRetencion) *EmitirDTERequest {
	r.ImpuestosRetenciones = t
	return r
}

func tlComisiones(r *EmitirDTERequest, c ...ComisionDTE) *EmitirDTERequest {
	r.Comisiones = c
	return r
}

func tlRef(r *EmitirDTERequest, codigo int) *EmitirDTERequest {
	r.Referencias = []Referencia{{TipoDocRef: RefTipo(33), FolioRef: 120, FechaRef: "2025-03-01", CodigoRef: tlInt(codigo), RazonRef: "ref"}}
	return r
}

func tlExport(t TipoDTE, moneda, cambio string, forma int, lines ...LineaDetalle) *EmitirDTERequest {
	r := tlReq(t, lines...)
	r.ExportData = &ExportData{TpoMoneda: moneda, TpoCambio: Decimal(cambio)}
	if forma != 0 {
		r.ExportData.FormaPagoExp = tlInt(forma)
	}
	if t != FacturaExportacionElectronica {
		r.Referencias = []Referencia{{TipoDocRef: RefTipo(110), FolioRef: 7, FechaRef: "2025-03-01", CodigoRef: tlInt(3), RazonRef: "ajuste"}}
	}
	return r
}

// afecto is the usual Totales of a taxable document.
func tlAfecto(neto, iva, total string) Totales {
	return Totales{MntNeto: Decimal(neto), TasaIVA: "19", IVA: Decimal(iva), MntTotal: Decimal(total)}
}

func TestComputeTotals(t *testing.T) {
	cases := []struct {
		name string
		req  *EmitirDTERequest
		want Totals
	}{
		// ---- 33 factura: lines, rounding, IVA once ----
		{
			// 3 × 450 = 1350; IVA 1350 × 0.19 = 256.5 → 257 (half up); total 1350 + 257 = 1607.
			"33 IVA on .5 rounds up", tlReq(33, tlLine("3", "450")),
			Totals{Detalle: []LineTotals{tlMI(1, "1350")}, Totales: tlAfecto("1350", "257", "1607")},
		},
		{
			// 2.5 × 1990 = 4975; IVA 945.25 → 945; total 5920.
			"33 decimal quantity", tlReq(33, tlLine("2.5", "1990")),
			Totals{Detalle: []LineTotals{tlMI(1, "4975")}, Totales: tlAfecto("4975", "945", "5920")},
		},
		{
			// 1.5 × 333 = 499.5 → 500; IVA 95 exactly; total 595.
			"33 line amount .5 rounds up", tlReq(33, tlLine("1.5", "333")),
			Totals{Detalle: []LineTotals{tlMI(1, "500")}, Totales: tlAfecto("500", "95", "595")},
		},
		{
			// 7 × 12.35 = 86.45 → 86; IVA 16.34 → 16; total 102.
			"33 decimal price", tlReq(33, tlLine("7", "12.35")),
			Totals{Detalle: []LineTotals{tlMI(1, "86")}, Totales: tlAfecto("86", "16", "102")},
		},
		{
			// 0.333333 × 3 = 0.999999 → 1; 0.000001 × 499999 = 0.499999 → 0;
			// neto 1; IVA 0.19 → 0; total 1.
			"33 six-decimal quantities", tlReq(33, tlLine("0.333333", "3"), tlLine("0.000001", "499999")),
			Totals{Detalle: []LineTotals{tlMI(1, "1"), tlMI(2, "0")}, Totales: tlAfecto("1", "0", "1")},
		},
		{
			// Three lines of 3: neto 9; IVA once 9 × 0.19 = 1.71 → 2
			// (per line it would be 0.57 → 1, three times = 3); total 11.
			"33 IVA once on the total, not per line", tlReq(33, tlLine("1", "3"), tlLine("1", "3"), tlLine("1", "3")),
			Totals{Detalle: []LineTotals{tlMI(1, "3"), tlMI(2, "3"), tlMI(3, "3")}, Totales: tlAfecto("9", "2", "11")},
		},
		{
			// price omitted quantity → 1 × 4990 = 4990; IVA 948.1 → 948; total 5938.
			"33 cantidad omitted means 1", tlReq(33, tlLine("", "4990")),
			Totals{Detalle: []LineTotals{tlMI(1, "4990")}, Totales: tlAfecto("4990", "948", "5938")},
		},
		{
			// monto_item 301 kept although 3 × 100 = 300; IVA 57.19 → 57; total 358.
			"33 explicit monto_item kept", tlReq(33, tlLine("3", "100", tlMonto("301"))),
			Totals{Detalle: []LineTotals{tlMI(1, "301")}, Totales: tlAfecto("301", "57", "358")},
		},
		// ---- line discounts and surcharges ----
		{
			// 10 × 995 = 9950; discount 10 % = 995; MontoItem 8955;
			// IVA 1701.45 → 1701; total 10656.
			"33 line discount", tlReq(33, tlLine("10", "995", tlDsc("10"))),
			Totals{Detalle: []LineTotals{{NroLinDet: 1, MontoItem: "8955", DescuentoMonto: "995"}}, Totales: tlAfecto("8955", "1701", "10656")},
		},
		{
			// 1 × 1005; discount 10 % = 100.5 → 101; MontoItem 904; IVA 171.76 → 172; total 1076.
			"33 line discount .5 rounds up", tlReq(33, tlLine("1", "1005", tlDsc("10"))),
			Totals{Detalle: []LineTotals{{NroLinDet: 1, MontoItem: "904", DescuentoMonto: "101"}}, Totales: tlAfecto("904", "172", "1076")},
		},
		{
			// 1 × 2000; discount 15 % = 300 → 1700; surcharge 5 % of 1700 = 85;
			// MontoItem 1785; IVA 339.15 → 339; total 2124.
			"33 line discount then surcharge", tlReq(33, tlLine("1", "2000", tlDsc("15"), tlRcg("5"))),
			Totals{Detalle: []LineTotals{{NroLinDet: 1, MontoItem: "1785", DescuentoMonto: "300", RecargoMonto: "85"}}, Totales: tlAfecto("1785", "339", "2124")},
		},
		{
			// 1 × 40; discount 1 % = 0.4 → 0: no DescuentoMonto; MontoItem 40; IVA 7.6 → 8; total 48.
			"33 discount rounding to zero is omitted", tlReq(33, tlLine("1", "40", tlDsc("1"))),
			Totals{Detalle: []LineTotals{tlMI(1, "40")}, Totales: tlAfecto("40", "8", "48")},
		},
		// ---- buckets ----
		{
			// taxable 2 × 5000 = 10000, exempt 1 × 3000; IVA 1900; total 10000 + 3000 + 1900 = 14900.
			"33 taxable and exempt lines", tlReq(33, tlLine("2", "5000"), tlLine("1", "3000", tlExe)),
			Totals{
				Detalle: []LineTotals{tlMI(1, "10000"), {NroLinDet: 2, MontoItem: "3000", IndExe: 1}},
				Totales: Totales{MntNeto: "10000", MntExe: "3000", TasaIVA: "19", IVA: "1900", MntTotal: "14900"},
			},
		},
		{
			// only exempt lines: MntExe 2 × 2500 = 5000 = MntTotal; no MntNeto/IVA.
			"33 only exempt lines", tlReq(33, tlLine("2", "2500", tlExe)),
			Totals{Detalle: []LineTotals{{NroLinDet: 1, MontoItem: "5000", IndExe: 1}}, Totales: Totales{MntExe: "5000", MntTotal: "5000"}},
		},
		{
			// taxable 1000 (IVA 190), not-billable line 500 → MontoNF 500, not in MntTotal: 1190.
			"33 not-billable line (ind_exe 2)", tlReq(33, tlLine("1", "1000"), tlLine("1", "500", tlNF)),
			Totals{
				Detalle: []LineTotals{tlMI(1, "1000"), {NroLinDet: 2, MontoItem: "500", IndExe: 2}},
				Totales: Totales{MntNeto: "1000", TasaIVA: "19", IVA: "190", MntTotal: "1190", MontoNF: "500"},
			},
		},
		// ---- global discounts / surcharges ----
		{
			// 10000; D 10 % = 1000 → neto 9000; IVA 1710; total 10710.
			"33 global % discount", tlGlobals(tlReq(33, tlLine("1", "10000")), tlGlobal("D", "%", "10")),
			Totals{Detalle: []LineTotals{tlMI(1, "10000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "1000"}},
				Totales: tlAfecto("9000", "1710", "10710")},
		},
		{
			// 10000; D $1500 → 8500; IVA 1615; total 10115.
			"33 global $ discount", tlGlobals(tlReq(33, tlLine("1", "10000")), tlGlobal("D", "$", "1500")),
			Totals{Detalle: []LineTotals{tlMI(1, "10000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "1500"}},
				Totales: tlAfecto("8500", "1615", "10115")},
		},
		{
			// 10000; D 10 % = 1000 → 9000; then R 5 % of the running 9000 = 450 → 9450;
			// IVA 1795.5 → 1796; total 11246.
			"33 global movements in order", tlGlobals(tlReq(33, tlLine("1", "10000")), tlGlobal("D", "%", "10"), tlGlobal("R", "%", "5")),
			Totals{Detalle: []LineTotals{tlMI(1, "10000")},
				DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "1000"}, {NroLinDR: 2, TpoMov: "R", Monto: "450"}},
				Totales:      tlAfecto("9450", "1796", "11246")},
		},
		{
			// 12345; D 3.5 % = 432.075 → 432 → 11913; IVA 2263.47 → 2263; total 14176.
			"33 global % with decimals", tlGlobals(tlReq(33, tlLine("1", "12345")), tlGlobal("D", "%", "3.5")),
			Totals{Detalle: []LineTotals{tlMI(1, "12345")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "432"}},
				Totales: tlAfecto("11913", "2263", "14176")},
		},
		{
			// taxable 10000, exempt 5000; D 10 % ind_exe_dr 1 → 500 off the exempt: 4500;
			// IVA 1900 on the untouched neto; total 10000 + 4500 + 1900 = 16400.
			"33 global discount on the exempt bucket",
			tlGlobals(tlReq(33, tlLine("1", "10000"), tlLine("1", "5000", tlExe)), tlGlobalX("D", "%", "10", 1)),
			Totals{Detalle: []LineTotals{tlMI(1, "10000"), {NroLinDet: 2, MontoItem: "5000", IndExe: 1}},
				DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "500", IndExeDR: 1}},
				Totales:      Totales{MntNeto: "10000", MntExe: "4500", TasaIVA: "19", IVA: "1900", MntTotal: "16400"}},
		},
		{
			// taxable 1000 (IVA 190, total 1190); R $300 ind_exe_dr 2 → MontoNF 300, outside MntTotal.
			"33 not-billable $ surcharge", tlGlobals(tlReq(33, tlLine("1", "1000")), tlGlobalX("R", "$", "300", 2)),
			Totals{Detalle: []LineTotals{tlMI(1, "1000")},
				DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "R", Monto: "300", IndExeDR: 2}},
				Totales:      Totales{MntNeto: "1000", TasaIVA: "19", IVA: "190", MntTotal: "1190", MontoNF: "300"}},
		},
		{
			// not-billable line 500; D 10 % ind_exe_dr 2 = 50 → MontoNF 450; taxable 2000, IVA 380, total 2380.
			"33 not-billable % discount", tlGlobals(tlReq(33, tlLine("1", "2000"), tlLine("1", "500", tlNF)), tlGlobalX("D", "%", "10", 2)),
			Totals{Detalle: []LineTotals{tlMI(1, "2000"), {NroLinDet: 2, MontoItem: "500", IndExe: 2}},
				DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "50", IndExeDR: 2}},
				Totales:      Totales{MntNeto: "2000", TasaIVA: "19", IVA: "380", MntTotal: "2380", MontoNF: "450"}},
		},
		{
			// nro_lin_dr given (7) is kept. 5000; R $ 250 → 5250; IVA 997.5 → 998; total 6248.
			"33 global surcharge keeps nro_lin_dr", func() *EmitirDTERequest {
				g := tlGlobal("R", "$", "250")
				g.NroLinDR = tlInt(7)
				return tlGlobals(tlReq(33, tlLine("1", "5000")), g)
			}(),
			Totals{Detalle: []LineTotals{tlMI(1, "5000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 7, TpoMov: "R", Monto: "250"}},
				Totales: tlAfecto("5250", "998", "6248")},
		},
		// ---- additional taxes and retentions ----
		{
			// bebida 24 × 800 = 19200 with code 27 (default 10 %) → 1920; other line 5000;
			// neto 24200; IVA 4598; total 24200 + 4598 + 1920 = 30718.
			"33 line code 27 at the legal 10 %", tlReq(33, tlLine("24", "800", tlCode(27)), tlLine("1", "5000")),
			Totals{Detalle: []LineTotals{tlMI(1, "19200"), tlMI(2, "5000")},
				Totales: Totales{MntNeto: "24200", TasaIVA: "19", IVA: "4598",
					ImptoReten: []ImptoReten{{TipoImp: 27, TasaImp: "10", MontoImp: "1920"}}, MntTotal: "30718"}},
		},
		{
			// 12 × 1000 = 12000 with code 271 at tasa 18 → 2160; IVA 2280; total 16440.
			"33 code 271 with tasa_imp", tlTaxes(tlReq(33, tlLine("12", "1000", tlCode(271))), ImpuestoRetencion{TipoImp: 271, TasaImp: "18"}),
			Totals{Detalle: []LineTotals{tlMI(1, "12000")},
				Totales: Totales{MntNeto: "12000", TasaIVA: "19", IVA: "2280",
					ImptoReten: []ImptoReten{{TipoImp: 271, TasaImp: "18", MontoImp: "2160"}}, MntTotal: "16440"}},
		},
		{
			// 10001 with code 24 (31.5 %) → 3150.315 → 3150; IVA 1900.19 → 1900; total 10001 + 1900 + 3150 = 15051.
			"33 code 24 licores 31.5 %", tlReq(33, tlLine("1", "10001", tlCode(24))),
			Totals{Detalle: []LineTotals{tlMI(1, "10001")},
				Totales: Totales{MntNeto: "10001", TasaIVA: "19", IVA: "1900",
					ImptoReten: []ImptoReten{{TipoImp: 24, TasaImp: "31.5", MontoImp: "3150"}}, MntTotal: "15051"}},
		},
		{
			// 5000 with code 27; monto_imp 999 wins over tasa 10 (which would give 500);
			// IVA 950; total 5000 + 950 + 999 = 6949.
			"33 monto_imp wins over the rate", tlTaxes(tlReq(33, tlLine("1", "5000", tlCode(27))), ImpuestoRetencion{TipoImp: 27, TasaImp: "10", MontoImp: tlInt64(999)}),
			Totals{Detalle: []LineTotals{tlMI(1, "5000")},
				Totales: Totales{MntNeto: "5000", TasaIVA: "19", IVA: "950",
					ImptoReten: []ImptoReten{{TipoImp: 27, TasaImp: "10", MontoImp: "999"}}, MntTotal: "6949"}},
		},
		{
			// code 23 given only in impuestos_retenciones: base MntNeto 2000 × 15 % = 300;
			// IVA 380; total 2680.
			"33 header tax based on MntNeto", tlTaxes(tlReq(33, tlLine("2", "1000")), ImpuestoRetencion{TipoImp: 23, TasaImp: "15"}),
			Totals{Detalle: []LineTotals{tlMI(1, "2000")},
				Totales: Totales{MntNeto: "2000", TasaIVA: "19", IVA: "380",
					ImptoReten: []ImptoReten{{TipoImp: 23, TasaImp: "15", MontoImp: "300"}}, MntTotal: "2680"}},
		},
		{
			// code 25: 2 × 1000 = 2000 × 20.5 % = 410; code 26: 3 × 700 = 2100 × 20.5 % = 430.5 → 431;
			// plain line 500; neto 4600; IVA 874; total 4600 + 874 + 410 + 431 = 6315.
			"33 two codes, each on its own lines", tlReq(33, tlLine("2", "1000", tlCode(25)), tlLine("3", "700", tlCode(26)), tlLine("1", "500")),
			Totals{Detalle: []LineTotals{tlMI(1, "2000"), tlMI(2, "2100"), tlMI(3, "500")},
				Totales: Totales{MntNeto: "4600", TasaIVA: "19", IVA: "874",
					ImptoReten: []ImptoReten{{TipoImp: 25, TasaImp: "20.5", MontoImp: "410"}, {TipoImp: 26, TasaImp: "20.5", MontoImp: "431"}},
					MntTotal:   "6315"}},
		},
		{
			// lines 10000 (code 27) + 10000; D 10 % → 2000 → neto 18000;
			// code 27 base prorated 10000 × 18000 / 20000 = 9000 → 900; IVA 3420; total 18000 + 3420 + 900 = 22320.
			"33 line-code base prorated by a global discount",
			tlGlobals(tlReq(33, tlLine("1", "10000", tlCode(27)), tlLine("1", "10000")), tlGlobal("D", "%", "10")),
			Totals{Detalle: []LineTotals{tlMI(1, "10000"), tlMI(2, "10000")},
				DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "2000"}},
				Totales: Totales{MntNeto: "18000", TasaIVA: "19", IVA: "3420",
					ImptoReten: []ImptoReten{{TipoImp: 27, TasaImp: "10", MontoImp: "900"}}, MntTotal: "22320"}},
		},
		{
			// buyer retains 10 % (code 30): 50000 × 10 % = 5000; IVA 9500; IVANoRet 9500 − 5000 = 4500;
			// total 50000 + 9500 − 5000 = 54500.
			"33 partial IVA retention leaves IVANoRet", tlTaxes(tlReq(33, tlLine("5", "10000")), ImpuestoRetencion{TipoImp: 30, TasaImp: "10"}),
			Totals{Detalle: []LineTotals{tlMI(1, "50000")},
				Totales: Totales{MntNeto: "50000", TasaIVA: "19", IVA: "9500",
					ImptoReten: []ImptoReten{{TipoImp: 30, TasaImp: "10", MontoImp: "5000", Retencion: true}},
					IVANoRet:   "4500", MntTotal: "54500"}},
		},
		// ---- 46 factura de compra ----
		{
			// 3 × 450 = 1350; IVA 257; code 15 without rate retains the whole IVA (TasaImp 19, 257);
			// MntTotal = MntNeto + MntExe = 1350.
			"46 code 15 retains the whole IVA", tlTaxes(tlReq(46, tlLine("3", "450")), ImpuestoRetencion{TipoImp: 15}),
			Totals{Detalle: []LineTotals{tlMI(1, "1350")},
				Totales: Totales{MntNeto: "1350", TasaIVA: "19", IVA: "257",
					ImptoReten: []ImptoReten{{TipoImp: 15, TasaImp: "19", MontoImp: "257", Retencion: true}}, MntTotal: "1350"}},
		},
		{
			// lines 1000 + 2 × 1250 = 3500, both with code 15: base 3500 × 19 % = 665 = IVA; total 3500.
			"46 code 15 on every line", tlReq(46, tlLine("1", "1000", tlCode(15)), tlLine("2", "1250", tlCode(15))),
			Totals{Detalle: []LineTotals{tlMI(1, "1000"), tlMI(2, "2500")},
				Totales: Totales{MntNeto: "3500", TasaIVA: "19", IVA: "665",
					ImptoReten: []ImptoReten{{TipoImp: 15, TasaImp: "19", MontoImp: "665", Retencion: true}}, MntTotal: "3500"}},
		},
		{
			// 10000, IVA 1900; code 15 with monto_imp 1000 < IVA: IVANoRet 900;
			// total 10000 + 1900 − 1000 = 10900.
			"46 partial retention by monto_imp", tlTaxes(tlReq(46, tlLine("1", "10000")), ImpuestoRetencion{TipoImp: 15, MontoImp: tlInt64(1000)}),
			Totals{Detalle: []LineTotals{tlMI(1, "10000")},
				Totales: Totales{MntNeto: "10000", TasaIVA: "19", IVA: "1900",
					ImptoReten: []ImptoReten{{TipoImp: 15, TasaImp: "19", MontoImp: "1000", Retencion: true}},
					IVANoRet:   "900", MntTotal: "10900"}},
		},
		{
			// 12345; IVA 2345.55 → 2346; code 16 at 8 %: 987.6 → 988; IVANoRet 2346 − 988 = 1358;
			// total 12345 + 2346 − 988 = 13703.
			"46 partial retention by a rate under 19", tlTaxes(tlReq(46, tlLine("1", "12345")), ImpuestoRetencion{TipoImp: 16, TasaImp: "8"}),
			Totals{Detalle: []LineTotals{tlMI(1, "12345")},
				Totales: Totales{MntNeto: "12345", TasaIVA: "19", IVA: "2346",
					ImptoReten: []ImptoReten{{TipoImp: 16, TasaImp: "8", MontoImp: "988", Retencion: true}},
					IVANoRet:   "1358", MntTotal: "13703"}},
		},
		{
			// 10000 + 2000 (code 27) = neto 12000; IVA 2280; code 15 (header, base MntNeto) = 2280;
			// code 27: 2000 × 10 % = 200; total = 12000 + 2280 + 200 − 2280 = 12200 (neto + other taxes).
			"46 full retention plus an additional tax",
			tlTaxes(tlReq(46, tlLine("1", "10000"), tlLine("1", "2000", tlCode(27))), ImpuestoRetencion{TipoImp: 15}),
			Totals{Detalle: []LineTotals{tlMI(1, "10000"), tlMI(2, "2000")},
				Totales: Totales{MntNeto: "12000", TasaIVA: "19", IVA: "2280",
					ImptoReten: []ImptoReten{
						{TipoImp: 15, TasaImp: "19", MontoImp: "2280", Retencion: true},
						{TipoImp: 27, TasaImp: "10", MontoImp: "200"},
					}, MntTotal: "12200"}},
		},
		{
			// taxable 5000 (IVA 950, retained 950 by code 15), exempt 2000; total 5000 + 2000 = 7000.
			"46 retention with an exempt line", tlTaxes(tlReq(46, tlLine("1", "5000"), tlLine("1", "2000", tlExe)), ImpuestoRetencion{TipoImp: 15}),
			Totals{Detalle: []LineTotals{tlMI(1, "5000"), {NroLinDet: 2, MontoItem: "2000", IndExe: 1}},
				Totales: Totales{MntNeto: "5000", MntExe: "2000", TasaIVA: "19", IVA: "950",
					ImptoReten: []ImptoReten{{TipoImp: 15, TasaImp: "19", MontoImp: "950", Retencion: true}}, MntTotal: "7000"}},
		},
		// ---- 39 boleta (gross prices) ----
		{
			// gross 680: neto 680 / 1.19 = 571.43 → 571; IVA 680 − 571 = 109; total 680; no TasaIVA.
			"39 gross 680", tlReq(39, tlLine("1", "680")),
			Totals{Detalle: []LineTotals{tlMI(1, "680")}, Totales: Totales{MntNeto: "571", IVA: "109", MntTotal: "680"}},
		},
		{
			// gross 5000: 4201.68 → 4202; IVA 798.
			"39 gross 5000", tlReq(39, tlLine("2", "2500")),
			Totals{Detalle: []LineTotals{tlMI(1, "5000")}, Totales: Totales{MntNeto: "4202", IVA: "798", MntTotal: "5000"}},
		},
		{
			// gross 2 × 43355 = 86710: 72865.55 → 72866; IVA 86710 − 72866 = 13844.
			"39 gross 86710", tlReq(39, tlLine("2", "43355")),
			Totals{Detalle: []LineTotals{tlMI(1, "86710")}, Totales: Totales{MntNeto: "72866", IVA: "13844", MntTotal: "86710"}},
		},
		{
			// taxable gross 2 × 1190 = 2380 → neto 2000, IVA 380; exempt 500; total 2880.
			"39 with an exempt line", tlReq(39, tlLine("2", "1190"), tlLine("1", "500", tlExe)),
			Totals{Detalle: []LineTotals{tlMI(1, "2380"), {NroLinDet: 2, MontoItem: "500", IndExe: 1}},
				Totales: Totales{MntNeto: "2000", MntExe: "500", IVA: "380", MntTotal: "2880"}},
		},
		{
			// gross 5000 + 1000 = 6000; D 10 % of the gross = 600 → 5400;
			// neto 5400 / 1.19 = 4537.82 → 4538; IVA 862; total 5400.
			"39 global discount on the gross total", tlGlobals(tlReq(39, tlLine("1", "5000"), tlLine("1", "1000")), tlGlobal("D", "%", "10")),
			Totals{Detalle: []LineTotals{tlMI(1, "5000"), tlMI(2, "1000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "600"}},
				Totales: Totales{MntNeto: "4538", IVA: "862", MntTotal: "5400"}},
		},
		{
			// 3 × 1000 = 3000; line discount 5 % = 150 → 2850; neto 2394.96 → 2395; IVA 455; total 2850.
			"39 line discount", tlReq(39, tlLine("3", "1000", tlDsc("5"))),
			Totals{Detalle: []LineTotals{{NroLinDet: 1, MontoItem: "2850", DescuentoMonto: "150"}},
				Totales: Totales{MntNeto: "2395", IVA: "455", MntTotal: "2850"}},
		},
		{
			// gross 2: neto 1.68 → 2; IVA 0 is omitted (boleta IVA is a positive integer).
			"39 zero IVA omitted", tlReq(39, tlLine("1", "2")),
			Totals{Detalle: []LineTotals{tlMI(1, "2")}, Totales: Totales{MntNeto: "2", MntTotal: "2"}},
		},
		// ---- 41 boleta exenta, 34 factura exenta ----
		{
			// 1500 + 2 × 750 = 3000, all exempt: MntExe = MntTotal = 3000.
			"41 all exempt", tlReq(41, tlLine("1", "1500"), tlLine("2", "750")),
			Totals{Detalle: []LineTotals{tlMI(1, "1500"), tlMI(2, "1500")}, Totales: Totales{MntExe: "3000", MntTotal: "3000"}},
		},
		{
			// 3000; D $500 with ind_exe_dr omitted → exempt bucket (IndExeDR 1): 2500.
			"41 global discount defaults to the exempt bucket", tlGlobals(tlReq(41, tlLine("1", "3000")), tlGlobal("D", "$", "500")),
			Totals{Detalle: []LineTotals{tlMI(1, "3000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "500", IndExeDR: 1}},
				Totales: Totales{MntExe: "2500", MntTotal: "2500"}},
		},
		{
			// 4 × 12500 = 50000 exempt; MntTotal 50000.
			"34 factura exenta", tlReq(34, tlLine("4", "12500")),
			Totals{Detalle: []LineTotals{tlMI(1, "50000")}, Totales: Totales{MntExe: "50000", MntTotal: "50000"}},
		},
		{
			// 50000; D 2.5 % with ind_exe_dr omitted → exempt: 1250 → 48750.
			"34 global % discount defaults to the exempt bucket", tlGlobals(tlReq(34, tlLine("4", "12500")), tlGlobal("D", "%", "2.5")),
			Totals{Detalle: []LineTotals{tlMI(1, "50000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "1250", IndExeDR: 1}},
				Totales: Totales{MntExe: "48750", MntTotal: "48750"}},
		},
		// ---- 43 liquidación-factura ----
		{
			// lines 100000 and −20000 (monto_item) → neto 80000; IVA 15200;
			// comisiones: neto 10000 (IVA 1900 computed), exempt 2500; sums 10000 / 2500 / 1900;
			// total 80000 + 15200 − (10000 + 2500 + 1900) = 80800.
			"43 commissions",
			tlComisiones(tlReq(43, tlLine("", "", tlMonto("100000"), tlLiq), tlLine("", "", tlMonto("-20000"), tlLiq)),
				ComisionDTE{TipoMovim: "C", Glosa: "comisión", ValComNeto: 10000},
				ComisionDTE{TipoMovim: "O", Glosa: "flete", ValComExe: 2500}),
			Totals{Detalle: []LineTotals{tlMI(1, "100000"), tlMI(2, "-20000")},
				Totales: Totales{MntNeto: "80000", TasaIVA: "19", IVA: "15200",
					Comisiones: &Comisiones{ValComNeto: "10000", ValComExe: "2500", ValComIVA: "1900"}, MntTotal: "80800"}},
		},
		{
			// 52631 → IVA 9999.89 → 10000; commission 5263 → IVA 999.97 → 1000; reduction −1250 →
			// IVA −237.5 → −238 (away from zero); sums 4013 / 0 / 762;
			// total 52631 + 10000 − (4013 + 762) = 57856.
			"43 negative commission rounds away from zero",
			tlComisiones(tlReq(43, tlLine("1", "52631", tlLiq)),
				ComisionDTE{TipoMovim: "C", Glosa: "comisión", ValComNeto: 5263},
				ComisionDTE{TipoMovim: "O", Glosa: "rebaja", ValComNeto: -1250}),
			Totals{Detalle: []LineTotals{tlMI(1, "52631")},
				Totales: Totales{MntNeto: "52631", TasaIVA: "19", IVA: "10000",
					Comisiones: &Comisiones{ValComNeto: "4013", ValComExe: "0", ValComIVA: "762"}, MntTotal: "57856"}},
		},
		{
			// taxable 30000 (IVA 5700), exempt 5000; commission 3000 with val_com_iva 570 given;
			// total 30000 + 5000 + 5700 − (3000 + 0 + 570) = 37130.
			"43 explicit ValComIVA and an exempt line",
			tlComisiones(tlReq(43, tlLine("1", "30000", tlLiq), tlLine("1", "5000", tlLiq, tlExe)),
				ComisionDTE{TipoMovim: "C", Glosa: "comisión", ValComNeto: 3000, ValComIVA: tlInt64(570)}),
			Totals{Detalle: []LineTotals{tlMI(1, "30000"), {NroLinDet: 2, MontoItem: "5000", IndExe: 1}},
				Totales: Totales{MntNeto: "30000", MntExe: "5000", TasaIVA: "19", IVA: "5700",
					Comisiones: &Comisiones{ValComNeto: "3000", ValComExe: "0", ValComIVA: "570"}, MntTotal: "37130"}},
		},
		{
			// 1 × −1350 = −1350; IVA −256.5 → −257; no commissions (sums 0); total −1607.
			"43 negative line and total",
			tlReq(43, tlLine("1", "-1350", tlLiq)),
			Totals{Detalle: []LineTotals{tlMI(1, "-1350")},
				Totales: Totales{MntNeto: "-1350", TasaIVA: "19", IVA: "-257",
					Comisiones: &Comisiones{ValComNeto: "0", ValComExe: "0", ValComIVA: "0"}, MntTotal: "-1607"}},
		},
		// ---- 52 guía de despacho ----
		{
			// internal transfer (ind_traslado 5) computed as usual: 10 × 1500 = 15000; IVA 2850; total 17850.
			"52 transfer that is not a sale", func() *EmitirDTERequest {
				r := tlReq(52, tlLine("10", "1500"))
				r.IndTraslado = tlInt(5)
				return r
			}(),
			Totals{Detalle: []LineTotals{tlMI(1, "15000")}, Totales: tlAfecto("15000", "2850", "17850")},
		},
		{
			// quantities only, no prices: MontoItem 0 and MntTotal 0 with no other amount.
			"52 unvalued lines", func() *EmitirDTERequest {
				r := tlReq(52, tlLine("5", ""), tlLine("2", ""))
				r.IndTraslado = tlInt(6)
				return r
			}(),
			Totals{Detalle: []LineTotals{tlMI(1, "0"), tlMI(2, "0")}, Totales: Totales{MntTotal: "0"}},
		},
		// ---- 56 / 61 notes ----
		{
			// codigo_ref 3: 1 × 20000; IVA 3800; total 23800.
			"61 credit note correcting amounts", tlRef(tlReq(61, tlLine("1", "20000")), 3),
			Totals{Detalle: []LineTotals{tlMI(1, "20000")}, Totales: tlAfecto("20000", "3800", "23800")},
		},
		{
			// codigo_ref 2 with no amounts: MontoItem 0, MntTotal 0, nothing else.
			"61 text correction at zero", tlRef(tlReq(61, LineaDetalle{Nombre: "Donde dice X debe decir Y"}), 2),
			Totals{Detalle: []LineTotals{tlMI(1, "0")}, Totales: Totales{MntTotal: "0"}},
		},
		{
			// codigo_ref 1 carries the voided document's lines: 2 × 7990 = 15980 taxable, 1000 exempt;
			// IVA 3036.2 → 3036; total 15980 + 1000 + 3036 = 20016.
			"56 debit note voiding, lines copied", tlRef(tlReq(56, tlLine("2", "7990"), tlLine("1", "1000", tlExe)), 1),
			Totals{Detalle: []LineTotals{tlMI(1, "15980"), {NroLinDet: 2, MontoItem: "1000", IndExe: 1}},
				Totales: Totales{MntNeto: "15980", MntExe: "1000", TasaIVA: "19", IVA: "3036", MntTotal: "20016"}},
		},
		{
			// note on a beverage invoice: 5 × 600 = 3000 code 27 → 300; IVA 570; total 3870.
			"61 note with an additional tax", tlRef(tlReq(61, tlLine("5", "600", tlCode(27))), 3),
			Totals{Detalle: []LineTotals{tlMI(1, "3000")},
				Totales: Totales{MntNeto: "3000", TasaIVA: "19", IVA: "570",
					ImptoReten: []ImptoReten{{TipoImp: 27, TasaImp: "10", MontoImp: "300"}}, MntTotal: "3870"}},
		},
		// ---- exports 110–112 ----
		{
			// 3 × 10.12345 = 30.37035 → 30.3704 (4 places, half up); 2 × 150.5 = 301;
			// MntExe = MntTotal = 331.3704 DOLAR USA.
			"110 amounts with 4 decimals", tlExport(110, "DOLAR USA", "", 0, tlLine("3", "10.12345"), tlLine("2", "150.5")),
			Totals{Detalle: []LineTotals{tlMI(1, "30.3704"), tlMI(2, "301")},
				Totales: Totales{TpoMoneda: "DOLAR USA", MntExe: "331.3704", MntTotal: "331.3704"}},
		},
		{
			// 1234.5 DOLAR USA × 873.15 = 1077903.675 → 1077904 PESO CL (whole pesos).
			"110 OtraMoneda in pesos", tlExport(110, "DOLAR USA", "873.15", 0, tlLine("1", "1234.5")),
			Totals{Detalle: []LineTotals{tlMI(1, "1234.5")},
				Totales:    Totales{TpoMoneda: "DOLAR USA", MntExe: "1234.5", MntTotal: "1234.5"},
				OtraMoneda: &OtraMoneda{TpoMoneda: "PESO CL", TpoCambio: "873.15", MntExeOtrMnda: "1077904", MntTotOtrMnda: "1077904"}},
		},
		{
			// forma_pago_exp 21 (sin pago): MntExe 2 × 250 = 500 but MntTotal 0.
			"110 without payment totals zero", tlExport(110, "EURO", "", 21, tlLine("2", "250")),
			Totals{Detalle: []LineTotals{tlMI(1, "500")}, Totales: Totales{TpoMoneda: "EURO", MntExe: "500", MntTotal: "0"}},
		},
		{
			// 1050.75 with 10 % discount = 105.075 → 105 (DescuentoMonto is a whole number in the schema);
			// MontoItem 945.75.
			"110 line discount in whole units", tlExport(110, "DOLAR USA", "", 0, tlLine("1", "1050.75", tlDsc("10"))),
			Totals{Detalle: []LineTotals{{NroLinDet: 1, MontoItem: "945.75", DescuentoMonto: "105"}},
				Totales: Totales{TpoMoneda: "DOLAR USA", MntExe: "945.75", MntTotal: "945.75"}},
		},
		{
			// 2 × 33.3333 = 66.6666; D 7 % (ind_exe_dr omitted → exempt) = 4.666662 → 4.6667;
			// MntExe 61.9999.
			"110 global % discount at 4 decimals", tlGlobals(tlExport(110, "DOLAR USA", "", 0, tlLine("2", "33.3333")), tlGlobal("D", "%", "7")),
			Totals{Detalle: []LineTotals{tlMI(1, "66.6666")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "4.6667", IndExeDR: 1}},
				Totales: Totales{TpoMoneda: "DOLAR USA", MntExe: "61.9999", MntTotal: "61.9999"}},
		},
		{
			// 1 × 250.25 EURO: MntExe = MntTotal = 250.25.
			"111 debit note in euros", tlExport(111, "EURO", "", 0, tlLine("1", "250.25")),
			Totals{Detalle: []LineTotals{tlMI(1, "250.25")}, Totales: Totales{TpoMoneda: "EURO", MntExe: "250.25", MntTotal: "250.25"}},
		},
		{
			// 1000 − D $12.5 (exempt bucket) = 987.5; × 1032.4 = 1019495 pesos.
			"112 credit note with a $ discount and OtraMoneda",
			tlGlobals(tlExport(112, "DOLAR USA", "1032.4", 0, tlLine("4", "250")), tlGlobal("D", "$", "12.5")),
			Totals{Detalle: []LineTotals{tlMI(1, "1000")}, DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "12.5", IndExeDR: 1}},
				Totales:    Totales{TpoMoneda: "DOLAR USA", MntExe: "987.5", MntTotal: "987.5"},
				OtraMoneda: &OtraMoneda{TpoMoneda: "PESO CL", TpoCambio: "1032.4", MntExeOtrMnda: "1019495", MntTotOtrMnda: "1019495"}},
		},
		{
			// sin pago with a rate: MntExe 3 × 99.99 = 299.97 × 950 = 284971.5 → 284972; total 0 → 0.
			"112 without payment, OtraMoneda total zero", tlExport(112, "DOLAR USA", "950", 21, tlLine("3", "99.99")),
			Totals{Detalle: []LineTotals{tlMI(1, "299.97")},
				Totales:    Totales{TpoMoneda: "DOLAR USA", MntExe: "299.97", MntTotal: "0"},
				OtraMoneda: &OtraMoneda{TpoMoneda: "PESO CL", TpoCambio: "950", MntExeOtrMnda: "284972", MntTotOtrMnda: "0"}},
		},
	}
	if len(cases) < 40 {
		t.Fatalf("only %d cases; the acceptance asks for at least 40", len(cases))
	}
	seen := map[TipoDTE]bool{}
	for _, tc := range cases {
		seen[tc.req.TipoDTE] = true
		t.Run(tc.name, func(t *testing.T) {
			got, err := ComputeTotals(tc.req)
			if err != nil {
				t.Fatalf("ComputeTotals: %v", err)
			}
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("totals mismatch (-want +got):\n%s", diff)
			}
		})
	}
	for _, tipo := range Tipos() {
		if !seen[tipo] {
			t.Errorf("no totals case for type %d", tipo)
		}
	}
}

func TestComputeTotalsErrors(t *testing.T) {
	huge := "999999999999999999"
	cases := []struct {
		name       string
		req        *EmitirDTERequest
		field, cod string
	}{
		{"nil request", nil, "", "REQUIRED"},
		{"unsupported type", tlReq(35, tlLine("1", "100")), "tipo_dte", "INVALID_VALUE"},
		{"malformed number", tlReq(33, tlLine("1e3", "100")), "detalle[0].cantidad", "INVALID_FORMAT"},
		{"too many digits", tlReq(33, tlLine("1", "1234567890123456789")), "detalle[0].precio", "INVALID_FORMAT"},
		{"overflowing product", tlReq(33, tlLine(huge, huge)), "detalle[0].precio", "OUT_OF_RANGE"},
		{"sum beyond 18 digits", tlReq(33, tlLine("1", huge), tlLine("1", "1")), "detalle[1].precio", "OUT_OF_RANGE"},
		{"CLP monto_item with decimals", tlReq(33, tlLine("", "", tlMonto("10.5"))), "detalle[0].monto_item", "INVALID_DECIMALS"},
		{"monto_item with a discount", tlReq(33, tlLine("1", "100", tlMonto("100"), tlDsc("10"))), "detalle[0].descuento_pct", "NOT_ALLOWED"},
		{"negative price outside 43", tlReq(33, tlLine("1", "-100")), "detalle[0].precio", "OUT_OF_RANGE"},
		{"negative discount", tlReq(33, tlLine("1", "100", tlDsc("-5"))), "detalle[0].descuento_pct", "INVALID_VALUE"},
		{"ind_exe 3", tlReq(33, tlLine("1", "100", func(l *LineaDetalle) { l.IndExe = tlInt(3) })), "detalle[0].ind_exe", "INVALID_VALUE"},
		{"ind_exe 2 on an export", tlExport(110, "EURO", "", 0, tlLine("1", "100", tlNF)), "detalle[0].ind_exe", "NOT_ALLOWED"},
		{"43 line discount", tlReq(43, tlLine("1", "100", tlLiq, tlDsc("5"))), "detalle[0].descuento_pct", "NOT_ALLOWED"},
		{"43 global discount", tlGlobals(tlReq(43, tlLine("1", "100", tlLiq)), tlGlobal("D", "%", "5")), "descuentos_globales", "NOT_ALLOWED"},
		{"global discount on an empty taxable bucket", tlGlobals(tlReq(33, tlLine("1", "100", tlExe)), tlGlobal("D", "%", "5")), "descuentos_globales[0].ind_exe_dr", "INVALID_VALUE"},
		{"global discount beyond the bucket", tlGlobals(tlReq(33, tlLine("1", "100")), tlGlobal("D", "$", "101")), "descuentos_globales[0].valor_dr", "OUT_OF_RANGE"},
		{"global % over an empty not-billable bucket", tlGlobals(tlReq(33, tlLine("1", "100")), tlGlobalX("D", "%", "5", 2)), "descuentos_globales[0].ind_exe_dr", "INVALID_VALUE"},
		{"bad tpo_mov", tlGlobals(tlReq(33, tlLine("1", "100")), tlGlobal("X", "%", "5")), "descuentos_globales[0].tpo_mov", "INVALID_VALUE"},
		{"bad tpo_valor", tlGlobals(tlReq(33, tlLine("1", "100")), tlGlobal("D", "#", "5")), "descuentos_globales[0].tpo_valor", "INVALID_VALUE"},
		{"CLP $ discount with decimals", tlGlobals(tlReq(33, tlLine("1", "100")), tlGlobal("D", "$", "5.5")), "descuentos_globales[0].valor_dr", "INVALID_DECIMALS"},
		{"taxes on a boleta", tlTaxes(tlReq(39, tlLine("1", "100")), ImpuestoRetencion{TipoImp: 27, TasaImp: "10"}), "impuestos_retenciones", "NOT_ALLOWED"},
		{"line code on an exempt document", tlReq(34, tlLine("1", "100", tlCode(27))), "detalle[0].cod_imp_adic", "NOT_ALLOWED"},
		{"line code on an exempt line", tlReq(33, tlLine("1", "100", tlExe, tlCode(27))), "detalle[0].cod_imp_adic", "NOT_ALLOWED"},
		{"unknown tax code", tlTaxes(tlReq(33, tlLine("1", "100")), ImpuestoRetencion{TipoImp: 54, TasaImp: "1"}), "impuestos_retenciones[0].tipo_imp", "INVALID_VALUE"},
		{"tax without a rate", tlTaxes(tlReq(33, tlLine("1", "100")), ImpuestoRetencion{TipoImp: 28}), "impuestos_retenciones[0].tasa_imp", "REQUIRED"},
		{"line code without a rate", tlReq(33, tlLine("1", "100", tlCode(14))), "detalle[0].cod_imp_adic", "REQUIRED"},
		{"duplicate tax code", tlTaxes(tlReq(33, tlLine("1", "100")), ImpuestoRetencion{TipoImp: 27}, ImpuestoRetencion{TipoImp: 27}), "impuestos_retenciones[1].tipo_imp", "DUPLICATE"},
		{"retention over the IVA", tlTaxes(tlReq(46, tlLine("1", "1000")), ImpuestoRetencion{TipoImp: 15, MontoImp: tlInt64(191)}), "impuestos_retenciones[0].monto_imp", "INVALID_VALUE"},
		{"commissions outside 43", tlComisiones(tlReq(33, tlLine("1", "100")), ComisionDTE{TipoMovim: "C", Glosa: "x", ValComNeto: 1}), "comisiones", "NOT_ALLOWED"},
		{"export without export_data", tlReq(110, tlLine("1", "100")), "export_data.tpo_moneda", "REQUIRED"},
		{"export in pesos with a rate", tlExport(110, "PESO CL", "900", 0, tlLine("1", "100")), "export_data.tpo_cambio", "INVALID_VALUE"},
		{"export with a zero rate", tlExport(110, "DOLAR USA", "0", 0, tlLine("1", "100")), "export_data.tpo_cambio", "INVALID_VALUE"},
		{"export amount with 5 decimals", tlExport(110, "DOLAR USA", "", 0, tlLine("", "", tlMonto("1.00001"))), "detalle[0].monto_item", "INVALID_DECIMALS"},
		{"export with taxes", tlTaxes(tlExport(110, "DOLAR USA", "", 0, tlLine("1", "1")), ImpuestoRetencion{TipoImp: 27}), "impuestos_retenciones", "NOT_ALLOWED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ComputeTotals(tc.req)
			if err == nil {
				t.Fatalf("ComputeTotals succeeded (%+v), want an error on %q", got, tc.field)
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Details) != 1 {
				t.Fatalf("error %v is not a one-detail *ValidationError", err)
			}
			if d := ve.Details[0]; d.Field != tc.field || string(d.Code) != tc.cod || d.Message == "" {
				t.Errorf("detail = %+v, want field %q code %q", d, tc.field, tc.cod)
			}
		})
	}
}

// TestComputeTotalsDoesNotMutate checks that the request is left untouched.
func TestComputeTotalsDoesNotMutate(t *testing.T) {
	r := tlTaxes(tlGlobals(tlReq(33, tlLine("2", "1000", tlCode(27)), tlLine("1", "500", tlExe)), tlGlobal("D", "%", "10")), ImpuestoRetencion{TipoImp: 27})
	before := *r
	before.Detalle = append([]LineaDetalle(nil), r.Detalle...)
	if _, err := ComputeTotals(r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&before, r); diff != "" {
		t.Errorf("request changed:\n%s", diff)
	}
}

func TestFxFormatAndParse(t *testing.T) {
	for _, tc := range []struct {
		v      int64
		places int
		want   Decimal
	}{
		{0, 0, "0"}, {-5, 0, "-5"}, {12345, 4, "1.2345"}, {120000, 4, "12"}, {10500, 4, "1.05"},
		{1, 4, "0.0001"}, {-1, 4, "-0.0001"}, {-15000, 4, "-1.5"},
	} {
		if got := fxFormat(tc.v, tc.places); got != tc.want {
			t.Errorf("fxFormat(%d, %d) = %q, want %q", tc.v, tc.places, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in    Decimal
		v     int64
		scale int
		ok    bool
	}{
		{"2.50", 25, 1, true}, {"-0.000001", -1, 6, true}, {"+7", 7, 0, true}, {"007.10", 71, 1, true},
		{"", 0, 0, false}, {".5", 0, 0, false}, {"5.", 0, 0, false}, {"1e3", 0, 0, false}, {"1.2.3", 0, 0, false},
		{"1234567890123456789", 0, 0, false}, {"0.000000000000000000001", 1, 21, true},
	} {
		n, ok := fxParse(tc.in)
		if ok != tc.ok || (ok && (n.v != tc.v || n.scale != tc.scale)) {
			t.Errorf("fxParse(%q) = %+v, %v; want {%d %d}, %v", tc.in, n, ok, tc.v, tc.scale, tc.ok)
		}
	}
	// Half away from zero, both signs; overflow is reported.
	for _, tc := range []struct {
		a, b int64
		d    uint64
		want int64
		ok   bool
	}{
		{5, 1, 10, 1, true}, {-5, 1, 10, -1, true}, {4, 1, 10, 0, true}, {-4, 1, 10, 0, true},
		{680, 100, 119, 571, true}, {1 << 62, 4, 1, 0, false}, {1, 1, 0, 0, false},
	} {
		got, ok := fxMulDiv(tc.a, tc.b, tc.d)
		if ok != tc.ok || got != tc.want {
			t.Errorf("fxMulDiv(%d, %d, %d) = %d, %v; want %d, %v", tc.a, tc.b, tc.d, got, ok, tc.want, tc.ok)
		}
	}
}

func TestChileClock(t *testing.T) {
	for _, tc := range []struct {
		utc  string
		want string
	}{
		// January: Chile is on summer time, UTC−3.
		{"2025-01-15T02:59:00Z", "2025-01-14"},
		{"2025-01-15T03:00:00Z", "2025-01-15"},
		// July: standard time, UTC−4.
		{"2025-07-01T03:30:00Z", "2025-06-30"},
		{"2025-07-01T04:00:00Z", "2025-07-01"},
	} {
		now, err := time.Parse(time.RFC3339, tc.utc)
		if err != nil {
			t.Fatal(err)
		}
		if got := Today(now); got != tc.want {
			t.Errorf("Today(%s) = %s, want %s", tc.utc, got, tc.want)
		}
		if got := FechaEmision(&EmitirDTERequest{}, now); got != tc.want {
			t.Errorf("FechaEmision(empty, %s) = %s, want %s", tc.utc, got, tc.want)
		}
		if got := FechaEmision(nil, now); got != tc.want {
			t.Errorf("FechaEmision(nil, %s) = %s, want %s", tc.utc, got, tc.want)
		}
	}
	if got := FechaEmision(&EmitirDTERequest{FechaEmision: "2024-12-31"}, time.Now()); got != "2024-12-31" {
		t.Errorf("FechaEmision kept %q, want the request's 2024-12-31", got)
	}
	if loc := SantiagoLocation(); loc.String() != "America/Santiago" {
		t.Errorf("SantiagoLocation() = %s", loc)
	}
	// 2025-01-15 12:00 UTC is 09:00 in Santiago (UTC−3).
	if h := ChileTime(time.Date(2025, 1, 15, 12, 0, 0, 0, time.UTC)).Hour(); h != 9 {
		t.Errorf("ChileTime hour = %d, want 9", h)
	}
}
