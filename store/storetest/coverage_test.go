package storetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// TestCoverage checks Coverage against the suite's own source: every
// interface store.Reader and store.Tx are made of is in the table (no
// method of theirs is outside it), each test named is a subtest of Run,
// and each method of an interface is called by one of its tests, in the
// test's function or in a function of this package it calls. Calls are
// found by method name, which store's names make distinct enough.
func TestCoverage(t *testing.T) {
	t.Parallel()
	funcs := suiteFuncs(t)
	subtests := runSubtests(t, funcs["Run"])

	covered := map[string]bool{}
	seen := map[reflect.Type]bool{}
	for _, c := range Coverage {
		if seen[c.Interface] {
			t.Errorf("%v is in Coverage twice", c.Interface)
		}
		seen[c.Interface] = true
		calls := map[string]bool{}
		for _, name := range c.Tests {
			fn, ok := subtests[name]
			if !ok {
				t.Errorf("%v: %q is not a subtest of Run", c.Interface, name)
				continue
			}
			for m := range callsFrom(funcs, fn) {
				calls[m] = true
			}
		}
		for i := range c.Interface.NumMethod() {
			m := c.Interface.Method(i).Name
			covered[m] = true
			if !calls[m] {
				t.Errorf("%v.%s is called by none of its conformance tests %q", c.Interface, m, c.Tests)
			}
		}
	}
	for _, whole := range []reflect.Type{reflect.TypeFor[store.Reader](), reflect.TypeFor[store.Tx]()} {
		for i := range whole.NumMethod() {
			if m := whole.Method(i).Name; !covered[m] {
				t.Errorf("%v.%s belongs to no interface of Coverage: give it a per-room interface and its tests there", whole, m)
			}
		}
	}
}

// suiteFuncs parses the suite's files (not its tests) and returns its
// functions and methods by name.
func suiteFuncs(t *testing.T) map[string]*ast.FuncDecl {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	if funcs["Run"] == nil {
		t.Fatal("no Run in the suite's files")
	}
	return funcs
}

// runSubtests returns the subtests Run starts, t.Run("Name", h.method),
// as the name of each one's method.
func runSubtests(t *testing.T, run *ast.FuncDecl) map[string]string {
	t.Helper()
	out := map[string]string{}
	ast.Inspect(run.Body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || len(c.Args) != 2 {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Run" {
			return true
		}
		lit, ok1 := c.Args[0].(*ast.BasicLit)
		m, ok2 := c.Args[1].(*ast.SelectorExpr)
		if ok1 && ok2 && lit.Kind == token.STRING {
			name, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = m.Sel.Name
		}
		return true
	})
	if len(out) == 0 {
		t.Fatal("Run starts no subtest of the form t.Run(\"Name\", h.method)")
	}
	return out
}

// callsFrom returns the names of the methods and functions called (or
// named) by the function root and by the suite's functions it reaches.
func callsFrom(funcs map[string]*ast.FuncDecl, root string) map[string]bool {
	out, seen := map[string]bool{}, map[string]bool{}
	var walk func(string)
	walk = func(name string) {
		fd := funcs[name]
		if fd == nil || seen[name] {
			return
		}
		seen[name] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				out[x.Sel.Name] = true
				walk(x.Sel.Name)
			case *ast.Ident:
				walk(x.Name)
			}
			return true
		})
	}
	walk(root)
	return out
}
