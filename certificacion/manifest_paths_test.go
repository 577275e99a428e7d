package certificacion_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/certificacion"
)

// TestManifestPathsStayInside: manifest.json is outside input. A path in
// it that leaves the folder ("../", an absolute path, a backslash) makes
// ReadManifest, and so Enviar, fail naming the field before any file is
// read; a file of the folder that is a symbolic link leading out of it is
// refused when Enviar reads it. (Enviar never reaches its client here: a
// nil one would panic if it did.)
func TestManifestPathsStayInside(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	secret := filepath.Join(base, "secret.xml")
	if err := os.WriteFile(secret, []byte("<secreto/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, dir string, m map[string]any) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, certificacion.ManifestFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set := func(envelope string) map[string]any {
		return map[string]any{"rut_emisor": "76192083-9", "sets": []any{map[string]any{"name": "SET BASICO", "envelope": envelope}}}
	}
	for i, tc := range []struct {
		m     map[string]any
		field string
	}{
		{set("../secret.xml"), "sets[0].envelope"},
		{set("envios/../../secret.xml"), "sets[0].envelope"},
		{set(secret), "sets[0].envelope"},
		{set(`..\secret.xml`), "sets[0].envelope"},
		{map[string]any{"rut_emisor": "76192083-9", "libros": []any{map[string]any{"kind": "VENTA", "file": "libros/../../secret.xml"}}}, "libros[0].file"},
		{map[string]any{"rut_emisor": "76192083-9", "libros": []any{map[string]any{"kind": "VENTA", "file": "libros/v.xml",
			"intentos": []any{map[string]any{"file": "/etc/passwd"}}}}}, "libros[0].intentos[0].file"},
		{map[string]any{"rut_emisor": "76192083-9", "muestras": []string{"../x.pdf"}}, "muestras[0]"},
		{map[string]any{"rut_emisor": "76192083-9", "intercambio": []string{"../x.xml"}}, "intercambio[0]"},
	} {
		dir := filepath.Join(base, "kit", string(rune('a'+i)))
		write(t, dir, tc.m)
		_, err := certificacion.Enviar(context.Background(), nil, dir, nil)
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "not a path inside the folder") {
			t.Errorf("manifest %v: %v; want a refusal naming %s", tc.m, err, tc.field)
		}
	}
	// A symbolic link inside the folder that leads out of it.
	dir := filepath.Join(base, "kit", "link")
	write(t, dir, set("envios/set.xml"))
	if err := os.MkdirAll(filepath.Join(dir, "envios"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "envios", "set.xml")); err != nil {
		t.Fatal(err)
	}
	if _, err := certificacion.Enviar(context.Background(), nil, dir, nil); err == nil || !strings.Contains(err.Error(), "escapes") {
		t.Errorf("a link out of the folder: %v; want it refused", err)
	}
}
