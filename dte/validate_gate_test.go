package dte

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gateToday is "today" for the property test's dates.
var gateToday = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// genRequest builds a random emission request that is often valid and,
// when not, usually wrong in only one or two ways: types, lines with and
// without quantities, discounts, exempt and not-billable lines, additional
// tax codes (54 among them), global movements, references and export data.
func genRequest(r *rand.Rand) *EmitirDTERequest {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	ip := func(n int) *int { return &n }
	tipos := Tipos()
	req := &EmitirDTERequest{
		TipoDTE:      tipos[r.IntN(len(tipos))],
		FechaEmision: "2026-05-20",
		Receptor: Receptor{Rut: "76086428-5", RazonSocial: "Cliente SpA", Giro: "Comercio",
			Direccion: "Av. Matta 100", Comuna: "Santiago", Ciudad: "Santiago"},
	}
	exp := req.TipoDTE.IsExport()
	price := func() Decimal {
		if exp {
			return Decimal(pick("0", "10.5", "99.999999", "1050.75", "3"))
		}
		return Decimal(pick("0", "1", "990", "1990", "10000", "123456"))
	}
	codes := []int{14, 15, 17, 19, 24, 27, 28, 30, 53, 54, 55, 271, 301, 99}
	// Taxes, text lines and the like mostly where the type takes them.
	taxes := req.TipoDTE.CarriesImpuestos() || r.IntN(10) == 0
	if req.TipoDTE.IsNote() || r.IntN(5) == 0 {
		ref := Referencia{TipoDocRef: RefTipo(TipoDTE([]int{33, 34, 56, 61, 110}[r.IntN(5)])), FolioRef: 7,
			FechaRef: "2026-05-01", RazonRef: "referencia"}
		if req.TipoDTE.IsNote() {
			ref.CodigoRef = ip(1 + r.IntN(3))
		}
		req.Referencias = []Referencia{ref}
	}
	textLines := allowsTextOnlyLines(req) || r.IntN(10) == 0
	for n := 1 + r.IntN(4); n > 0; n-- {
		l := LineaDetalle{Nombre: "item " + strconv.Itoa(n)}
		switch r.IntN(6) {
		case 0:
			l.MontoItem = price()
		case 1:
			if textLines {
				break // no quantity nor price: a text line
			}
			fallthrough
		default:
			l.Cantidad, l.Precio = Decimal(pick("1", "2.5", "0.333333", "12")), price()
		}
		if r.IntN(4) == 0 {
			l.DescuentoPct = Decimal(pick("0", "10", "12.5", "100"))
		}
		if r.IntN(5) == 0 {
			l.RecargoPct = Decimal(pick("3", "50"))
		}
		switch r.IntN(6) {
		case 0:
			l.IndExe = ip(1)
		case 1:
			if taxes {
				l.CodImpAdic = ip(codes[r.IntN(len(codes))])
			}
		}
		if req.TipoDTE == LiquidacionFacturaElectronica {
			l.TipoDocLiq = "33"
		}
		req.Detalle = append(req.Detalle, l)
	}
	for n := r.IntN(3); n > 0; n-- {
		g := DscRcgGlobal{TpoMov: pick("D", "R"), TpoValor: "%", ValorDR: Decimal(pick("5", "10", "100"))}
		if r.IntN(2) == 0 {
			g.TpoValor, g.ValorDR = "$", Decimal(pick("5", "100", "1000", "99999"))
		}
		switch r.IntN(4) {
		case 0:
			g.IndExeDR = ip(1)
		case 1:
			g.IndExeDR = ip(2)
		}
		req.DescuentosGlobales = append(req.DescuentosGlobales, g)
	}
	for n := r.IntN(3); n > 0 && taxes; n-- {
		t := ImpuestoRetencion{TipoImp: codes[r.IntN(len(codes))]}
		switch r.IntN(5) {
		case 0:
			t.TasaImp = Decimal(pick("10", "19", "0.5"))
		case 1, 2, 3:
			m := int64(r.IntN(5000) + 1)
			t.MontoImp = &m
		}
		req.ImpuestosRetenciones = append(req.ImpuestosRetenciones, t)
	}
	if req.TipoDTE == LiquidacionFacturaElectronica && r.IntN(2) == 0 {
		req.Comisiones = []ComisionDTE{{TipoMovim: "C", Glosa: "comisión", ValComNeto: int64(r.IntN(100000))}}
	}
	if req.TipoDTE == GuiaDespachoElectronica {
		req.IndTraslado = ip(1 + r.IntN(9))
	}
	if exp || r.IntN(20) == 0 {
		req.ExportData = &ExportData{TpoMoneda: pick("DOLAR USA", "EURO", "PESO CL")}
		if r.IntN(2) == 0 {
			req.ExportData.TpoCambio = Decimal(pick("873.15", "950"))
		}
		if r.IntN(4) == 0 {
			req.ExportData.FormaPagoExp = ip(21)
		}
	}
	return req
}

// TestValidateImpliesTotals is the property the gate promises: whenever
// Validate accepts a request, ComputeTotals succeeds on it, with the same
// totals Validate computed from the numbers it read. It runs over
// generated requests, a good share of which must be valid for the test to
// mean anything.
func TestValidateImpliesTotals(t *testing.T) {
	r := rand.New(rand.NewPCG(20261123, 8))
	n := 20000
	if testing.Short() {
		n = 4000
	}
	valid := 0
	for i := 0; i < n; i++ {
		req := genRequest(r)
		viaValidate, _, verr := validateTotals(req, gateToday, AmbienteProduccion)
		tot, err := ComputeTotals(req)
		if verr != nil {
			if ve, ok := AsValidationError(verr); !ok || len(ve.Details) == 0 {
				t.Fatalf("Validate failed without details: %v", verr)
			}
			continue
		}
		valid++
		if err != nil {
			t.Fatalf("Validate accepts, ComputeTotals refuses (%v):\n%s", err, dumpRequest(req))
		}
		if diff := cmp.Diff(viaValidate, tot); diff != "" {
			t.Fatalf("totals computed by Validate and by ComputeTotals differ (-validate +totals):\n%s\n%s", diff, dumpRequest(req))
		}
	}
	if valid < n/4 {
		t.Fatalf("only %d of %d generated requests were valid", valid, n)
	}
	t.Logf("%d of %d generated requests valid", valid, n)
}

func dumpRequest(r *EmitirDTERequest) string { return fmt.Sprintf("%+v", *r) }

// TestValidateRefusesWhatTotalsCannotCompute holds the regression cases of
// the gate: requests the field rules accepted while ComputeTotals refused
// them. Each now fails Validate with the detail ComputeTotals gives.
func TestValidateRefusesWhatTotalsCannotCompute(t *testing.T) {
	base := func() *EmitirDTERequest {
		r := tlReq(33, tlLine("1", "1000"))
		r.Receptor.Giro, r.Receptor.Direccion, r.Receptor.Comuna = "Comercio", "Av. Matta 100", "Santiago"
		return r
	}
	cases := []struct {
		name  string
		edit  func(*EmitirDTERequest)
		field string
		code  DetailCode
	}{
		{"tax code 54, in the schema but unclassified", func(r *EmitirDTERequest) {
			r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 54, TasaImp: "10"}}
		}, "impuestos_retenciones[0].tipo_imp", CodeInvalidValue},
		{"line code 55", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = tlInt(55) }, "detalle[0].cod_imp_adic", CodeInvalidValue},
		{"% discount on an empty taxable bucket", func(r *EmitirDTERequest) {
			r.Detalle[0].IndExe = tlInt(1)
			r.DescuentosGlobales = []DscRcgGlobal{tlGlobal("D", "%", "10")}
		}, "descuentos_globales[0].ind_exe_dr", CodeInvalidValue},
		{"% discount on an empty not-billable bucket", func(r *EmitirDTERequest) {
			r.DescuentosGlobales = []DscRcgGlobal{tlGlobalX("D", "%", "10", 2)}
		}, "descuentos_globales[0].ind_exe_dr", CodeInvalidValue},
		{"monto_item with descuento_pct", func(r *EmitirDTERequest) {
			r.Detalle[0].MontoItem, r.Detalle[0].DescuentoPct = "1000", "10"
		}, "detalle[0].descuento_pct", CodeNotAllowed},
		{"monto_item with recargo_pct", func(r *EmitirDTERequest) {
			r.Detalle[0].MontoItem, r.Detalle[0].RecargoPct = "1000", "10"
		}, "detalle[0].recargo_pct", CodeNotAllowed},
		{"$ discount beyond its bucket", func(r *EmitirDTERequest) {
			r.DescuentosGlobales = []DscRcgGlobal{tlGlobal("D", "$", "1001")}
		}, "descuentos_globales[0].valor_dr", CodeOutOfRange},
		{"not-billable movement on an export", func(r *EmitirDTERequest) {
			*r = *tlExport(110, "DOLAR USA", "", 0, tlLine("1", "100"))
			r.DescuentosGlobales = []DscRcgGlobal{tlGlobalX("D", "$", "1", 2)}
		}, "descuentos_globales[0].ind_exe_dr", CodeNotAllowed},
		{"retention of more than the IVA", func(r *EmitirDTERequest) {
			r.TipoDTE = FacturaCompraElectronica
			r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 15, MontoImp: tlInt64(191)}}
		}, "impuestos_retenciones[0].monto_imp", CodeInvalidValue},
		{"a code without a default rate on a line only", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = tlInt(14) }, "detalle[0].cod_imp_adic", CodeRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			if err := ValidateAt(r, gateToday); err != nil {
				t.Fatalf("the base request is invalid: %v", err)
			}
			tc.edit(r)
			err := ValidateAt(r, gateToday)
			ve, ok := AsValidationError(err)
			if !ok || len(ve.Details) != 1 {
				t.Fatalf("Validate = %v, want one detail on %s", err, tc.field)
			}
			if d := ve.Details[0]; d.Field != tc.field || d.Code != tc.code || d.Message == "" {
				t.Errorf("detail %+v, want %s on %s", d, tc.code, tc.field)
			}
			if _, err := ComputeTotals(r); err == nil {
				t.Error("ComputeTotals accepts it")
			}
		})
	}
}

// TestNoteVoidingATextNote is the SII certification case: a debit note
// voids (codigo_ref 1) a credit note that only corrected a text. Its line
// has a name and no quantity or price, and its total is 0.
func TestNoteVoidingATextNote(t *testing.T) {
	note := func(tipo TipoDTE, ref TipoDTE, codigo int) *EmitirDTERequest {
		r := tlReq(tipo, LineaDetalle{Nombre: "ANULA NOTA DE CREDITO QUE CORRIGE GIRO"})
		r.Referencias = []Referencia{{TipoDocRef: RefTipo(ref), FolioRef: 12, FechaRef: "2026-05-02",
			CodigoRef: tlInt(codigo), RazonRef: "ANULA NOTA DE CREDITO"}}
		return r
	}
	for _, tc := range []struct {
		tipo, ref TipoDTE
		codigo    int
	}{{56, 61, 1}, {61, 56, 1}, {56, 56, 1}, {61, 33, 2}, {56, 61, 2}, {112, 110, 2}} {
		r := note(tc.tipo, tc.ref, tc.codigo)
		if tc.tipo.IsExport() {
			r.ExportData = &ExportData{TpoMoneda: "DOLAR USA"}
		}
		if err := ValidateAt(r, gateToday); err != nil {
			t.Errorf("%d voiding/correcting %d (codigo_ref %d): %v", tc.tipo, tc.ref, tc.codigo, err)
			continue
		}
		tot, err := ComputeTotals(r)
		if err != nil {
			t.Fatalf("%d: %v", tc.tipo, err)
		}
		// By the rule: a line without amounts comes to 0 and adds no bucket.
		want := Totales{MntTotal: "0"}
		if tc.tipo.IsExport() {
			want = Totales{TpoMoneda: "DOLAR USA", MntExe: "0", MntTotal: "0"}
		}

		if diff := cmp.Diff(want, tot.Totales); diff != "" {
			t.Errorf("%d totals (-want +got):\n%s", tc.tipo, diff)
		}
	}
	// Voiding a factura (or an amount correction) needs the lines' amounts.
	for _, tc := range []struct {
		tipo, ref TipoDTE
		codigo    int
	}{{56, 33, 1}, {61, 34, 1}, {61, 61, 3}, {111, 112, 1}} {
		r := note(tc.tipo, tc.ref, tc.codigo)
		if tc.tipo.IsExport() {
			r.ExportData = &ExportData{TpoMoneda: "DOLAR USA"}
		}
		err := ValidateAt(r, gateToday)
		ve, ok := AsValidationError(err)
		if !ok || ve.Details[0].Field != "detalle[0].cantidad" || ve.Details[0].Code != CodeRequired {
			t.Errorf("%d referencing %d with codigo_ref %d: %v, want cantidad REQUIRED", tc.tipo, tc.ref, tc.codigo, err)
		}
	}
}

// TestTipoAllowances states, type by type, what the SII's schemas and
// documentation allow, as the table Validate and ComputeTotals share.
func TestTipoAllowances(t *testing.T) {
	type row struct {
		impuestos, iva15, descuentos, comisiones, noFact, negative, traslado, despacho bool
		servLo, servHi                                                                 int
	}
	const y, n = true, false
	want := map[TipoDTE]row{
		33:  {y, n, y, n, y, n, n, y, 1, 3},
		34:  {n, n, y, n, y, n, n, y, 1, 3},
		39:  {n, n, y, n, y, n, n, n, 1, 4},
		41:  {n, n, y, n, y, n, n, n, 1, 4},
		43:  {y, n, n, y, n, y, n, n, 1, 3},
		46:  {y, y, y, n, y, n, n, y, 1, 3},
		52:  {y, n, y, n, y, n, y, y, 1, 3},
		56:  {y, y, y, n, y, n, n, y, 1, 3},
		61:  {y, y, y, n, y, n, n, y, 1, 3},
		110: {n, n, y, n, n, n, n, y, 3, 5},
		111: {n, n, y, n, n, n, n, y, 3, 5},
		112: {n, n, y, n, n, n, n, y, 3, 5},
	}
	if len(want) != len(Tipos()) {
		t.Fatal("the table misses a type")
	}
	for _, tp := range Tipos() {
		lo, hi := tp.IndServicioRange()
		got := row{tp.CarriesImpuestos(), tp.RetainsIVAInFull(), tp.CarriesDescuentos(), tp.CarriesComisiones(),
			tp.CarriesNoFacturable(), tp.AllowsNegativeAmounts(), tp.CarriesIndTraslado(), tp.CarriesTipoDespacho(), lo, hi}
		if got != want[tp] {
			t.Errorf("tipo %d: %+v, want %+v", tp, got, want[tp])
		}
	}
	if TipoDTE(35).CarriesDescuentos() || TipoDTE(35).CarriesNoFacturable() || TipoDTE(35).CarriesTipoDespacho() {
		t.Error("an unknown type is allowed something")
	}
}
