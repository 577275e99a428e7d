package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/dtekit/dtekit/dte"
)

// declaredQuery maps each operation of the OpenAPI document, as a route
// pattern ("GET /api/v1/billing/dte"), to the query parameters it
// declares. The document is the one list of what each route reads, so a
// parameter added there is accepted here, and one the route does not read
// is refused rather than silently ignored (?folio=1 on the DTE list would
// otherwise answer every document).
var declaredQuery = sync.OnceValues(func() (map[string]map[string]bool, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("server: reading the OpenAPI document: %w", err)
	}
	out := map[string]map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			names := map[string]bool{}
			for _, ps := range []openapi3.Parameters{item.Parameters, op.Parameters} {
				for _, p := range ps {
					if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
						names[p.Value.Name] = true
					}
				}
			}
			out[method+" "+path] = names
		}
	}
	return out, nil
})

// queryChecker returns the check of a route's query parameters: nil when
// every parameter is one the OpenAPI document declares for the route, else
// a 400 naming the first unknown one (in name order). It fails when the
// document has no such operation, so a route cannot be registered without
// being documented.
func queryChecker(pattern string) (func(r *http.Request) error, error) {
	all, err := declaredQuery()
	if err != nil {
		return nil, err
	}
	allowed, ok := all[pattern]
	if !ok {
		return nil, fmt.Errorf("server: route %q is not an operation of the OpenAPI document", pattern)
	}
	return func(r *http.Request) error {
		q := r.URL.Query()
		if len(q) == 0 {
			return nil
		}
		var unknown []string
		for name := range q {
			if !allowed[name] {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) == 0 {
			return nil
		}
		sort.Strings(unknown)
		known := make([]string, 0, len(allowed))
		for n := range allowed {
			known = append(known, n)
		}
		sort.Strings(known)
		hint := "this route takes no query parameters"
		if len(known) > 0 {
			hint = "this route takes " + strings.Join(known, ", ")
		}
		details := make([]dte.FieldError, 0, len(unknown))
		for _, name := range unknown {
			details = append(details, dte.FieldError{Field: name, Code: dte.CodeUnknownField,
				Message: fmt.Sprintf("unknown query parameter %q; %s", clip(name, 64), hint)})
		}
		return validation(fmt.Sprintf("unknown query parameter %q", clip(unknown[0], 64)), details...)
	}, nil
}

// clip shortens a client-given name for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
