package api_test

import (
	"slices"
	"testing"

	"github.com/dtekit/dtekit/api"
)

// The transition tables below are written out by hand from the OpenAPI
// document (server/openapi.yaml: Recibido.estado, Correo.estado, the
// decisions on /recibidos/{id}/aceptar, /reclamar and /recibo, and the
// mail settings' buzon), not computed from the package.

// machine is what the tests ask of a state type.
type machine[S ~string] interface {
	Valid() bool
	Next() []S
	CanBecome(S) bool
}

// checkTable checks that states are exactly the keys of want, valid, and
// that each moves to exactly the states want lists for it.
func checkTable[S interface {
	~string
	machine[S]
}](t *testing.T, states []S, want map[string][]string) {
	t.Helper()
	if len(states) != len(want) {
		t.Fatalf("%d states, want %d", len(states), len(want))
	}
	for _, from := range states {
		next, ok := want[string(from)]
		if !ok {
			t.Fatalf("state %q is not the contract's", from)
		}
		if !from.Valid() {
			t.Errorf("%q is not valid", from)
		}
		got := []string{}
		for _, n := range from.Next() {
			got = append(got, string(n))
		}
		if !slices.Equal(got, next) {
			t.Errorf("%s.Next() = %v, want %v", from, got, next)
		}
		for _, to := range states {
			if can := from.CanBecome(to); can != slices.Contains(next, string(to)) {
				t.Errorf("%s.CanBecome(%s) = %v", from, to, can)
			}
		}
	}
}

// TestRecibidoTransitions: a received document is recorded pendiente or
// rechazado; only a pendiente one is decided, into aceptado (ACD, or a
// receipt of goods, ERM) or reclamado (RCD, RFP, RFT); a decided or
// refused one stays as it is (a receipt after an acceptance leaves it
// aceptado, and a claim after either is refused with 409).
func TestRecibidoTransitions(t *testing.T) {
	t.Parallel()
	checkTable(t, []api.EstadoRecibido{api.RecibidoPendiente, api.RecibidoAceptado, api.RecibidoReclamado, api.RecibidoRechazado},
		map[string][]string{
			"pendiente": {"aceptado", "reclamado"},
			"aceptado":  {},
			"reclamado": {},
			"rechazado": {},
		})
	for _, bad := range []api.EstadoRecibido{"", "Pendiente", "aceptada", "reclamada"} {
		if bad.Valid() || len(bad.Next()) != 0 || bad.CanBecome(api.RecibidoAceptado) {
			t.Errorf("%q is taken for a state", bad)
		}
	}
	// Next hands out a copy: changing it leaves the table as it is.
	n := api.RecibidoPendiente.Next()
	n[0] = api.RecibidoRechazado
	if api.RecibidoPendiente.CanBecome(api.RecibidoRechazado) {
		t.Error("Next gave away the table")
	}
}

// TestCorreoTransitions: a mail is queued pendiente (retries keep it
// so) and ends enviado or fallido; sin_direccion and sin_remitente are
// recorded as they are, never sent; sending again is a new mail.
func TestCorreoTransitions(t *testing.T) {
	t.Parallel()
	checkTable(t, []api.EstadoCorreo{api.CorreoPendiente, api.CorreoEnviado, api.CorreoFallido, api.CorreoSinDireccion, api.CorreoSinRemitente},
		map[string][]string{
			"pendiente":     {"enviado", "fallido"},
			"enviado":       {},
			"fallido":       {},
			"sin_direccion": {},
			"sin_remitente": {},
		})
	if api.EstadoCorreo("en_cola").Valid() || api.EstadoCorreo("").Valid() {
		t.Error("an answer's correo_estado taken for a mail's state")
	}
}

// TestBuzonTransitions: a mailbox is sin_leer until a read is tried, then
// each read's outcome sets al_dia or fallando.
func TestBuzonTransitions(t *testing.T) {
	t.Parallel()
	checkTable(t, []api.EstadoLectura{api.BuzonSinLeer, api.BuzonAlDia, api.BuzonFallando},
		map[string][]string{
			"sin_leer": {"al_dia", "fallando"},
			"al_dia":   {"fallando"},
			"fallando": {"al_dia"},
		})
	if api.EstadoLectura("nunca").Valid() {
		t.Error("an unknown state is valid")
	}
}

// TestCesionTransitions: a cesión is recorded pendiente; the registry's
// track id makes it enviada, its refusal rechazada; an upload whose answer
// was lost and which the registry shows recorded goes from pendiente to
// aceptada; enviada ends aceptada (EOK) or rechazada; both are final.
func TestCesionTransitions(t *testing.T) {
	t.Parallel()
	checkTable(t, []api.EstadoCesion{api.CesionPendiente, api.CesionEnviada, api.CesionAceptada, api.CesionRechazada},
		map[string][]string{
			"pendiente": {"enviada", "aceptada", "rechazada"},
			"enviada":   {"aceptada", "rechazada"},
			"aceptada":  {},
			"rechazada": {},
		})
	for _, bad := range []api.EstadoCesion{"", "Pendiente", "aceptado", "cedido"} {
		if bad.Valid() || len(bad.Next()) != 0 || bad.CanBecome(api.CesionAceptada) || bad.Final() {
			t.Errorf("%q is taken for a state", bad)
		}
	}
	if api.CesionPendiente.Final() || api.CesionEnviada.Final() || !api.CesionAceptada.Final() || !api.CesionRechazada.Final() {
		t.Error("Final differs from the table's final states")
	}
}
