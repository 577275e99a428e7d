package importrules

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// scope says which files of a package a rule governs.
type scope int

const (
	code         scope = iota // the package's own files
	codeAndTests              // and its _test.go files, in-package and external
)

// A rule is one arrow of the house: the packages it governs (from, less
// except) may import only the dtekit packages matching only (when only is
// set) and none matching not.
type rule struct {
	name   string   // short; failures and exceptions cite it
	why    string   // the arrow in one sentence, printed with a failure
	from   []string // the importers the rule governs
	except []string // importers matched by from that the rule spares
	only   []string // when set, every dtekit import must match one of these
	not    []string // dtekit imports that are forbidden
	scope  scope
}

// places reports whether the rule gives its packages a place in the
// house, as opposed to holding across it.
func (r *rule) places() bool { return !slices.Contains(r.from, "...") }

// governs reports whether the rule governs package p.
func (r *rule) governs(p string) bool { return matchAny(r.from, p) && !matchAny(r.except, p) }

// forbids reports whether the rule forbids an import of imp.
func (r *rule) forbids(imp string) bool {
	return (r.only != nil && !matchAny(r.only, imp)) || matchAny(r.not, imp)
}

// An exception lets pkg import the packages matching imports although
// rule forbids it.
type exception struct {
	pkg     string
	imports []string
	rule    string
	why     string
}

// A pkg is a dtekit package and its dtekit imports, all as paths relative
// to the module.
type pkg struct {
	path         string
	imports      []string // of its own files
	testImports  []string // of its in-package _test.go files
	xtestImports []string // of its external (package x_test) test files
}

// A violation is one forbidden import and the rules that forbid it.
type violation struct {
	pkg, imp string
	test     bool // the import is in a _test.go file
	rules    []*rule
}

func (v violation) String() string {
	var b strings.Builder
	if v.test {
		fmt.Fprintf(&b, "a test of %s imports %s, which", v.pkg, v.imp)
	} else {
		fmt.Fprintf(&b, "%s imports %s, which", v.pkg, v.imp)
	}
	for i, r := range v.rules {
		if i > 0 {
			b.WriteString(" and")
		}
		fmt.Fprintf(&b, " rule %q forbids (%s)", r.name, r.why)
	}
	return b.String()
}

// ruleNames returns the names of v's rules.
func (v violation) ruleNames() []string {
	var names []string
	for _, r := range v.rules {
		names = append(names, r.name)
	}
	return names
}

// report is what check finds.
type report struct {
	violations []violation // forbidden imports no exception excuses
	unplaced   []string    // packages no placing rule governs
	unused     []string    // exception entries that excused nothing
}

// check applies rules and exceptions to pkgs.
func check(pkgs []pkg, rules []rule, exceptions []exception) report {
	var rep report
	used := map[[2]int]bool{} // exception index, import index
	excused := func(p, imp, rule string) bool {
		for i, e := range exceptions {
			if e.pkg != p || e.rule != rule {
				continue
			}
			for j, pat := range e.imports {
				if match(pat, imp) {
					used[[2]int{i, j}] = true
					return true
				}
			}
		}
		return false
	}
	for _, p := range pkgs {
		placed := false
		for i := range rules {
			if rules[i].places() && rules[i].governs(p.path) {
				placed = true
			}
		}
		if !placed {
			rep.unplaced = append(rep.unplaced, p.path)
		}
		look := func(imports []string, test bool) {
			for _, imp := range imports {
				if imp == p.path {
					continue // an external test imports the package it tests
				}
				v := violation{pkg: p.path, imp: imp, test: test}
				for i := range rules {
					r := &rules[i]
					if test && r.scope != codeAndTests {
						continue
					}
					if r.governs(p.path) && r.forbids(imp) && !excused(p.path, imp, r.name) {
						v.rules = append(v.rules, r)
					}
				}
				if len(v.rules) > 0 {
					rep.violations = append(rep.violations, v)
				}
			}
		}
		look(p.imports, false)
		// A test import already in the package's own files was judged there.
		var tests []string
		for _, imp := range slices.Concat(p.testImports, p.xtestImports) {
			if !slices.Contains(p.imports, imp) && !slices.Contains(tests, imp) {
				tests = append(tests, imp)
			}
		}
		look(tests, true)
	}
	for i, e := range exceptions {
		for j, imp := range e.imports {
			if !used[[2]int{i, j}] {
				rep.unused = append(rep.unused, fmt.Sprintf("%s → %s (rule %q)", e.pkg, imp, e.rule))
			}
		}
	}
	return rep
}

// stale lists the patterns of rules and exceptions that match no package
// of pkgs, and the exceptions that cite no rule (left behind by a rename,
// they would let a wrong arrow through unseen) or give no reason.
func stale(pkgs []pkg, rules []rule, exceptions []exception) []string {
	matchesSome := func(pat string) bool {
		return slices.ContainsFunc(pkgs, func(p pkg) bool { return match(pat, p.path) })
	}
	var out []string
	for _, r := range rules {
		for _, pats := range [][]string{r.from, r.except, r.only, r.not} {
			for _, pat := range pats {
				if !matchesSome(pat) {
					out = append(out, fmt.Sprintf("rule %q: %q matches no package", r.name, pat))
				}
			}
		}
	}
	for _, e := range exceptions {
		if strings.TrimSpace(e.why) == "" {
			out = append(out, fmt.Sprintf("exception for %s gives no reason", e.pkg))
		}
		if !slices.ContainsFunc(rules, func(r rule) bool { return r.name == e.rule }) {
			out = append(out, fmt.Sprintf("exception for %s cites no rule: %q", e.pkg, e.rule))
		}
		for _, pat := range append([]string{e.pkg}, e.imports...) {
			if !matchesSome(pat) {
				out = append(out, fmt.Sprintf("exception for %s: %q matches no package", e.pkg, pat))
			}
		}
	}
	return out
}

// match reports whether package path p matches pattern: "..." matches
// every package, "x/..." matches x and every package below it, and any
// other pattern is a path.Match pattern ("*" within one element).
func match(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == dir || strings.HasPrefix(p, dir+"/")
	}
	ok, err := path.Match(pattern, p)
	return ok && err == nil
}

func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, p) })
}
