package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"
)

// The OpenAPI document, loaded once per test binary.
var (
	specOnce   sync.Once
	specDoc    *openapi3.T
	specRouter routers.Router
	specErr    error
)

func loadSpec(t testing.TB) (*openapi3.T, routers.Router) {
	t.Helper()
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		specDoc, specErr = loader.LoadFromData(OpenAPI())
		if specErr != nil {
			return
		}
		if specErr = specDoc.Validate(context.Background()); specErr != nil {
			return
		}
		// The signed XML is checked as text (its bytes are ISO-8859-1).
		openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.FileBodyDecoder)
		// Match requests on any host: the tests use httptest's.
		specDoc.Servers = nil
		specRouter, specErr = legacyrouter.NewRouter(specDoc)
	})
	if specErr != nil {
		t.Fatalf("OpenAPI document: %v", specErr)
	}
	return specDoc, specRouter
}

// checkResponse validates a response against the OpenAPI document: the
// operation must document its status (undocumented statuses fail), and
// headers and body must match the documented schema. A request to a path
// the document does not describe must answer the error envelope.
func checkResponse(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	doc, router := loadSpec(t)
	route, params, err := router.FindRoute(req)
	if err != nil {
		if status < 400 {
			t.Errorf("%s %s: undocumented path answered %d", req.Method, req.URL, status)
			return
		}
		checkEnvelope(t, doc, req, status, header, body)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s → %d does not match the OpenAPI document: %v\nbody: %s", req.Method, req.URL, status, err, truncate(body))
	}
	if status >= 400 {
		checkEnvelope(t, doc, req, status, header, body)
	}
}

// checkEnvelope validates an error answer against ErrorResponse and checks
// that it carries the request id.
func checkEnvelope(t testing.TB, doc *openapi3.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s → %d: Content-Type %q, want application/json", req.Method, req.URL, status, ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s → %d: body is not JSON: %v\nbody: %s", req.Method, req.URL, status, err, truncate(body))
		return
	}
	schema := doc.Components.Schemas["ErrorResponse"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020(), openapi3.MultiErrors()); err != nil {
		t.Errorf("%s %s → %d: not an ErrorResponse envelope: %v\nbody: %s", req.Method, req.URL, status, err, truncate(body))
	}
	var env struct {
		Context struct {
			RequestID string `json:"request_id"`
		} `json:"context"`
	}
	_ = json.Unmarshal(body, &env)
	if env.Context.RequestID == "" || env.Context.RequestID != header.Get("X-Request-Id") {
		t.Errorf("%s %s → %d: context.request_id %q, header X-Request-Id %q", req.Method, req.URL, status, env.Context.RequestID, header.Get("X-Request-Id"))
	}
}

func truncate(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// tester drives a handler and validates every answer.
type tester struct {
	t testing.TB
	h http.Handler
}

// response is one answer, already validated.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", truncate(r.Body), err)
	}
}

// Code returns the envelope's code.
func (r *response) Code() fault.Code {
	var env struct {
		Code fault.Code `json:"code"`
	}
	_ = json.Unmarshal(r.Body, &env)
	return env.Code
}

// do serves req and validates the answer against the OpenAPI document.
func (tt *tester) do(req *http.Request) *response {
	tt.t.Helper()
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	rec := httptest.NewRecorder()
	tt.h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	// The validator reads the request again; give it a fresh body.
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	checkResponse(tt.t, req, res.StatusCode, res.Header, body)
	return &response{Status: res.StatusCode, Header: res.Header, Body: body}
}

// req builds a request with optional JSON body and headers given as
// name, value pairs.
func newReq(method, target string, body any, hdr ...string) *http.Request {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, target, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}
