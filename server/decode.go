package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// Body size limits (documented in the OpenAPI description).
const (
	maxJSONBody = 1 << 20   // every JSON body but the CAF upload
	maxCAFBody  = 256 << 10 // CAF upload
	maxCertBody = 128 << 10 // certificate upload, whole multipart body
	maxCertFile = 50 * 1024 // certificate file part (contract §8: 50KB)
)

// readBody checks that r carries the media type want and reads its body,
// at most limit bytes (413 beyond).
func readBody(w http.ResponseWriter, r *http.Request, want string, limit int64) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != want {
		return nil, newError(http.StatusUnsupportedMediaType, fault.UnsupportedMediaType, "the body must be "+want)
	}
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, newError(http.StatusBadRequest, fault.Validation, "could not read the request body")
	}
	return b, nil
}

// decodeJSON reads a JSON object body into dst strictly: the content type
// must be application/json, the body one object of at most limit bytes, and
// every member a field of dst (unknown ones are reported by name, each
// with code UNKNOWN_FIELD). dst must point to a struct whose fields are
// flat (the server's non-emit bodies all are).
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	b, err := readBody(w, r, "application/json", limit)
	if err != nil {
		return err
	}
	return unmarshalStrict(b, dst)
}

// unmarshalStrict decodes one JSON object into dst, refusing unknown or
// repeated members and trailing data, and names the field of every
// problem.
func unmarshalStrict(b []byte, dst any) error {
	var members map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&members); err != nil || members == nil {
		return validation("the body must be a JSON object",
			dte.FieldError{Field: "$", Code: dte.CodeInvalidJSON, Message: "the body is not a JSON object" + jsonErrorSuffix(err)})
	}
	if _, err := dec.Token(); err != io.EOF {
		return validation("the body must be a single JSON object",
			dte.FieldError{Field: "$", Code: dte.CodeInvalidJSON, Message: "data after the JSON object"})
	}
	if dups := dte.DuplicateMembers(b); len(dups) > 0 {
		return validation(fmt.Sprintf("the body gives %d member(s) more than once", len(dups)), dups...)
	}
	known := jsonFields(reflect.TypeOf(dst).Elem())
	var details []dte.FieldError
	for name := range members {
		if !known[name] {
			details = append(details, dte.FieldError{Field: name, Code: dte.CodeUnknownField,
				Message: "unknown field " + strconv.Quote(name), Action: "remove the field"})
		}
	}
	if len(details) > 0 {
		sort.Slice(details, func(i, j int) bool { return details[i].Field < details[j].Field })
		return validation(fmt.Sprintf("the body has %d unknown field(s)", len(details)), details...)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "$"
			}
			return validation("invalid field "+field, dte.FieldError{Field: field, Code: dte.CodeInvalidType,
				Message: "expected " + jsonTypeName(te.Type) + ", got JSON " + te.Value})
		}
		return validation("the body could not be decoded",
			dte.FieldError{Field: "$", Code: dte.CodeInvalidJSON, Message: "the body could not be decoded" + jsonErrorSuffix(err)})
	}
	return nil
}

func jsonErrorSuffix(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf(" (syntax error at byte %d)", se.Offset)
	}
	return ""
}

// jsonTypeName names a Go type the way a JSON client thinks of it.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

var fieldCache sync.Map // reflect.Type → map[string]bool

// jsonFields returns the JSON member names of struct type t.
func jsonFields(t reflect.Type) map[string]bool {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]bool)
	}
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names[name] = true
	}
	fieldCache.Store(t, names)
	return names
}

// Query parameters.

// queryLimit reads `limit` (default 20, 1 to 100).
func queryLimit(r *http.Request) (int, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return 20, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 100 {
		return 0, invalidParam("limit", dte.CodeInvalidValue, "limit must be an integer from 1 to 100")
	}
	return n, nil
}

// queryBool reads a boolean parameter (absent means false).
func queryBool(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, invalidParam(name, dte.CodeInvalidValue, name+" must be true or false")
	}
	return v, nil
}

// queryDate reads a YYYY-MM-DD parameter.
func queryDate(r *http.Request, name string) (string, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return "", nil
	}
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		return "", invalidParam(name, dte.CodeInvalidValue, name+" must be a date YYYY-MM-DD")
	}
	return s, nil
}

// queryTipo reads an optional tipo_dte parameter.
func queryTipo(r *http.Request) (dte.TipoDTE, error) {
	s := r.URL.Query().Get("tipo_dte")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || !dte.TipoDTE(n).Valid() {
		return 0, invalidParam("tipo_dte", dte.CodeInvalidValue, "tipo_dte must be one of 33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112")
	}
	return dte.TipoDTE(n), nil
}

// pathID returns the {name} path value when it is a UUID; any other value
// cannot name a resource, so it is not found.
func pathID(r *http.Request, name string) (string, error) {
	id := r.PathValue(name)
	if !isUUID(id) {
		return "", errNotFound
	}
	return strings.ToLower(id), nil
}
