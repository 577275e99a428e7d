package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

const totalsUsage = `usage: dtekit totals REQUEST.json

Reads an emission request (contract §2.3; "-" reads standard input),
validates it and prints every detail line's MontoItem, DescuentoMonto and
RecargoMonto and the document's Totales as JSON, with the SII's element
names; elements the document does not carry are left out.

On an invalid request it prints the contract's error envelope
({"code":"VALIDATION_ERROR","details":[...]}) on standard output and exits 1.
Besides the validation codes, details may carry INVALID_JSON (malformed
JSON), UNKNOWN_FIELD (a field the contract doesn't define, often a typo) and
INVALID_TYPE (e.g. a string where an integer belongs).
`

// maxRequestJSONBytes bounds the request read by the CLI.
const maxRequestJSONBytes = 16 << 20

// Detail codes of JSON decoding problems (beside the validation codes).
const (
	codeInvalidJSON  = "INVALID_JSON"
	codeUnknownField = "UNKNOWN_FIELD"
	codeInvalidType  = "INVALID_TYPE"
)

// runTotals implements "dtekit totals".
func runTotals(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(env.stdout, totalsUsage)
		return 0
	}
	if len(args) != 1 || (strings.HasPrefix(args[0], "-") && args[0] != "-") {
		fmt.Fprint(env.stderr, totalsUsage)
		return 2
	}
	data, err := readRequestInput(ctx, env, args[0])
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit totals: %v\n", err)
		return 1
	}
	req, verr := decodeRequestJSON(data)
	if verr == nil {
		verr = validateDecodedRequest(req)
	}
	var tot *dte.Totals
	if verr == nil {
		var err error
		if tot, err = dte.ComputeTotals(req); err != nil {
			if !errors.As(err, &verr) {
				verr = &dte.ValidationError{Details: []dte.FieldError{{Code: dte.CodeValidationError, Message: err.Error()}}}
			}
		}
	}
	if verr != nil {
		fmt.Fprintf(env.stderr, "dtekit totals: %s: %v\n", args[0], verr)
		if err := totalsWriteJSON(env.stdout, verr.Envelope()); err != nil {
			fmt.Fprintf(env.stderr, "dtekit totals: %v\n", err)
		}
		return 1
	}
	if err := totalsWriteJSON(env.stdout, tot); err != nil {
		fmt.Fprintf(env.stderr, "dtekit totals: %v\n", err)
		return 1
	}
	return 0
}

// validateDecodedRequest runs the contract validation (dte.Validate, which
// takes today's date in Chile for the fecha_emision checks).
func validateDecodedRequest(r *dte.EmitirDTERequest) *dte.ValidationError {
	err := r.Validate()
	if err == nil {
		return nil
	}
	var ve *dte.ValidationError
	if errors.As(err, &ve) {
		return ve
	}
	return reqOneDetail("", dte.CodeValidationError, err.Error())
}

// readRequestInput reads the request file, or standard input for "-",
// refusing anything larger than maxRequestJSONBytes.
func readRequestInput(ctx context.Context, env *cmdEnv, path string) ([]byte, error) {
	return readInput(ctx, env, path, maxRequestJSONBytes)
}

// totalsWriteJSON writes v as indented JSON without HTML escaping.
func totalsWriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// decodeRequestJSON decodes an emission request strictly: malformed JSON,
// trailing data, fields the contract doesn't define (matched exactly, not
// case-insensitively as encoding/json would) and values of the wrong JSON
// type are all reported at once, each with the path of the offending field
// ("detalle[1].precio"). The REST API may be lenient about unknown fields;
// the CLI is not, because a misspelt optional field (say "descuento_pc")
// would otherwise silently change the totals.
func decodeRequestJSON(data []byte) (*dte.EmitirDTERequest, *dte.ValidationError) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, reqSyntaxError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		return nil, reqOneDetail("", codeInvalidJSON, fmt.Sprintf("unexpected data after the request object at %s", reqPosition(data, off)))
	}
	var problems []dte.FieldError
	reqCheckShape("", tree, reflect.TypeFor[dte.EmitirDTERequest](), &problems)
	if len(problems) > 0 {
		return nil, &dte.ValidationError{Details: problems}
	}
	var req dte.EmitirDTERequest
	if err := json.Unmarshal(data, &req); err != nil {
		// The shape check should have caught everything; report what is left.
		return nil, reqOneDetail("", codeInvalidJSON, err.Error())
	}
	return &req, nil
}

func reqOneDetail(field, code, msg string) *dte.ValidationError {
	return &dte.ValidationError{Details: []dte.FieldError{{Field: field, Code: code, Message: msg}}}
}

// reqSyntaxError describes a decoding failure with its line and column.
func reqSyntaxError(data []byte, err error) *dte.ValidationError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return reqOneDetail("", codeInvalidJSON, fmt.Sprintf("malformed JSON at %s: %v", reqPosition(data, se.Offset), se))
	case errors.Is(err, io.EOF):
		return reqOneDetail("", codeInvalidJSON, "the request is empty; expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return reqOneDetail("", codeInvalidJSON, "the JSON ends before the request object is complete")
	}
	return reqOneDetail("", codeInvalidJSON, err.Error())
}

// reqPosition returns "line L, column C" for a byte offset.
func reqPosition(data []byte, off int64) string {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

var (
	reqDecimalType    = reflect.TypeFor[dte.Decimal]()
	reqTipoDocRefType = reflect.TypeFor[dte.TipoDocRef]()
)

// reqCheckShape compares a generic JSON value with the Go type it will be
// decoded into and records unknown fields and type mismatches.
func reqCheckShape(path string, v any, t reflect.Type, out *[]dte.FieldError) {
	if v == nil {
		return // null leaves the field absent
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	mismatch := func(want string) {
		*out = append(*out, dte.FieldError{Field: path, Code: codeInvalidType,
			Message: fmt.Sprintf("expected %s, got %s", want, reqJSONKind(v))})
	}
	switch t {
	case reqDecimalType:
		switch v.(type) {
		case json.Number, string:
		default:
			mismatch("a number")
		}
		return
	case reqTipoDocRefType:
		switch n := v.(type) {
		case string:
		case json.Number:
			if _, err := strconv.ParseInt(n.String(), 10, 32); err != nil {
				mismatch("an integer document type or a string code")
			}
		default:
			mismatch("an integer document type or a string code")
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			mismatch("an object")
			return
		}
		fields := reqJSONFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				*out = append(*out, dte.FieldError{Field: sub, Code: codeUnknownField,
					Message: fmt.Sprintf("%q is not a field of this object", k),
					Action:  "check the spelling against the contract (§2.3) or remove the field"})
				continue
			}
			reqCheckShape(sub, obj[k], ft, out)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			mismatch("an array")
			return
		}
		for i, e := range arr {
			reqCheckShape(path+"["+strconv.Itoa(i)+"]", e, t.Elem(), out)
		}
	case reflect.Map:
		if _, ok := v.(map[string]any); !ok {
			mismatch("an object")
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			mismatch("a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			mismatch("true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			mismatch("an integer")
			return
		}
		if _, err := strconv.ParseInt(n.String(), 10, t.Bits()); err != nil {
			*out = append(*out, dte.FieldError{Field: path, Code: codeInvalidType,
				Message: fmt.Sprintf("expected an integer of at most %d bits, got %s", t.Bits(), n)})
		}
	}
}

// reqJSONFields maps the JSON names of a struct's fields to their types.
func reqJSONFields(t reflect.Type) map[string]reflect.Type {
	m := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}

// reqJSONKind names the JSON type of a decoded value.
func reqJSONKind(v any) string {
	switch x := v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "the number " + x.String()
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}
