package server

import (
	"context"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
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
