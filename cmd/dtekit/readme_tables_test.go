package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing"
)

// readmeSection returns the README's text from the heading that starts
// with title to the next heading of the same or a higher level.
func readmeSection(t *testing.T, readme, title string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+title)
	if i < 0 {
		t.Fatalf("the README has no heading %q", title)
	}
	level := strings.Index(title, " ")
	rest := readme[i+1+len(title):]
	end := regexp.MustCompile(`\n#{1,` + string(rune('0'+level)) + `} `).FindStringIndex(rest)
	if end == nil {
		return rest
	}
	return rest[:end[0]]
}

// TestREADMETables: what the README's tables list is what the code has
// (issue 29, point 9): a row of the package map for every package of the
// module; a row of the queues table, a part of the /metrics queue list and
// of DTEKIT_JOBS_WORKERS' default (README and serve --help) for every
// queue of billing.Workers; and, in the configuration table and in serve
// --help, every DTEKIT_ variable the binary reads (but the two of other
// commands, which the README's text names).
func TestREADMETables(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)

	// The package map.
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgMap := readmeSection(t, readme, "## Package map")
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(p, "github.com/dtekit/dtekit/")
		if !strings.Contains(pkgMap, "\n| `"+p+"` |") {
			t.Errorf("the README's package map has no row for %s", p)
		}
	}

	// The queues.
	var help bytes.Buffer
	env := &cmdEnv{stdin: strings.NewReader(""), stdout: &help, stderr: &help, getenv: func(string) string { return "" }}
	if code := run(context.Background(), env, []string{"serve", "--help"}); code != exitOK {
		t.Fatalf("serve --help: exit %d", code)
	}
	config := readmeSection(t, readme, "### Configuration")
	metrics := regexp.MustCompile("`dtekit_job_queue_depth`[^\n]*").FindString(readme)
	workersRow := regexp.MustCompile("`DTEKIT_JOBS_WORKERS` \\| `([^`]*)`").FindStringSubmatch(config)
	if workersRow == nil {
		t.Fatal("the configuration table has no DTEKIT_JOBS_WORKERS row with its default")
	}
	w := reflect.TypeFor[billing.Workers]()
	for i := range w.NumField() {
		q := strings.ToLower(w.Field(i).Name)
		if !strings.Contains(readme, "\n| `"+q+"` |") {
			t.Errorf("the README's queues table has no row for %s", q)
		}
		if !strings.Contains(metrics, "`"+q+"`") {
			t.Errorf("the README's dtekit_job_queue_depth row does not name the queue %s", q)
		}
		if !slices.ContainsFunc(strings.Split(workersRow[1], ","), func(s string) bool { return strings.HasPrefix(s, q+"=") }) {
			t.Errorf("DTEKIT_JOBS_WORKERS' default in the README (%s) has no %s", workersRow[1], q)
		}
		if !regexp.MustCompile(`\b` + q + `=\d`).MatchString(help.String()) {
			t.Errorf("serve --help gives no default budget of the queue %s", q)
		}
	}

	// The variables.
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(DTEKIT_[A-Z0-9_]+)"`).FindAllSubmatch(src, -1) {
			vars[string(m[1])] = true
		}
	}
	if len(vars) < 10 {
		t.Fatalf("found only %d DTEKIT_ variables in the sources: %v", len(vars), vars)
	}
	for v := range vars {
		if v == certPasswordEnv || v == "DTEKIT_WEBHOOK_SECRET" {
			if !strings.Contains(config, v) {
				t.Errorf("the configuration section does not name %s", v)
			}
			continue
		}
		if !strings.Contains(config, "`"+v) {
			t.Errorf("the configuration table has no row for %s", v)
		}
		if !regexp.MustCompile(`\n  ` + v + `\b`).MatchString(help.String()) {
			t.Errorf("serve --help does not describe %s", v)
		}
	}
}
