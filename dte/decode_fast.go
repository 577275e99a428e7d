package dte

import (
	"encoding/json"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// The fast path of DecodeRequest. The strict decoding of decode.go reads a
// request three times (a generic tree, the shape check over it, then
// json.Unmarshal); a well-formed request, the common case, needs none of
// the tree and most of its allocations. decodeFast reads the body once,
// straight into the request, and gives up (ok false) on anything that is
// not plainly valid: a syntax error, an unknown member, a value of the
// wrong type, a member given twice, nesting deeper than fastMaxDepth. Then
// DecodeRequest runs the full decoding, which names every problem; so the
// fast path decides nothing about errors, and where it succeeds it must
// produce exactly what the full decoding produces (FuzzDecodeFast compares
// the two).

// fastMaxDepth bounds the nesting the fast path follows (in metadata); a
// deeper body goes to the full decoding, which has its own limit.
const fastMaxDepth = 64

// fastKind is how the fast path stores a JSON value into a Go type.
type fastKind uint8

const (
	fastString     fastKind = iota // a JSON string
	fastDecimal                    // Decimal: a number's text or a string
	fastTipoDocRef                 // TipoDocRef: a 32-bit integer or a string
	fastInt                        // a signed integer of bits bits
	fastBool                       // true or false
	fastPointer                    // a pointer to elem
	fastStruct                     // an object with the members in fields
	fastSlice                      // an array of elem
	fastAnyMap                     // map[string]any, decoded as encoding/json does
)

// fastType describes one Go type of the request for the fast path.
type fastType struct {
	kind   fastKind
	bits   int
	typ    reflect.Type
	elem   *fastType
	fields []fastField
}

// fastField is one member of an object: its JSON name, its struct field
// index and its type.
type fastField struct {
	name  string
	index int
	typ   *fastType
}

// requestFastType describes EmitirDTERequest; built once, never changed.
var requestFastType = buildFastType(reflect.TypeFor[EmitirDTERequest](), map[reflect.Type]*fastType{})

// buildFastType describes t, the way checkJSONShape reads it. It panics on
// a type the request cannot hold (a programming error caught by any test).
func buildFastType(t reflect.Type, seen map[reflect.Type]*fastType) *fastType {
	if ft := seen[t]; ft != nil {
		return ft
	}
	ft := &fastType{typ: t}
	seen[t] = ft
	switch {
	case t == decimalType:
		ft.kind = fastDecimal
	case t == tipoDocRefType:
		ft.kind = fastTipoDocRef
	case t.Kind() == reflect.Pointer:
		ft.kind, ft.elem = fastPointer, buildFastType(t.Elem(), seen)
	case t.Kind() == reflect.Struct:
		ft.kind = fastStruct
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, ok := jsonName(f)
			if !ok {
				continue
			}
			ft.fields = append(ft.fields, fastField{name: name, index: i, typ: buildFastType(f.Type, seen)})
		}
		if len(ft.fields) > 64 {
			panic("dte: the fast decoder tracks at most 64 members per object")
		}
	case t.Kind() == reflect.Slice:
		ft.kind, ft.elem = fastSlice, buildFastType(t.Elem(), seen)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Interface && t.Elem().NumMethod() == 0:
		ft.kind = fastAnyMap
	case t.Kind() == reflect.String:
		ft.kind = fastString
	case t.Kind() == reflect.Bool:
		ft.kind = fastBool
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		ft.kind, ft.bits = fastInt, t.Bits()
	default:
		panic("dte: the fast decoder cannot store into " + t.String())
	}
	return ft
}

// fastDecoder reads one body. Strings it returns are substrings of text,
// one copy of the body, so that most values cost no allocation of their
// own.
type fastDecoder struct {
	data  []byte
	text  string
	pos   int
	depth int
}

// decodeFast decodes data into a request when data is plainly valid.
func decodeFast(data []byte) (*EmitirDTERequest, bool) {
	d := &fastDecoder{data: data, text: string(data)}
	req := new(EmitirDTERequest)
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '{' {
		return nil, false
	}
	if !d.object(reflect.ValueOf(req).Elem(), requestFastType) {
		return nil, false
	}
	d.space()
	if d.pos != len(d.data) {
		return nil, false
	}
	return req, true
}

// space skips JSON whitespace.
func (d *fastDecoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// consume skips whitespace and then the byte c, reporting whether it was
// there.
func (d *fastDecoder) consume(c byte) bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// literal consumes the literal word (true, false, null) at pos.
func (d *fastDecoder) literal(word string) bool {
	if len(d.data)-d.pos >= len(word) && d.text[d.pos:d.pos+len(word)] == word {
		d.pos += len(word)
		return true
	}
	return false
}

// null consumes a null at pos, reporting whether there was one.
func (d *fastDecoder) null() bool {
	return d.pos < len(d.data) && d.data[d.pos] == 'n' && d.literal("null")
}

// str reads the string at pos (the opening quote) and returns its value.
func (d *fastDecoder) str() (string, bool) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return "", false
	}
	start := d.pos
	escaped, wide := false, false
	for i := start + 1; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			raw := d.data[start : i+1]
			if !escaped && (!wide || utf8.Valid(raw)) {
				return d.text[start+1 : i], true
			}
			// Let encoding/json read this one string, so that its escapes
			// and its replacement of invalid UTF-8 are exactly the full
			// decoding's (it also refuses a malformed escape).
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			i++ // the escaped byte cannot end the string
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			wide = true
		}
	}
	return "", false
}

// number reads the JSON number at pos and returns its text.
func (d *fastDecoder) number() (string, bool) {
	b, i := d.data, d.pos
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return "", false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return "", false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return "", false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	d.pos = i
	return d.text[start:i], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// value reads the value at pos into v, of type t. A null leaves v as it
// is: every value the fast path fills is fresh, so that is the zero value
// encoding/json leaves or sets.
func (d *fastDecoder) value(v reflect.Value, t *fastType) bool {
	d.space()
	if d.null() {
		return true
	}
	if d.pos >= len(d.data) {
		return false
	}
	switch t.kind {
	case fastString:
		s, ok := d.str()
		if ok {
			v.SetString(s)
		}
		return ok
	case fastDecimal:
		var s string
		var ok bool
		if d.data[d.pos] == '"' {
			s, ok = d.str()
		} else {
			s, ok = d.number()
		}
		if ok {
			v.SetString(s)
		}
		return ok
	case fastTipoDocRef:
		r := v.Addr().Interface().(*TipoDocRef)
		if d.data[d.pos] == '"' {
			s, ok := d.str()
			r.Codigo = s
			return ok
		}
		s, ok := d.number()
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return false
		}
		r.Tipo = TipoDTE(n)
		return true
	case fastInt:
		s, ok := d.number()
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(s, 10, t.bits)
		if err != nil {
			return false
		}
		v.SetInt(n)
		return true
	case fastBool:
		switch {
		case d.literal("true"):
			v.SetBool(true)
		case d.literal("false"):
			v.SetBool(false)
		default:
			return false
		}
		return true
	case fastPointer:
		p := reflect.New(t.elem.typ)
		if !d.value(p.Elem(), t.elem) {
			return false
		}
		v.Set(p)
		return true
	case fastStruct:
		return d.data[d.pos] == '{' && d.object(v, t)
	case fastSlice:
		return d.data[d.pos] == '[' && d.array(v, t)
	case fastAnyMap:
		if d.data[d.pos] != '{' {
			return false
		}
		m, ok := d.anyValue()
		if ok {
			v.Set(reflect.ValueOf(m))
		}
		return ok
	}
	return false
}

// object reads the object at pos (its opening brace) into the struct v.
func (d *fastDecoder) object(v reflect.Value, t *fastType) bool {
	d.pos++ // '{'
	if d.consume('}') {
		return true
	}
	var seen uint64
	for {
		d.space()
		if d.pos >= len(d.data) || d.data[d.pos] != '"' {
			return false
		}
		key, ok := d.str()
		if !ok {
			return false
		}
		i := fieldIndex(t.fields, key)
		if i < 0 || seen&(1<<i) != 0 {
			return false // unknown, or given twice
		}
		seen |= 1 << i
		if !d.consume(':') {
			return false
		}
		f := &t.fields[i]
		if !d.value(v.Field(f.index), f.typ) {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume('}')
	}
}

// fieldIndex returns the index in fields of the member named key, or -1.
func fieldIndex(fields []fastField, key string) int {
	for i := range fields {
		if fields[i].name == key {
			return i
		}
	}
	return -1
}

// array reads the array at pos (its opening bracket) into the slice v.
func (d *fastDecoder) array(v reflect.Value, t *fastType) bool {
	d.pos++ // '['
	if d.consume(']') {
		// encoding/json stores an empty array as an empty, non-nil slice.
		v.Set(reflect.MakeSlice(t.typ, 0, 0))
		return true
	}
	for n := 0; ; n++ {
		if n == v.Cap() {
			v.Grow(max(n, 2))
		}
		v.SetLen(n + 1)
		if !d.value(v.Index(n), t.elem) {
			return false
		}
		if d.consume(',') {
			continue
		}
		return d.consume(']')
	}
}

// anyValue reads the value at pos as encoding/json stores it in an any:
// map[string]any, []any, string, float64, bool or nil.
func (d *fastDecoder) anyValue() (any, bool) {
	d.space()
	if d.pos >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.pos]; {
	case c == '{':
		if d.depth++; d.depth > fastMaxDepth {
			return nil, false
		}
		d.pos++
		m := map[string]any{}
		if d.consume('}') {
			d.depth--
			return m, true
		}
		for {
			d.space()
			key, ok := d.str()
			if !ok || !d.consume(':') {
				return nil, false
			}
			e, ok := d.anyValue()
			if !ok {
				return nil, false
			}
			m[key] = e // a repeated key keeps its last value, as in encoding/json
			if d.consume(',') {
				continue
			}
			if !d.consume('}') {
				return nil, false
			}
			d.depth--
			return m, true
		}
	case c == '[':
		if d.depth++; d.depth > fastMaxDepth {
			return nil, false
		}
		d.pos++
		a := []any{}
		if d.consume(']') {
			d.depth--
			return a, true
		}
		for {
			e, ok := d.anyValue()
			if !ok {
				return nil, false
			}
			a = append(a, e)
			if d.consume(',') {
				continue
			}
			if !d.consume(']') {
				return nil, false
			}
			d.depth--
			return a, true
		}
	case c == '"':
		return d.str()
	case c == 't' && d.literal("true"):
		return true, true
	case c == 'f' && d.literal("false"):
		return false, true
	case c == 'n' && d.literal("null"):
		return nil, true
	}
	s, ok := d.number()
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false // out of float64's range: encoding/json refuses it
	}
	return f, true
}
