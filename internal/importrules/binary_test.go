package importrules

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// testCode are the packages that exist only to test: the binary must link
// none of them, directly or through another package.
var testCode = []string{
	"testing",
	"github.com/dtekit/dtekit/internal/pgtest",
	"github.com/dtekit/dtekit/internal/oracle",
}

// TestBinaryCarriesNoTestCode lists every package cmd/dtekit is built from
// (go list -deps) and fails on any of testCode: the demo provisions its
// companies with billing/demo, never with billing/billingtest.
func TestBinaryCarriesNoTestCode(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command lists the binary's packages: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "./cmd/dtekit")
	cmd.Dir = moduleRoot(t, goBin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/dtekit: %v", err)
	}
	deps := strings.Fields(string(out))
	// The list must be the binary's: it ends with the binary itself and
	// holds the demo's provisioning, else the check below proves nothing.
	for _, want := range []string{"github.com/dtekit/dtekit/cmd/dtekit", "github.com/dtekit/dtekit/billing/demo"} {
		if !slices.Contains(deps, want) {
			t.Fatalf("go list -deps ./cmd/dtekit does not list %s among its %d packages", want, len(deps))
		}
	}
	for _, p := range testCode {
		if slices.Contains(deps, p) {
			t.Errorf("cmd/dtekit is built with %s: a package it links imports test code (go list -deps ./cmd/dtekit shows which)", p)
		}
	}
}
