package certificacion

import (
	"strings"
	"sync"

	"github.com/dtekit/dtekit/aduana"
)

// The export sets write customs data by name ("CALDERA", "COBRANZA",
// "PALLETS"); the DTE carries codes. The index below reads the names back
// to codes from package aduana's tables, comparing folded text (case and
// accents dropped, spaces around '/' ignored), and answers only when
// exactly one code fits: a name two codes share is not guessed.

// maxCustomsCode bounds the scan of the tables (every code is below it).
const maxCustomsCode = 10000

type customsIndex struct {
	paises, puertos, vias, modalidades, formasPago, unidades, bultos map[string][]int
}

var customs = sync.OnceValue(func() *customsIndex {
	ix := &customsIndex{
		paises: map[string][]int{}, puertos: map[string][]int{}, vias: map[string][]int{},
		modalidades: map[string][]int{}, formasPago: map[string][]int{}, unidades: map[string][]int{}, bultos: map[string][]int{},
	}
	add := func(m map[string][]int, code int, names ...string) {
		for _, n := range names {
			if n == "" {
				continue
			}
			k := customsKey(n)
			if l := m[k]; len(l) == 0 || l[len(l)-1] != code {
				m[k] = append(m[k], code)
			}
		}
	}
	for code := 1; code < maxCustomsCode; code++ {
		if n, ok := aduana.Pais(code); ok {
			add(ix.paises, code, n)
		}
		if n, ok := aduana.Puerto(code); ok {
			add(ix.puertos, code, n)
		}
		if n, ok := aduana.ViaTransporte(code); ok {
			add(ix.vias, code, n)
		}
		if n, ok := aduana.ModalidadVenta(code); ok {
			add(ix.modalidades, code, n)
		}
		if s, d, ok := aduana.FormaPagoExportacion(code); ok {
			add(ix.formasPago, code, s, d)
		}
		if s, _, ok := aduana.UnidadMedida(code); ok {
			add(ix.unidades, code, s)
		}
		if s, n, ok := aduana.TipoBulto(code); ok {
			add(ix.bultos, code, s, n)
		}
	}
	return ix
})

// customsKey folds a name for the index.
func customsKey(s string) string {
	s = fold(s)
	s = strings.ReplaceAll(s, " / ", "/")
	s = strings.ReplaceAll(s, "/ ", "/")
	return strings.ReplaceAll(s, " /", "/")
}

// lookup returns the one code m gives name; prefer, when set, breaks a tie
// between codes (a Chilean port of embarkation).
func lookup(m map[string][]int, name string, prefer func(int) bool) (int, bool) {
	codes := m[customsKey(name)]
	if len(codes) > 1 && prefer != nil {
		var kept []int
		for _, c := range codes {
			if prefer(c) {
				kept = append(kept, c)
			}
		}
		codes = kept
	}
	if len(codes) != 1 {
		return 0, false
	}
	return codes[0], true
}

func chileanPort(code int) bool { return code >= 901 && code <= 999 }
func foreignPort(code int) bool { return !chileanPort(code) }
