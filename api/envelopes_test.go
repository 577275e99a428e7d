package api_test

import (
	"testing"

	"github.com/dtekit/dtekit/api"
)

// TestEnvioTransitions checks the envelope's state machine against the
// table written out here from the OpenAPI document's description of
// Envio.estado and the submission's steps: every pair of the four states
// (and a value that is no state) is asked, so a missing or an extra arrow
// fails.
func TestEnvioTransitions(t *testing.T) {
	t.Parallel()
	const (
		pendiente  = api.EstadoEnvio("pendiente")
		enviando   = api.EstadoEnvio("enviando")
		procesando = api.EstadoEnvio("procesando")
		procesado  = api.EstadoEnvio("procesado")
	)
	// allowed[from][to]: the arrows, by hand.
	allowed := map[api.EstadoEnvio]map[api.EstadoEnvio]bool{
		pendiente:  {enviando: true},                    // the upload is marked before it is made
		enviando:   {procesando: true, procesado: true}, // a track id; or refused / settled
		procesando: {procesado: true},                   // every document final
		procesado:  {},
	}
	if api.EnvioPendiente != pendiente || api.EnvioEnviando != enviando || api.EnvioProcesando != procesando || api.EnvioProcesado != procesado {
		t.Fatal("the constants do not spell the contract's states")
	}
	states := []api.EstadoEnvio{pendiente, enviando, procesando, procesado, "reintentar", ""}
	for _, from := range states {
		if got, want := from.Valid(), allowed[from] != nil; got != want {
			t.Errorf("%q.Valid() = %v, want %v", from, got, want)
		}
		n := 0
		for _, to := range states {
			if got, want := from.CanBecome(to), allowed[from][to]; got != want {
				t.Errorf("%q.CanBecome(%q) = %v, want %v", from, to, got, want)
			}
			if allowed[from][to] {
				n++
			}
		}
		next := from.Next()
		if len(next) != n {
			t.Errorf("%q.Next() = %v, want %d states", from, next, n)
		}
		for _, to := range next {
			if !allowed[from][to] {
				t.Errorf("%q.Next() has %q", from, to)
			}
		}
	}
	// Next returns a copy: changing it does not change the table.
	if n := api.EnvioPendiente.Next(); len(n) == 1 {
		n[0] = api.EnvioProcesado
		if api.EnvioPendiente.CanBecome(api.EnvioProcesado) {
			t.Error("Next shares the table")
		}
	}
}
