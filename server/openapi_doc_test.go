package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

func TestOpenAPIDocumentIsValid(t *testing.T) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI())
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("document is %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
}

// TestOpenAPIErrorCodesAreTheCatalogue: the document's ErrorResponse.code
// lists exactly fault.Codes(), the one catalogue billing and server use,
// in the same order.
func TestOpenAPIErrorCodesAreTheCatalogue(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	code := doc.Components.Schemas["ErrorResponse"].Value.Properties["code"].Value
	var got []fault.Code
	for _, v := range code.Enum {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("enum member %v is not a string", v)
		}
		got = append(got, fault.Code(s))
	}
	if diff := cmp.Diff(fault.Codes(), got); diff != "" {
		t.Errorf("ErrorResponse.code enum differs from fault.Codes() (-catalogue +document):\n%s", diff)
	}
}

// TestLicense: the repository is Apache-2.0, its LICENSE file holds that
// license's text, and the OpenAPI document names it (SPDX identifier).
func TestLicense(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if l := doc.Info.License; l == nil || l.Name != "Apache-2.0" || l.Identifier != "Apache-2.0" {
		t.Errorf("info.license = %+v, want name and identifier Apache-2.0", l)
	}
	b, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Apache License", "Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
	gi, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(gi)), "/dtekit-data/") {
		t.Errorf(".gitignore does not ignore dtekit-data/, serve's default data directory:\n%s", gi)
	}
}

// TestOpenAPIEmitExamples: POST /dte's request body carries one example per
// document type, each equal to its file in testdata/requests, and each
// emits as it stands through the server (201, answer checked against the
// document by the tester).
func TestOpenAPIEmitExamples(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	op := doc.Paths.Find("/api/v1/billing/dte").Post
	examples := op.RequestBody.Value.Content.Get("application/json").Examples
	if len(examples) != len(dte.Tipos()) {
		t.Fatalf("%d examples, want one per type (%d)", len(examples), len(dte.Tipos()))
	}
	seen := map[dte.TipoDTE]string{}
	bodies := map[string][]byte{}
	for name, ex := range examples {
		got, err := json.Marshal(ex.Value.Value)
		if err != nil {
			t.Fatal(err)
		}
		file, err := os.ReadFile(filepath.Join(oracle.RepoRoot(t), "testdata", "requests", name+".json"))
		if err != nil {
			t.Fatalf("example %s has no file testdata/requests/%s.json: %v", name, name, err)
		}
		var a, b any
		json.Unmarshal(got, &a)
		if err := json.Unmarshal(file, &b); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(b, a); d != "" {
			t.Errorf("example %s differs from testdata/requests/%s.json (-file +example):\n%s", name, name, d)
		}
		var head struct {
			TipoDTE dte.TipoDTE `json:"tipo_dte"`
		}
		json.Unmarshal(file, &head)
		if other, dup := seen[head.TipoDTE]; dup {
			t.Errorf("examples %s and %s are both of type %d", name, other, head.TipoDTE)
		}
		seen[head.TipoDTE] = name
		bodies[name] = file
	}
	for _, tipo := range dte.Tipos() {
		if seen[tipo] == "" {
			t.Errorf("no example of type %d", tipo)
		}
	}

	be := billingtest.Backends()[0]
	f := newFixture(t, be.NewStore(t), RateLimit{PerSecond: -1})
	c := f.provision(context.Background(), billingtest.Company{Rut: "11111111-1", RazonSocial: "Empresa de Ejemplos", Tipos: dte.Tipos()})
	for name, body := range bodies {
		r := f.do("POST", "/api/v1/billing/dte", json.RawMessage(body), append(c.writeHdr, "Idempotency-Key", newUUID())...)
		if r.Status != 201 {
			t.Errorf("example %s: %d %s", name, r.Status, truncate(r.Body))
		}
	}
}

// TestOneListShape: every paged list of the document (an operation that
// takes a cursor) answers next_cursor and total_count beside its records,
// in items for the DTE list (the contract's name) and in data elsewhere.
func TestOneListShape(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths.Map() {
		op := item.Get
		if op == nil {
			continue
		}
		paged := false
		for _, p := range op.Parameters {
			if p.Value != nil && p.Value.Name == "cursor" {
				paged = true
			}
		}
		if !paged {
			continue
		}
		n++
		schema := op.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
		records := "data"
		if path == "/api/v1/billing/dte" {
			records = "items"
		}
		want := []string{records, "next_cursor", "total_count"}
		got := append([]string(nil), schema.Required...)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) || len(schema.Properties) != 3 {
			t.Errorf("GET %s answers %v (properties %d), want %v", path, schema.Required, len(schema.Properties), want)
		}
	}
	if n < 6 {
		t.Errorf("only %d paged lists found; the DTE, CAF, clientes (and search), productos (and search) and deliveries lists are paged", n)
	}
}
