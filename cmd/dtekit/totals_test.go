package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runTotalsCLI runs "dtekit totals" in process with the given request text
// (written to a file, or given on stdin when file is "-").
func runTotalsCLI(t *testing.T, request string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(request), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if len(args) == 0 {
		path := filepath.Join(t.TempDir(), "request.json")
		if err := os.WriteFile(path, []byte(request), 0o600); err != nil {
			t.Fatal(err)
		}
		args = []string{path}
	}
	code = run(context.Background(), env, append([]string{"totals"}, args...))
	return code, out.String(), errb.String()
}

// decodeLoose decodes JSON keeping numbers exact, for comparisons.
func decodeLoose(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
	return v
}

const cliReceptor = `"receptor": {"rut": "76086428-5", "razon_social": "Comercial Andes Ltda.", "giro": "Comercio", "direccion": "Av. Matta 100", "comuna": "Santiago", "ciudad": "Santiago"}`

// The expected outputs below are computed by hand from the SII rules.
func TestTotalsCLI(t *testing.T) {
	cases := []struct {
		name, request, want string
	}{
		{
			// 12 × 6490 = 77880, discount 10 % = 7788 → 70092; 6 × 8990 = 53940; exempt 350000.
			// Taxable 124032, global D 5 % = 6201.6 → 6202 → neto 117830;
			// IVA 22387.7 → 22388; total 117830 + 350000 + 22388 = 490218.
			"factura",
			`{"tipo_dte": 33, "fecha_emision": "2025-05-14", ` + cliReceptor + `,
			  "detalle": [
			    {"nombre": "Aceite", "cantidad": 12, "precio": 6490, "descuento_pct": 10},
			    {"nombre": "Café", "cantidad": 6, "precio": 8990},
			    {"ind_exe": 1, "nombre": "Arriendo", "cantidad": 1, "precio": 350000}],
			  "descuentos_globales": [{"tpo_mov": "D", "tpo_valor": "%", "valor_dr": 5}]}`,
			`{"detalle": [
			    {"NroLinDet": 1, "MontoItem": 70092, "DescuentoMonto": 7788},
			    {"NroLinDet": 2, "MontoItem": 53940},
			    {"NroLinDet": 3, "MontoItem": 350000, "IndExe": 1}],
			  "DscRcgGlobal": [{"NroLinDR": 1, "TpoMov": "D", "Monto": 6202}],
			  "totales": {"MntNeto": 117830, "MntExe": 350000, "TasaIVA": 19, "IVA": 22388, "MntTotal": 490218}}`,
		},
		{
			// gross 680 → neto 571.43 → 571, IVA 109 by difference; boletas carry no TasaIVA.
			"boleta",
			`{"tipo_dte": 39, "fecha_emision": "2025-05-17", "receptor": {"rut": "66666666-6", "razon_social": "Consumidor final"},
			  "detalle": [{"nombre": "Pan", "cantidad": 1, "precio": 680}]}`,
			`{"detalle": [{"NroLinDet": 1, "MontoItem": 680}], "totales": {"MntNeto": 571, "IVA": 109, "MntTotal": 680}}`,
		},
		{
			// 3 × 450 = 1350; IVA 256.5 → 257; code 15 retains all of it: MntTotal = 1350.
			"factura de compra",
			`{"tipo_dte": 46, "fecha_emision": "2025-05-14", ` + cliReceptor + `,
			  "detalle": [{"nombre": "Cobre en desecho", "cantidad": 3, "precio": 450}],
			  "impuestos_retenciones": [{"tipo_imp": 15}]}`,
			`{"detalle": [{"NroLinDet": 1, "MontoItem": 1350}],
			  "totales": {"MntNeto": 1350, "TasaIVA": 19, "IVA": 257,
			    "ImptoReten": [{"TipoImp": 15, "TasaImp": 19, "MontoImp": 257}], "MntTotal": 1350}}`,
		},
		{
			// 3 × 10.12345 = 30.37035 → 30.3704; 2 × 150.5 = 301; MntExe 331.3704;
			// × 873.15 = 289336.06476 → 289336 pesos.
			"factura de exportación",
			`{"tipo_dte": 110, "fecha_emision": "2025-05-27",
			  "receptor": {"rut": "55555555-5", "razon_social": "Feinkost GmbH", "giro": "Importación", "direccion": "Hafenstraße 12", "ciudad": "Hamburgo"},
			  "detalle": [{"nombre": "Nueces", "cantidad": 3, "precio": 10.12345}, {"nombre": "Vino", "cantidad": 2, "precio": 150.5}],
			  "referencias": [{"tipo_doc_ref": "DUS", "folio_ref": 6024789, "fecha_ref": "2025-05-26", "razon_ref": "DUS"}],
			  "export_data": {"tpo_moneda": "DOLAR USA", "tpo_cambio": 873.15, "modalidad_venta": 1, "clausula_venta": "FOB",
			    "via_transporte": 1, "puerto_embarque": "906", "pais_recep": "563", "pais_dest": "563"}}`,
			`{"detalle": [{"NroLinDet": 1, "MontoItem": 30.3704}, {"NroLinDet": 2, "MontoItem": 301}],
			  "totales": {"TpoMoneda": "DOLAR USA", "MntExe": 331.3704, "MntTotal": 331.3704},
			  "OtraMoneda": {"TpoMoneda": "PESO CL", "TpoCambio": 873.15, "MntExeOtrMnda": 289336, "MntTotOtrMnda": 289336}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runTotalsCLI(t, tc.request)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q, stdout %s", code, stderr, stdout)
			}
			if diff := cmp.Diff(decodeLoose(t, tc.want), decodeLoose(t, stdout)); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s\n%s", diff, stdout)
			}
			if !strings.Contains(stdout, "\n  \"") {
				t.Errorf("output is not indented:\n%s", stdout)
			}
		})
	}
}

func TestTotalsCLIStdin(t *testing.T) {
	// 2.5 × 1990 = 4975; IVA 945.25 → 945; total 5920.
	req := `{"tipo_dte": 33, "fecha_emision": "2025-05-14", ` + cliReceptor + `, "detalle": [{"nombre": "Tela", "cantidad": 2.5, "precio": 1990}]}`
	code, stdout, stderr := runTotalsCLI(t, req, "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{"detalle": [{"NroLinDet": 1, "MontoItem": 4975}], "totales": {"MntNeto": 4975, "TasaIVA": 19, "IVA": 945, "MntTotal": 5920}}`
	if diff := cmp.Diff(decodeLoose(t, want), decodeLoose(t, stdout)); diff != "" {
		t.Errorf("output mismatch (-want +got):\n%s", diff)
	}
}

// envelope is the contract's error envelope (§7) as the CLI prints it.
type envelope struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Error    string `json:"error"`
	Severity string `json:"severity"`
	Details  []struct {
		Field   string `json:"field"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Action  string `json:"action"`
	} `json:"details"`
}

func TestTotalsCLIInvalid(t *testing.T) {
	type detail struct{ field, code, msgPart string }
	cases := []struct {
		name    string
		request string
		want    []detail
	}{
		{"syntax error", "{\n  \"tipo_dte\": 33,\n  \"detalle\": [}\n", []detail{{"", "INVALID_JSON", "line 3"}}},
		{"empty file", "", []detail{{"", "INVALID_JSON", "empty"}}},
		{"truncated", `{"tipo_dte": 33, "detalle": [`, []detail{{"", "INVALID_JSON", "ends"}}},
		{"trailing data", `{"tipo_dte": 33} {"tipo_dte": 34}`, []detail{{"", "INVALID_JSON", "after the request"}}},
		{"not an object", `[1, 2]`, []detail{{"", "INVALID_TYPE", "an object"}}},
		{
			"unknown fields and wrong types, all at once",
			`{"tipo_dte": "33", "Fecha_Emision": "2025-05-14", ` + cliReceptor + `,
			  "detalle": [{"nombre": "A", "cantidad": 1, "precio": 100}, {"nombre": "B", "cantidad": 1, "precios": 5, "cod_imp_adic": 1.5}],
			  "auto_send": "yes", "metadata": {"anything": [1, {"goes": true}]}}`,
			[]detail{
				{"Fecha_Emision", "UNKNOWN_FIELD", "not a field"},
				{"auto_send", "INVALID_TYPE", "true or false"},
				{"detalle[1].cod_imp_adic", "INVALID_TYPE", "integer"},
				{"detalle[1].precios", "UNKNOWN_FIELD", "not a field"},
				{"tipo_dte", "INVALID_TYPE", "integer"},
			},
		},
		{
			// Validation runs before the totals: a wrong check digit (76086428-5 is right).
			"validation error",
			`{"tipo_dte": 33, "fecha_emision": "2025-05-14",
			  "receptor": {"rut": "76086428-4", "razon_social": "Comercial Andes Ltda.", "giro": "Comercio", "direccion": "Av. Matta 100", "comuna": "Santiago", "ciudad": "Santiago"},
			  "detalle": [{"nombre": "A", "cantidad": 1, "precio": 100}]}`,
			[]detail{{"receptor.rut", "INVALID_RUT", ""}},
		},
		{
			// 100 − $101 would take the taxable amount below zero.
			"totals error",
			`{"tipo_dte": 33, "fecha_emision": "2025-05-14", ` + cliReceptor + `,
			  "detalle": [{"nombre": "A", "cantidad": 1, "precio": 100}],
			  "descuentos_globales": [{"tpo_mov": "D", "tpo_valor": "$", "valor_dr": 101}]}`,
			[]detail{{"descuentos_globales[0].valor_dr", "OUT_OF_RANGE", "below zero"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runTotalsCLI(t, tc.request)
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout %s", code, stdout)
			}
			if stderr == "" {
				t.Error("nothing on stderr")
			}
			var env envelope
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&env); err != nil {
				t.Fatalf("stdout is not an error envelope: %v\n%s", err, stdout)
			}
			if env.Code != "VALIDATION_ERROR" || env.Message == "" || env.Error != "" || env.Severity != "error" {
				t.Errorf("envelope header %+v", env)
			}
			if len(env.Details) != len(tc.want) {
				t.Fatalf("%d details, want %d:\n%s", len(env.Details), len(tc.want), stdout)
			}
			for i, w := range tc.want {
				d := env.Details[i]
				if d.Field != w.field || d.Code != w.code || !strings.Contains(d.Message, w.msgPart) {
					t.Errorf("detail %d = %+v, want field %q code %q message containing %q", i, d, w.field, w.code, w.msgPart)
				}
			}
		})
	}
}

func TestTotalsCLIUsage(t *testing.T) {
	var out, errb bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	if code := run(context.Background(), env, []string{"totals"}); code != 2 || !strings.Contains(errb.String(), "want one REQUEST.json argument") {
		t.Errorf("no argument: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), env, []string{"totals", "a.json", "b.json"}); code != 2 {
		t.Errorf("two arguments: exit %d", code)
	}
	if code := run(context.Background(), env, []string{"totals", "--help"}); code != 0 || !strings.Contains(out.String(), "usage: dtekit totals") {
		t.Errorf("--help: exit %d, stdout %q", code, out.String())
	}
	out.Reset()
	errb.Reset()
	missing := filepath.Join(t.TempDir(), "missing.json")
	if code := run(context.Background(), env, []string{"totals", missing}); code != 1 || !strings.Contains(out.String(), `"FILE_UNREADABLE"`) || !strings.Contains(errb.String(), "missing.json") {
		t.Errorf("missing file: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code := run(ctx, env, []string{"totals", missing}); code != 1 {
		t.Errorf("cancelled context: exit %d", code)
	}
}

// TestTotalsCLISampleRequests runs the repository's realistic requests (one
// per type) through the command: each must be valid and total.
func TestTotalsCLISampleRequests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "requests", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/requests/*.json in the repository (glob error %v)", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &cmdEnv{stdout: &out, stderr: &errb}
			if code := run(context.Background(), env, []string{"totals", name}); code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
			}
			var got struct {
				Detalle []map[string]any `json:"detalle"`
				Totales map[string]any   `json:"totales"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Detalle) == 0 || got.Totales["MntTotal"] == nil {
				t.Fatalf("output %s (%v)", out.String(), err)
			}
		})
	}
	// factura.json by hand: 12 × 6490 = 77880 − 10 % (7788) = 70092; 6 × 8990 = 53940;
	// taxable 124032 − 5 % (6201.6 → 6202) = 117830; IVA 22387.7 → 22388; exempt 350000;
	// total 490218.
	var out bytes.Buffer
	path := filepath.Join("..", "..", "testdata", "requests", "factura.json")
	if code := run(context.Background(), &cmdEnv{stdout: &out, stderr: &out}, []string{"totals", path}); code != 0 {
		t.Fatalf("factura.json: exit %d: %s", code, out.String())
	}
	want := `{"MntNeto": 117830, "MntExe": 350000, "TasaIVA": 19, "IVA": 22388, "MntTotal": 490218}`
	got := decodeLoose(t, out.String()).(map[string]any)["totales"]
	if diff := cmp.Diff(decodeLoose(t, want), got); diff != "" {
		t.Errorf("factura.json totales (-want +got):\n%s", diff)
	}
}
