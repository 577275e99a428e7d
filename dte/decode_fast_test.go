package dte

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fastBodies are valid requests that exercise every kind of value the fast
// path stores: escapes, non-ASCII text, invalid UTF-8, nulls everywhere,
// empty arrays and objects, string decimals, both forms of tipo_doc_ref,
// export data and nested metadata.
var fastBodies = []string{
	`{"tipo_dte":33,"receptor":{"rut":"77.777.777-7","razon_social":"Pérez & Hijos Ltda.","giro":"Comercio","direccion":"Av. Providencia 1234","comuna":"Providencia","ciudad":"Santiago"},
"detalle":[{"nombre":"Artículo Ñandú","cantidad":3,"precio":1990},{"nombre":"Servicio","cantidad":1,"precio":10000,"descuento_pct":5}],
"auto_send":false,"metadata":{"pedido":"A-3"}}`,
	` { "tipo_dte" : 61 , "fecha_emision" : null , "receptor" : { "rut" : "76086428-5" , "razon_social" : "A \"B\" \u00d1 \/ \\ \n\t" } ,
	  "detalle" : [ { "nombre" : "A" , "cantidad" : "1.50" , "precio" : -1e3 , "ind_exe" : 1 , "cod_imp_adic" : null } , null ] ,
	  "referencias" : [ { "tipo_doc_ref" : 33 , "folio_ref" : 7 , "fecha_ref" : "2025-05-01" , "codigo_ref" : 3 , "razon_ref" : "x" } ,
	                    { "tipo_doc_ref" : "SET" , "folio_ref" : -0 , "razon_ref" : "y" } , { "tipo_doc_ref" : null } ] ,
	  "auto_send" : true , "metadata" : { "k" : [ 1 , 2.5e-3 , -0 , "s" , true , false , null , { } , [ ] ] , "k" : { "deep" : { "x" : [ [ 1 ] ] } } } } `,
	"{\"tipo_dte\":33,\"receptor\":{\"rut\":\"1-9\",\"razon_social\":\"bad \xff utf-8 \xc3\"},\"detalle\":[],\"comisiones\":[],\"metadata\":{}}",
	`{"tipo_dte":43,"detalle":[{"nombre":"x","tipo_doc_liq":"A","monto_item":100000}],
	  "comisiones":[{"tipo_movim":"C","glosa":"c","tasa_comision":"1.5","val_com_neto":10000,"val_com_exe":0,"val_com_iva":1900}],
	  "impuestos_retenciones":[{"tipo_imp":15,"tasa_imp":19,"monto_imp":null}],
	  "descuentos_globales":[{"nro_lin_dr":1,"tpo_mov":"D","tpo_valor":"%","valor_dr":"10","glosa_dr":"g","ind_exe_dr":null}],
	  "ind_traslado":1,"tipo_despacho":2,"ind_servicio":3,"metadata":null}`,
	`{"tipo_dte":110,"detalle":[{"nombre":"x","monto_item":1.00005,"unidad":"KG","recargo_pct":"2"}],
	  "export_data":{"tpo_moneda":"DOLAR USA","tpo_cambio":873.15,"mnt_export":"10","nacionalidad":"225","num_id":"X1",
	  "tipo_doc_id":1,"forma_pago_exp":1,"modalidad_venta":1,"clausula_venta":"FOB","total_clausula":10,"via_transporte":1,
	  "puerto_embarque":"901","puerto_desembarque":"262","tara":-9223372036854775808,"unidad_tara":6,"peso_bruto":1.5,
	  "unidad_peso_bruto":6,"peso_neto":1,"unidad_peso_neto":6,"tipo_bulto":"BOX","total_bultos":9223372036854775807,
	  "marcas":"m","mnt_flete":1,"mnt_seguro":1,"pais_recep":"225","pais_dest":"225"}}`,
	`{"tipo_dte":33,"export_data":null,"receptor":null,"detalle":null,"auto_send":null}`,
	`{"receptor":{"r\u0075t":"1"}}`,
	`{}`,
}

// TestDecodeFastAgrees checks that the fast path takes every valid request
// of fastBodies and of ../testdata/requests, and stores exactly what the
// full decoding stores.
func TestDecodeFastAgrees(t *testing.T) {
	bodies := append([]string{}, fastBodies...)
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "requests", "*.json"))
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, string(b))
	}
	if len(files) == 0 {
		t.Error("no requests under ../testdata/requests")
	}
	for i, body := range bodies {
		fast, ok := decodeFast([]byte(body))
		if !ok {
			t.Errorf("body %d: the fast path refused a valid request:\n%s", i, body)
			continue
		}
		full, err := decodeFull([]byte(body))
		if err != nil {
			t.Errorf("body %d: the full decoding refused it: %v", i, err)
			continue
		}
		if diff := cmp.Diff(full, fast); diff != "" {
			t.Errorf("body %d: fast path (-full +fast):\n%s", i, diff)
		}
	}
}

// TestDecodeFastRefuses checks that the fast path leaves to the full
// decoding every body that has a problem, including those the full
// decoding reports only through its safety net.
func TestDecodeFastRefuses(t *testing.T) {
	bodies := []string{
		`{"tipo_dte":33,"tipo_dte":34}`,      // a member twice
		`{"receptor":{"rut":"1","rut":"2"}}`, // a member twice, nested
		`{"metadata":{"x":1e999}}`,           // out of float64's range
		`{"tipo_dte":33}x`,                   // trailing data
		`{"tipo_dte":33,}`,                   // trailing comma
		`{"tipo_dte":1.0}`,                   // not an integer
		`{"tipo_dte":01}`,                    // leading zero
		`{"detalle":[{"cantidad":1.}]}`,      // malformed number
		`{"detalle":[{"cantidad":.5}]}`,      // malformed number
		`{"referencias":[{"tipo_doc_ref":2147483648}]}`,
		`{"ind_traslado":9223372036854775808}`, // out of int's range
		`{"auto_send":tru}`,                    // malformed literal
		`{"auto_send":nul}`,                    // malformed literal
		`{"auto_send":truex}`,                  // malformed literal
		"{\"receptor\":{\"rut\":\"a\tb\"}}",    // a control character
		`{"receptor":{"rut":"\x"}}`,            // a malformed escape
		`{"receptor":{"rut":"\u12"}}`,          // a malformed escape
		`{"metadata":[]}`,                      // not an object
		`{"metadata":{"a" 1}}`,                 // no colon
		`{"metadata":{1:1}}`,                   // a member name that is not a string
		`{"detalle":{}}`,                       // not an array
		`{"receptor":[]}`,                      // not an object
		`[]`, ``, ` `, `null`,
		`{"metadata":{"x":` + strings.Repeat("[", fastMaxDepth+1) + strings.Repeat("]", fastMaxDepth+1) + `}}`,
	}
	for _, body := range bodies {
		if req, ok := decodeFast([]byte(body)); ok {
			t.Errorf("the fast path took %q: %+v", body, req)
		}
	}
	for _, tc := range decodeCases[:len(decodeCases)-1] {
		if _, ok := decodeFast([]byte(tc.body)); ok {
			t.Errorf("the fast path took the refused body %q", tc.name)
		}
	}
}

// FuzzDecodeFast compares the fast path with the full decoding: whatever
// the fast path takes, the full decoding must take too, with the same
// result.
func FuzzDecodeFast(f *testing.F) {
	for _, b := range fastBodies {
		f.Add([]byte(b))
	}
	for _, tc := range decodeCases[:len(decodeCases)-1] {
		f.Add([]byte(tc.body))
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "requests", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := decodeFast(body)
		full, err := decodeFull(body)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("the fast path took a body the full decoding refuses (%v)", err)
		}
		if diff := cmp.Diff(full, fast); diff != "" {
			t.Fatalf("fast path (-full +fast):\n%s", diff)
		}
		// The two encode alike too (billing hashes this encoding).
		a, errA := json.Marshal(full)
		b, errB := json.Marshal(fast)
		if (errA == nil) != (errB == nil) || string(a) != string(b) {
			t.Fatalf("encodings differ:\n%s\n%s", a, b)
		}
	})
}

// BenchmarkDecodeRequest decodes the JSON of the 60-line benchFactura
// (with metadata) with DecodeRequest and, in alternating batches of 32,
// with the full decoding alone (decodeFull, the path every body took
// before the fast one, and still takes when it has a problem). It reports
// fast/full, the ratio of their times per body measured in the same run,
// and DecodeRequest's allocations.
func BenchmarkDecodeRequest(b *testing.B) {
	r := benchFactura()
	r.Metadata = map[string]any{"pedido": "A-1", "lineas": 60.0}
	body, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	const batch = 32
	var fastTime, fullTime time.Duration
	for i := 0; i < b.N; {
		start := time.Now()
		for n := 0; n < batch && i < b.N; n, i = n+1, i+1 {
			if _, err := DecodeRequest(bytes.NewReader(body)); err != nil {
				b.Fatal(err)
			}
		}
		fastTime += time.Since(start)
		b.StopTimer()
		start = time.Now()
		for range batch {
			if _, err := decodeFull(body); err != nil {
				b.Fatal(err)
			}
		}
		fullTime += time.Since(start)
		b.StartTimer()
	}
	if fullTime > 0 {
		// Each side ran whole batches except DecodeRequest's last.
		full := float64(fullTime) / float64((b.N+batch-1)/batch*batch)
		b.ReportMetric(float64(fastTime)/float64(b.N)/full, "fast/full")
	}
}
