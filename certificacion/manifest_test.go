package certificacion_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/certificacion"
)

// TestManifestLeeme writes the folder of a whole set file (the basic and
// guía sets, the boletas, the four libros and the RCOF) and checks
// manifest.json as the issue lists it (per set: name, número de atención,
// envelope file; per case: case id, tipo_dte, folio, file, monto_total,
// the totals worked by hand in goldenTotals; per libro: kind, file), and
// that LEEME.md names, in upload order, every envelope, every libro and
// every printed sample, the DTEUpload channel of the boleta set and the
// declaration of progress.
func TestManifestLeeme(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kit")
	if _, err := certificacion.WriteDir(dir, generateFullExentos(t), creds(t).Emisor); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, certificacion.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Sets []struct {
			Name           *string `json:"name"`
			NumeroAtencion *string `json:"numero_atencion"`
			Envelope       *string `json:"envelope"`
			Cases          []struct {
				CaseID     *string      `json:"case_id"`
				TipoDTE    *int         `json:"tipo_dte"`
				Folio      *int64       `json:"folio"`
				File       *string      `json:"file"`
				MontoTotal *json.Number `json:"monto_total"`
			} `json:"cases"`
		} `json:"sets"`
		Libros []struct {
			Kind *string `json:"kind"`
			File *string `json:"file"`
		} `json:"libros"`
		Muestras []string `json:"muestras"`
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	golden := map[string]golden{}
	for _, name := range fullSetFiles {
		for _, g := range goldenTotals[name] {
			golden[g.id] = g
		}
	}
	var order []string // what LEEME.md must name, in order
	wantSets := []string{"SET BASICO", "SET LIBRO DE VENTAS", "SET LIBRO DE COMPRAS", "SET GUIA DE DESPACHO",
		"FACTURAS DE LAS GUIAS FACTURADAS (SET LIBRO DE GUIAS)", "SET LIBRO DE GUIAS", "SII SET DE PRUEBA DE BOLETA ELECTRONICA DE VENTAS Y SERVICIOS", "SET LIBRO DE COMPRAS PARA EXENTOS"}
	if len(m.Sets) != len(wantSets) {
		t.Fatalf("%d sets in the manifest, want %d", len(m.Sets), len(wantSets))
	}
	cases := 0
	for i, s := range m.Sets {
		if s.Name == nil || *s.Name != wantSets[i] || s.NumeroAtencion == nil {
			t.Errorf("set %d: name %v, número de atención %v; want %s", i+1, s.Name, s.NumeroAtencion, wantSets[i])
			continue
		}
		if s.Envelope != nil {
			order = append(order, *s.Envelope)
		}
		for _, cs := range s.Cases {
			cases++
			if cs.CaseID == nil || cs.TipoDTE == nil || cs.Folio == nil || cs.File == nil || cs.MontoTotal == nil {
				t.Errorf("%s: a case without case_id, tipo_dte, folio, file or monto_total: %+v", *s.Name, cs)
				continue
			}
			id := *cs.CaseID
			if strings.HasPrefix(*s.Name, "FACTURAS DE LAS GUIAS") {
				// The factura of the invoiced guía (case 2): its lines,
				// so its total.
				id = strings.TrimPrefix(id, "FACTURA-GUIA-")
				cases--
			}
			g, ok := golden[id]
			if !ok || (int(g.tipo) != *cs.TipoDTE && id == *cs.CaseID) || string(*cs.MontoTotal) != string(g.total) {
				t.Errorf("case %s: tipo %d monto_total %s; by hand tipo %d total %s", *cs.CaseID, *cs.TipoDTE, *cs.MontoTotal, g.tipo, g.total)
			}
			if _, err := os.Stat(filepath.Join(dir, *cs.File)); err != nil {
				t.Errorf("case %s: %v", *cs.CaseID, err)
			}
		}
	}
	if cases != 8+3+5 {
		t.Errorf("%d cases in the manifest, want 16", cases)
	}
	wantLibros := [][2]string{{"LIBRO DE VENTAS", "libros/01-LibroVentas-414176.xml"}, {"LIBRO DE COMPRAS", "libros/02-LibroCompras-414177.xml"},
		{"LIBRO DE GUIAS", "libros/03-LibroGuias-428552.xml"}, {"CONSUMO DE FOLIOS", "libros/04-ConsumoFolios.xml"},
		{"LIBRO DE COMPRAS PARA EXENTOS", "libros/05-LibroComprasExentos-414179.xml"}}
	if len(m.Libros) != len(wantLibros) {
		t.Fatalf("%d libros in the manifest, want %d", len(m.Libros), len(wantLibros))
	}
	for i, l := range m.Libros {
		if l.Kind == nil || l.File == nil || *l.Kind != wantLibros[i][0] || *l.File != wantLibros[i][1] {
			t.Errorf("libro %d: %v %v, want %v", i+1, l.Kind, l.File, wantLibros[i])
			continue
		}
		order = append(order, *l.File)
	}
	order = append(order, m.Muestras...)
	leeme, err := os.ReadFile(filepath.Join(dir, certificacion.LeemeFile))
	if err != nil {
		t.Fatal(err)
	}
	text, at := string(leeme), 0
	for _, f := range order {
		i := strings.Index(text[at:], "`"+f+"`")
		if i < 0 {
			t.Errorf("LEEME.md does not name %s after what comes before it", f)
			continue
		}
		at += i
	}
	for _, want := range []string{"LEEME-BOLETAS.md", "Declarar avance", "FolioNotificacion", "EPR con 0 reparos y 0 rechazos", "LOK",
		"pe_avance1", "pfeInternet", "pdfdteInternet", "pe_avance7", "dtekit certificacion enviar --dir CARPETA", "dtekit certificacion simulacion"} {
		if !strings.Contains(text, want) {
			t.Errorf("LEEME.md does not say %q", want)
		}
	}
}
