package importrules

import (
	"debug/buildinfo"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// osslPkg is the one dtekit package that calls C: OpenSSL's signer, built
// only with the tag openssl.
const osslPkg = "github.com/dtekit/dtekit/internal/osslrsa"

// cgoDeps lists the packages outside the standard library that cmd/dtekit
// is built from and that have cgo files, under the given go list flags.
func cgoDeps(t *testing.T, goBin, root string, flags ...string) []string {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if and (not .Standard) .CgoFiles}}{{.ImportPath}}{{end}}"}, flags...)
	cmd := exec.Command(goBin, append(args, "./cmd/dtekit")...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.Fields(string(out))
}

// TestDefaultBuildIsPureGo: without the tag openssl, no package of the
// binary outside the standard library uses cgo (the tagged build links
// internal/osslrsa, which shows the listing sees cgo packages), and, unless
// -short, CGO_ENABLED=0 go build ./cmd/dtekit yields a static executable:
// no ELF interpreter, no shared library, built with CGO_ENABLED=0.
func TestDefaultBuildIsPureGo(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command lists the binary's packages: %v", err)
	}
	root := moduleRoot(t, goBin)
	if got := cgoDeps(t, goBin, root); len(got) > 0 {
		t.Errorf("the default build of cmd/dtekit links packages with cgo: %v", got)
	}
	if got := cgoDeps(t, goBin, root, "-tags", "openssl"); !slices.Contains(got, osslPkg) {
		t.Errorf("with -tags openssl, go list sees no cgo in %s (it lists %v): the check above proves nothing", osslPkg, got)
	}
	// Building the whole binary once more with cgo off costs minutes on a
	// cold cache (a configuration the race-enabled suite shares nothing
	// with), so the suite leaves it to .ci/run's openssl step, which sets
	// DTEKIT_STATIC_BUILD=1 and runs this test alone.
	if testing.Short() || os.Getenv("DTEKIT_STATIC_BUILD") != "1" {
		t.Log("the static build itself runs with DTEKIT_STATIC_BUILD=1 (.ci/run does)")
		return
	}
	bin := filepath.Join(t.TempDir(), "dtekit")
	cmd := exec.Command(goBin, "build", "-o", bin, "./cmd/dtekit")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/dtekit: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the default binary names an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the default binary needs shared libraries %v (%v)", libs, err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range info.Settings {
		if s.Key == "CGO_ENABLED" && s.Value != "0" || s.Key == "-tags" {
			t.Errorf("the default binary was built with %s=%s", s.Key, s.Value)
		}
	}
}
