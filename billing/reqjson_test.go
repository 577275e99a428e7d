package billing

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
)

// fillAll sets every field reachable from v to a non-zero value (slices get
// two elements), by reflection, so that a field added to the request is
// covered without touching this test. Text takes every kind of character
// json.Marshal escapes.
func fillAll(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(v.Elem(), n)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i), n+i)
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fillAll(v.Index(0), n)
		fillAll(v.Index(1), n+1)
	case reflect.Map:
		v.Set(reflect.ValueOf(map[string]any{"b": "x<y>&z", "a": 1.5, "c": true, "d": nil, "e": math.Copysign(0, -1), "ñ": 1e20}))
	case reflect.String:
		if v.Type() == reflect.TypeFor[dte.Decimal]() {
			v.SetString([]string{"12.5", "-0.001", "0", "100"}[n%4])
			return
		}
		v.SetString([]string{"Pérez & Hijos <Ltda.>", "a\"b\\c\n\t\r\b\f\x01\x1f", "bad \xff\xc3 utf-8", "sep \u2028 \u2029 ok"}[n%4])
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(n*7919 + 1))
	case reflect.Bool:
		v.SetBool(true)
	}
}

// TestRequestJSONMatchesMarshal checks appendRequest against json.Marshal
// on requests with every field set, none set, and in between.
func TestRequestJSONMatchesMarshal(t *testing.T) {
	var full dte.EmitirDTERequest
	fillAll(reflect.ValueOf(&full).Elem(), 0)
	numeric := full
	numeric.Referencias = []dte.Referencia{{TipoDocRef: dte.RefTipo(33)}, {}}
	numeric.Detalle = []dte.LineaDetalle{{Nombre: "only"}, {}}
	numeric.DescuentosGlobales = []dte.DscRcgGlobal{{}}
	numeric.Metadata = map[string]any{"nested": map[string]any{"x": []any{1.0, "y"}}}
	empty := dte.EmitirDTERequest{Detalle: []dte.LineaDetalle{}, Comisiones: []dte.ComisionDTE{}, Metadata: map[string]any{}}
	tiny := dte.EmitirDTERequest{Metadata: map[string]any{"big": 1e21, "small": 1e-7}}
	for name, req := range map[string]*dte.EmitirDTERequest{"full": &full, "numeric": &numeric, "zero": {}, "empty": &empty, "tiny": &tiny} {
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := appendRequest(nil, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	for _, d := range []dte.Decimal{"+1", "007", "-01", "1e3", "1.", "abc"} {
		req := &dte.EmitirDTERequest{Detalle: []dte.LineaDetalle{{Cantidad: d}}}
		_, errWant := json.Marshal(req)
		if _, err := appendRequest(nil, req); (err == nil) != (errWant == nil) {
			t.Errorf("cantidad %q: appendRequest error %v, json.Marshal error %v", d, err, errWant)
		}
	}
}

// TestRequestJSONGolden pins the canonical JSON of the benchmark's factura,
// written out by hand: idempotency hashes recorded by any version depend on
// these bytes.
func TestRequestJSONGolden(t *testing.T) {
	req, e := decodeEmitRequest(facturaBody(3))
	if e != nil {
		t.Fatal(e)
	}
	got, err := appendRequest(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"tipo_dte":33,"receptor":{"rut":"77.777.777-7","razon_social":"Pérez \u0026 Hijos Ltda.","giro":"Comercio",` +
		`"direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"},"detalle":[{"nombre":"Artículo Ñandú",` +
		`"cantidad":3,"precio":1990},{"nombre":"Servicio","cantidad":1,"precio":10000,"descuento_pct":5}],"auto_send":false,` +
		`"metadata":{"pedido":"A-3"}}`
	if string(got) != want {
		t.Errorf("canonical JSON\n got %s\nwant %s", got, want)
	}
}

// FuzzRequestJSON compares appendRequest with json.Marshal on every body
// DecodeRequest accepts: the same bytes, or both failing.
func FuzzRequestJSON(f *testing.F) {
	f.Add(facturaBody(1))
	f.Add([]byte(`{"tipo_dte":61,"detalle":[{"ind_exe":1,"nombre":"a<b","cantidad":"+1"}],"referencias":[{"tipo_doc_ref":"SET"},{"tipo_doc_ref":33}],` +
		`"descuentos_globales":[{"nro_lin_dr":1,"valor_dr":"007"}],"metadata":{"k":[1,{"x":null}],"f":1e-7,"g":-0}}`))
	f.Add([]byte(`{"tipo_dte":110,"export_data":{"tpo_moneda":"DOLAR USA","tara":5,"peso_bruto":"1.50"},"comisiones":[{"val_com_iva":3}],` +
		`"impuestos_retenciones":[{"tipo_imp":15,"monto_imp":2}],"metadata":{"s":"\u2028\ud800"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := dte.DecodeRequest(bytes.NewReader(body))
		if err != nil {
			return
		}
		want, errWant := json.Marshal(req)
		got, err := appendRequest(nil, req)
		if (err == nil) != (errWant == nil) {
			t.Fatalf("appendRequest error %v, json.Marshal error %v", err, errWant)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}

// TestStoredJSONMatchesMarshal checks the writers of the totals, the
// response and the issuer snapshot against json.Marshal.
func TestStoredJSONMatchesMarshal(t *testing.T) {
	n, m := int64(-12), int64(0)
	for _, tt := range []storedTotals{
		{MontoTotal: 5},
		{MontoNeto: &n, MontoExento: &m, TasaIVA: "19", IVA: &n, MontoTotal: 1 << 62},
		{TasaIVA: "0.5", IVA: &m},
	} {
		want, _ := json.Marshal(tt)
		got, err := appendTotals(nil, &tt)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("totals %+v:\n got %s (%v)\nwant %s", tt, got, err, want)
		}
	}
	for _, at := range []time.Time{
		time.Date(2026, 11, 23, 23, 59, 1, 123456000, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	} {
		r := dte.EmitirDTEResponse{ID: "0190b6f2-3c4d-7e8f-9a0b-1c2d3e4f5a6b", Folio: 1 << 40, TipoDTE: 33,
			Estado: dte.EstadoFirmado, MontoTotal: -7, CreatedAt: at}
		want, _ := json.Marshal(r)
		got, err := appendResponse(nil, &r)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("response at %v:\n got %s (%v)\nwant %s", at, got, err, want)
		}
	}
	var e Empresa
	fillAll(reflect.ValueOf(&e).Elem(), 0)
	js, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "0190b6f2-3c4d-7e8f-9a0b-1c2d3e4f5a6b", "<{odd}>"} {
		want, _ := json.Marshal(emission{Empresa: e, IdempotencyKey: key})
		if got := appendEmission(nil, js, key); !bytes.Equal(got, want) {
			t.Errorf("snapshot with key %q:\n got %s\nwant %s", key, got, want)
		}
	}
}
