package cesion_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/cesion"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// TestCederRefusesBadRequests: what a caller asks is checked before
// anything is signed, every problem named by its field with a stable code.
func TestCederRefusesBadRequests(t *testing.T) {
	t.Parallel()
	f := fix(t)
	four := []*signer.Certificate{f.a.Cert, f.a.Cert, f.a.Cert, f.a.Cert}
	good := func() cesion.Cesion {
		return cesion.Cesion{Cedente: cesion.Parte{Email: "finanzas@nunoa.cl"}, Cesionario: factoring, Firmantes: []*signer.Certificate{f.a.Cert}}
	}
	cases := []struct {
		name  string
		tipo  dte.TipoDTE
		edit  func(*cesion.Cesion)
		field string
		code  dte.DetailCode
	}{
		{"boleta", 39, nil, "dte.tipo_dte", dte.CodeNotAllowed},
		{"nota de crédito", 61, nil, "dte.tipo_dte", dte.CodeNotAllowed},
		{"amount over the total", 33, func(c *cesion.Cesion) { c.Monto = 1 << 40 }, "monto", dte.CodeOutOfRange},
		{"negative amount", 33, func(c *cesion.Cesion) { c.Monto = -1 }, "monto", dte.CodeOutOfRange},
		{"due before issue", 33, func(c *cesion.Cesion) { c.UltimoVencimiento = "2003-04-01" }, "ultimo_vencimiento", dte.CodeOutOfRange},
		{"bad date", 33, func(c *cesion.Cesion) { c.UltimoVencimiento = "2026-02-30" }, "ultimo_vencimiento", dte.CodeInvalidFormat},
		{"email over 40 (the format's bound, stricter than the schema's 80)", 33, func(c *cesion.Cesion) {
			c.Cesionario.Email = strings.Repeat("a", 36) + "@x.cl"
		}, "cesionario.email", dte.CodeTooLong},
		{"not an email", 33, func(c *cesion.Cesion) { c.Cesionario.Email = "factoring" }, "cesionario.email", dte.CodeInvalidFormat},
		{"address over 60", 33, func(c *cesion.Cesion) { c.Cesionario.Direccion = strings.Repeat("x", 61) }, "cesionario.direccion", dte.CodeTooLong},
		{"address under 5", 33, func(c *cesion.Cesion) { c.Cesionario.Direccion = "Av 1" }, "cesionario.direccion", dte.CodeInvalidValue},
		{"cesionario RUT", 33, func(c *cesion.Cesion) { c.Cesionario.RUT = "96790240-4" }, "cesionario.rut", dte.CodeInvalidRUT},
		{"cedente not the emisor", 33, func(c *cesion.Cesion) { c.Cedente.RUT = rutB }, "cedente.rut", dte.CodeInvalidValue},
		{"ceding to oneself", 33, func(c *cesion.Cesion) { c.Cesionario.RUT = dtetestEmisor }, "cesionario.rut", dte.CodeInvalidValue},
		{"four signers", 33, func(c *cesion.Cesion) { c.Firmantes = four }, "firmantes", dte.CodeTooMany},
		{"no signer", 33, func(c *cesion.Cesion) { c.Firmantes = nil }, "firmantes", dte.CodeRequired},
		{"authorized table of another length", 33, func(c *cesion.Cesion) {
			c.Autorizados = []cesion.Autorizado{{RUT: signerF1, Nombre: "Uno"}, {RUT: signerF2, Nombre: "Dos"}}
		}, "autorizados", dte.CodeInvalidValue},
		{"authorized name over 40", 33, func(c *cesion.Cesion) {
			c.Autorizados = []cesion.Autorizado{{RUT: signerF1, Nombre: strings.Repeat("n", 41)}}
		}, "autorizados[0].nombre", dte.CodeTooLong},
		{"declaration over 512", 33, func(c *cesion.Cesion) { c.DeclaracionJurada = strings.Repeat("d", 513) }, "declaracion_jurada", dte.CodeTooLong},
		{"text outside ISO-8859-1", 33, func(c *cesion.Cesion) { c.OtrasCondiciones = "pago en ☃" }, "otras_condiciones", dte.CodeNotLatin1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req := good()
			if c.edit != nil {
				c.edit(&req)
			}
			_, err := cesion.Ceder(cesion.Cedido{DTE: f.docs[c.tipo], Firmante: f.a.Cert}, req, cesion.Options{At: f.at})
			var ve *dte.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a validation error on %s", err, c.field)
			}
			for _, d := range ve.Details {
				if d.Field == c.field && d.Code == c.code && d.Message != "" {
					return
				}
			}
			t.Errorf("%v: no %s on %s", err, c.code, c.field)
		})
	}
}

// TestChainOfForty: a document re-ceded back and forth reaches 40
// cesiones, which Verify accepts; the 41st is refused by Receder.
func TestChainOfForty(t *testing.T) {
	t.Parallel()
	f := fix(t)
	aec, _ := base(t)
	parties := []cesion.Parte{factoring, segundo}
	for n := 2; n <= cesion.MaxCesiones; n++ {
		var err error
		aec, err = cesion.Receder(aec, cesion.Cesion{Cesionario: parties[(n+1)%2], Firmantes: []*signer.Certificate{f.f1}}, cesion.Options{At: f.at})
		if err != nil {
			t.Fatalf("cesión %d: %v", n, err)
		}
	}
	rep, err := cesion.Verify(aec, f.opts(cesion.PolicyStrict))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cesiones) != cesion.MaxCesiones || rep.Cesiones[39].Seq != 40 || rep.RutCesionario != segundo.RUT {
		t.Errorf("%d cesiones, last seq %d, carátula cesionario %s", len(rep.Cesiones), rep.Cesiones[39].Seq, rep.RutCesionario)
	}
	_, err = cesion.Receder(aec, cesion.Cesion{Cesionario: factoring, Firmantes: []*signer.Certificate{f.f1}}, cesion.Options{At: f.at})
	var ve *dte.ValidationError
	if !errors.As(err, &ve) || ve.Details[0].Field != "cesiones" || ve.Details[0].Code != dte.CodeTooMany {
		t.Errorf("41st cesión: %v, want TOO_MANY on cesiones", err)
	}
	// A re-cession by someone who is not the last cesionario.
	_, err = cesion.Receder(aec, cesion.Cesion{Cedente: factoring, Cesionario: segundo, Firmantes: []*signer.Certificate{f.f1}}, cesion.Options{At: f.at})
	if !errors.As(err, &ve) {
		t.Errorf("re-cession by the wrong cedente: %v", err)
	}
}
