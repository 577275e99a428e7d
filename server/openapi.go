package server

import (
	_ "embed"
	"net/http"
)

// openAPIYAML is the hand-written OpenAPI 3.1 document of the API, served at
// /api/v1/openapi.yaml and used by the tests to validate every response.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPI returns a copy of the server's OpenAPI 3.1 document (YAML).
func OpenAPI() []byte { return append([]byte(nil), openAPIYAML...) }

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPIYAML)
}
