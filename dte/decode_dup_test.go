package dte

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tokenDuplicates is DuplicateMembers written with encoding/json's
// tokenizer: slower, but an independent reading of the JSON, against which
// FuzzDuplicateMembers checks the byte scanner.
func tokenDuplicates(data []byte) []string {
	type frame struct {
		object  bool
		path    string
		keys    map[string]bool
		wantKey bool
		key     string
		next    int
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*frame
	var out []string
	valuePath := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			f.wantKey = true
			if f.path == "" {
				return f.key
			}
			return f.path + "." + f.key
		}
		p := f.path + "[" + strconv.Itoa(f.next) + "]"
		f.next++
		return p
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			f := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				continue
			}
			k, _ := tok.(string)
			if f.keys[k] {
				field := k
				if f.path != "" {
					field = f.path + "." + k
				}
				out = append(out, field)
			}
			f.keys[k] = true
			f.key, f.wantKey = k, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, path: valuePath(), keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{path: valuePath()})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			valuePath()
		}
	}
}

func fields(d []FieldError) []string {
	var out []string
	for _, e := range d {
		out = append(out, e.Field)
	}
	return out
}

func TestDuplicateMembersCases(t *testing.T) {
	for body, want := range map[string][]string{
		`{"a":1,"a":2}`: {"a"},
		`{"a":"x","b":{"c":[1,"s",{"d":1,"d":2}]}}`: {"b.c[2].d"},
		`[true, null, -1.5e3, {"k":"\"","k":1}]`:    {"[3].k"},
		`{"\u0061":1,"a":2}`:                        {"a"},
		`{"a:b":1, "x" : {"a:b" : 2}}`:              nil,
		`{"s":"{\"a\":1,\"a\":2}"}`:                 nil,
	} {
		if got := fields(DuplicateMembers([]byte(body))); !cmp.Equal(got, want) {
			t.Errorf("%s: %v, want %v", body, got, want)
		}
		if got := tokenDuplicates([]byte(body)); !cmp.Equal(got, want) {
			t.Errorf("oracle on %s: %v, want %v", body, got, want)
		}
	}
}

func FuzzDuplicateMembers(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"x":[1,{"y":2,"y":3}]}]`, `{"\u0061":1,"a":{}}`, `{"k":"\\","k":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			DuplicateMembers(data) // must not panic
			return
		}
		if got, want := fields(DuplicateMembers(data)), tokenDuplicates(data); !cmp.Equal(got, want) {
			t.Errorf("%q: %v, the tokenizer finds %v", data, got, want)
		}
	})
}
