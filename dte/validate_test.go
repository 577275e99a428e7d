package dte

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/beevik/etree"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/charmap"

	"github.com/dtekit/dtekit/internal/oracle"
)

// testToday is the fixed "now" of the validation tests: 2025-06-30 11:00 in
// Santiago (UTC−4 in June).
var testToday = time.Date(2025, 6, 30, 15, 0, 0, 0, time.UTC)

// requestFiles maps each file of testdata/requests to the type it holds.
var requestFiles = map[string]TipoDTE{
	"factura.json":                  33,
	"factura_exenta.json":           34,
	"boleta.json":                   39,
	"boleta_exenta.json":            41,
	"liquidacion_factura.json":      43,
	"factura_compra.json":           46,
	"guia_despacho.json":            52,
	"nota_debito.json":              56,
	"nota_credito.json":             61,
	"factura_exportacion.json":      110,
	"nota_debito_exportacion.json":  111,
	"nota_credito_exportacion.json": 112,
}

func requestPath(name string) string {
	return filepath.Join("..", "testdata", "requests", name)
}

// loadRequest decodes a request file strictly (unknown fields are an error).
func loadRequest(t testing.TB, name string) *EmitirDTERequest {
	t.Helper()
	b, err := os.ReadFile(requestPath(name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	r, err := DecodeRequest(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	return r
}

func ip(n int) *int       { return &n }
func i64p(n int64) *int64 { return &n }

func TestRequestFilesAreValid(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "testdata", "requests"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		if _, ok := requestFiles[e.Name()]; !ok {
			t.Errorf("unexpected file testdata/requests/%s", e.Name())
		}
	}
	if len(names) != len(requestFiles) {
		t.Errorf("testdata/requests holds %d files, want %d", len(names), len(requestFiles))
	}
	seen := map[TipoDTE]bool{}
	var lineDiscount, globalDiscount, exemptLine, textRef, strRef bool
	for name, tipo := range requestFiles {
		t.Run(name, func(t *testing.T) {
			r := loadRequest(t, name)
			if r.TipoDTE != tipo {
				t.Errorf("tipo_dte = %d, want %d", r.TipoDTE, tipo)
			}
			seen[r.TipoDTE] = true
			if n := len(r.Detalle); n < 1 || n > 5 {
				t.Errorf("%d lines; keep the samples at 2–5", n)
			}
			if err := ValidateAt(r, testToday); err != nil {
				t.Errorf("ValidateAt: %v", err)
			}
			if err := r.Validate(); err != nil {
				t.Errorf("Validate (today): %v", err)
			}
			for _, l := range r.Detalle {
				lineDiscount = lineDiscount || l.DescuentoPct.IsSet()
				exemptLine = exemptLine || (l.IndExe != nil && *l.IndExe == 1)
			}
			globalDiscount = globalDiscount || len(r.DescuentosGlobales) > 0
			for _, ref := range r.Referencias {
				strRef = strRef || ref.TipoDocRef.Codigo != ""
			}
			textRef = true
		})
	}
	if len(seen) != 12 {
		t.Errorf("the files cover %d types, want 12", len(seen))
	}
	if !lineDiscount || !globalDiscount || !exemptLine || !textRef || !strRef {
		t.Errorf("samples miss a feature: line discount %v, global discount %v, exempt line %v, text reference code %v",
			lineDiscount, globalDiscount, exemptLine, strRef)
	}
	// The names carry the characters that trip up XML and Latin-1 handling.
	var all strings.Builder
	for name := range requestFiles {
		b, _ := os.ReadFile(requestPath(name))
		all.Write(b)
	}
	for _, s := range []string{"ñ", "Ñ", "á", "é", "í", "ó", "ú", "ü", "&", `\"`, "'", "°"} {
		if !strings.Contains(all.String(), s) {
			t.Errorf("no sample contains %q", s)
		}
	}
}

// vcase is one validation case: a valid sample, a change, and the single
// detail expected (code "" means the request must stay valid).
type vcase struct {
	name  string
	base  string
	mut   func(r *EmitirDTERequest)
	field string
	code  DetailCode
}

func repeatLines(r *EmitirDTERequest, n int) {
	l := r.Detalle[0]
	r.Detalle = make([]LineaDetalle, n)
	for i := range r.Detalle {
		r.Detalle[i] = l
	}
}

// validationCases covers every detail code, and the edges that must pass.
var validationCases = []vcase{
	// REQUIRED
	{"tipo_dte missing", "factura.json", func(r *EmitirDTERequest) { r.TipoDTE = 0 }, "tipo_dte", CodeRequired},
	{"rut missing", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "" }, "receptor.rut", CodeRequired},
	{"razon_social blank", "factura.json", func(r *EmitirDTERequest) { r.Receptor.RazonSocial = "  \t" }, "receptor.razon_social", CodeRequired},
	{"no lines", "factura.json", func(r *EmitirDTERequest) { r.Detalle = nil }, "detalle", CodeRequired},
	{"nombre missing", "factura.json", func(r *EmitirDTERequest) { r.Detalle[1].Nombre = "" }, "detalle[1].nombre", CodeRequired},
	{"cantidad missing", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "" }, "detalle[0].cantidad", CodeRequired},
	{"precio missing", "factura.json", func(r *EmitirDTERequest) { r.Detalle[2].Precio = "" }, "detalle[2].precio", CodeRequired},
	{"precio missing on amount correction", "nota_credito.json", func(r *EmitirDTERequest) { r.Detalle[0].Precio = "" }, "detalle[0].precio", CodeRequired},
	{"text correction line with a price", "nota_credito.json", func(r *EmitirDTERequest) {
		r.Referencias[0].CodigoRef = ip(2)
		r.Detalle[0].Cantidad = ""
	}, "detalle[0].cantidad", CodeRequired},
	{"text correction line with an amount", "nota_credito.json", func(r *EmitirDTERequest) {
		r.Referencias[0].CodigoRef = ip(2)
		r.Detalle = r.Detalle[:1]
		r.Detalle[0].Cantidad, r.Detalle[0].Precio, r.Detalle[0].MontoItem = "1", "", "500"
	}, "detalle[0].precio", CodeRequired},
	{"tipo_doc_liq missing on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Detalle[1].TipoDocLiq = "" }, "detalle[1].tipo_doc_liq", CodeRequired},
	{"giro missing on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Receptor.Giro = "" }, "receptor.giro", CodeRequired},
	{"direccion missing on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Receptor.Direccion = "" }, "receptor.direccion", CodeRequired},
	{"comuna missing on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Receptor.Comuna = "" }, "receptor.comuna", CodeRequired},
	{"references missing on 61", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias = nil }, "referencias", CodeRequired},
	{"references missing on 56", "nota_debito.json", func(r *EmitirDTERequest) { r.Referencias = nil }, "referencias", CodeRequired},
	{"references missing on 111", "nota_debito_exportacion.json", func(r *EmitirDTERequest) { r.Referencias = nil }, "referencias", CodeRequired},
	{"references missing on 112", "nota_credito_exportacion.json", func(r *EmitirDTERequest) { r.Referencias = nil }, "referencias", CodeRequired},
	{"tipo_doc_ref missing", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].TipoDocRef = TipoDocRef{} }, "referencias[0].tipo_doc_ref", CodeRequired},
	{"folio_ref missing", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].FolioRef = 0 }, "referencias[0].folio_ref", CodeRequired},
	{"fecha_ref missing", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].FechaRef = "" }, "referencias[0].fecha_ref", CodeRequired},
	{"razon_ref missing", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].RazonRef = "" }, "referencias[0].razon_ref", CodeRequired},
	{"ind_traslado missing on 52", "guia_despacho.json", func(r *EmitirDTERequest) { r.IndTraslado = nil }, "ind_traslado", CodeRequired},
	{"export_data missing on 110", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData = nil }, "export_data", CodeRequired},
	{"tpo_moneda missing", "nota_debito_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TpoMoneda = "" }, "export_data.tpo_moneda", CodeRequired},
	{"tpo_mov missing", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].TpoMov = "" }, "descuentos_globales[0].tpo_mov", CodeRequired},
	{"tpo_valor missing", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].TpoValor = "" }, "descuentos_globales[0].tpo_valor", CodeRequired},
	{"valor_dr missing", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].ValorDR = "" }, "descuentos_globales[0].valor_dr", CodeRequired},
	{"tipo_movim missing", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[1].TipoMovim = "" }, "comisiones[1].tipo_movim", CodeRequired},
	{"glosa missing", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].Glosa = "" }, "comisiones[0].glosa", CodeRequired},
	{"tipo_imp missing", "factura_compra.json", func(r *EmitirDTERequest) { r.ImpuestosRetenciones[0].TipoImp = 0 }, "impuestos_retenciones[0].tipo_imp", CodeRequired},
	{"tax without rate or amount", "factura.json", func(r *EmitirDTERequest) {
		r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 27}}
	}, "impuestos_retenciones[0].tasa_imp", CodeRequired},

	// INVALID_VALUE
	{"tipo_dte unknown", "factura.json", func(r *EmitirDTERequest) { r.TipoDTE = 35 }, "tipo_dte", CodeInvalidValue},
	{"ind_exe 2", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].IndExe = ip(2) }, "detalle[0].ind_exe", CodeInvalidValue},
	{"cod_imp_adic 29 (not in ImpAdicDTEType)", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = ip(29) }, "detalle[0].cod_imp_adic", CodeInvalidValue},
	{"tipo_imp unknown", "factura_compra.json", func(r *EmitirDTERequest) { r.ImpuestosRetenciones[0].TipoImp = 99 }, "impuestos_retenciones[0].tipo_imp", CodeInvalidValue},
	{"codigo_ref 4", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].CodigoRef = ip(4) }, "referencias[0].codigo_ref", CodeInvalidValue},
	{"ind_traslado 10", "guia_despacho.json", func(r *EmitirDTERequest) { r.IndTraslado = ip(10) }, "ind_traslado", CodeInvalidValue},
	{"ind_traslado 0", "guia_despacho.json", func(r *EmitirDTERequest) { r.IndTraslado = ip(0) }, "ind_traslado", CodeInvalidValue},
	{"tipo_despacho 4", "guia_despacho.json", func(r *EmitirDTERequest) { r.TipoDespacho = ip(4) }, "tipo_despacho", CodeInvalidValue},
	{"ind_servicio 4 on 33", "factura.json", func(r *EmitirDTERequest) { r.IndServicio = ip(4) }, "ind_servicio", CodeInvalidValue},
	{"ind_servicio 5 on 39", "boleta.json", func(r *EmitirDTERequest) { r.IndServicio = ip(5) }, "ind_servicio", CodeInvalidValue},
	{"ind_servicio 6 on 110", "factura_exportacion.json", func(r *EmitirDTERequest) { r.IndServicio = ip(6) }, "ind_servicio", CodeInvalidValue},
	{"ind_servicio 1 on 110", "factura_exportacion.json", func(r *EmitirDTERequest) { r.IndServicio = ip(1) }, "ind_servicio", CodeInvalidValue},
	{"tpo_mov X", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].TpoMov = "X" }, "descuentos_globales[0].tpo_mov", CodeInvalidValue},
	{"tpo_valor P", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].TpoValor = "P" }, "descuentos_globales[0].tpo_valor", CodeInvalidValue},
	{"ind_exe_dr 3", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].IndExeDR = ip(3) }, "descuentos_globales[0].ind_exe_dr", CodeInvalidValue},
	{"tipo_movim lowercase", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].TipoMovim = "c" }, "comisiones[0].tipo_movim", CodeInvalidValue},
	{"currency code instead of name", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TpoMoneda = "USD" }, "export_data.tpo_moneda", CodeInvalidValue},
	{"clausula_venta unknown", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.ClausulaVenta = "XYZ" }, "export_data.clausula_venta", CodeInvalidValue},

	// INVALID_FORMAT
	{"rut letters", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "ABC-1" }, "receptor.rut", CodeInvalidFormat},
	{"rut bad check digit char", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "76086428-X" }, "receptor.rut", CodeInvalidFormat},
	{"fecha_emision not a day", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "2025-02-30" }, "fecha_emision", CodeInvalidFormat},
	{"fecha_emision DD-MM-YYYY", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "14-05-2025" }, "fecha_emision", CodeInvalidFormat},
	{"fecha_emision with time", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "2025-05-14T10:00:00" }, "fecha_emision", CodeInvalidFormat},
	{"fecha_ref slashes", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].FechaRef = "2025/05/14" }, "referencias[0].fecha_ref", CodeInvalidFormat},
	{"cantidad exponent", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "1e3" }, "detalle[0].cantidad", CodeInvalidFormat},
	{"precio comma", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Precio = "12,5" }, "detalle[0].precio", CodeInvalidFormat},
	{"descuento_pct text", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].DescuentoPct = "diez" }, "detalle[0].descuento_pct", CodeInvalidFormat},
	{"valor_dr trailing dot", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].ValorDR = "5." }, "descuentos_globales[0].valor_dr", CodeInvalidFormat},
	{"puerto_embarque name", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.PuertoEmbarque = "San Antonio" }, "export_data.puerto_embarque", CodeInvalidFormat},
	{"pais_dest too many digits", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.PaisDest = "5630" }, "export_data.pais_dest", CodeInvalidFormat},
	{"tipo_bulto label", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TipoBulto = "CAJA" }, "export_data.tipo_bulto", CodeInvalidFormat},

	// INVALID_RUT
	{"rut check digit", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "76086428-4" }, "receptor.rut", CodeInvalidRUT},
	{"rut dotted check digit", "boleta_exenta.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "15.432.198-K" }, "receptor.rut", CodeInvalidRUT},

	// INVALID_DECIMALS
	{"precio decimals on CLP", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Precio = "6490.5" }, "detalle[0].precio", CodeInvalidDecimals},
	{"cantidad 7 decimals", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "1.1234567" }, "detalle[0].cantidad", CodeInvalidDecimals},
	{"monto_item decimals on CLP", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].MontoItem = "100.5" }, "detalle[0].monto_item", CodeInvalidDecimals},
	{"export precio 7 decimals", "factura_exportacion.json", func(r *EmitirDTERequest) { r.Detalle[0].Precio = "12.1234567" }, "detalle[0].precio", CodeInvalidDecimals},
	{"export monto_item 5 decimals", "factura_exportacion.json", func(r *EmitirDTERequest) { r.Detalle[0].MontoItem = "7500.12345" }, "detalle[0].monto_item", CodeInvalidDecimals},
	{"descuento_pct 3 decimals", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].DescuentoPct = "10.125" }, "detalle[0].descuento_pct", CodeInvalidDecimals},
	{"valor_dr amount decimals on CLP", "factura_exenta.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].ValorDR = "20000.5" }, "descuentos_globales[0].valor_dr", CodeInvalidDecimals},
	{"valor_dr 3 decimals on export", "factura_exportacion.json", func(r *EmitirDTERequest) {
		r.DescuentosGlobales = []DscRcgGlobal{{TpoMov: "D", TpoValor: "$", ValorDR: "10.125"}}
	}, "descuentos_globales[0].valor_dr", CodeInvalidDecimals},
	{"tpo_cambio 5 decimals", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TpoCambio = "935.12345" }, "export_data.tpo_cambio", CodeInvalidDecimals},
	{"tasa_imp 3 decimals", "factura_compra.json", func(r *EmitirDTERequest) { r.ImpuestosRetenciones[0].TasaImp = "19.005" }, "impuestos_retenciones[0].tasa_imp", CodeInvalidDecimals},

	// OUT_OF_RANGE
	{"cantidad zero", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "0" }, "detalle[0].cantidad", CodeOutOfRange},
	{"cantidad negative", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "-1" }, "detalle[0].cantidad", CodeOutOfRange},
	{"cantidad 13 integer digits", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "1000000000000" }, "detalle[0].cantidad", CodeOutOfRange},
	{"precio negative", "factura.json", func(r *EmitirDTERequest) { r.Detalle[1].Precio = "-1" }, "detalle[1].precio", CodeOutOfRange},
	{"descuento_pct over 100", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].DescuentoPct = "100.01" }, "detalle[0].descuento_pct", CodeOutOfRange},
	{"recargo_pct negative", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].RecargoPct = "-1" }, "detalle[0].recargo_pct", CodeOutOfRange},
	{"monto_item negative on 33", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].MontoItem = "-5" }, "detalle[0].monto_item", CodeOutOfRange},
	{"monto_item 19 digits", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Detalle[0].MontoItem = "1000000000000000000" }, "detalle[0].monto_item", CodeOutOfRange},
	{"line amount beyond 18 digits", "factura.json", func(r *EmitirDTERequest) {
		r.Detalle[0].Cantidad, r.Detalle[0].Precio = "999999999999", "999999999999"
	}, "detalle[0].precio", CodeOutOfRange},
	{"lines add up beyond 18 digits", "factura.json", func(r *EmitirDTERequest) {
		r.Detalle = r.Detalle[:2]
		for i := range r.Detalle {
			r.Detalle[i].Cantidad, r.Detalle[i].Precio, r.Detalle[i].DescuentoPct = "600000", "999999999999", ""
		}
	}, "detalle", CodeOutOfRange},
	{"fecha_emision tomorrow", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "2025-07-01" }, "fecha_emision", CodeOutOfRange},
	{"fecha_emision before 2000", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "1999-12-31" }, "fecha_emision", CodeOutOfRange},
	{"fecha_ref after emission", "nota_credito.json", func(r *EmitirDTERequest) { r.FechaEmision, r.Referencias[0].FechaRef = "2025-05-26", "2025-05-27" }, "referencias[0].fecha_ref", CodeOutOfRange},
	{"fecha_ref after today when fecha_emision omitted", "nota_credito.json", func(r *EmitirDTERequest) {
		r.FechaEmision = ""
		r.Referencias[0].FechaRef = "2025-07-01"
	}, "referencias[0].fecha_ref", CodeOutOfRange},
	{"folio_ref negative", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].FolioRef = -3 }, "referencias[0].folio_ref", CodeOutOfRange},
	{"folio_ref 19 digits", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].FolioRef = 1_000_000_000_000_000_000 }, "referencias[0].folio_ref", CodeOutOfRange},
	{"tipo_doc_ref 1000", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].TipoDocRef = RefTipo(1000) }, "referencias[0].tipo_doc_ref", CodeOutOfRange},
	{"valor_dr zero", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].ValorDR = "0" }, "descuentos_globales[0].valor_dr", CodeOutOfRange},
	{"valor_dr percent over 100", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].ValorDR = "101" }, "descuentos_globales[0].valor_dr", CodeOutOfRange},
	{"nro_lin_dr 100", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].NroLinDR = ip(100) }, "descuentos_globales[0].nro_lin_dr", CodeOutOfRange},
	{"tasa_comision zero", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].TasaComision = "0" }, "comisiones[0].tasa_comision", CodeOutOfRange},
	{"val_com_neto 19 digits", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].ValComNeto = 1_000_000_000_000_000_000 }, "comisiones[0].val_com_neto", CodeOutOfRange},
	{"val_com_iva 19 digits negative", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].ValComIVA = i64p(-1_000_000_000_000_000_000) }, "comisiones[0].val_com_iva", CodeOutOfRange},
	{"monto_imp zero", "factura_compra.json", func(r *EmitirDTERequest) { r.ImpuestosRetenciones[0].MontoImp = i64p(0) }, "impuestos_retenciones[0].monto_imp", CodeOutOfRange},
	{"tasa_imp over 100", "factura_compra.json", func(r *EmitirDTERequest) { r.ImpuestosRetenciones[0].TasaImp = "100.5" }, "impuestos_retenciones[0].tasa_imp", CodeOutOfRange},
	{"tpo_cambio zero", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TpoCambio = "0" }, "export_data.tpo_cambio", CodeOutOfRange},
	{"tpo_cambio 7 integer digits", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TpoCambio = "1000000" }, "export_data.tpo_cambio", CodeOutOfRange},
	{"modalidad_venta 100", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.ModalidadVenta = ip(100) }, "export_data.modalidad_venta", CodeOutOfRange},
	{"tara zero", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.Tara = i64p(0) }, "export_data.tara", CodeOutOfRange},
	{"total_bultos zero", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TotalBultos = i64p(0) }, "export_data.total_bultos", CodeOutOfRange},
	{"mnt_flete zero", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.MntFlete = "0" }, "export_data.mnt_flete", CodeOutOfRange},
	{"peso_neto negative", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.PesoNeto = "-1" }, "export_data.peso_neto", CodeOutOfRange},

	// TOO_LONG
	{"razon_social 101 characters", "factura.json", func(r *EmitirDTERequest) { r.Receptor.RazonSocial = strings.Repeat("ñ", 101) }, "receptor.razon_social", CodeTooLong},
	{"giro 41", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Giro = strings.Repeat("g", 41) }, "receptor.giro", CodeTooLong},
	{"direccion 71", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Direccion = strings.Repeat("d", 71) }, "receptor.direccion", CodeTooLong},
	{"comuna 21", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Comuna = strings.Repeat("c", 21) }, "receptor.comuna", CodeTooLong},
	{"ciudad 21", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Ciudad = strings.Repeat("c", 21) }, "receptor.ciudad", CodeTooLong},
	{"nombre 201", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Nombre = strings.Repeat("n", 201) }, "detalle[0].nombre", CodeTooLong},
	{"dsc_item 1001", "factura.json", func(r *EmitirDTERequest) { r.Detalle[1].DscItem = strings.Repeat("d", 1001) }, "detalle[1].dsc_item", CodeTooLong},
	{"long nombre joined to dsc_item exceeds 1000", "factura.json", func(r *EmitirDTERequest) {
		r.Detalle[1].Nombre, r.Detalle[1].DscItem = strings.Repeat("n", 100), strings.Repeat("d", 900)
	}, "detalle[1].dsc_item", CodeTooLong},
	{"unidad 5", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Unidad = "CAJAS" }, "detalle[0].unidad", CodeTooLong},
	{"tipo_doc_liq 4", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Detalle[0].TipoDocLiq = "FACT" }, "detalle[0].tipo_doc_liq", CodeTooLong},
	{"razon_ref 201", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].RazonRef = strings.Repeat("r", 201) }, "referencias[0].razon_ref", CodeTooLong},
	{"tipo_doc_ref code 4", "factura_exportacion.json", func(r *EmitirDTERequest) { r.Referencias[0].TipoDocRef = RefCodigo("DUSX") }, "referencias[0].tipo_doc_ref", CodeTooLong},
	{"glosa_dr 46", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].GlosaDR = strings.Repeat("g", 46) }, "descuentos_globales[0].glosa_dr", CodeTooLong},
	{"comision glosa 61", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].Glosa = strings.Repeat("g", 61) }, "comisiones[0].glosa", CodeTooLong},
	{"nacionalidad 4", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.Nacionalidad = "5630" }, "export_data.nacionalidad", CodeTooLong},
	{"num_id 21", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.NumID = strings.Repeat("9", 21) }, "export_data.num_id", CodeTooLong},
	{"marcas 256", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.Marcas = strings.Repeat("m", 256) }, "export_data.marcas", CodeTooLong},

	// TOO_MANY
	{"61 lines", "factura.json", func(r *EmitirDTERequest) { repeatLines(r, 61) }, "detalle", CodeTooMany},
	{"1001 lines on a boleta", "boleta.json", func(r *EmitirDTERequest) { repeatLines(r, 1001) }, "detalle", CodeTooMany},
	{"41 references", "nota_credito.json", func(r *EmitirDTERequest) {
		for len(r.Referencias) < 41 {
			r.Referencias = append(r.Referencias, r.Referencias[0])
		}
	}, "referencias", CodeTooMany},
	{"21 global discounts", "factura.json", func(r *EmitirDTERequest) {
		for len(r.DescuentosGlobales) < 21 {
			r.DescuentosGlobales = append(r.DescuentosGlobales, r.DescuentosGlobales[0])
		}
	}, "descuentos_globales", CodeTooMany},
	{"21 commissions", "liquidacion_factura.json", func(r *EmitirDTERequest) {
		for len(r.Comisiones) < 21 {
			r.Comisiones = append(r.Comisiones, r.Comisiones[0])
		}
	}, "comisiones", CodeTooMany},
	{"21 taxes", "factura.json", func(r *EmitirDTERequest) {
		for _, c := range []int{14, 16, 17, 18, 19, 23, 24, 25, 26, 27, 28, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39} {
			r.ImpuestosRetenciones = append(r.ImpuestosRetenciones, ImpuestoRetencion{TipoImp: c, TasaImp: "10"})
		}
	}, "impuestos_retenciones", CodeTooMany},

	// NOT_ALLOWED
	{"comisiones on 33", "factura.json", func(r *EmitirDTERequest) {
		r.Comisiones = []ComisionDTE{{TipoMovim: "C", Glosa: "Comisión"}}
	}, "comisiones", CodeNotAllowed},
	{"impuestos on 34", "factura_exenta.json", func(r *EmitirDTERequest) {
		r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 27, TasaImp: "10"}}
	}, "impuestos_retenciones", CodeNotAllowed},
	{"impuestos on 39", "boleta.json", func(r *EmitirDTERequest) {
		r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 27, TasaImp: "10"}}
	}, "impuestos_retenciones", CodeNotAllowed},
	{"impuestos on 110", "factura_exportacion.json", func(r *EmitirDTERequest) {
		r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 27, TasaImp: "10"}}
	}, "impuestos_retenciones", CodeNotAllowed},
	{"tipo_imp 15 on 33", "factura.json", func(r *EmitirDTERequest) {
		r.ImpuestosRetenciones = []ImpuestoRetencion{{TipoImp: 15, TasaImp: "19"}}
	}, "impuestos_retenciones[0].tipo_imp", CodeNotAllowed},
	{"cod_imp_adic on 39", "boleta.json", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = ip(27) }, "detalle[0].cod_imp_adic", CodeNotAllowed},
	{"cod_imp_adic on 112", "nota_credito_exportacion.json", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = ip(27) }, "detalle[0].cod_imp_adic", CodeNotAllowed},
	{"cod_imp_adic 15 on 33", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = ip(15) }, "detalle[0].cod_imp_adic", CodeNotAllowed},
	{"cod_imp_adic on exempt line", "factura.json", func(r *EmitirDTERequest) { r.Detalle[2].CodImpAdic = ip(27) }, "detalle[2].cod_imp_adic", CodeNotAllowed},
	{"codigo_ref on 33", "factura.json", func(r *EmitirDTERequest) { r.Referencias[0].CodigoRef = ip(1) }, "referencias[0].codigo_ref", CodeNotAllowed},
	{"ind_traslado on 33", "factura.json", func(r *EmitirDTERequest) { r.IndTraslado = ip(1) }, "ind_traslado", CodeNotAllowed},
	{"tipo_despacho on 39", "boleta.json", func(r *EmitirDTERequest) { r.TipoDespacho = ip(1) }, "tipo_despacho", CodeNotAllowed},
	{"tipo_despacho on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.TipoDespacho = ip(1) }, "tipo_despacho", CodeNotAllowed},
	{"descuentos_globales on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) {
		r.DescuentosGlobales = []DscRcgGlobal{{TpoMov: "D", TpoValor: "%", ValorDR: "5"}}
	}, "descuentos_globales", CodeNotAllowed},
	{"descuento_pct on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Detalle[0].DescuentoPct = "5" }, "detalle[0].descuento_pct", CodeNotAllowed},
	{"export_data on 33", "factura.json", func(r *EmitirDTERequest) { r.ExportData = &ExportData{TpoMoneda: "DOLAR USA"} }, "export_data", CodeNotAllowed},
	{"tipo_doc_id on 110", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.TipoDocID = ip(1) }, "export_data.tipo_doc_id", CodeNotAllowed},
	{"tipo_doc_liq on 33", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].TipoDocLiq = "33" }, "detalle[0].tipo_doc_liq", CodeNotAllowed},
	{"anonymous rut on 33", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "66.666.666-6" }, "receptor.rut", CodeNotAllowed},

	// NOT_LATIN1
	{"euro sign", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Nombre = "Aceite 10 €" }, "detalle[0].nombre", CodeNotLatin1},
	{"emoji", "boleta.json", func(r *EmitirDTERequest) { r.Detalle[1].Nombre = "Bebida 🍊" }, "detalle[1].nombre", CodeNotLatin1},
	{"curly quotes", "factura.json", func(r *EmitirDTERequest) { r.Receptor.RazonSocial = "Comercial “Ñandú” Ltda." }, "receptor.razon_social", CodeNotLatin1},
	{"em dash in dsc_item", "factura.json", func(r *EmitirDTERequest) { r.Detalle[1].DscItem = "Tueste medio — Colombia" }, "detalle[1].dsc_item", CodeNotLatin1},
	{"polish letter", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Ciudad = "Łódź" }, "receptor.ciudad", CodeNotLatin1},
	{"invalid UTF-8", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Nombre = "Aceite \xff" }, "detalle[0].nombre", CodeNotLatin1},
	{"replacement character", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].RazonRef = "Devoluci\ufffdn" }, "referencias[0].razon_ref", CodeNotLatin1},

	// INVALID_CHARACTER
	{"line feed in nombre", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Nombre = "Aceite\nde oliva" }, "detalle[0].nombre", CodeInvalidCharacter},
	{"CRLF in dsc_item", "factura.json", func(r *EmitirDTERequest) { r.Detalle[1].DscItem = "Tueste medio\r\nColombia" }, "detalle[1].dsc_item", CodeInvalidCharacter},
	{"tab in razon_ref", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].RazonRef = "Devolución\tparcial" }, "referencias[0].razon_ref", CodeInvalidCharacter},
	{"NUL in glosa", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[0].Glosa = "Comisión\x00" }, "comisiones[0].glosa", CodeInvalidCharacter},
	{"C1 control in giro", "factura.json", func(r *EmitirDTERequest) { r.Receptor.Giro = "Venta\u0085mayorista" }, "receptor.giro", CodeInvalidCharacter},
	{"DEL in glosa_dr", "factura.json", func(r *EmitirDTERequest) { r.DescuentosGlobales[0].GlosaDR = "Desc\x7f" }, "descuentos_globales[0].glosa_dr", CodeInvalidCharacter},

	// DUPLICATE
	{"nro_lin_dr repeated", "factura.json", func(r *EmitirDTERequest) {
		r.DescuentosGlobales[0].NroLinDR = ip(1)
		r.DescuentosGlobales = append(r.DescuentosGlobales, DscRcgGlobal{NroLinDR: ip(1), TpoMov: "R", TpoValor: "$", ValorDR: "1000"})
	}, "descuentos_globales[1].nro_lin_dr", CodeDuplicate},
	{"implicit nro_lin_dr collides", "factura.json", func(r *EmitirDTERequest) {
		r.DescuentosGlobales[0].NroLinDR = ip(2)
		r.DescuentosGlobales = append(r.DescuentosGlobales, DscRcgGlobal{TpoMov: "R", TpoValor: "$", ValorDR: "1000"})
	}, "descuentos_globales[1].nro_lin_dr", CodeDuplicate},
	{"tipo_imp repeated", "factura_compra.json", func(r *EmitirDTERequest) {
		r.ImpuestosRetenciones = append(r.ImpuestosRetenciones, ImpuestoRetencion{TipoImp: 15, MontoImp: i64p(1000)})
	}, "impuestos_retenciones[1].tipo_imp", CodeDuplicate},

	// Edges that must stay valid.
	{"text correction without amounts", "nota_credito.json", func(r *EmitirDTERequest) {
		r.Referencias[0].CodigoRef = ip(2)
		r.Referencias[0].RazonRef = "Corrige giro del receptor"
		r.Detalle = []LineaDetalle{{Nombre: "Donde dice \"Venta de alimentos\" debe decir \"Venta al por mayor de alimentos\""}}
	}, "", ""},
	{"text correction with monto_item 0", "nota_debito.json", func(r *EmitirDTERequest) {
		r.Referencias[0].CodigoRef = ip(2)
		r.Detalle = []LineaDetalle{{Nombre: "Corrige dirección", DscItem: "Av. Libertador Bernardo O'Higgins 1449", MontoItem: "0"}}
	}, "", ""},
	{"text correction on export note", "nota_credito_exportacion.json", func(r *EmitirDTERequest) {
		r.Referencias[0].CodigoRef = ip(2)
		r.Detalle = []LineaDetalle{{Nombre: "Corrige marcas de los bultos"}}
	}, "", ""},
	{"anonymous rut on boleta", "boleta.json", func(r *EmitirDTERequest) { r.Receptor.Rut = "66666666-6" }, "", ""},
	{"precio 0", "guia_despacho.json", func(r *EmitirDTERequest) { r.IndTraslado = ip(5); r.Detalle[0].Precio = "0" }, "", ""},
	{"precio with zero decimals", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Precio = "6490.00" }, "", ""},
	{"numeric string precio", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Precio = "0006490" }, "", ""},
	{"cantidad minimum", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad = "0.000001" }, "", ""},
	{"cantidad 12.6 digits", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Cantidad, r.Detalle[0].Precio = "999999.999999", "1" }, "", ""},
	{"descuento_pct 100", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].DescuentoPct = "100" }, "", ""},
	{"descuento_pct 0", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].DescuentoPct = "0" }, "", ""},
	{"60 lines", "factura.json", func(r *EmitirDTERequest) { repeatLines(r, 60) }, "", ""},
	{"1000 lines on a boleta", "boleta.json", func(r *EmitirDTERequest) { repeatLines(r, 1000) }, "", ""},
	{"negative monto_item on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Detalle[1].MontoItem = "-50000" }, "", ""},
	{"negative commissions on 43", "liquidacion_factura.json", func(r *EmitirDTERequest) { r.Comisiones[1].ValComNeto = -45000 }, "", ""},
	{"nombre 200 characters", "factura.json", func(r *EmitirDTERequest) { r.Detalle[0].Nombre = strings.Repeat("ñ", 200) }, "", ""},
	{"long nombre joined to dsc_item fits 1000", "factura.json", func(r *EmitirDTERequest) {
		r.Detalle[1].Nombre, r.Detalle[1].DscItem = strings.Repeat("n", 100), strings.Repeat("d", 899)
	}, "", ""},
	{"dsc_item line feeds and tabs", "factura.json", func(r *EmitirDTERequest) { r.Detalle[1].DscItem = "Tueste medio\n\tOrigen: Colombia" }, "", ""},
	{"razon_social 100 Latin-1 characters", "factura.json", func(r *EmitirDTERequest) { r.Receptor.RazonSocial = strings.Repeat("Ñ", 100) }, "", ""},
	{"razon_ref 200", "nota_credito.json", func(r *EmitirDTERequest) { r.Referencias[0].RazonRef = strings.Repeat("r", 200) }, "", ""},
	{"amount discount with decimals on export", "factura_exportacion.json", func(r *EmitirDTERequest) {
		r.DescuentosGlobales = []DscRcgGlobal{{TpoMov: "D", TpoValor: "$", ValorDR: "100.5", GlosaDR: "Bonificación por volumen"}}
	}, "", ""},
	{"export monto_item 4 decimals", "factura_exportacion.json", func(r *EmitirDTERequest) { r.Detalle[0].MontoItem = "7500.1234" }, "", ""},
	{"fecha_emision today in Chile", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "2025-06-30" }, "", ""},
	{"fecha_emision omitted", "factura.json", func(r *EmitirDTERequest) { r.FechaEmision = "" }, "", ""},
	{"SET reference with folio 0", "factura.json", func(r *EmitirDTERequest) {
		r.Referencias = append(r.Referencias, Referencia{TipoDocRef: RefCodigo("SET"), FechaRef: "2025-05-14", RazonRef: "CASO 4312788-1"})
	}, "", ""},
	{"code 15 without rate on 46", "factura_compra.json", func(r *EmitirDTERequest) { r.ImpuestosRetenciones[0].TasaImp = "" }, "", ""},
	{"code 15 on line of 46", "factura_compra.json", func(r *EmitirDTERequest) { r.Detalle[0].CodImpAdic = ip(15) }, "", ""},
	{"clausula_venta lowercase label", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.ClausulaVenta = " fob " }, "", ""},
	{"clausula_venta code", "factura_exportacion.json", func(r *EmitirDTERequest) { r.ExportData.ClausulaVenta = "2" }, "", ""},
	{"ind_servicio 5 on 110", "factura_exportacion.json", func(r *EmitirDTERequest) { r.IndServicio = ip(5) }, "", ""},
	{"ind_servicio 4 on 39", "boleta.json", func(r *EmitirDTERequest) { r.IndServicio = ip(4) }, "", ""},
	{"tipo_despacho on 33", "factura.json", func(r *EmitirDTERequest) { r.TipoDespacho = ip(2) }, "", ""},
	{"ind_exe 1 on exempt type", "factura_exenta.json", func(r *EmitirDTERequest) { r.Detalle[0].IndExe = ip(1) }, "", ""},
	{"distinct nro_lin_dr", "factura.json", func(r *EmitirDTERequest) {
		r.DescuentosGlobales[0].NroLinDR = ip(1)
		r.DescuentosGlobales = append(r.DescuentosGlobales, DscRcgGlobal{NroLinDR: ip(2), TpoMov: "R", TpoValor: "$", ValorDR: "1000"})
	}, "", ""},
}

func TestValidationCases(t *testing.T) {
	for _, c := range validationCases {
		t.Run(c.name, func(t *testing.T) {
			r := loadRequest(t, c.base)
			c.mut(r)
			err := ValidateAt(r, testToday)
			if c.code == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			ve, ok := AsValidationError(err)
			if !ok {
				t.Fatalf("want a *ValidationError with %s on %s, got %v", c.code, c.field, err)
			}
			got := make([][2]string, len(ve.Details))
			for i, d := range ve.Details {
				got[i] = [2]string{d.Field, string(d.Code)}
				if d.Message == "" {
					t.Errorf("detail %d has no message", i)
				}
			}
			if want := [][2]string{{c.field, string(c.code)}}; !cmp.Equal(got, want) {
				t.Fatalf("details = %v, want %v\n%v", got, want, err)
			}
		})
	}
}

// TestEveryDetailCodeHasCases fails when a code constant has no case, so a
// new code can't be added without a test.
func TestEveryDetailCodeHasCases(t *testing.T) {
	count := map[DetailCode]int{}
	for _, c := range validationCases {
		count[c.code]++
	}
	for _, c := range decodeCases {
		count[c.code]++
	}
	seen := map[DetailCode]bool{}
	for _, code := range DetailCodes() {
		if seen[code] {
			t.Errorf("DetailCodes lists %s twice", code)
		}
		seen[code] = true
		if count[code] == 0 {
			t.Errorf("detail code %s has no validation or decoding case", code)
		}
		if s := string(code); s != strings.ToUpper(s) || strings.ContainsAny(s, " -") {
			t.Errorf("detail code %q is not UPPER_SNAKE", code)
		}
	}
	for code := range count {
		if code != "" && !seen[code] {
			t.Errorf("cases use %s, which DetailCodes does not list", code)
		}
	}
	if !seen["INVALID_RUT"] {
		t.Error("the contract's INVALID_RUT is missing")
	}
}

func TestValidateReportsEverythingInOrder(t *testing.T) {
	r := loadRequest(t, "factura.json")
	r.FechaEmision = "2025-13-01"
	r.Receptor.Rut = "76086428-4"
	r.Receptor.Giro = strings.Repeat("x", 41)
	r.Detalle[0].Cantidad = "0"
	r.Detalle[0].Precio = "10.5"
	r.Detalle[2].Nombre = "Arriendo 🏠"
	r.Detalle[2].IndExe = ip(3)
	r.Referencias[0].FechaRef = "2025-5-9"
	r.Referencias[0].RazonRef = ""
	r.IndTraslado = ip(1)
	r.DescuentosGlobales[0].ValorDR = "150"
	r.ExportData = &ExportData{}

	err := ValidateAt(r, testToday)
	ve, ok := AsValidationError(err)
	if !ok {
		t.Fatalf("want *ValidationError, got %v", err)
	}
	var got []string
	for _, d := range ve.Details {
		got = append(got, d.Field+" "+string(d.Code))
	}
	want := []string{
		"fecha_emision INVALID_FORMAT",
		"receptor.rut INVALID_RUT",
		"receptor.giro TOO_LONG",
		"detalle[0].cantidad OUT_OF_RANGE",
		"detalle[0].precio INVALID_DECIMALS",
		"detalle[2].ind_exe INVALID_VALUE",
		"detalle[2].nombre NOT_LATIN1",
		"referencias[0].fecha_ref INVALID_FORMAT",
		"referencias[0].razon_ref REQUIRED",
		"ind_traslado NOT_ALLOWED",
		"descuentos_globales[0].valor_dr OUT_OF_RANGE",
		"export_data NOT_ALLOWED",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	// The same request gives the same answer.
	if again := ValidateAt(r, testToday); !cmp.Equal(err, again) {
		t.Error("validation is not deterministic")
	}

	// The details are the contract's §7 shape (field, code, message, action).
	b, jerr := json.Marshal(ve.Details)
	if jerr != nil {
		t.Fatal(jerr)
	}
	var details []any
	if err := json.Unmarshal(b, &details); err != nil {
		t.Fatal(err)
	}
	if len(details) != len(want) {
		t.Fatalf("%d details in JSON, want %d", len(details), len(want))
	}
	first, _ := details[0].(map[string]any)
	for _, k := range []string{"field", "code", "message", "action"} {
		if _, ok := first[k]; !ok {
			t.Errorf("detail lacks %q: %v", k, first)
		}
	}
	if !strings.Contains(err.Error(), "12 problems") {
		t.Errorf("Error() = %q, want the count of problems", err.Error())
	}
}

func TestValidateUsesChileDate(t *testing.T) {
	r := loadRequest(t, "factura.json")
	r.FechaEmision = "2025-07-01"
	// 2025-07-01 02:00 UTC is still 2025-06-30 in Santiago (UTC−4).
	if err := ValidateAt(r, time.Date(2025, 7, 1, 2, 0, 0, 0, time.UTC)); err == nil {
		t.Error("2025-07-01 accepted while it is 2025-06-30 in Chile")
	}
	// 2025-07-01 04:30 UTC is 00:30 on 2025-07-01 in Santiago.
	if err := ValidateAt(r, time.Date(2025, 7, 1, 4, 30, 0, 0, time.UTC)); err != nil {
		t.Errorf("today's date in Chile rejected: %v", err)
	}
	// A zero today skips the future check but not the SII's range.
	r.FechaEmision = "2049-01-01"
	if err := ValidateAt(r, time.Time{}); err != nil {
		t.Errorf("zero today: %v", err)
	}
	r.FechaEmision = "2051-01-01"
	if err := ValidateAt(r, time.Time{}); err == nil {
		t.Error("2051 accepted")
	}
	// Validate uses the real clock: a date decades ahead is rejected.
	r.FechaEmision = "2049-01-01"
	if err := r.Validate(); err == nil {
		t.Error("Validate accepted a date in 2049")
	}
}

func TestValidateNil(t *testing.T) {
	var r *EmitirDTERequest
	err := r.Validate()
	ve, ok := AsValidationError(err)
	if !ok || len(ve.Details) != 1 || ve.Details[0].Code != CodeRequired {
		t.Fatalf("nil request: %v", err)
	}
	if _, ok := AsValidationError(errors.New("other")); ok {
		t.Error("AsValidationError matched a plain error")
	}
}

func TestValidateUnknownTypeSkipsTypeRules(t *testing.T) {
	// With an unknown type only tipo_dte is reported, whatever type-specific
	// fields the request holds.
	r := loadRequest(t, "liquidacion_factura.json")
	r.TipoDTE = 99
	r.ExportData = &ExportData{TpoMoneda: "EURO"}
	r.IndTraslado = ip(3)
	err := ValidateAt(r, testToday)
	ve, ok := AsValidationError(err)
	if !ok || len(ve.Details) != 1 || ve.Details[0].Field != "tipo_dte" {
		t.Fatalf("got %v", err)
	}
}

func TestItemName(t *testing.T) {
	n80 := strings.Repeat("ñ", 80)
	n81 := n80 + "x"
	cases := []struct {
		nombre, dsc string
		nmb, wdsc   string
	}{
		{"Aceite", "", "Aceite", ""},
		{"Aceite", "1 L", "Aceite", "1 L"},
		{n80, "desc", n80, "desc"},
		{n81, "", n80, n81},
		{n81, "desc", n80, n81 + "\ndesc"},
	}
	for _, c := range cases {
		nmb, dsc := LineaDetalle{Nombre: c.nombre, DscItem: c.dsc}.ItemName()
		if nmb != c.nmb || dsc != c.wdsc {
			t.Errorf("ItemName(%q, %q) = %q, %q; want %q, %q", c.nombre, c.dsc, nmb, dsc, c.nmb, c.wdsc)
		}
		if utf8.RuneCountInString(nmb) > 80 {
			t.Errorf("NmbItem %q longer than 80", nmb)
		}
	}
}

func TestRazonRefXML(t *testing.T) {
	long := strings.Repeat("á", 90) + "resto"
	if got := (Referencia{RazonRef: long}).RazonRefXML(); got != strings.Repeat("á", 90) {
		t.Errorf("RazonRefXML = %q", got)
	}
	if got := (Referencia{RazonRef: "Anula factura"}).RazonRefXML(); got != "Anula factura" {
		t.Errorf("RazonRefXML = %q", got)
	}
}

func TestClausulaVentaCodigo(t *testing.T) {
	cases := []struct {
		in   string
		want int
		ok   bool
	}{
		{"FOB", 5, true}, // FOB is code 5 in the customs table
		{"fob", 5, true},
		{" CIF ", 1, true},
		{"S/CL", 6, true},
		// The rest of the customs table, as two independent public
		// emitters publish it.
		{"CFR", 2, true}, {"EXW", 3, true}, {"FAS", 4, true}, {"OTROS", 8, true},
		{"DDP", 9, true}, {"FCA", 10, true}, {"CPT", 11, true}, {"CIP", 12, true},
		{"DAT", 17, true}, {"DAP", 18, true},
		{"5", 5, true},
		{"05", 5, true},
		{"99", 99, true},
		{"0", 0, false},
		{"100", 0, false},
		{"", 0, false},
		{"XYZ", 0, false},
		{"-5", 0, false},
	}
	for _, c := range cases {
		got, ok := ClausulaVentaCodigo(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ClausulaVentaCodigo(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// FuzzValidate decodes arbitrary JSON into a request and validates it: it
// must never panic, and a request it accepts must be carriable into the XML.
func FuzzValidate(f *testing.F) {
	for name := range requestFiles {
		b, err := os.ReadFile(requestPath(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"tipo_dte":61,"fecha_emision":"2025-05-01","receptor":{"rut":"1-9","razon_social":"x"},"detalle":[{"nombre":"y"}],"referencias":[{"tipo_doc_ref":"SET","folio_ref":0,"fecha_ref":"2025-01-01","codigo_ref":2,"razon_ref":"z"}]}`))
	f.Add([]byte(`{"tipo_dte":110,"receptor":{"rut":"55555555-5","razon_social":"A"},"detalle":[{"nombre":"n","cantidad":"1e999999","precio":-0.0000001}],"export_data":{"tpo_moneda":"EURO","tipo_doc_id":1}}`))
	f.Add([]byte(`{"tipo_dte":43,"detalle":[{"nombre":"\u0000\ud800","monto_item":"-"}],"comisiones":[{"tipo_movim":"C"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r EmitirDTERequest
		if json.Unmarshal(b, &r) != nil {
			return
		}
		err := ValidateAt(&r, testToday)
		for _, l := range r.Detalle {
			nmb, dsc := l.ItemName()
			if err == nil && (utf8.RuneCountInString(nmb) > 80 || utf8.RuneCountInString(dsc) > 1000) {
				t.Fatalf("accepted a line whose NmbItem/DscItem overflow: %d/%d", utf8.RuneCountInString(nmb), utf8.RuneCountInString(dsc))
			}
		}
		if err == nil {
			checkAcceptedInvariants(t, &r)
			return
		}
		ve, ok := AsValidationError(err)
		if !ok || len(ve.Details) == 0 {
			t.Fatalf("error is not a non-empty *ValidationError: %v", err)
		}
		codes := map[DetailCode]bool{}
		for _, c := range DetailCodes() {
			codes[c] = true
		}
		for _, d := range ve.Details {
			if d.Field == "" || d.Message == "" || !codes[d.Code] {
				t.Fatalf("malformed detail %+v", d)
			}
		}
	})
}

// checkAcceptedInvariants checks what the XML writer relies on in a request
// Validate accepted.
func checkAcceptedInvariants(t *testing.T, r *EmitirDTERequest) {
	t.Helper()
	if !r.TipoDTE.Valid() || len(r.Detalle) == 0 {
		t.Fatalf("accepted tipo %d with %d lines", r.TipoDTE, len(r.Detalle))
	}
	if _, err := ParseRUT(r.Receptor.Rut); err != nil {
		t.Fatalf("accepted RUT %q: %v", r.Receptor.Rut, err)
	}
	for _, l := range r.Detalle {
		for _, s := range []string{l.Nombre, l.DscItem, l.Unidad, l.TipoDocLiq} {
			for _, c := range s {
				if c > 0xFF || c == '\r' {
					t.Fatalf("accepted non-Latin-1 text %q", s)
				}
			}
		}
		for _, d := range []Decimal{l.Cantidad, l.Precio, l.MontoItem, l.DescuentoPct, l.RecargoPct} {
			if d.IsSet() && !d.Valid() {
				t.Fatalf("accepted malformed number %q", d)
			}
		}
	}
}

// readXSD parses one of the SII's schemas (ISO-8859-1) from the shared folder.
func readXSD(t *testing.T, name string) *etree.Document {
	t.Helper()
	doc := etree.NewDocument()
	doc.ReadSettings.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		return charmap.ISO8859_1.NewDecoder().Reader(in), nil
	}
	if err := doc.ReadFromFile(oracle.SharedFile(t, "sii", "schemas", name)); err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return doc
}

// facets returns the value of the facet (maxLength, maxInclusive, ...) of
// every element named name in doc that declares it, so a limit used in
// several document kinds is checked in all of them.
func facets(doc *etree.Document, name, facet string) []string {
	var out []string
	for _, e := range doc.FindElements("//xs:element[@name='" + name + "']") {
		if f := e.FindElement(".//xs:" + facet); f != nil {
			out = append(out, f.SelectAttrValue("value", ""))
		}
	}
	return out
}

// TestLimitsMatchSchemas checks the limits Validate enforces against the
// SII's own schemas (the independent oracle for numbers the contract doesn't
// state).
func TestLimitsMatchSchemas(t *testing.T) {
	dte := readXSD(t, "DTE_v10.xsd")
	types := readXSD(t, "SiiTypes_v10.xsd")
	boleta := readXSD(t, "EnvioBOLETA_v11.xsd")
	itoa := strconv.Itoa

	lengths := map[string]int{
		"NmbItem": maxNmbItem, "DscItem": maxDscItem, "RazonRef": maxRazonRef, "UnmdItem": maxUnmdItem,
		"GiroRecep": maxGiroRecep, "DirRecep": maxDirRecep, "GlosaDR": maxGlosaDR, "Glosa": maxGlosaComision,
		"TpoDocLiq": maxTpoDocRef, "TpoDocRef": maxTpoDocRef, "Nacionalidad": maxNacionalidad,
		"NumId": maxNumID, "Marcas": maxMarcas,
	}
	for name, want := range lengths {
		got := facets(dte, name, "maxLength")
		if len(got) == 0 {
			t.Errorf("DTE_v10.xsd: no maxLength for %s", name)
		}
		for _, g := range got {
			if g != itoa(want) {
				t.Errorf("DTE_v10.xsd: %s maxLength %s, validation uses %d", name, g, want)
			}
		}
	}
	// The boleta schema carries the same texts with the same lengths.
	for name, want := range map[string]int{"NmbItem": maxNmbItem, "DscItem": maxDscItem, "RazonRef": maxRazonRef,
		"RznSocRecep": maxRznSocRecep, "DirRecep": maxDirRecep, "CmnaRecep": maxCmnaRecep, "CiudadRecep": maxCiudadRecep,
		"UnmdItem": maxUnmdItem, "GlosaDR": maxGlosaDR} {
		for _, g := range facets(boleta, name, "maxLength") {
			if g != itoa(want) {
				t.Errorf("EnvioBOLETA_v11.xsd: %s maxLength %s, validation uses %d", name, g, want)
			}
		}
	}
	for name, want := range map[string]int{"RznSocLargaType": maxRznSocRecep, "ComunaType": maxCmnaRecep, "CiudadType": maxCiudadRecep} {
		f := types.FindElement("//xs:simpleType[@name='" + name + "']//xs:maxLength")
		if f == nil || f.SelectAttrValue("value", "") != itoa(want) {
			t.Errorf("SiiTypes_v10.xsd: %s maxLength differs from %d", name, want)
		}
	}

	occurs := map[string]int{"Detalle": maxLineas, "Referencia": maxReferencias, "DscRcgGlobal": maxDscRcgGlobal,
		"Comisiones": maxComisiones, "ImptoReten": maxImptoReten}
	for name, want := range occurs {
		n := 0
		for _, e := range dte.FindElements("//xs:element[@name='" + name + "']") {
			if mo := e.SelectAttrValue("maxOccurs", ""); mo != "" {
				n++
				if mo != itoa(want) {
					t.Errorf("DTE_v10.xsd: %s maxOccurs %s, validation uses %d", name, mo, want)
				}
			}
		}
		if n == 0 {
			t.Errorf("DTE_v10.xsd: no maxOccurs for %s", name)
		}
	}
	if e := boleta.FindElement("//xs:element[@name='Detalle']"); e == nil || e.SelectAttrValue("maxOccurs", "") != itoa(maxLineasBoleta) {
		t.Errorf("EnvioBOLETA_v11.xsd: Detalle maxOccurs differs from %d", maxLineasBoleta)
	}

	// FechaType bounds the dates.
	fecha := types.FindElement("//xs:simpleType[@name='FechaType']")
	if fecha == nil || fecha.FindElement(".//xs:minInclusive").SelectAttrValue("value", "") != "2000-01-01" ||
		fecha.FindElement(".//xs:maxInclusive").SelectAttrValue("value", "") != "2050-12-31" {
		t.Error("SiiTypes_v10.xsd: FechaType is not 2000-01-01…2050-12-31")
	}
	// Quantities and prices: Dec12_6Type.
	dec := types.FindElement("//xs:simpleType[@name='Dec12_6Type']")
	if dec == nil || dec.FindElement(".//xs:fractionDigits").SelectAttrValue("value", "") != "6" ||
		dec.FindElement(".//xs:minInclusive").SelectAttrValue("value", "") != "0.000001" ||
		dec.FindElement(".//xs:maxInclusive").SelectAttrValue("value", "") != "999999999999.999999" {
		t.Error("SiiTypes_v10.xsd: Dec12_6Type differs from the cantidad/precio rule")
	}

	// Additional tax codes: exactly the schema's ImpAdicDTEType.
	want := map[int]bool{}
	for _, e := range types.FindElements("//xs:simpleType[@name='ImpAdicDTEType']//xs:enumeration") {
		n, err := strconv.Atoi(e.SelectAttrValue("value", ""))
		if err != nil {
			t.Fatal(err)
		}
		want[n] = true
	}
	if len(want) < 40 {
		t.Fatalf("ImpAdicDTEType has %d codes", len(want))
	}
	for c := -1; c <= 1000; c++ {
		if _, ok := lookupTaxCode(c); ok != want[c] {
			t.Errorf("lookupTaxCode(%d) knows it: %v; schema says %v", c, ok, want[c])
		}
	}
	// Currencies: every TipMonType name is accepted; near misses are not.
	monedas := types.FindElements("//xs:simpleType[@name='TipMonType']//xs:enumeration")
	if len(monedas) < 40 {
		t.Fatalf("TipMonType has %d names", len(monedas))
	}
	for _, e := range monedas {
		m := e.SelectAttrValue("value", "")
		if !monedaValid(m) {
			t.Errorf("monedaValid(%q) = false; the schema lists it", m)
		}
		for _, miss := range []string{strings.ToLower(m), m + " ", m + "S"} {
			if monedaValid(miss) {
				t.Errorf("monedaValid(%q) = true", miss)
			}
		}
	}
}

func TestValidateHugeInput(t *testing.T) {
	// A number of a million digits is rejected by its digit count, quickly.
	r := loadRequest(t, "nota_credito.json")
	r.Referencias[0].CodigoRef = ip(2)
	huge := Decimal(strings.Repeat("9", 1_000_000))
	zeros := Decimal(strings.Repeat("0", 1_000_000))
	r.Detalle = []LineaDetalle{
		{Nombre: "text correction", MontoItem: zeros},
		{Nombre: "y", Cantidad: huge, Precio: huge},
		{Nombre: "z", Cantidad: "1", Precio: "1", MontoItem: huge},
	}
	start := time.Now()
	err := ValidateAt(r, testToday)
	if time.Since(start) > 2*time.Second {
		t.Errorf("validating huge numbers took %v", time.Since(start))
	}
	ve, ok := AsValidationError(err)
	if !ok || len(ve.Details) != 3 {
		t.Fatalf("got %v", err)
	}
	for _, d := range ve.Details {
		if d.Code != CodeOutOfRange || len(d.Message) > 300 {
			t.Errorf("detail %s %s (%d-byte message)", d.Field, d.Code, len(d.Message))
		}
	}
	if !isZero("-0.000") || !isZero("0") || isZero("0.01") || isZero("") || isZero("-") {
		t.Error("isZero")
	}
}

func BenchmarkValidate(b *testing.B) {
	r := loadRequest(b, "factura.json")
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateAt(r, testToday); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecimalParseShape(t *testing.T) {
	cases := []struct {
		in           Decimal
		ints, places int
		value        string // a/b
		ok           bool
	}{
		{"0006490", 4, 0, "6490/1", true},
		{"6490.00", 4, 0, "6490/1", true},
		{"-0.0500", 0, 2, "-1/20", true},
		{"+12.5", 2, 1, "25/2", true},
		{"0", 0, 0, "0/1", true},
		{"1e3", 0, 0, "", false},
		{"", 0, 0, "", false},
	}
	for _, c := range cases {
		p, ok := c.in.parse()
		if ok != c.ok || p.intDigits != c.ints || p.places != c.places || (ok && p.fx.rat().String() != c.value) {
			t.Errorf("%q.parse() = %+v, %v; want %d, %d, %s, %v", c.in, p, ok, c.ints, c.places, c.value, c.ok)
		}
	}
}

// TestValidateMetadataLimits: metadata holds at most MaxMetadataKeys
// members, each named by 1 to MaxMetadataKey characters with a value of at
// most MaxMetadataValue bytes of JSON (issue 20, point 2: 8 MiB of
// metadata was accepted, stored twice and listed with every document).
func TestValidateMetadataLimits(t *testing.T) {
	base := func() *EmitirDTERequest { return loadRequest(t, "factura.json") }
	ok := base()
	ok.Metadata = map[string]any{}
	for i := range MaxMetadataKeys {
		ok.Metadata[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", MaxMetadataValue-2) // a JSON string of 500 bytes with its quotes
	}
	ok.Metadata[strings.Repeat("n", MaxMetadataKey)] = nil
	delete(ok.Metadata, "k00")
	if err := ValidateAt(ok, testToday); err != nil {
		t.Fatalf("metadata at every limit: %v", err)
	}
	cases := []struct {
		name  string
		meta  map[string]any
		field string
		code  DetailCode
	}{
		{"51 members", func() map[string]any {
			m := map[string]any{}
			for i := range MaxMetadataKeys + 1 {
				m[fmt.Sprintf("k%02d", i)] = i
			}
			return m
		}(), "metadata", CodeTooMany},
		{"a 41-character name", map[string]any{strings.Repeat("n", MaxMetadataKey+1): 1}, "metadata", CodeTooLong},
		{"an empty name", map[string]any{"": 1}, "metadata", CodeInvalidValue},
		{"a 501-byte value", map[string]any{"nota": strings.Repeat("v", MaxMetadataValue-1)}, "metadata.nota", CodeTooLong},
		{"a nested value too big", map[string]any{"lista": []any{strings.Repeat("v", 300), strings.Repeat("w", 300)}}, "metadata.lista", CodeTooLong},
	}
	for _, c := range cases {
		r := base()
		r.Metadata = c.meta
		ve, _ := AsValidationError(ValidateAt(r, testToday))
		if ve == nil || len(ve.Details) != 1 || ve.Details[0].Field != c.field || ve.Details[0].Code != c.code {
			t.Errorf("%s: %v, want one problem on %s (%s)", c.name, ve, c.field, c.code)
		}
	}
}
