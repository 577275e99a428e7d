package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestModuleFollowsTheRules lists every package of the module with go list
// and checks its dtekit imports, and its tests', against rules.
func TestModuleFollowsTheRules(t *testing.T) {
	pkgs := modulePackages(t)
	rep := check(pkgs, rules, exceptions)
	for _, v := range rep.violations {
		t.Error(v)
	}
	for _, p := range rep.unplaced {
		t.Errorf("no rule places %s in the house: give it its place in docs/architecture.md and a rule in rules_test.go", p)
	}
	for _, e := range rep.unused {
		t.Errorf("the exception %s excuses nothing any more: remove it from rules_test.go", e)
	}
	for _, s := range stale(pkgs, rules, exceptions) {
		t.Errorf("%s: update rules_test.go", s)
	}
	t.Logf("%d packages checked against %d rules and %d exceptions", len(pkgs), len(rules), len(exceptions))
}

// modulePackages returns the module's packages with their dtekit imports,
// as go list reports them.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	goBin, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Fatalf("the go command lists the module's packages: %v", err)
	}
	run := func(args ...string) []byte {
		cmd := exec.Command(goBin, args...)
		cmd.Dir = moduleRoot(t, goBin)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
			}
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	module := strings.TrimSpace(string(run("list", "-m")))
	out := run("list", "-e", "-deps=false", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	rel := func(paths []string) []string {
		var r []string
		for _, p := range paths {
			if q, ok := strings.CutPrefix(p, module+"/"); ok {
				r = append(r, q)
			}
		}
		return r
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var lp struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
			Error                              *struct{ Err string }
		}
		if err := dec.Decode(&lp); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if lp.Error != nil {
			t.Errorf("go list %s: %s (its imports are not checked)", lp.ImportPath, lp.Error.Err)
			continue
		}
		p, ok := strings.CutPrefix(lp.ImportPath, module+"/")
		if !ok {
			t.Fatalf("go list ./... gave %s, outside module %s", lp.ImportPath, module)
		}
		pkgs = append(pkgs, pkg{path: p, imports: rel(lp.Imports), testImports: rel(lp.TestImports),
			xtestImports: rel(lp.XTestImports)})
	}
	if !slices.ContainsFunc(pkgs, func(p pkg) bool { return p.path == "internal/importrules" }) {
		t.Fatalf("go list ./... did not list this package among its %d: not run from the module root?", len(pkgs))
	}
	return pkgs
}

// moduleRoot returns the directory of the module's go.mod.
func moduleRoot(t *testing.T, goBin string) string {
	t.Helper()
	out, err := exec.Command(goBin, "env", "GOMOD").Output()
	gomod := strings.TrimSpace(string(out))
	if err != nil || gomod == "" || gomod == "/dev/null" {
		t.Fatalf("go env GOMOD: %q, %v: the test runs inside the module", gomod, err)
	}
	return filepath.Dir(gomod)
}

// TestRulesCatchWrongArrows feeds the real rules a made-up module in which
// each package makes one wrong import (or none), so that the test above
// is known to fail when the module does.
func TestRulesCatchWrongArrows(t *testing.T) {
	cases := []struct {
		name string
		p    pkg
		want []string // rule names of the one violation expected; nil for none
	}{
		{"a leaf importing another leaf", pkg{path: "caf", imports: []string{"webhook"}}, []string{"leaves"}},
		{"a leaf importing the document", pkg{path: "signer", imports: []string{"dte"}}, []string{"leaves"}},
		{"the stamp importing the document", pkg{path: "ted", imports: []string{"dte"}}, []string{"stamp"}},
		{"the document importing the printed form", pkg{path: "dte", imports: []string{"pdf"}}, []string{"document"}},
		{"the printed form importing the SII client", pkg{path: "pdf", imports: []string{"sii"}}, []string{"printed form"}},
		{"the ground floor importing a public package", pkg{path: "internal/chile", imports: []string{"dte"}}, []string{"ground floor"}},
		{"a new internal package importing billing", pkg{path: "internal/newthing", imports: []string{"billing"}},
			[]string{"ground floor", "below the service"}},
		{"store importing the document", pkg{path: "store", imports: []string{"dte"}}, []string{"store"}},
		{"a backend importing the service", pkg{path: "store/sqlite", imports: []string{"billing"}}, []string{"store", "below the service"}},
		{"the SII client importing the store", pkg{path: "sii", imports: []string{"store"}}, []string{"sii"}},
		{"the fake SII importing billing", pkg{path: "sii/siitest", imports: []string{"billing"}}, []string{"sii", "below the service"}},
		{"billing importing server", pkg{path: "billing", imports: []string{"server"}}, []string{"service", "HTTP on top"}},
		{"billing importing a backend", pkg{path: "billing", imports: []string{"store/sqlite"}}, []string{"backends"}},
		{"billing importing a test helper", pkg{path: "billing", imports: []string{"caf/caftest"}}, []string{"test helpers"}},
		{"the shared types importing the face", pkg{path: "billing/fault", imports: []string{"billing"}}, []string{"shared types"}},
		{"a room importing the face", pkg{path: "billing/internal/alerts", imports: []string{"billing"}}, []string{"rooms"}},
		{"a new room importing the face", pkg{path: "billing/internal/inbox", imports: []string{"billing"}}, []string{"rooms"}},
		{"a room's external test importing the fixture", pkg{path: "billing/internal/delivery", xtestImports: []string{"billing/billingtest"}},
			[]string{"rooms"}},
		{"the demo importing the fixture", pkg{path: "billing/demo", imports: []string{"billing/billingtest"}}, []string{"demo"}},
		{"the demo importing the PostgreSQL test cluster", pkg{path: "billing/demo", imports: []string{"internal/pgtest"}}, []string{"demo"}},
		{"a seam importing a room", pkg{path: "billing/internal/outbox", imports: []string{"billing/internal/delivery"}}, []string{"seams"}},
		{"server reaching the store", pkg{path: "server", imports: []string{"store"}}, []string{"server"}},
		{"server reaching the SII", pkg{path: "server", imports: []string{"sii"}}, []string{"server"}},
		{"the example importing the document", pkg{path: "examples/webhook-receiver", imports: []string{"dte"}}, []string{"example"}},
		{"anything importing the binary", pkg{path: "server", testImports: []string{"cmd/dtekit"}}, []string{"programs"}},
		{"a leaf's test importing billing", pkg{path: "caf", xtestImports: []string{"billing"}}, []string{"below the service"}},
		{"an internal package's test importing server", pkg{path: "internal/ssrf", testImports: []string{"server"}},
			[]string{"below the service"}},
		{"a store test importing the service's fixture", pkg{path: "store/sqlite", xtestImports: []string{"billing/billingtest"}},
			[]string{"below the service"}},
		{"the document importing its test credentials", pkg{path: "dte", imports: []string{"dte/dtetest"}},
			[]string{"document", "test helpers"}},
		{"the test credentials importing the fake SII", pkg{path: "dte/dtetest", imports: []string{"sii/siitest"}},
			[]string{"test credentials"}},
		{"a test of the test credentials importing billing", pkg{path: "dte/dtetest", xtestImports: []string{"billing"}},
			[]string{"below the service"}},
		{"the SII client importing the test credentials", pkg{path: "sii", imports: []string{"dte/dtetest"}},
			[]string{"sii", "test helpers"}},

		{"the binary importing everything", pkg{path: "cmd/dtekit",
			imports: []string{"server", "billing", "billing/billingtest", "store/sqlite", "store/postgres", "caf/caftest", "dte/dtetest"}}, nil},
		{"billing's tests reaching wider", pkg{path: "billing",
			testImports: []string{"store/sqlite", "sii/siitest", "dte/dtetest"}, xtestImports: []string{"billing", "server"}}, nil},
		{"the document's tests using test helpers", pkg{path: "dte",
			xtestImports: []string{"dte", "caf/caftest", "signer/signertest", "dte/dtetest", "internal/oracle"}}, nil},
		{"a room using the shared types and a seam", pkg{path: "billing/internal/submission",
			imports: []string{"billing/fault", "billing/internal/outbox", "sii", "store", "dte", "signer", "webhook"}}, nil},
		{"a helper building on a helper", pkg{path: "signer/signertest", imports: []string{"signer", "internal/testpki"}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := check([]pkg{c.p}, rules, nil)
			if len(rep.unplaced) > 0 {
				t.Errorf("unplaced %v", rep.unplaced)
			}
			switch {
			case c.want == nil && len(rep.violations) > 0:
				t.Errorf("violations %v, want none", rep.violations)
			case c.want == nil:
			case len(rep.violations) != 1:
				t.Errorf("violations %v, want one by %q", rep.violations, c.want)
			default:
				v := rep.violations[0]
				if got := v.ruleNames(); !slices.Equal(got, c.want) {
					t.Errorf("rules %q, want %q", got, c.want)
				}
				msg := v.String()
				for _, s := range append([]string{c.p.path + " ", v.imp}, c.want...) {
					if !strings.Contains(msg, s) {
						t.Errorf("message %q does not name %q", msg, s)
					}
				}
			}
		})
	}
}

// TestCheckerBookkeeping covers what check reports besides violations: a
// package with no place, an exception that excuses and one that excuses
// nothing any more, and patterns left stale.
func TestCheckerBookkeeping(t *testing.T) {
	pkgs := []pkg{
		{path: "internal/testcreds", imports: []string{"caf", "dte"}},
		{path: "inbox", imports: []string{"dte"}},
		{path: "caf"}, {path: "dte"},
	}
	exc := []exception{{pkg: "internal/testcreds", imports: []string{"caf", "signer"}, rule: "ground floor"}}
	rep := check(pkgs, rules, exc)
	if len(rep.violations) != 1 || rep.violations[0].pkg != "internal/testcreds" || rep.violations[0].imp != "dte" {
		t.Errorf("violations %v, want internal/testcreds → dte alone (→ caf is excused)", rep.violations)
	}
	if !slices.Equal(rep.unplaced, []string{"inbox"}) {
		t.Errorf("unplaced %q, want [inbox]", rep.unplaced)
	}
	if len(rep.unused) != 1 || !strings.Contains(rep.unused[0], "signer") {
		t.Errorf("unused exceptions %q, want the one for signer", rep.unused)
	}
	st := stale(pkgs, []rule{{name: "r", from: []string{"dte"}, only: []string{"caf", "ted"}}},
		[]exception{{pkg: "dte", imports: []string{"caf"}, rule: "no such rule", why: "a reason"}, {pkg: "caf", rule: "r"}})
	if len(st) != 3 || !strings.Contains(st[0], `"ted"`) || !strings.Contains(st[1], "no such rule") || !strings.Contains(st[2], "no reason") {
		t.Errorf("stale %q, want rule r's \"ted\", the exception's unknown rule and the one without a reason", st)
	}
}

// TestMatch pins the pattern language of the rules.
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"...", "billing/internal/outbox", true},
		{"billing/...", "billing", true},
		{"billing/...", "billing/internal/outbox", true},
		{"billing/...", "billingx", false},
		{"internal/...", "billing/internal/outbox", false},
		{"billing", "billing/fault", false},
		{"*/*test", "caf/caftest", true},
		{"*/*test", "billing/internal/xtest", false},
		{"internal/test*", "internal/testcreds", true},
		{"[", "[", false},
	} {
		if got := match(c.pattern, c.path); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}
