// Package oracle locates the independent tools and reference files that
// dtekit's tests use to check its output: xmllint, xmlsec1, openssl,
// ZXingReader, pdftotext, qpdf and the shared SII material (schemas, keys,
// samples) kept beside the repository in ../shared. For fuzz targets it
// also lists the shared XML samples (SharedXML) and makes structural edits
// of XML (EditXML), so that mutations reach past a parser.
//
// When an oracle is missing, a test is skipped with a message that says what
// to install; when the environment variable DTEKIT_REQUIRE_ORACLES is set to
// 1 (as CI does), the test fails instead, so a missing tool can never turn a
// check into a silent pass.
package oracle

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Required reports whether missing oracles must fail tests rather than skip
// them (DTEKIT_REQUIRE_ORACLES=1).
func Required() bool { return os.Getenv("DTEKIT_REQUIRE_ORACLES") == "1" }

// missing skips or fails t, depending on Required.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("DTEKIT_REQUIRE_ORACLES=1 but "+format, args...)
	}
	t.Skipf(format, args...)
}

// RepoRoot returns the directory holding the module's go.mod, found by
// walking up from the test's working directory.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("oracle: working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("oracle: no go.mod above the test directory")
		}
		dir = parent
	}
}

// SharedDir returns the shared reference folder (../shared relative to the
// repository root). It skips the test, or fails it under
// DTEKIT_REQUIRE_ORACLES=1, when the folder is absent.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(RepoRoot(t)), "shared")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		missing(t, "shared reference folder %s not found (clone the repository beside shared/ to run this test)", dir)
	}
	return dir
}

// SharedFile returns the path of a file under the shared folder, e.g.
// SharedFile(t, "sii", "schemas", "DTE_v10.xsd"), with the same skip/fail
// policy as SharedDir when it is missing.
func SharedFile(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{SharedDir(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		missing(t, "shared file %s not found", p)
	}
	return p
}

// Schemas returns the directory holding the official SII XSDs.
func Schemas(t testing.TB) string {
	t.Helper()
	return filepath.Dir(SharedFile(t, "sii", "schemas", "DTE_v10.xsd"))
}

// Tool returns the absolute path of an oracle program found on PATH. It
// skips the test, or fails it under DTEKIT_REQUIRE_ORACLES=1, when the
// program is not installed.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		missing(t, "%s not installed (apt-get install -y xmlsec1 libxml2-utils zxing-cpp-tools poppler-utils qpdf openssl chromium)", name)
	}
	return p
}

// RunTimeout bounds one oracle run, so a stuck tool fails its test instead
// of hanging the whole test binary.
const RunTimeout = 5 * time.Minute

// Run executes an oracle program and returns its combined output; the test
// fails with that output when the program exits non-zero or runs longer
// than RunTimeout.
func Run(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, Tool(t, name), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// Command returns a command that runs the oracle program name, bounded by
// RunTimeout and by the end of the test; a missing program skips or fails
// the test as Tool does. It is for the cases Run does not fit: input on
// standard input, standard error apart, a working directory, or a
// non-zero exit the test expects.
func Command(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	p := Tool(t, name)
	ctx, cancel := context.WithTimeout(t.Context(), RunTimeout)
	t.Cleanup(cancel)
	return exec.CommandContext(ctx, p, args...)
}

// CombinedOutput runs an oracle program already located with Tool,
// bounded by RunTimeout, and returns its combined output and its error
// (non-nil on a non-zero exit), for callers without a testing.TB at hand.
func CombinedOutput(path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	return exec.CommandContext(ctx, path, args...).CombinedOutput()
}
