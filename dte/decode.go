package dte

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// MaxRequestBytes is the largest emission request DecodeRequest reads. A
// request at the SII's limits (1000 boleta lines with a 200-character nombre
// and a 1000-character dsc_item each) takes about 2.5 MB of UTF-8 JSON; the
// cap leaves room for escapes and metadata while bounding memory.
const MaxRequestBytes = 8 << 20

// DecodeRequest reads one emission request (contract §2.3) as JSON from r,
// strictly, reading at most MaxRequestBytes.
//
// Every problem of the JSON itself is reported at once, as a
// *ValidationError whose details carry one of the decoding codes:
// CodeInvalidJSON (malformed JSON with its line and column, an empty body,
// or data after the request object), CodeUnknownField (a member the
// contract does not define, matched exactly rather than case-insensitively
// as encoding/json would; the detail's field is the member's path, such as
// "detalle[1].precios"), CodeInvalidType (a value of the wrong JSON type,
// such as "33" for tipo_dte or 1.5 for an integer) and CodeTooLarge. Strict
// decoding matters because a misspelt optional field (say "descuento_pc")
// would otherwise silently change the document's amounts.
//
// JSON null leaves a field absent. Decimal fields take a JSON number, as
// every number of the contract does (a string holding one is
// CodeInvalidType, as "33" is for tipo_dte); their format is Validate's
// concern. Numbers in metadata keep every digit they were sent with
// (json.Number), so an integer beyond 2^53 is not rounded. The request is
// not validated: call Validate on the result. An error reading r is returned as
// is, wrapped, and is not a *ValidationError.
func DecodeRequest(r io.Reader) (*EmitirDTERequest, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRequestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("dte: read request: %w", err)
	}
	if len(data) > MaxRequestBytes {
		return nil, decodeErr(CodeTooLarge, fmt.Sprintf("the request is larger than %d bytes", MaxRequestBytes))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, decodeSyntaxErr(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, decodeErr(CodeInvalidJSON,
			"unexpected data after the request object at "+jsonPosition(data, dec.InputOffset()-1))
	}
	var problems []FieldError
	checkJSONShape("", tree, reflect.TypeFor[EmitirDTERequest](), &problems)
	problems = append(problems, DuplicateMembers(data)...)
	if len(problems) > 0 {
		return nil, &ValidationError{Details: problems}
	}
	var req EmitirDTERequest
	full := json.NewDecoder(bytes.NewReader(data))
	full.UseNumber() // metadata's numbers as sent, never through float64
	if err := full.Decode(&req); err != nil {
		// The shape check accepts only what Unmarshal can store; this is a
		// safety net, not an expected path.
		return nil, decodeErr(CodeInvalidJSON, err.Error())
	}
	return &req, nil
}

// decodeErr returns a one-detail *ValidationError about the whole body.
func decodeErr(code DetailCode, msg string) *ValidationError {
	return &ValidationError{Details: []FieldError{{Code: code, Message: msg}}}
}

// decodeSyntaxErr describes a failure to read one JSON value.
func decodeSyntaxErr(data []byte, err error) *ValidationError {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset counts the bytes read, the offending one included.
		return decodeErr(CodeInvalidJSON, fmt.Sprintf("malformed JSON at %s: %v", jsonPosition(data, se.Offset-1), se))
	case errors.Is(err, io.EOF):
		return decodeErr(CodeInvalidJSON, "the request is empty; expected a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return decodeErr(CodeInvalidJSON, "the JSON ends before the request object is complete")
	}
	return decodeErr(CodeInvalidJSON, err.Error())
}

// jsonPosition returns "line L, column C" of the byte at index off of data
// (both counted from 1; a column counts bytes).
func jsonPosition(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

var (
	decimalType    = reflect.TypeFor[Decimal]()
	tipoDocRefType = reflect.TypeFor[TipoDocRef]()
)

// dupFrame is an object or array being read by DuplicateMembers.
type dupFrame struct {
	object bool
	path   string
	keys   map[string]struct{} // the object's members so far
	next   int                 // the array's next index
}

// DuplicateMembers reports every member that appears more than once in
// one object of the JSON data, at any depth, each as a FieldError with its
// path and CodeDuplicate. encoding/json silently keeps the last value, so
// a body saying tipo_dte 33 and then 34 would issue a 34; DecodeRequest
// refuses such a body, and an HTTP layer can refuse its other bodies the
// same way. Member names are compared as decoded ("a" and "\u0061" are
// one name). It reads data once, byte by byte, without building values;
// malformed data ends the walk with what it found before.
func DuplicateMembers(data []byte) []FieldError {
	var out []FieldError
	var stack []*dupFrame
	// childPath is the path of the value that starts now in the top frame
	// (key is its name when the frame is an object).
	childPath := func(key string) string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			if f.path == "" {
				return key
			}
			return f.path + "." + key
		}
		p := f.path + "[" + strconv.Itoa(f.next) + "]"
		f.next++
		return p
	}
	key := ""
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			stack = append(stack, &dupFrame{object: c == '{', path: childPath(key)})
			key = ""
		case '}', ']':
			if len(stack) == 0 {
				return out
			}
			stack = stack[:len(stack)-1]
		case '"':
			end := jsonStringEnd(data, i)
			if end < 0 {
				return out
			}
			// A string followed by ':' is a member name.
			j := end + 1
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
				j++
			}
			if j < len(data) && data[j] == ':' && len(stack) > 0 && stack[len(stack)-1].object {
				f := stack[len(stack)-1]
				name := string(data[i+1 : end])
				if bytes.IndexByte(data[i+1:end], '\\') >= 0 {
					if err := json.Unmarshal(data[i:end+1], &name); err != nil {
						return out
					}
				}
				if f.keys == nil {
					f.keys = make(map[string]struct{}, 8)
				}
				if _, dup := f.keys[name]; dup {
					out = append(out, FieldError{Field: childPath(name), Code: CodeDuplicate,
						Message: fmt.Sprintf("%q appears more than once in this object", name),
						Action:  "give each member once"})
				}
				f.keys[name] = struct{}{}
				key = name
				i = j
				continue
			}
			childPath(key) // a string value: an array counts it
			i = end
		default:
			// A number or a literal in an array counts as an element at its
			// first byte; white space, commas and colons are skipped.
			if len(stack) > 0 && !stack[len(stack)-1].object && (c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n') {
				childPath("")
				for i+1 < len(data) && !endsScalar(data[i+1]) {
					i++
				}
			}
		}
	}
	return out
}

// endsScalar reports whether c ends a JSON number or literal.
func endsScalar(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// jsonStringEnd returns the index of the quote that closes the JSON
// string whose opening quote is at data[start], or -1.
func jsonStringEnd(data []byte, start int) int {
	for i := start + 1; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// checkJSONShape compares a value decoded generically (with UseNumber) with
// the Go type it will be stored in, and records unknown members and type
// mismatches under path.
func checkJSONShape(path string, v any, t reflect.Type, out *[]FieldError) {
	if v == nil {
		return // null leaves the field absent
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	mismatch := func(want string) {
		*out = append(*out, FieldError{Field: path, Code: CodeInvalidType,
			Message: fmt.Sprintf("expected %s, got %s", want, jsonKind(v))})
	}
	switch t {
	case decimalType:
		if _, ok := v.(json.Number); !ok {
			mismatch("a number")
		}
		return
	case tipoDocRefType:
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
		fields := requestFields[t]
		if fields == nil {
			fields = jsonFields(t)
		}
		var room [32]string // the request's largest object has 26 members
		keys := room[:0]
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			ft, ok := fields[k]
			if !ok {
				*out = append(*out, FieldError{Field: sub, Code: CodeUnknownField,
					Message: fmt.Sprintf("%q is not a field of this object", k),
					Action:  "check the spelling against the contract (§2.3) or remove the field"})
				continue
			}
			checkJSONShape(sub, obj[k], ft, out)
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			mismatch("an array")
			return
		}
		for i, e := range arr {
			checkJSONShape(path+"["+strconv.Itoa(i)+"]", e, t.Elem(), out)
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
		_, err := strconv.ParseInt(n.String(), 10, t.Bits())
		switch {
		case errors.Is(err, strconv.ErrRange):
			*out = append(*out, FieldError{Field: path, Code: CodeInvalidType,
				Message: fmt.Sprintf("expected an integer of at most %d bits, got %s", t.Bits(), n)})
		case err != nil:
			mismatch("an integer")
		}
	}
}

// requestFields holds jsonFields of every struct type a request holds,
// built once: checkJSONShape looks at them for every object of every body.
var requestFields = fieldsOf(reflect.TypeFor[EmitirDTERequest](), map[reflect.Type]map[string]reflect.Type{})

// fieldsOf adds to m the jsonFields of t and of the struct types within.
func fieldsOf(t reflect.Type, m map[reflect.Type]map[string]reflect.Type) map[reflect.Type]map[string]reflect.Type {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		return fieldsOf(t.Elem(), m)
	case reflect.Struct:
		if _, ok := m[t]; ok || t == tipoDocRefType {
			return m
		}
		m[t] = jsonFields(t)
		for _, ft := range m[t] {
			fieldsOf(ft, m)
		}
	}
	return m
}

// jsonFields maps the JSON names of a struct's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
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

// jsonKind names the JSON type of a generically decoded value.
func jsonKind(v any) string {
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
