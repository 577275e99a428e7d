package dte

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// decodeDetail is one expected detail of DecodeRequest.
type decodeDetail struct {
	field   string
	code    DetailCode
	msgPart string
}

// decodeCases are bodies DecodeRequest must refuse, with every detail it
// must report, in order (members are reported in byte order of their names).
var decodeCases = []struct {
	name string
	body string
	want []decodeDetail
	code DetailCode // the first detail's code, for TestEveryDetailCodeHasCases
}{
	{"syntax error", "{\n  \"tipo_dte\": 33,\n  \"detalle\": [}\n", []decodeDetail{{"", CodeInvalidJSON, "line 3, column 15"}}, CodeInvalidJSON},
	{"empty body", "", []decodeDetail{{"", CodeInvalidJSON, "empty"}}, CodeInvalidJSON},
	{"truncated", `{"tipo_dte": 33, "detalle": [`, []decodeDetail{{"", CodeInvalidJSON, "ends before"}}, CodeInvalidJSON},
	{"trailing data", `{"tipo_dte": 33} {"tipo_dte": 34}`, []decodeDetail{{"", CodeInvalidJSON, "after the request object at line 1, column 18"}}, CodeInvalidJSON},
	{"not an object", `[1, 2]`, []decodeDetail{{"", CodeInvalidType, "expected an object, got an array"}}, CodeInvalidType},
	{"a string tipo_dte", `{"tipo_dte": "33"}`, []decodeDetail{{"tipo_dte", CodeInvalidType, "expected an integer, got a string"}}, CodeInvalidType},
	// A decimal given as a string is refused as an integer is (issue 30,
	// point 6: "precio": "1990" was taken).
	{"string decimals", `{"detalle": [{"nombre": "A", "cantidad": "2", "precio": "1990"}], "descuentos_globales": [{"valor_dr": "5"}]}`,
		[]decodeDetail{
			{"descuentos_globales[0].valor_dr", CodeInvalidType, "expected a number, got a string"},
			{"detalle[0].cantidad", CodeInvalidType, "expected a number, got a string"},
			{"detalle[0].precio", CodeInvalidType, "expected a number, got a string"},
		}, CodeInvalidType},
	{"case differs", `{"Tipo_DTE": 33}`, []decodeDetail{{"Tipo_DTE", CodeUnknownField, `"Tipo_DTE" is not a field`}}, CodeUnknownField},
	// A member given twice is refused, not read as the last one (issue 20,
	// point 11: tipo_dte 33 then 34 issued a 34), at any depth.
	{"duplicate member", `{"tipo_dte": 33, "tipo_dte": 34}`, []decodeDetail{{"tipo_dte", CodeDuplicate, `"tipo_dte" appears more than once`}}, CodeDuplicate},
	{
		"duplicate members within",
		`{"receptor": {"rut": "1-9", "razon_social": "x", "rut": "76086428-5"},
		  "detalle": [{"nombre": "A"}, {"nombre": "B", "precio": 1, "precio": 1000}],
		  "metadata": {"k": 1, "k": 2}}`,
		[]decodeDetail{
			{"receptor.rut", CodeDuplicate, "more than once"},
			{"detalle[1].precio", CodeDuplicate, "more than once"},
			{"metadata.k", CodeDuplicate, "more than once"},
		},
		CodeDuplicate,
	},
	{
		"everything at once",
		`{"tipo_dte": 33, "Fecha_Emision": "2025-05-14", "receptor": {"rut": 76086428, "razon": "x"},
		  "detalle": [{"nombre": "A", "cantidad": 1, "precio": 100},
		              {"nombre": "B", "cantidad": true, "descuento_pc": 5, "cod_imp_adic": 1.5}],
		  "referencias": [{"tipo_doc_ref": 3.5, "folio_ref": 99999999999999999999}],
		  "auto_send": "yes", "metadata": {"anything": [1, {"goes": true}]}}`,
		[]decodeDetail{
			{"Fecha_Emision", CodeUnknownField, "not a field"},
			{"auto_send", CodeInvalidType, "expected true or false, got a string"},
			{"detalle[1].cantidad", CodeInvalidType, "expected a number, got a boolean"},
			{"detalle[1].cod_imp_adic", CodeInvalidType, "got the number 1.5"},
			{"detalle[1].descuento_pc", CodeUnknownField, "not a field"},
			{"receptor.razon", CodeUnknownField, "not a field"},
			{"receptor.rut", CodeInvalidType, "expected a string, got the number 76086428"},
			{"referencias[0].folio_ref", CodeInvalidType, "at most 64 bits"},
			{"referencias[0].tipo_doc_ref", CodeInvalidType, "integer document type or a string code"},
		},
		CodeUnknownField,
	},
	{"too large", `{"metadata": {"x": "` + strings.Repeat("a", MaxRequestBytes) + `"}}`, []decodeDetail{{"", CodeTooLarge, "larger than"}}, CodeTooLarge},
}

func TestDecodeRequestRefuses(t *testing.T) {
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := DecodeRequest(strings.NewReader(tc.body))
			if err == nil {
				t.Fatalf("decoded %+v, want an error", req)
			}
			ve, ok := AsValidationError(err)
			if !ok {
				t.Fatalf("error %v is not a *ValidationError", err)
			}
			if len(ve.Details) != len(tc.want) {
				t.Fatalf("%d details, want %d: %v", len(ve.Details), len(tc.want), err)
			}
			for i, d := range ve.Details {
				w := tc.want[i]
				if d.Field != w.field || d.Code != w.code || !strings.Contains(d.Message, w.msgPart) {
					t.Errorf("detail %d = %+v, want field %q code %s message containing %q", i, d, w.field, w.code, w.msgPart)
				}
			}
			if tc.want[0].code != tc.code {
				t.Errorf("table: code %s disagrees with the first detail", tc.code)
			}
		})
	}
}

func TestDecodeRequestAccepts(t *testing.T) {
	body := `{"tipo_dte": 61, "fecha_emision": null,
	  "receptor": {"rut": "76086428-5", "razon_social": "Comercial Andes Ltda."},
	  "detalle": [{"nombre": "A", "cantidad": 1.50, "precio": 100, "ind_exe": 1}],
	  "referencias": [{"tipo_doc_ref": 33, "folio_ref": 7, "fecha_ref": "2025-05-01", "codigo_ref": 3, "razon_ref": "x"},
	                  {"tipo_doc_ref": "SET", "folio_ref": 0, "fecha_ref": "2025-05-01", "razon_ref": "y"}],
	  "auto_send": false, "metadata": {"k": [1, 2], "big": 9007199254740993, "neg": -18446744073709551617, "x": 1.10}}`
	got, err := DecodeRequest(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	one, three, no := 1, 3, false
	want := &EmitirDTERequest{
		TipoDTE:  NotaCreditoElectronica,
		Receptor: Receptor{Rut: "76086428-5", RazonSocial: "Comercial Andes Ltda."},
		Detalle:  []LineaDetalle{{Nombre: "A", Cantidad: "1.50", Precio: "100", IndExe: &one}},
		Referencias: []Referencia{
			{TipoDocRef: RefTipo(33), FolioRef: 7, FechaRef: "2025-05-01", CodigoRef: &three, RazonRef: "x"},
			{TipoDocRef: RefCodigo("SET"), FechaRef: "2025-05-01", RazonRef: "y"},
		},
		AutoSend: &no,
		// Numbers in metadata keep their digits: 2^53+1 and -(2^64+1)
		// would not survive a float64.
		Metadata: map[string]any{"k": []any{json.Number("1"), json.Number("2")}, "big": json.Number("9007199254740993"),
			"neg": json.Number("-18446744073709551617"), "x": json.Number("1.10")},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded request (-want +got):\n%s", diff)
	}
}

func TestDecodeRequestAtTheCap(t *testing.T) {
	head, tail := `{"metadata": {"x": "`, `"}}`
	body := head + strings.Repeat("a", MaxRequestBytes-len(head)-len(tail)) + tail
	if _, err := DecodeRequest(strings.NewReader(body)); err != nil {
		t.Fatalf("a body of exactly MaxRequestBytes: %v", err)
	}
}

func TestDecodeRequestReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := DecodeRequest(io.MultiReader(strings.NewReader(`{"tipo_dte"`), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("error %v does not wrap the reader's", err)
	}
	if _, ok := AsValidationError(err); ok {
		t.Error("a read failure is reported as a validation error")
	}
}

// FuzzDecodeRequest checks that DecodeRequest never panics and that it
// answers either a request or a *ValidationError whose details all carry a
// listed code.
func FuzzDecodeRequest(f *testing.F) {
	for _, tc := range decodeCases[:len(decodeCases)-1] {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(`{"tipo_dte": 33, "detalle": [{"nombre": "A", "cantidad": 1, "precio": 1}]}`))
	codes := map[DetailCode]bool{}
	for _, c := range DetailCodes() {
		codes[c] = true
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequest(bytes.NewReader(body))
		if err == nil {
			if req == nil {
				t.Fatal("nil request without an error")
			}
			_ = req.Validate()
			return
		}
		ve, ok := AsValidationError(err)
		if !ok || len(ve.Details) == 0 {
			t.Fatalf("error %v is not a non-empty *ValidationError", err)
		}
		for _, d := range ve.Details {
			if !codes[d.Code] || d.Message == "" {
				t.Fatalf("malformed detail %+v", d)
			}
		}
	})
}

// TestDetailCodesListsEveryConstant reads the package's source and checks
// that every DetailCode constant is listed by DetailCodes, so a new code
// cannot be left out of the list clients see.
func TestDetailCodesListsEveryConstant(t *testing.T) {
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	listed := map[string]bool{}
	for _, c := range DetailCodes() {
		listed[string(c)] = true
	}
	found := 0
	for _, file := range files {
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "DetailCode" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: a DetailCode constant that is not a literal", fset.Position(v.Pos()))
					}
					s, _ := strconv.Unquote(lit.Value)
					found++
					if !listed[s] {
						t.Errorf("%s: DetailCodes does not list %s", fset.Position(v.Pos()), s)
					}
				}
			}
		}
	}
	if found != len(listed) {
		t.Errorf("the source declares %d DetailCode constants; DetailCodes lists %d", found, len(listed))
	}
}
