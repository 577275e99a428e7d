package api_test

import (
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte"
)

// TestDTETransitions checks the document's state machine against the
// table written out here from contract §3 and the mapping of the SII's
// answers (sii-domain-notes §6). Every pair of the eight states, and a
// value that is no state, is asked, so a missing or an extra arrow fails.
func TestDTETransitions(t *testing.T) {
	t.Parallel()
	const (
		borrador   = dte.Estado("borrador")
		generado   = dte.Estado("generado")
		firmado    = dte.Estado("firmado")
		enviando   = dte.Estado("enviando")
		procesando = dte.Estado("procesando")
		aceptado   = dte.Estado("aceptado")
		rechazado  = dte.Estado("rechazado")
		conReparos = dte.Estado("con_reparos")
	)
	allowed := map[dte.Estado]map[dte.Estado]bool{
		borrador:   {generado: true, firmado: true},
		generado:   {firmado: true},
		firmado:    {enviando: true}, // auto_send, or an envelope of held documents
		enviando:   {procesando: true, aceptado: true, rechazado: true, conReparos: true},
		procesando: {aceptado: true, rechazado: true, conReparos: true},
		aceptado:   {},
		rechazado:  {},
		conReparos: {},
	}
	states := []dte.Estado{borrador, generado, firmado, enviando, procesando, aceptado, rechazado, conReparos, "pendiente", ""}
	for _, from := range states {
		n := 0
		for _, to := range states {
			if got, want := api.DTECanBecome(from, to), allowed[from][to]; got != want {
				t.Errorf("DTECanBecome(%q, %q) = %v, want %v", from, to, got, want)
			}
			if allowed[from][to] {
				n++
			}
		}
		next := api.DTENext(from)
		if len(next) != n {
			t.Errorf("DTENext(%q) = %v, want %d states", from, next, n)
		}
		for _, to := range next {
			if !allowed[from][to] {
				t.Errorf("DTENext(%q) has %q", from, to)
			}
		}
		// A final state (dte.Estado.Final) moves nowhere, and only those.
		if from.Valid() && from.Final() != (n == 0) {
			t.Errorf("%q: Final() = %v but %d next states", from, from.Final(), n)
		}
	}
}
