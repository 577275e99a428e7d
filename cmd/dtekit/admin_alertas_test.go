package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminAlertas: the caf.low_stock threshold is reachable from the
// command line (issue 29, point 9): "admin alertas show" prints the
// default 20, "admin alertas update" sets it within 0 to 1,000,000, and a
// value out of range is refused naming the field, with nothing changed.
func TestAdminAlertas(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a SQLite database")
	}
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := adminRun(t, "admin", "empresa", "create", "--data", data, "--rut", "76543210-3", "--razon-social", "Mi Empresa SpA",
		"--giro", "Comercio", "--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago",
		"--fecha-resolucion", "2024-01-01", "--acteco", "620200"); code != exitOK {
		t.Fatalf("empresa create: %d %s %s", code, out, stderr)
	}
	show := func() int64 {
		t.Helper()
		code, out, stderr := adminRun(t, "admin", "alertas", "show", "--data", data, "--empresa", "76.543.210-3")
		var s struct {
			N *int64 `json:"caf_low_stock_threshold"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &s) != nil || s.N == nil {
			t.Fatalf("alertas show: %d %s %s", code, out, stderr)
		}
		return *s.N
	}
	if n := show(); n != 20 {
		t.Errorf("the default threshold is %d, want 20", n)
	}
	code, out, stderr := adminRun(t, "admin", "alertas", "update", "--data", data, "--empresa", "76543210-3", "--caf-low-stock-threshold", "150")
	if code != exitOK || !strings.Contains(out, `"caf_low_stock_threshold": 150`) {
		t.Fatalf("alertas update: %d %s %s", code, out, stderr)
	}
	if n := show(); n != 150 {
		t.Errorf("after the update the threshold is %d, want 150", n)
	}
	code, _, stderr = adminRun(t, "admin", "alertas", "update", "--data", data, "--empresa", "76543210-3", "--caf-low-stock-threshold", "1000001")
	if code != exitFail || !strings.Contains(stderr, "caf_low_stock_threshold") || !strings.Contains(stderr, "OUT_OF_RANGE") {
		t.Errorf("a threshold out of range: %d %s", code, stderr)
	}
	if code, _, stderr := adminRun(t, "admin", "alertas", "update", "--data", data, "--empresa", "76543210-3"); code != exitUsage ||
		!strings.Contains(stderr, "--caf-low-stock-threshold") {
		t.Errorf("update without the threshold: %d %s", code, stderr)
	}
	if n := show(); n != 150 {
		t.Errorf("after the refusals the threshold is %d, want 150", n)
	}
}
