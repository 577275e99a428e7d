package server

import (
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/sii/siitest"
)

// TestDecisionTextRefused: a decision's texts that its XML answer could
// not carry (a reason with NUL or a character outside ISO-8859-1, a
// receipt's recinto of 500 characters where Recibos_v10.xsd allows 80, or
// with a control character) are refused with a 400 naming the field
// before the SII's registry is called: the fake's registry sees no
// request, and the document stays pendiente. A reason that passes does
// reach the registry (the count is live). (SQLite: nothing is stored.)
func TestDecisionTextRefused(t *testing.T) {
	t.Parallel()
	f, fake := inboxFixture(t, billingtestSQLite(t))
	id, _ := f.emit(f.B, facturaTo(f.A.rut, 1))
	r := f.postXML(apiBase+"/recibidos", f.envioFrom(f.B, f.A.rut, id), f.A.writeHdr...)
	want(t, r, 201)
	var rec api.Recepcion
	r.JSON(t, &rec)
	doc := apiBase + "/recibidos/" + rec.Recibidos[0]
	for _, tc := range []struct {
		route, field string
		body         map[string]any
	}{
		{"/reclamar", "motivo", map[string]any{"motivo": "mercadería\x00dañada"}},
		{"/reclamar", "motivo", map[string]any{"tipo": "RFP", "motivo": "faltan 3 cajas ☃"}},
		{"/reclamar", "motivo", map[string]any{"motivo": "faltan\r\ncajas"}},
		{"/reclamar", "motivo", map[string]any{"motivo": strings.Repeat("x", 257)}},
		{"/recibo", "recinto", map[string]any{"recinto": strings.Repeat("Bodega central ", 34)[:500]}},
		{"/recibo", "recinto", map[string]any{"recinto": "Bodega\x00 2"}},
		{"/recibo", "recinto", map[string]any{"recinto": "Bodega 𝟚"}},
	} {
		r := f.do("POST", doc+tc.route, tc.body, f.A.writeHdr...)
		if r.Status != 400 || r.Code() != fault.Validation {
			t.Errorf("POST %s %q: %d %s, want 400 %s", tc.route, tc.body, r.Status, truncate(r.Body), fault.Validation)
			continue
		}
		var env api.ErrorResponse
		r.JSON(t, &env)
		if len(env.Details) != 1 || env.Details[0].Field != tc.field {
			t.Errorf("POST %s %q: %+v, want one detail on %s", tc.route, tc.body, env.Details, tc.field)
		}
	}
	if n := len(fake.Requests(siitest.RCVRegister)); n != 0 {
		t.Errorf("the registry saw %d requests for refused decisions, want none", n)
	}
	r = f.do("GET", doc, nil, f.A.readHdr...)
	want(t, r, 200)
	var d api.Recibido
	r.JSON(t, &d)
	if d.Estado != "pendiente" || d.Respuestas.Decision != nil || d.Respuestas.Recibo != nil {
		t.Errorf("after refused decisions: %s", truncate(r.Body))
	}
	// Latin-1 text of the maximum length passes to the registry.
	f.do("POST", doc+"/reclamar", map[string]any{"motivo": strings.Repeat("ñ", 256)}, f.A.writeHdr...)
	if n := len(fake.Requests(siitest.RCVRegister)); n != 1 {
		t.Errorf("the registry saw %d requests for a valid claim, want 1", n)
	}
}
