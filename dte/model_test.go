package dte

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func bp(b bool) *bool { return &b }

// roundTrip writes v as JSON, reads it back into a new T and requires the
// two values to be equal.
func roundTrip[T any](t *testing.T, name string, v T) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: Marshal: %v", name, err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: Unmarshal(%s): %v", name, b, err)
	}
	if diff := cmp.Diff(v, back); diff != "" {
		t.Errorf("%s: round trip differs (-sent +read):\n%s\nJSON: %s", name, diff, b)
	}
	return b
}

// fullRequest sets every field of EmitirDTERequest and of its parts.
func fullRequest() EmitirDTERequest {
	return EmitirDTERequest{
		TipoDTE:      FacturaExportacionElectronica,
		FechaEmision: "2025-05-27",
		Receptor: Receptor{
			Rut: "55555555-5", RazonSocial: `Müller & Söhne "Feinkost" GmbH`, Giro: "Importación",
			Direccion: "Hafenstraße 12", Comuna: "Hamburg", Ciudad: "Hamburgo",
		},
		Detalle: []LineaDetalle{{
			TipoDocLiq: "33", IndExe: ip(1), CodImpAdic: ip(27), Nombre: "Nueces 'light'", DscItem: "Caja\n10 kg",
			Cantidad: "600", Unidad: "CJ", Precio: "12.5", MontoItem: "7500.0000", DescuentoPct: "2.5", RecargoPct: "0",
		}},
		Comisiones: []ComisionDTE{{
			TipoMovim: "C", Glosa: "Comisión", TasaComision: "8", ValComNeto: -159400, ValComExe: 0, ValComIVA: i64p(30286),
		}},
		ImpuestosRetenciones: []ImpuestoRetencion{{TipoImp: 15, TasaImp: "19", MontoImp: i64p(1234)}},
		Referencias: []Referencia{
			{TipoDocRef: RefTipo(33), FolioRef: 1520, FechaRef: "2025-04-28", CodigoRef: ip(3), RazonRef: "Corrige monto"},
			{TipoDocRef: RefCodigo("DUS"), FolioRef: 6024789, FechaRef: "2025-05-26", RazonRef: "DUS"},
		},
		IndTraslado:  ip(1),
		TipoDespacho: ip(2),
		IndServicio:  ip(3),
		DescuentosGlobales: []DscRcgGlobal{{
			NroLinDR: ip(1), TpoMov: "D", TpoValor: "%", ValorDR: "5.25", GlosaDR: "Descuento", IndExeDR: ip(1),
		}},
		AutoSend: bp(false),
		ExportData: &ExportData{
			TpoMoneda: "DOLAR USA", TpoCambio: "935.27", MntExport: "18338.8", Nacionalidad: "563", NumID: "DE123",
			TipoDocID: ip(1), FormaPagoExp: ip(11), ModalidadVenta: ip(1), ClausulaVenta: "FOB",
			TotalClausula: "18338.8", ViaTransporte: ip(1), PuertoEmbarque: "906", PuertoDesembarque: "532",
			Tara: i64p(2200), UnidadTara: ip(6), PesoBruto: "10450.5", UnidadPesoBruto: ip(6), PesoNeto: "10000",
			UnidadPesoNeto: ip(6), TipoBulto: "75", TotalBultos: i64p(1000), Marcas: "MSH-2025/05",
			MntFlete: "1200.5", MntSeguro: "80.25", PaisRecep: "563", PaisDest: "563",
		},
		// JSON numbers read back as float64, so the metadata holds kinds
		// that survive a round trip unchanged.
		Metadata: map[string]any{"pedido": "PED-1", "prioridad": 2.0, "urgente": true,
			"tags": []any{"a", "ñ"}, "anidado": map[string]any{"x": nil}},
	}
}

func TestRoundTripEmitirDTERequest(t *testing.T) {
	full := fullRequest()
	b := roundTrip(t, "EmitirDTERequest", full)
	// Every field was written: count the JSON keys of each object.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for obj, want := range map[string]int{"": 14, "receptor": 6, "detalle": 11, "comisiones": 6,
		"impuestos_retenciones": 3, "referencias": 5, "descuentos_globales": 6, "export_data": 26} {
		o := m
		if obj != "" {
			switch x := m[obj].(type) {
			case map[string]any:
				o = x
			case []any:
				o = x[0].(map[string]any)
			}
		}
		if len(o) != want {
			t.Errorf("%q has %d keys, want %d: %v", obj, len(o), want, o)
		}
	}
	// The minimal request omits every optional field.
	min := EmitirDTERequest{TipoDTE: 33, Receptor: Receptor{Rut: "1-9", RazonSocial: "x"}, Detalle: []LineaDetalle{{Nombre: "y"}}}
	b = roundTrip(t, "minimal EmitirDTERequest", min)
	if want := `{"tipo_dte":33,"receptor":{"rut":"1-9","razon_social":"x"},"detalle":[{"nombre":"y"}]}`; string(b) != want {
		t.Errorf("minimal request = %s, want %s", b, want)
	}
}

// TestRoundTripRequestFiles reads each sample, writes it back and requires
// the same JSON value (numbers keep their text, nothing is added or lost).
func TestRoundTripRequestFiles(t *testing.T) {
	for name := range requestFiles {
		orig, err := os.ReadFile(requestPath(name))
		if err != nil {
			t.Fatal(err)
		}
		r := loadRequest(t, name)
		b := roundTrip(t, name, *r)
		var a, c any
		if err := json.Unmarshal(orig, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, c); diff != "" {
			t.Errorf("%s: JSON changed (-file +written):\n%s", name, diff)
		}
	}
}

func TestRoundTripEmisor(t *testing.T) {
	roundTrip(t, "Emisor", Emisor{
		ID: "e-1", Rut: "76086428-5", RazonSocial: "Distribuidora Ñandú SpA", Giro: "Distribución de alimentos",
		Direccion: "Av. Vicuña Mackenna 4860", Comuna: "Macul", Ciudad: "Santiago", Ambiente: AmbienteCertificacion,
		FechaResolucion: "2024-08-01", NumeroResolucion: 0, InboundEmail: "dte@example.cl", InboundStatus: "active",
		Acteco: []int{463020, 472101}, SucursalSII: ip(81234567), OficinaSII: "SANTIAGO ORIENTE",
	})
}

func TestRoundTripTotals(t *testing.T) {
	roundTrip(t, "Totals", Totals{
		Detalle: []LineTotals{
			{NroLinDet: 1, MontoItem: "70092", DescuentoMonto: "7788"},
			{NroLinDet: 2, MontoItem: "350000", IndExe: 1},
			{NroLinDet: 3, MontoItem: "3300", RecargoMonto: "300"},
		},
		DscRcgGlobal: []GlobalTotals{{NroLinDR: 1, TpoMov: "D", Monto: "5922"}, {NroLinDR: 2, TpoMov: "R", Monto: "100", IndExeDR: 1}},
		Totales: Totales{
			TpoMoneda: "DOLAR USA", MntNeto: "112516", MntExe: "350000", TasaIVA: "19", IVA: "21378",
			// Retencion is not part of the JSON (json:"-"); it stays false here.
			ImptoReten: []ImptoReten{{TipoImp: 15, TasaImp: "19", MontoImp: "21378"}},
			IVANoRet:   "0",
			Comisiones: &Comisiones{ValComNeto: "159400", ValComExe: "0", ValComIVA: "30286"},
			MntTotal:   "483894", MontoNF: "-100",
		},
		OtraMoneda: &OtraMoneda{TpoMoneda: "PESO CL", TpoCambio: "935.27", MntExeOtrMnda: "17151564", MntTotOtrMnda: "17151564"},
	})
	roundTrip(t, "empty Totals", Totals{})
}

func TestTipoDocRefJSON(t *testing.T) {
	cases := []struct {
		in   string
		want TipoDocRef
		out  string
	}{
		{`33`, TipoDocRef{Tipo: 33}, `33`},
		{`801`, TipoDocRef{Tipo: 801}, `801`},
		{`"SET"`, TipoDocRef{Codigo: "SET"}, `"SET"`},
		{`"33"`, TipoDocRef{Codigo: "33"}, `"33"`}, // a string stays a string
		{`"DUS"`, RefCodigo("DUS"), `"DUS"`},
		{`null`, TipoDocRef{}, `null`},
	}
	for _, c := range cases {
		var got TipoDocRef
		if err := json.Unmarshal([]byte(c.in), &got); err != nil {
			t.Errorf("Unmarshal(%s): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("Unmarshal(%s) = %+v, want %+v", c.in, got, c.want)
		}
		b, err := json.Marshal(got)
		if err != nil || string(b) != c.out {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", got, b, err, c.out)
		}
	}
	for _, bad := range []string{`33.5`, `true`, `{}`, `[33]`, `1e2`, `99999999999999999999`} {
		var got TipoDocRef
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", bad, got)
		}
	}
	if RefTipo(61).String() != "61" || RefCodigo("SET").String() != "SET" || (TipoDocRef{}).String() != "" {
		t.Error("TipoDocRef.String")
	}
	if !(TipoDocRef{}).IsZero() || RefTipo(33).IsZero() || RefCodigo("X").IsZero() {
		t.Error("TipoDocRef.IsZero")
	}
	// Inside a Referencia, in both forms.
	roundTrip(t, "Referencia int", Referencia{TipoDocRef: RefTipo(33), FolioRef: 1, FechaRef: "2025-01-02", RazonRef: "r"})
	roundTrip(t, "Referencia string", Referencia{TipoDocRef: RefCodigo("SET"), FechaRef: "2025-01-02", RazonRef: "CASO 1"})
}
