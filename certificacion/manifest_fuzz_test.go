package certificacion_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/certificacion"
)

// FuzzManifest: manifest.json is outside input (a folder may come from
// someone else). Whatever its bytes, reading it answers a manifest or an
// error, never a panic, and a manifest it accepts names only files inside
// the folder: every upload Enviar would read, every sample and answer.
// Seeds: a manifest as WriteDir writes it (sets, cases, libros with an
// earlier attempt, samples, answers) and ones leaving the folder.
func FuzzManifest(f *testing.F) {
	good := `{"rut_emisor":"76192083-9","fecha":"2026-03-02","sets":[{"name":"SET BASICO","kind":"basico","numero_atencion":"414175",` +
		`"envelope":"envios/SET_BASICO.xml","cases":[{"case_id":"414175-1","tipo_dte":33,"folio":1,"file":"dte/T33F1.xml",` +
		`"monto_total":119000,"pdfs":["muestras/001-T33F1-tributario.pdf"]}],"envio":{"track_id":"0123456789","fecha":"2026-03-02T10:30:00-03:00"}}],` +
		`"libros":[{"kind":"VENTA","file":"libros/ventas-intento2.xml","folio_notificacion":2,"intentos":[{"file":"libros/ventas.xml","folio_notificacion":1}]}],` +
		`"muestras":["muestras/001-T33F1-tributario.pdf"],"intercambio":["intercambio/RecepcionEnvio-1.xml"]}`
	for _, seed := range []string{good, `{}`, `{"rut_emisor":"1-9","sets":[{"envelope":"../x.xml"}]}`,
		`{"rut_emisor":"1-9","libros":[{"file":"/etc/passwd"}]}`, `{"rut_emisor":"1-9","muestras":["a\\b"]}`,
		strings.Replace(good, "envios/", "envios/../../", 1), "[", `{"rut_emisor":"1-9","sets":null}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := certificacion.ParseManifest(data)
		if err != nil {
			if m != nil {
				t.Fatal("a manifest with an error")
			}
			return
		}
		var paths []string
		for _, u := range m.Uploads() {
			paths = append(paths, u.File)
		}
		for _, s := range m.Sets {
			for _, c := range s.Cases {
				paths = append(append(paths, c.File), c.PDFs...)
			}
		}
		for _, l := range m.Libros {
			for _, i := range l.Intentos {
				paths = append(paths, i.File)
			}
		}
		paths = append(append(paths, m.Muestras...), m.Intercambio...)
		for _, p := range paths {
			if p == "" || strings.Contains(p, "\\\\") || !filepath.IsLocal(filepath.FromSlash(p)) {
				t.Fatalf("accepted %q, a path outside the folder", p)
			}
		}
		// What it accepts, written back and read again, is the same.
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := certificacion.ParseManifest(b)
		if err != nil {
			t.Fatalf("the manifest written back is refused: %v", err)
		}
		if c, _ := json.Marshal(again); string(c) != string(b) {
			t.Fatalf("written back and read again it differs:\n%s\n%s", b, c)
		}
	})
}
