package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/store"
)

// TestAmbientes: company A emits a factura to B in certificación and then
// moves to producción, where a production document of the same type and
// folio exists beside it (the SII numbers each environment from 1). B's
// acceptance of the certificación factura, uploaded by A, lands on that
// document (whose date and total it repeats), not on the production one
// of the same folio. The lists show the current environment (producción)
// unless asked for another (ambiente=certificacion|produccion|todos; any
// other value is a 400 naming the parameter), each document shows the
// environment it was emitted in, B never sees A's documents whatever the
// environment asked, and A's emission without a production CAF says so
// (409 NO_FOLIOS_AVAILABLE, detail CAF_NOT_REGISTERED).
func TestAmbientes(t *testing.T) {
	t.Parallel()
	f, _ := inboxFixture(t, billingtestSQLite(t))
	a, b := f.A, f.B
	ctx := context.Background()
	certID, _ := f.emit(a, facturaTo(b.rut, 1))
	cert, err := f.st.GetDTE(ctx, a.id, certID)
	if err != nil || cert.Ambiente != dte.AmbienteCertificacion {
		t.Fatalf("the certificación factura: %+v, %v", cert, err)
	}
	file := f.envioFrom(a, b.rut, certID)
	rec, err := intercambio.Receive(file, intercambio.Options{Empresa: b.rut, Verify: dte.VerifyOptions{Keys: f.creds.TrustedKeys}, CodEnvio: 1})
	if err != nil || !rec.Recibido() {
		t.Fatalf("B's reception of A's file: %v %+v", err, rec)
	}
	resultado, _, err := rec.Resultado(f.signingCert(), intercambio.AnswerOptions{IdRespuesta: 1, At: time.Now()},
		intercambio.Todos(intercambio.Decision{Estado: intercambio.DTEAceptadoOK}))
	if err != nil {
		t.Fatal(err)
	}

	// The move, and a production document of the same type and folio (the
	// same date, another total), as production folio 1 would be.
	emp, err := f.st.GetEmpresa(ctx, a.id)
	if err != nil {
		t.Fatal(err)
	}
	emp.Ambiente, emp.NumeroResolucion = dte.AmbienteProduccion, 80
	prod := &store.DTE{EmpresaID: a.id, Ambiente: dte.AmbienteProduccion, TipoDTE: cert.TipoDTE, Folio: cert.Folio,
		Estado: string(dte.EstadoFirmado), RutReceptor: cert.RutReceptor, RazonSocialReceptor: cert.RazonSocialReceptor,
		FechaEmision: cert.FechaEmision, MontoTotal: cert.MontoTotal + 1190, Request: cert.Request, Emisor: cert.Emisor,
		EmittedAt: cert.EmittedAt, Totals: cert.Totals}
	if err := f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.UpdateEmpresa(ctx, emp); err != nil {
			return err
		}
		return tx.InsertDTE(ctx, prod)
	}); err != nil {
		t.Fatal(err)
	}

	r := f.postXML(apiBase+"/respuestas", resultado, a.writeHdr...)
	want(t, r, 200)
	var out api.RespuestaRecibida
	r.JSON(t, &out)
	if !slices.Equal(out.DTEIDs, []string{certID}) {
		t.Errorf("B's acceptance changed %v, want the certificación factura %s only", out.DTEIDs, certID)
	}
	// The answer's file belongs to the environment of the document it
	// answers, though it came after the move.
	if out.Recepcion.Ambiente != dte.AmbienteCertificacion {
		t.Errorf("the answer's file is of %q, want certificacion (its document's)", out.Recepcion.Ambiente)
	}
	for id, answered := range map[string]bool{certID: true, prod.ID: false} {
		r := f.do("GET", apiBase+"/dte/"+id, nil, a.readHdr...)
		want(t, r, 200)
		var d api.DTE
		r.JSON(t, &d)
		if got := d.Intercambio != nil && d.Intercambio.Resultado != nil; got != answered {
			t.Errorf("document %s (%s): answered %v, want %v: %s", id, d.Ambiente, got, answered, r.Body)
		}
	}

	list := func(c company, query string) []api.DTE {
		t.Helper()
		r := f.do("GET", apiBase+"/dte"+query, nil, c.readHdr...)
		want(t, r, 200)
		var page struct {
			Items []api.DTE `json:"items"`
		}
		r.JSON(t, &page)
		return page.Items
	}
	ids := func(ds []api.DTE) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.ID+" "+d.Ambiente)
		}
		slices.Sort(out)
		return out
	}
	both := []string{certID + " certificacion", prod.ID + " produccion"}
	slices.Sort(both)
	for query, want := range map[string][]string{
		"":                         {prod.ID + " produccion"},
		"?ambiente=produccion":     {prod.ID + " produccion"},
		"?ambiente=certificacion":  {certID + " certificacion"},
		"?ambiente=todos&limit=10": both,
	} {
		if got := ids(list(a, query)); !slices.Equal(got, want) {
			t.Errorf("GET /dte%s lists %v, want %v", query, got, want)
		}
	}
	for _, path := range []string{"/dte", "/caf", "/envios"} {
		r := f.do("GET", apiBase+path+"?ambiente=Produccion", nil, a.readHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"ambiente INVALID_VALUE"}) {
			t.Errorf("GET %s?ambiente=Produccion: details %v", path, got)
		}
	}
	// A has certificación CAFs only: none in its current environment.
	for query, wantAny := range map[string]bool{"": false, "?ambiente=certificacion": true, "?ambiente=todos": true} {
		r := f.do("GET", apiBase+"/caf"+query, nil, a.readHdr...)
		want(t, r, 200)
		var page api.Page[api.CAF]
		r.JSON(t, &page)
		if (len(page.Data) > 0) != wantAny {
			t.Errorf("GET /caf%s lists %d CAFs", query, len(page.Data))
		}
		for _, c := range page.Data {
			if query == "?ambiente=certificacion" && c.Ambiente != dte.AmbienteCertificacion {
				t.Errorf("GET /caf%s lists a CAF of %s", query, c.Ambiente)
			}
		}
	}
	// B, with ambiente=todos, lists none of A's CAFs or envelopes.
	listed := func(c company, path string) map[string]bool {
		t.Helper()
		r := f.do("GET", apiBase+path, nil, c.readHdr...)
		want(t, r, 200)
		var page struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		r.JSON(t, &page)
		out := map[string]bool{}
		for _, d := range page.Data {
			out[d.ID] = true
		}
		return out
	}
	for _, path := range []string{"/caf?ambiente=todos", "/envios?ambiente=todos"} {
		mine := listed(a, path)
		for id := range listed(b, path) {
			if mine[id] {
				t.Errorf("B's GET %s lists A's %s", path, id)
			}
		}
	}
	if len(listed(a, "/caf?ambiente=todos")) == 0 {
		t.Error("A's GET /caf?ambiente=todos lists no CAF")
	}
	// B, in certificación, never sees A's documents.
	for _, query := range []string{"", "?ambiente=todos", "?ambiente=produccion"} {
		for _, d := range list(b, query) {
			if d.ID == certID || d.ID == prod.ID {
				t.Errorf("B's GET /dte%s lists A's document %s", query, d.ID)
			}
		}
	}

	// A emits in producción without a production CAF.
	r = f.do("POST", apiBase+"/dte", facturaTo(b.rut, 2), append(a.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 409, fault.NoFolios)
	if got := detailFields(t, r); !slices.Equal(got, []string{"tipo_dte CAF_NOT_REGISTERED"}) {
		t.Errorf("an emission without a production CAF: details %v: %s", got, r.Body)
	}
	var e struct{ Message string }
	r.JSON(t, &e)
	if e.Message != "no production CAF of tipo 33 is registered" {
		t.Errorf("an emission without a production CAF: %q", e.Message)
	}
}
