package server

import (
	"net/url"
	"slices"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// TestCatalogSearchSpanish: GET /clientes/search and /productos/search
// find Spanish names whatever the case and accents typed, on both
// backends (issue 29, point 7: SQLite's lower() folds ASCII only, so
// ÑUÑOA, Ñires and Árboles were not found), and never another company's.
func TestCatalogSearchSpanish(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f := newFixture(t, open(t), RateLimit{PerSecond: -1})
		clientes := map[string]string{} // razon_social → id
		for rut, name := range map[string]string{
			"11111111-1": "Comercial ÑUÑOA Ltda",
			"22222222-2": "Ñires del Sur SpA",
			"33333333-3": "Árboles y Jardines EIRL",
			"44444444-4": "Panadería Ñandú",
		} {
			r := f.do("POST", apiBase+"/clientes", map[string]any{"rut": rut, "razon_social": name}, f.A.writeHdr...)
			want(t, r, 201)
			var c struct{ ID string }
			r.JSON(t, &c)
			clientes[name] = c.ID
			// The other company holds the same names.
			want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": rut, "razon_social": name}, f.B.writeHdr...), 201)
		}
		var piñon struct{ ID string }
		r := f.do("POST", apiBase+"/productos", map[string]any{"codigo": "AÑO-1", "nombre": "Piñón de ÁRBOL", "precio_unitario": 990}, f.A.writeHdr...)
		want(t, r, 201)
		r.JSON(t, &piñon)

		search := func(what, q string) []string {
			t.Helper()
			r := f.do("GET", apiBase+"/"+what+"/search?q="+url.QueryEscape(q), nil, f.A.readHdr...)
			want(t, r, 200)
			var page struct {
				Data       []struct{ ID string }
				TotalCount int `json:"total_count"`
			}
			r.JSON(t, &page)
			var ids []string
			for _, d := range page.Data {
				ids = append(ids, d.ID)
			}
			if page.TotalCount != len(ids) {
				t.Errorf("search %s %q: total_count %d, %d listed", what, q, page.TotalCount, len(ids))
			}
			return ids
		}
		for q, name := range map[string]string{
			"ÑUÑOA": "Comercial ÑUÑOA Ltda", "ñuñoa": "Comercial ÑUÑOA Ltda", "Nunoa": "Comercial ÑUÑOA Ltda",
			"Ñires": "Ñires del Sur SpA", "ÑIRES": "Ñires del Sur SpA", "nires": "Ñires del Sur SpA",
			"Árboles": "Árboles y Jardines EIRL", "árboles": "Árboles y Jardines EIRL", "ARBOLES": "Árboles y Jardines EIRL",
			"PANADERÍA ÑANDÚ": "Panadería Ñandú", "panaderia nandu": "Panadería Ñandú",
		} {
			if got := search("clientes", q); !slices.Equal(got, []string{clientes[name]}) {
				t.Errorf("clientes/search?q=%s: %v, want %s (%s)", q, got, clientes[name], name)
			}
		}
		for _, q := range []string{"PIÑÓN", "pinon", "árbol", "año-1", "ANO"} {
			if got := search("productos", q); !slices.Equal(got, []string{piñon.ID}) {
				t.Errorf("productos/search?q=%s: %v, want %s", q, got, piñon.ID)
			}
		}
	})
}
