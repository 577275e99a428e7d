package server

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
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
