package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/email/emailtest"
	"github.com/dtekit/dtekit/intercambio"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
	"github.com/dtekit/dtekit/store"
)

// facturaTo is factura(n) addressed to the company with RUT rut.
func facturaTo(rut string, n int) map[string]any {
	req := factura(n)
	req["receptor"].(map[string]any)["rut"] = rut
	return req
}

// signingCert opens the fixture's signing certificate (every company of
// the fixture signs with it).
func (f *fixture) signingCert() *signer.Certificate {
	f.t.Helper()
	cert, err := signer.Load(f.creds.P12, f.creds.Password)
	if err != nil {
		f.t.Fatal(err)
	}
	return cert
}

// envioFrom packs documents company from emitted into an EnvioDTE
// addressed to the company with RUT receptor, signed as from would sign
// it: the file a supplier mails its customer.
func (f *fixture) envioFrom(from company, receptor string, ids ...string) []byte {
	f.t.Helper()
	var docs [][]byte
	for _, id := range ids {
		x, err := f.b.Documents.XML(context.Background(), from.id, id)
		if err != nil {
			f.t.Fatal(err)
		}
		docs = append(docs, x)
	}
	em := f.creds.Emisor
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: dte.Emisor{Rut: from.rut, FechaResolucion: em.FechaResolucion,
		NumeroResolucion: em.NumeroResolucion}, RutReceptor: receptor}, f.signingCert(), docs...)
	if err != nil {
		f.t.Fatal(err)
	}
	return env
}

// postXML sends an XML body.
func (f *fixture) postXML(target string, body []byte, hdr ...string) *response {
	f.t.Helper()
	req := newReq("POST", target, body, hdr...)
	req.Header.Set("Content-Type", "application/xml")
	return f.tt.do(req)
}

// inboxFixture is a fixture whose service speaks to a fake SII (its
// registry knows any signer) with its runner started, mail retried only
// hourly so that no test waits on a send.
func inboxFixture(t *testing.T, st store.Store) (*fixture, *siitest.Fake) {
	t.Helper()
	fake := newFake(t)
	f := submitting(t, st, billing.Config{Mail: billing.MailConfig{Backoff: []time.Duration{time.Hour}, AllowLoopback: true, AnyPort: true}}, fake)
	return f, fake
}

// TestRecibidos, on both backends: company B (a supplier) emits four
// facturas to company A and one to another RUT; A uploads the EnvioDTE
// and then works its inbox through every route: intake (201, then 200
// with duplicado for the same bytes), garbage recorded as rechazada with
// its report, the list and its filters, the document, its XML as received
// and its PDF, the registry's refresh (window and days left from the
// fake's reception date), accept, both claims and the receipt of goods
// registered in the fake registry, refusals naming their fields, and the
// received files.
func TestRecibidos(t *testing.T) {
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f, fake := inboxFixture(t, open(t))
		a, b := f.A, f.B
		var ids []string
		for i := range 4 {
			id, _ := f.emit(b, facturaTo(a.rut, i+1))
			ids = append(ids, id)
		}
		file := f.envioFrom(b, a.rut, ids...)

		// Intake.
		want(t, f.postXML(apiBase+"/recibidos", file, a.readHdr...), 403, fault.WriteNotAllowed)
		r := f.postXML(apiBase+"/recibidos?correo_emisor=facturacion@proveedor.cl", file, a.writeHdr...)
		want(t, r, 201)
		var rec api.Recepcion
		r.JSON(t, &rec)
		if rec.Estado != "conforme" || rec.Origen != "upload" || rec.Duplicado || len(rec.Recibidos) != 4 ||
			rec.Remitente == nil || *rec.Remitente != "facturacion@proveedor.cl" {
			t.Fatalf("the reception: %s", r.Body)
		}
		recibidos := rec.Recibidos
		// The same bytes again: the first reception, 200.
		r = f.postXML(apiBase+"/recibidos", file, a.writeHdr...)
		want(t, r, 200)
		var again api.Recepcion
		r.JSON(t, &again)
		if again.ID != rec.ID || !again.Duplicado || !slices.Equal(again.Recibidos, recibidos) {
			t.Errorf("the same file again: %s, want reception %s duplicado with %v", r.Body, rec.ID, recibidos)
		}
		// text/xml is the XML too.
		req := newReq("POST", apiBase+"/recibidos", file, a.writeHdr...)
		req.Header.Set("Content-Type", "text/xml; charset=ISO-8859-1")
		want(t, f.tt.do(req), 200)
		// Garbage is recorded, refused, with its report; never a 500.
		for _, junk := range []string{"<EnvioDTE><SetDTE/></EnvioDTE>", "no es XML", "<?xml version=\"1.0\"?><a><b></a>"} {
			r = f.postXML(apiBase+"/recibidos", []byte(junk), a.writeHdr...)
			want(t, r, 201)
			var bad api.Recepcion
			r.JSON(t, &bad)
			if bad.Estado != "rechazada" || string(bad.Reporte) == "null" || len(bad.Reporte) == 0 {
				t.Errorf("%q: %s, want a rechazada reception with its report", junk, r.Body)
			}
		}
		// A file for another company: recorded, its document rechazado.
		other, _ := f.emit(b, facturaTo("76086428-5", 5))
		r = f.postXML(apiBase+"/recibidos", f.envioFrom(b, "76086428-5", other), a.writeHdr...)
		want(t, r, 201)
		var misaddressed api.Recepcion
		r.JSON(t, &misaddressed)
		if misaddressed.Estado != "rechazada" {
			t.Errorf("a file addressed to another company: %s", r.Body)
		}
		// The body's form and size.
		req = newReq("POST", apiBase+"/recibidos", file, a.writeHdr...)
		want(t, f.tt.do(req), 415, fault.UnsupportedMediaType)
		r = f.postXML(apiBase+"/recibidos", []byte("  \n"), a.writeHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{"$ REQUIRED"}) {
			t.Errorf("an empty body: details %v", got)
		}
		big := bytes.Repeat([]byte(" "), billing.MaxRecibidoBytes+1)
		want(t, f.postXML(apiBase+"/recibidos", big, a.writeHdr...), 413, fault.PayloadTooLarge)
		req = newReq("POST", apiBase+"/recibidos", big, a.writeHdr...)
		req.Header.Set("Content-Type", "application/xml")
		req.ContentLength = -1 // streamed: the limit stops the read
		want(t, f.tt.do(req), 413, fault.PayloadTooLarge)
		r = f.postXML(apiBase+"/recibidos?correo_emisor=no-es-correo", file, a.writeHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); len(got) != 1 || !strings.HasPrefix(got[0], "correo_emisor ") {
			t.Errorf("a bad correo_emisor: details %v", got)
		}
		want(t, f.postXML(apiBase+"/recibidos?correo=x@y.cl", file, a.writeHdr...), 400, fault.Validation)

		// The list and its filters.
		list := func(query string) api.Page[api.Recibido] {
			t.Helper()
			r := f.do("GET", apiBase+"/recibidos"+query, nil, a.readHdr...)
			want(t, r, 200)
			var p api.Page[api.Recibido]
			r.JSON(t, &p)
			return p
		}
		page := list("?estado=pendiente")
		if page.TotalCount != 4 || len(page.Data) != 4 || string(page.Data[0].Verificacion) != "null" {
			t.Fatalf("the pending documents: %+v", page)
		}
		for _, d := range page.Data {
			if d.RutEmisor != b.rut || d.TipoDTE != 33 || d.RazonSocialEmisor != "Empresa B de Prueba" || d.PlazoVence != nil ||
				d.DiasRestantes != nil || d.CorreoEmisor == nil || *d.CorreoEmisor != "facturacion@proveedor.cl" {
				t.Errorf("a pending document: %+v", d)
			}
		}
		if p := list("?estado=rechazado"); p.TotalCount != 1 {
			t.Errorf("rejected documents: %d, want the misaddressed one", p.TotalCount)
		}
		if p := list("?rut_emisor=" + strings.ReplaceAll(b.rut, "-", "") + "&tipo_dte=33&limit=3"); p.TotalCount != 5 || len(p.Data) != 3 || p.NextCursor == nil {
			t.Errorf("B's facturas, 3 a page: total %d, %d on the page, cursor %v", p.TotalCount, len(p.Data), p.NextCursor)
		} else if p2 := list("?rut_emisor=" + b.rut + "&tipo_dte=33&limit=3&cursor=" + *p.NextCursor); len(p2.Data) != 2 || p2.NextCursor != nil {
			t.Errorf("the second page: %+v", p2)
		}
		today := time.Now().Format(time.DateOnly)
		if p := list("?fecha_desde=" + today + "&fecha_hasta=" + today); p.TotalCount != 5 {
			t.Errorf("documents issued today: %d", p.TotalCount)
		}
		if p := list("?fecha_hasta=2020-01-01"); p.TotalCount != 0 {
			t.Errorf("documents issued before 2020: %d", p.TotalCount)
		}
		if p := list("?dias_restantes=30"); p.TotalCount != 0 {
			t.Errorf("documents with a known window before the refresh: %d", p.TotalCount)
		}
		for _, tc := range []struct{ query, want string }{
			{"?estado=archivado", "estado INVALID_VALUE"},
			{"?tipo_dte=99", "tipo_dte INVALID_VALUE"},
			{"?dias_restantes=tres", "dias_restantes INVALID_VALUE"},
			{"?dias_restantes=366", "dias_restantes OUT_OF_RANGE"},
			{"?rut_emisor=1-2", "rut_emisor INVALID_RUT"},
			{"?fecha_desde=ayer", "fecha_desde INVALID_VALUE"},
			{"?limit=0", "limit INVALID_VALUE"},
			{"?folio=1", "folio UNKNOWN_FIELD"},
		} {
			r := f.do("GET", apiBase+"/recibidos"+tc.query, nil, a.readHdr...)
			want(t, r, 400, fault.Validation)
			if got := detailFields(t, r); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("%s: details %v, want %s", tc.query, got, tc.want)
			}
		}

		// One document, its XML as received and its PDF.
		r = f.do("GET", apiBase+"/recibidos/"+recibidos[0], nil, a.readHdr...)
		want(t, r, 200)
		var one api.Recibido
		r.JSON(t, &one)
		if one.Estado != "pendiente" || one.Folio != 1 || one.RecepcionID != rec.ID || len(one.Verificacion) < 10 {
			t.Errorf("the first document: %s", r.Body)
		}
		r = f.do("GET", apiBase+"/recibidos/"+recibidos[0]+"/xml", nil, a.readHdr...)
		want(t, r, 200)
		wantDownloadHeaders(t, "recibido XML", r)
		// The envelope's declaration, then the <DTE> element B signed, byte
		// for byte as it stood in the file.
		emitted, _ := f.b.Documents.XML(context.Background(), b.id, ids[0])
		decl, element, _ := bytes.Cut(r.Body, []byte("?>\n"))
		if !bytes.HasPrefix(file, append(decl, "?>"...)) || !bytes.HasPrefix(element, []byte("<DTE")) ||
			!bytes.HasSuffix(element, []byte("</DTE>")) || !bytes.Contains(emitted, element) || !bytes.Contains(file, element) {
			t.Errorf("the XML received is not the envelope's declaration and the <DTE> B signed: %.200s", r.Body)
		}
		if _, err := dte.ParseDTE(r.Body); err != nil {
			t.Errorf("the XML received does not read as a document of its own: %v", err)
		}
		r = f.do("GET", apiBase+"/recibidos/"+recibidos[0]+"/pdf", nil, a.readHdr...)
		want(t, r, 200)
		wantDownloadHeaders(t, "recibido PDF", r)
		if !bytes.HasPrefix(r.Body, []byte("%PDF-")) {
			t.Errorf("the PDF starts %q", r.Body[:min(len(r.Body), 8)])
		}
		rejected := list("?estado=rechazado").Data[0]
		want(t, f.do("GET", apiBase+"/recibidos/"+rejected.ID+"/pdf", nil, a.readHdr...), 409, fault.InvalidState)
		want(t, f.do("GET", apiBase+"/recibidos/"+newUUID(), nil, a.readHdr...), 404, fault.NotFound)
		want(t, f.do("GET", apiBase+"/recibidos/actualizar", nil, a.readHdr...), 404, fault.NotFound)

		// The registry: the SII received them 2 days and 1 hour ago, so
		// 8 days after that leaves 5 days and 23 hours: 5 whole days.
		received := time.Now().Add(-(2*24 + 1) * time.Hour)
		for i := range 4 {
			fake.SeedRCV(siitest.RCVSeed{RutEmisor: b.rut, RutReceptor: a.rut, Tipo: 33, Folio: int64(i + 1), Received: received, FmaPago: 2})
		}
		want(t, f.do("POST", apiBase+"/recibidos/actualizar", nil, a.readHdr...), 403, fault.WriteNotAllowed)
		want(t, f.do("POST", apiBase+"/recibidos/actualizar", map[string]any{"ahora": true}, a.writeHdr...), 400, fault.Validation)
		r = f.do("POST", apiBase+"/recibidos/actualizar", nil, a.writeHdr...)
		want(t, r, 200)
		r = f.do("GET", apiBase+"/recibidos/"+recibidos[0], nil, a.readHdr...)
		r.JSON(t, &one)
		wantEnd := received.Add(8 * 24 * time.Hour).Truncate(time.Second)
		if one.FechaRecepcionSII == nil || one.PlazoVence == nil || one.PlazoVence.Sub(wantEnd).Abs() > time.Second ||
			one.DiasRestantes == nil || *one.DiasRestantes != 5 || one.RCV == nil {
			t.Errorf("after the refresh: %s, want the window ending %s with 5 days left", r.Body, wantEnd)
		}
		// The window closes on the 5th or 6th day from today (Chile's
		// calendar): within 7 days, not within 3.
		if p := list("?dias_restantes=7"); p.TotalCount != 4 {
			t.Errorf("windows closing within 7 days: %d, want 4", p.TotalCount)
		}
		if p := list("?dias_restantes=3"); p.TotalCount != 0 {
			t.Errorf("windows closing within 3 days: %d, want 0", p.TotalCount)
		}

		// Decisions.
		decide := func(id, action string, body any, hdr []string) *response {
			t.Helper()
			return f.do("POST", apiBase+"/recibidos/"+id+"/"+action, body, hdr...)
		}
		want(t, decide(recibidos[0], "aceptar", nil, a.readHdr), 403, fault.WriteNotAllowed)
		want(t, decide(recibidos[0], "aceptar", map[string]any{"motivo": "x"}, a.writeHdr), 400, fault.Validation)
		r = decide(recibidos[0], "aceptar", nil, a.writeHdr)
		want(t, r, 200)
		r.JSON(t, &one)
		if one.Estado != "aceptado" || one.Respuestas.Decision == nil || one.Respuestas.Decision.Accion != "ACD" ||
			one.Respuestas.Decision.RCVCodigo == nil || *one.Respuestas.Decision.RCVCodigo != 0 {
			t.Errorf("accepted: %s", r.Body)
		}
		r = decide(recibidos[0], "aceptar", map[string]any{}, a.writeHdr)
		want(t, r, 409, fault.InvalidState)
		want(t, decide(recibidos[0], "reclamar", map[string]any{"motivo": "tarde"}, a.writeHdr), 409, fault.InvalidState)
		want(t, decide(rejected.ID, "aceptar", nil, a.writeHdr), 409, fault.InvalidState)

		for _, tc := range []struct {
			body any
			want []string
		}{
			{map[string]any{}, []string{"motivo REQUIRED"}},
			{map[string]any{"tipo": "RCD", "motivo": ""}, []string{"motivo REQUIRED"}},
			{map[string]any{"tipo": "ACD", "motivo": "x"}, []string{"tipo INVALID_VALUE"}},
			{map[string]any{"tipo": "ERM", "motivo": "x"}, []string{"tipo INVALID_VALUE"}},
			{map[string]any{"motivo": strings.Repeat("ñ", 257)}, []string{"motivo TOO_LONG"}},
			{map[string]any{"motivo": "x", "razon": "y"}, []string{"razon UNKNOWN_FIELD"}},
			{map[string]any{"motivo": 5}, []string{"motivo INVALID_TYPE"}},
		} {
			r := decide(recibidos[1], "reclamar", tc.body, a.writeHdr)
			want(t, r, 400, fault.Validation)
			if got := detailFields(t, r); !slices.Equal(got, tc.want) {
				t.Errorf("claim %v: details %v, want %v", tc.body, got, tc.want)
			}
		}
		r = decide(recibidos[1], "reclamar", map[string]any{"tipo": "RFP", "motivo": "Faltan 3 cajas"}, a.writeHdr)
		want(t, r, 200)
		r.JSON(t, &one)
		if one.Estado != "reclamado" || one.Respuestas.Decision == nil || one.Respuestas.Decision.Accion != "RFP" || one.Respuestas.Decision.Motivo != "Faltan 3 cajas" {
			t.Errorf("claimed RFP: %s", r.Body)
		}
		r = decide(recibidos[2], "reclamar", map[string]any{"motivo": "Precio distinto al convenido"}, a.writeHdr)
		want(t, r, 200)
		r.JSON(t, &one)
		if one.Estado != "reclamado" || one.Respuestas.Decision.Accion != "RCD" {
			t.Errorf("claimed with the default tipo: %s", r.Body)
		}
		want(t, decide(recibidos[2], "recibo", nil, a.writeHdr), 409, fault.InvalidState)
		want(t, decide(recibidos[3], "recibo", map[string]any{"lugar": "x"}, a.writeHdr), 400, fault.Validation)
		r = decide(recibidos[3], "recibo", map[string]any{"recinto": "Bodega 4, Quilicura"}, a.writeHdr)
		want(t, r, 200)
		r.JSON(t, &one)
		if one.Estado != "aceptado" || !one.MercaderiasRecibidas || one.Respuestas.Recibo == nil || one.Respuestas.Recibo.Accion != "ERM" {
			t.Errorf("goods received: %s", r.Body)
		}
		want(t, decide(recibidos[3], "recibo", nil, a.writeHdr), 409, fault.InvalidState)
		// The registry holds each decision, once.
		for i, wantAction := range []sii.RCVAction{sii.RCVAccept, sii.RCVClaimPartial, sii.RCVClaimContent, sii.RCVReceipt} {
			var got []sii.RCVAction
			for _, e := range fake.RCVHistory(b.rut, 33, int64(i+1)) {
				got = append(got, e.Action)
			}
			if !slices.Equal(got, []sii.RCVAction{wantAction}) {
				t.Errorf("folio %d: the registry holds %v, want %s", i+1, got, wantAction)
			}
		}
		if p := list("?estado=pendiente"); p.TotalCount != 0 {
			t.Errorf("%d documents still pending", p.TotalCount)
		}
		want(t, decide(newUUID(), "aceptar", nil, a.writeHdr), 404, fault.NotFound)

		// Received files.
		r = f.do("GET", apiBase+"/recepciones?limit=2", nil, a.readHdr...)
		want(t, r, 200)
		var files api.Page[api.Recepcion]
		r.JSON(t, &files)
		if files.TotalCount != 5 || len(files.Data) != 2 || files.NextCursor == nil || files.Data[0].ID != misaddressed.ID {
			t.Errorf("the received files: %s", r.Body)
		}
		r = f.do("GET", apiBase+"/recepciones/"+rec.ID, nil, a.readHdr...)
		want(t, r, 200)
		var got api.Recepcion
		r.JSON(t, &got)
		if got.ID != rec.ID || got.Digest != rec.Digest || got.Estado != "conforme" {
			t.Errorf("the first file: %s", r.Body)
		}
		want(t, f.do("GET", apiBase+"/recepciones?estado=conforme", nil, a.readHdr...), 400, fault.Validation)
		want(t, f.do("GET", apiBase+"/recepciones/"+newUUID(), nil, a.readHdr...), 404, fault.NotFound)
	})
}

// TestRespuestas: company A's factura, received by company B (through its
// own inbox), answered by B with an acknowledgment, an acceptance and a
// receipt of goods; each answer uploaded by A (POST /respuestas) lands on
// A's document (GET /dte/{id} intercambio), once.
func TestRespuestas(t *testing.T) {
	t.Parallel()
	f, _ := inboxFixture(t, billingtestSQLite(t))
	a, b := f.A, f.B
	id, _ := f.emit(a, facturaTo(b.rut, 1))
	file := f.envioFrom(a, b.rut, id)
	// What B's inbox would do: read the file and answer it.
	rec, err := intercambio.Receive(file, intercambio.Options{Empresa: b.rut, Verify: dte.VerifyOptions{Keys: f.creds.TrustedKeys}, CodEnvio: 1})
	if err != nil || !rec.Recibido() {
		t.Fatalf("B's reception of A's file: %v %+v", err, rec)
	}
	cert := f.signingCert()
	opts := intercambio.AnswerOptions{IdRespuesta: 1, At: time.Now()}
	acuse, err := rec.Acuse(cert, opts)
	if err != nil {
		t.Fatal(err)
	}
	resultado, _, err := rec.Resultado(cert, opts, intercambio.Todos(intercambio.Decision{Estado: intercambio.DTEAceptadoOK}))
	if err != nil {
		t.Fatal(err)
	}
	recibos, _, err := rec.Recibos(cert, opts, "Bodega central")
	if err != nil {
		t.Fatal(err)
	}
	want(t, f.postXML(apiBase+"/respuestas", acuse, a.readHdr...), 403, fault.WriteNotAllowed)
	for _, tc := range []struct {
		name string
		xml  []byte
		slot func(*api.ReceptorRespuestas) *api.ReceptorRespuesta
		want string
	}{
		{"acuse", acuse, func(r *api.ReceptorRespuestas) *api.ReceptorRespuesta { return r.Recepcion }, "recibido"},
		{"resultado", resultado, func(r *api.ReceptorRespuestas) *api.ReceptorRespuesta { return r.Resultado }, "aceptado"},
		{"recibos", recibos, func(r *api.ReceptorRespuestas) *api.ReceptorRespuesta { return r.Recibo }, "mercaderias_recibidas"},
	} {
		r := f.postXML(apiBase+"/respuestas", tc.xml, a.writeHdr...)
		want(t, r, 200)
		var out api.RespuestaRecibida
		r.JSON(t, &out)
		if !slices.Equal(out.DTEIDs, []string{id}) || out.Recepcion.Tipo != "respuesta" || out.Recepcion.Estado != "conforme" ||
			out.Recepcion.Duplicado {
			t.Errorf("%s: %s, want A's factura %s", tc.name, r.Body, id)
		}
		// The same answer again changes nothing.
		r = f.postXML(apiBase+"/respuestas", tc.xml, a.writeHdr...)
		want(t, r, 200)
		var again api.RespuestaRecibida
		r.JSON(t, &again)
		if len(again.DTEIDs) != 0 || again.Recepcion.ID != out.Recepcion.ID || !again.Recepcion.Duplicado {
			t.Errorf("%s again: %s", tc.name, r.Body)
		}
		r = f.do("GET", apiBase+"/dte/"+id, nil, a.readHdr...)
		want(t, r, 200)
		var d api.DTE
		r.JSON(t, &d)
		if d.Intercambio == nil || tc.slot(d.Intercambio) == nil || tc.slot(d.Intercambio).Resultado != tc.want ||
			tc.slot(d.Intercambio).RutReceptor != b.rut || tc.slot(d.Intercambio).RutFirmante == nil ||
			*tc.slot(d.Intercambio).RutFirmante != f.creds.SignerRUT {
			t.Errorf("%s: A's factura shows %s", tc.name, r.Body)
		}
	}
	// B cannot use A's answers; garbage is named.
	r := f.postXML(apiBase+"/respuestas", resultado, b.writeHdr...)
	want(t, r, 400, fault.Validation)
	if got := detailFields(t, r); !slices.Equal(got, []string{"xml INVALID_FORMAT"}) {
		t.Errorf("an answer for another company: details %v", got)
	}
	want(t, f.postXML(apiBase+"/respuestas", []byte("<RespuestaDTE/>"), a.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/respuestas", map[string]any{"xml": "x"}, a.writeHdr...), 415, fault.UnsupportedMediaType)
	big := bytes.Repeat([]byte(" "), billing.MaxRecibidoBytes+1)
	want(t, f.postXML(apiBase+"/respuestas", big, a.writeHdr...), 413, fault.PayloadTooLarge)
	want(t, f.postXML(apiBase+"/respuestas?dte_id="+id, acuse, a.writeHdr...), 400, fault.Validation)
}

// TestCorreo: the mail settings (admin to change, passwords write-only,
// every nested field named), the mail of a document queued by hand and
// its delivery log, the answers to a supplier in its received document's
// log, the mailbox read on demand and its messages.
func TestCorreo(t *testing.T) {
	t.Parallel()
	f, fake := inboxFixture(t, billingtestSQLite(t))
	a, b := f.A, f.B
	base := apiBase + "/empresa/correo"

	// The defaults, and who may change them.
	r := f.do("GET", base, nil, a.readHdr...)
	want(t, r, 200)
	if string(r.Body) != `{"direccion":"","smtp":null,"imap":null,"enviar_dte":"aceptado","acuse_automatico":true}` {
		t.Errorf("the defaults: %s", r.Body)
	}
	settings := map[string]any{"direccion": "dte@empresa-a.cl", "enviar_dte": "nunca",
		"smtp": map[string]any{"host": "127.0.0.1", "port": 1, "seguridad": "none", "usuario": "dte", "password": "s3creto-smtp"},
		"imap": map[string]any{"host": "127.0.0.1", "port": 1, "seguridad": "none", "usuario": "dte", "password": "s3creto-imap", "carpeta_procesados": "Procesados"}}
	want(t, f.do("PUT", base, settings, a.writeHdr...), 403, fault.Forbidden)
	want(t, f.do("PUT", base, settings, a.userHdr...), 403, fault.Forbidden)
	r = f.do("PUT", base, settings, a.adminHdr...)
	want(t, r, 200)
	if bytes.Contains(r.Body, []byte("s3creto")) || !bytes.Contains(r.Body, []byte(`"password_set":true`)) {
		t.Errorf("the settings as stored: %s", r.Body)
	}
	// Sent back as read (password_set, no password): the passwords stay.
	var cs api.CorreoSettings
	r.JSON(t, &cs)
	r = f.do("PUT", base, cs, a.adminHdr...)
	want(t, r, 200)
	r = f.do("GET", base, nil, a.readHdr...)
	if bytes.Contains(r.Body, []byte("s3creto")) || bytes.Count(r.Body, []byte(`"password_set":true`)) != 2 {
		t.Errorf("after a PUT without passwords: %s", r.Body)
	}
	for _, tc := range []struct {
		body any
		want []string
	}{
		{map[string]any{"direccion": "dte@empresa-a.cl", "smtp": map[string]any{"host": "127.0.0.1", "puerto": 25, "port": 25}}, []string{"smtp.puerto UNKNOWN_FIELD"}},
		{map[string]any{"direccion": "dte@empresa-a.cl", "imap": map[string]any{"host": "127.0.0.1", "port": 70000}}, []string{"imap.port OUT_OF_RANGE"}},
		{map[string]any{"direccion": "dte@empresa-a.cl", "smtp": map[string]any{"host": "mail.example.com", "port": 25, "seguridad": "none"}}, []string{"smtp.seguridad NOT_ALLOWED"}},
		{map[string]any{"smtp": map[string]any{"host": "127.0.0.1", "port": 25}}, []string{"direccion REQUIRED"}},
		{map[string]any{"direccion": "no es correo"}, []string{"direccion INVALID_FORMAT"}},
		{map[string]any{"enviar_dte": "siempre"}, []string{"enviar_dte INVALID_VALUE"}},
		{map[string]any{"smtp": 25}, []string{"smtp INVALID_TYPE"}},
		{map[string]any{"smtp": map[string]any{"host": "127.0.0.1", "port": "25"}, "direccion": "dte@empresa-a.cl"}, []string{"smtp.port INVALID_TYPE"}},
		{map[string]any{"servidor": "x"}, []string{"servidor UNKNOWN_FIELD"}},
		// Issue 30: no way into the network, nor into the protocol.
		{map[string]any{"direccion": "dte@empresa-a.cl", "imap": map[string]any{"host": "169.254.169.254", "port": 993, "usuario": "u"}}, []string{"imap.host INVALID_VALUE"}},
		{map[string]any{"direccion": "dte@empresa-a.cl", "imap": map[string]any{"host": "mail.empresa-a.cl", "port": 993, "usuario": "dte\r\nA1 LOGOUT"}}, []string{"imap.usuario INVALID_VALUE"}},
		{map[string]any{"direccion": "dte@empresa-a.cl", "smtp": map[string]any{"host": "mail.empresa-a.cl", "port": 587, "password": "x\ny"}}, []string{"smtp.password INVALID_VALUE"}},
	} {
		r := f.do("PUT", base, tc.body, a.adminHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, tc.want) {
			t.Errorf("PUT %v: details %v, want %v", tc.body, got, tc.want)
		}
	}
	want(t, f.do("GET", base+"?x=1", nil, a.readHdr...), 400, fault.Validation)

	// A document mailed by hand.
	id, _ := f.emit(a, factura(1))
	want(t, f.do("POST", apiBase+"/dte/"+id+"/correo", nil, a.readHdr...), 403, fault.WriteNotAllowed)
	r = f.do("POST", apiBase+"/dte/"+id+"/correo", nil, a.writeHdr...)
	want(t, r, 400, fault.Validation)
	if got := detailFields(t, r); !slices.Equal(got, []string{"para REQUIRED"}) {
		t.Errorf("no address known: details %v", got)
	}
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"para": "no-es-correo"}, "para"},
		{map[string]any{"a": "x@y.cl"}, "a UNKNOWN_FIELD"},
	} {
		r := f.do("POST", apiBase+"/dte/"+id+"/correo", tc.body, a.writeHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("mail %v: details %v, want %s", tc.body, got, tc.want)
		}
	}
	r = f.do("POST", apiBase+"/dte/"+id+"/correo", map[string]any{"para": "compras@cliente.cl"}, a.writeHdr...)
	want(t, r, 202)
	var c api.Correo
	r.JSON(t, &c)
	if c.Tipo != "dte" || c.DTEID == nil || *c.DTEID != id || c.Para != "compras@cliente.cl" || c.MessageID == "" {
		t.Errorf("the queued mail: %s", r.Body)
	}
	// The cliente's address serves when none is given.
	want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": "76086428-5", "razon_social": "Cliente de Prueba SpA", "email": "pagos@cliente.cl"}, a.writeHdr...), 201)
	r = f.do("POST", apiBase+"/dte/"+id+"/correo", map[string]any{}, a.writeHdr...)
	want(t, r, 202)
	var c2 api.Correo
	r.JSON(t, &c2)
	if c2.Para != "pagos@cliente.cl" || c2.ID == c.ID {
		t.Errorf("the mail to the cliente: %s", r.Body)
	}
	// Its log, through each route.
	for _, path := range []string{"/dte/" + id + "/correos", "/correos?dte_id=" + id, "/correos"} {
		r := f.do("GET", apiBase+path, nil, a.readHdr...)
		want(t, r, 200)
		var p api.Page[api.Correo]
		r.JSON(t, &p)
		if p.TotalCount != 2 || len(p.Data) != 2 || p.Data[0].ID != c2.ID || p.Data[1].ID != c.ID {
			t.Errorf("GET %s: %s", path, r.Body)
		}
	}
	r = f.do("GET", apiBase+"/correos/"+c.ID, nil, a.readHdr...)
	want(t, r, 200)
	var gotC api.Correo
	r.JSON(t, &gotC)
	if gotC.ID != c.ID || gotC.Para != c.Para {
		t.Errorf("GET /correos/%s: %s", c.ID, r.Body)
	}
	for _, tc := range []struct{ query, want string }{
		{"?dte_id=7", "dte_id INVALID_FORMAT"},
		{"?recibido_id=x", "recibido_id INVALID_FORMAT"},
		{"?estado=enviado", "estado UNKNOWN_FIELD"},
	} {
		r := f.do("GET", apiBase+"/correos"+tc.query, nil, a.readHdr...)
		want(t, r, 400, fault.Validation)
		if got := detailFields(t, r); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: details %v, want %s", tc.query, got, tc.want)
		}
	}
	want(t, f.do("GET", apiBase+"/correos?dte_id="+newUUID(), nil, a.readHdr...), 404, fault.NotFound)
	want(t, f.do("GET", apiBase+"/correos/"+newUUID(), nil, a.readHdr...), 404, fault.NotFound)

	// A supplier's document accepted: the answer mailed to it is in the
	// received document's log.
	fid, _ := f.emit(b, facturaTo(a.rut, 1))
	r = f.postXML(apiBase+"/recibidos?correo_emisor=dte@proveedor.cl", f.envioFrom(b, a.rut, fid), a.writeHdr...)
	want(t, r, 201)
	var rec api.Recepcion
	r.JSON(t, &rec)
	fake.SeedRCV(siitest.RCVSeed{RutEmisor: b.rut, RutReceptor: a.rut, Tipo: 33, Folio: 1, FmaPago: 2})
	want(t, f.do("POST", apiBase+"/recibidos/"+rec.Recibidos[0]+"/aceptar", nil, a.writeHdr...), 200)
	// The two lists of the document's mails agree. The acknowledgment job
	// may queue the acuse's mail between two reads (the service runs
	// beside the test), so they are read again until both show the same
	// mails, for at most 10 s.
	var log api.Page[api.Correo]
	var byQuery []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r = f.do("GET", apiBase+"/recibidos/"+rec.Recibidos[0]+"/correos", nil, a.readHdr...)
		want(t, r, 200)
		log = api.Page[api.Correo]{}
		r.JSON(t, &log)
		byQuery = f.do("GET", apiBase+"/correos?recibido_id="+rec.Recibidos[0], nil, a.readHdr...).Body
		if bytes.Equal(byQuery, mustJSON(t, log)) || time.Now().After(deadline) {
			break
		}
	}
	var tipos []string
	for _, m := range log.Data {
		if m.Para != "dte@proveedor.cl" || m.RecibidoID == nil || *m.RecibidoID != rec.Recibidos[0] {
			t.Errorf("a mail of the received document: %+v", m)
		}
		tipos = append(tipos, m.Tipo)
	}
	if !slices.Contains(tipos, "resultado") {
		t.Errorf("the received document's mails are %v, want its resultado", tipos)
	}
	if !bytes.Equal(byQuery, mustJSON(t, log)) {
		t.Errorf("GET /correos?recibido_id: %s, want %s", byQuery, mustJSON(t, log))
	}

	// The mailbox: none reachable (port 1 on loopback) is 503; a company
	// without one reads nothing.
	want(t, f.do("POST", base+"/leer", nil, a.readHdr...), 403, fault.WriteNotAllowed)
	want(t, f.do("POST", base+"/leer", nil, a.writeHdr...), 503, fault.Unavailable)
	r = f.do("POST", base+"/leer", nil, b.writeHdr...)
	want(t, r, 200)
	if string(r.Body) != `{"leidos":0,"repetidos":0,"rechazados":0}` {
		t.Errorf("reading no mailbox: %s", r.Body)
	}
	r = f.do("GET", base+"/mensajes", nil, a.readHdr...)
	want(t, r, 200)
	if string(r.Body) != `{"data":[],"next_cursor":null,"total_count":0}` {
		t.Errorf("no messages read: %s", r.Body)
	}
	want(t, f.do("GET", base+"/mensajes?limit=101", nil, a.readHdr...), 400, fault.Validation)

	// No SMTP, no mail: 409.
	r = f.do("POST", apiBase+"/dte/"+fid+"/correo", map[string]any{"para": "x@y.cl"}, b.writeHdr...)
	want(t, r, 409, fault.InvalidState)
}

// mustJSON encodes v as the server does.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWebhookEventKinds: a webhook may subscribe to every event kind,
// those of the inbox and the intercambio included.
func TestWebhookEventKinds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, billingtestSQLite(t), RateLimit{PerSecond: -1})
	kinds := []string{"dte.created", "dte.accepted", "dte.rejected", "dte.repaired", "caf.low_stock", "certificado.expiring",
		"dte.receptor_recibido", "dte.receptor_aceptado", "dte.receptor_rechazado", "dte.mercaderias_recibidas",
		"recibido.created", "recibido.plazo_por_vencer"}
	r := f.do("POST", apiBase+"/webhooks", map[string]any{"url": "https://hooks.example.com/dtekit", "events": kinds}, f.A.writeHdr...)
	want(t, r, http.StatusCreated)
	var wh api.Webhook
	r.JSON(t, &wh)
	if len(wh.Events) != len(kinds) {
		t.Errorf("subscribed to %v, want %v", wh.Events, kinds)
	}
	want(t, f.do("POST", apiBase+"/webhooks", map[string]any{"url": "https://hooks.example.com/dtekit", "events": []string{"recibido.deleted"}}, f.A.writeHdr...), 400, fault.Validation)
}

// billingtestSQLite is a store of the first backend (SQLite), for tests
// of the HTTP face that need not run on both.
func billingtestSQLite(t *testing.T) store.Store {
	t.Helper()
	return billingtest.Backends()[0].NewStore(t)
}

// waitCorreo polls GET /correos/{id} until the mail is enviado.
func (f *fixture) waitCorreo(c company, id string) api.Correo {
	f.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := f.do("GET", apiBase+"/correos/"+id, nil, c.readHdr...)
		want(f.t, r, 200)
		var m api.Correo
		r.JSON(f.t, &m)
		if m.Estado == "enviado" {
			return m
		}
		if m.Estado == "fallido" || time.Now().After(deadline) {
			f.t.Fatalf("mail %s: %s", id, r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMailOverHTTP, through the API alone against real SMTP and IMAP
// servers (emailtest): B mails its factura to A (POST /dte/{id}/correo),
// A reads its mailbox (POST /empresa/correo/leer) and finds the document
// in its inbox with B's address to answer to, accepts it, and B, reading
// its own mailbox, sees A's acknowledgment and acceptance on its factura.
// Messages read once are not read again.
func TestMailOverHTTP(t *testing.T) {
	t.Parallel()
	users := []emailtest.User{{Address: "dte@empresa-a.cl", Username: "a", Password: "clave-a"},
		{Address: "dte@empresa-b.cl", Username: "b", Password: "clave-b"}}
	ms := emailtest.Start(t, users...)
	fake := newFake(t)
	f := submitting(t, billingtestSQLite(t), billing.Config{Mail: billing.MailConfig{TLS: &tls.Config{RootCAs: ms.RootCAs}, AllowLoopback: true, AnyPort: true,
		Every: time.Hour, Backoff: []time.Duration{time.Hour}}}, fake)
	a, b := f.A, f.B
	port := func(addr string) int {
		_, p, _ := strings.Cut(addr, ":")
		n, _ := strconv.Atoi(p)
		return n
	}
	for i, c := range []company{a, b} {
		u := users[i]
		r := f.do("PUT", apiBase+"/empresa/correo", map[string]any{"direccion": u.Address, "enviar_dte": "nunca",
			"smtp": map[string]any{"host": "127.0.0.1", "port": port(ms.SMTPAddr), "seguridad": "starttls", "usuario": u.Username, "password": u.Password},
			"imap": map[string]any{"host": "127.0.0.1", "port": port(ms.IMAPSAddr), "seguridad": "tls", "usuario": u.Username, "password": u.Password}},
			c.adminHdr...)
		want(t, r, 200)
	}

	id, _ := f.emit(b, facturaTo(a.rut, 1))
	r := f.do("POST", apiBase+"/dte/"+id+"/correo", map[string]any{"para": users[0].Address}, b.writeHdr...)
	want(t, r, 202)
	var sent api.Correo
	r.JSON(t, &sent)
	if got := f.waitCorreo(b, sent.ID); got.EnviadoAt == nil || got.Intentos != 1 {
		t.Errorf("B's mail: %+v", got)
	}

	read := func(c company) string {
		t.Helper()
		r := f.do("POST", apiBase+"/empresa/correo/leer", nil, c.writeHdr...)
		want(t, r, 200)
		return string(r.Body)
	}
	if got := read(a); got != `{"leidos":1,"repetidos":0,"rechazados":0}` {
		t.Errorf("A's first read: %s", got)
	}
	if got := read(a); got != `{"leidos":0,"repetidos":0,"rechazados":0}` {
		t.Errorf("A's second read: %s", got)
	}
	r = f.do("GET", apiBase+"/empresa/correo/mensajes", nil, a.readHdr...)
	want(t, r, 200)
	var msgs api.Page[api.Mensaje]
	r.JSON(t, &msgs)
	if len(msgs.Data) != 1 || msgs.Data[0].Estado != "procesado" || msgs.Data[0].From != users[1].Address || msgs.Data[0].MessageID != sent.MessageID {
		t.Errorf("A's messages: %s, want B's mail %s procesado", r.Body, sent.MessageID)
	}
	r = f.do("GET", apiBase+"/recibidos", nil, a.readHdr...)
	want(t, r, 200)
	var inbox api.Page[api.Recibido]
	r.JSON(t, &inbox)
	if len(inbox.Data) != 1 || inbox.Data[0].Folio != 1 || inbox.Data[0].CorreoEmisor == nil || *inbox.Data[0].CorreoEmisor != users[1].Address {
		t.Fatalf("A's inbox: %s", r.Body)
	}
	rid := inbox.Data[0].ID

	// A accepts; its answers (the acknowledgment of the file and the
	// acceptance) go to B by mail.
	fake.SeedRCV(siitest.RCVSeed{RutEmisor: b.rut, RutReceptor: a.rut, Tipo: 33, Folio: 1, FmaPago: 2})
	want(t, f.do("POST", apiBase+"/recibidos/"+rid+"/aceptar", nil, a.writeHdr...), 200)
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = f.do("GET", apiBase+"/recibidos/"+rid+"/correos", nil, a.readHdr...)
		want(t, r, 200)
		var log api.Page[api.Correo]
		r.JSON(t, &log)
		done := map[string]bool{}
		for _, m := range log.Data {
			done[m.Tipo] = m.Estado == "enviado"
		}
		if done["acuse"] && done["resultado"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A's answers: %s", r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := read(b); got != `{"leidos":2,"repetidos":0,"rechazados":0}` {
		t.Errorf("B's read: %s", got)
	}
	r = f.do("GET", apiBase+"/dte/"+id, nil, b.readHdr...)
	want(t, r, 200)
	var d api.DTE
	r.JSON(t, &d)
	if d.Intercambio == nil || d.Intercambio.Recepcion == nil || d.Intercambio.Resultado == nil ||
		d.Intercambio.Resultado.Resultado != "aceptado" || d.Intercambio.Resultado.RutReceptor != a.rut {
		t.Errorf("B's factura after A's answers: %s", r.Body)
	}
}

// TestDecisionsWithoutRegistry: a server that does not speak to the SII
// (no submission configured) takes documents in but registers no
// decision: 503, and the document stays pendiente; the refresh has no
// registry to ask and answers 200.
func TestDecisionsWithoutRegistry(t *testing.T) {
	f := newFixture(t, billingtestSQLite(t), RateLimit{PerSecond: -1})
	id, _ := f.emit(f.B, facturaTo(f.A.rut, 1))
	r := f.postXML(apiBase+"/recibidos", f.envioFrom(f.B, f.A.rut, id), f.A.writeHdr...)
	want(t, r, 201)
	var rec api.Recepcion
	r.JSON(t, &rec)
	want(t, f.do("POST", apiBase+"/recibidos/"+rec.Recibidos[0]+"/aceptar", nil, f.A.writeHdr...), 503, fault.Unavailable)
	want(t, f.do("POST", apiBase+"/recibidos/"+rec.Recibidos[0]+"/reclamar", map[string]any{"motivo": "x"}, f.A.writeHdr...), 503, fault.Unavailable)
	want(t, f.do("POST", apiBase+"/recibidos/actualizar", map[string]any{}, f.A.writeHdr...), 200)
	r = f.do("GET", apiBase+"/recibidos/"+rec.Recibidos[0], nil, f.A.readHdr...)
	want(t, r, 200)
	var d api.Recibido
	r.JSON(t, &d)
	if d.Estado != "pendiente" || d.Respuestas.Decision != nil {
		t.Errorf("after refused decisions: %s", r.Body)
	}
}
