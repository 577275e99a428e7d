package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
	"github.com/golang-jwt/jwt/v5"
)

// TestAPI exercises every endpoint and every status of contract §7 on both
// backends; every answer is validated against the OpenAPI document.
func TestAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("opens real databases and signs documents; run without -short")
	}
	t.Parallel()
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f := newFixture(t, open(t), RateLimit{PerSecond: -1})
		t.Run("empresa", f.testEmpresa)
		t.Run("certificado", f.testCertificado)
		t.Run("caf", f.testCAF)
		t.Run("dte", f.testDTE)
		t.Run("idempotency", f.testIdempotency)
		t.Run("clientes", f.testClientes)
		t.Run("productos", f.testProductos)
		t.Run("webhooks", f.testWebhooks)
		t.Run("routing", f.testRouting)
		t.Run("tenants", f.testTenants)
		t.Run("metrics", f.testMetrics)
		t.Run("unavailable", func(t *testing.T) {
			// A store that went away answers 503 to the credential lookup.
			g := newFixture(t, open(t), RateLimit{PerSecond: -1})
			g.st.Close()
			want(t, g.do("GET", apiBase+"/empresa", nil, g.A.readHdr...), 503, fault.Unavailable)
		})
	})
}

func (f *fixture) testEmpresa(t *testing.T) {
	r := f.do("GET", apiBase+"/empresa", nil, f.A.readHdr...)
	want(t, r, 200)
	var e struct {
		ID, Rut, Ambiente string
	}
	r.JSON(t, &e)
	if e.ID != f.A.id || e.Rut != f.A.rut || e.Ambiente != "certificacion" {
		t.Errorf("empresa %+v", e)
	}
	want(t, f.do("GET", apiBase+"/empresa", nil, f.A.userHdr...), 200)

	r = f.do("PUT", apiBase+"/empresa", map[string]any{"giro": "Servicios informáticos"}, f.A.writeHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), "Servicios informáticos") {
		t.Errorf("update not applied: %s", r.Body)
	}
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"razon_social": ""}, f.A.writeHdr...), 400, fault.Validation)
	r = f.do("PUT", apiBase+"/empresa", map[string]any{"giro": "x", "rut": "1-9", "telefono": "2"}, f.A.writeHdr...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"rut","code":"UNKNOWN_FIELD"`) || !strings.Contains(string(r.Body), `"field":"telefono"`) {
		t.Errorf("unknown fields not named: %s", r.Body)
	}
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"giro": 5}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("PUT", apiBase+"/empresa", `{"giro":"a"} {}`, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("PUT", apiBase+"/empresa", `[1]`, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("PUT", apiBase+"/empresa", `{"giro":`, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"giro": "x"}, f.A.readHdr...), 403, fault.WriteNotAllowed)
	want(t, f.do("PUT", apiBase+"/empresa", nil, f.A.writeHdr...), 415, fault.UnsupportedMediaType)
	req := newReq("PUT", apiBase+"/empresa", `{"giro":"x"}`, f.A.writeHdr...)
	req.Header.Set("Content-Type", "text/plain")
	want(t, f.tt.do(req), 415, fault.UnsupportedMediaType)
	big := `{"giro":"` + strings.Repeat("a", maxJSONBody) + `"}`
	want(t, f.do("PUT", apiBase+"/empresa", big, f.A.writeHdr...), 413, fault.PayloadTooLarge)
	// The same body without a Content-Length (chunked) is cut at the limit too.
	req = newReq("PUT", apiBase+"/empresa", big, f.A.writeHdr...)
	req.ContentLength = -1
	want(t, f.tt.do(req), 413, fault.PayloadTooLarge)
	want(t, f.do("GET", apiBase+"/empresa", nil), 401, fault.Unauthorized)
}

func (f *fixture) testCertificado(t *testing.T) {
	r := f.do("GET", apiBase+"/empresa/certificado", nil, f.A.readHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), `"has_certificado":true`) {
		t.Errorf("status: %s", r.Body)
	}
	fields := map[string]string{"password": f.creds.Password, "rut_firmante": f.creds.SignerRUT}
	ct, body := multipartBody(t, f.creds.P12, fields)
	want(t, f.upload(ct, body, f.A.adminHdr...), 200)
	want(t, f.upload(ct, body, f.A.userHdr...), 403, fault.Forbidden)
	want(t, f.upload(ct, body, f.A.writeHdr...), 403, fault.Forbidden)
	want(t, f.upload(ct, body), 401, fault.Unauthorized)
	want(t, f.upload("application/json", body, f.A.adminHdr...), 415, fault.UnsupportedMediaType)

	ct, body = multipartBody(t, f.creds.P12, map[string]string{"password": "wrong", "rut_firmante": f.creds.SignerRUT})
	want(t, f.upload(ct, body, f.A.adminHdr...), 400, fault.Validation)
	ct, body = multipartBody(t, nil, fields)
	r = f.upload(ct, body, f.A.adminHdr...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"file","code":"REQUIRED"`) {
		t.Errorf("missing file not named: %s", r.Body)
	}
	// Over the contract's 50 KB: a validation error on the file.
	ct, body = multipartBody(t, bytes.Repeat([]byte{1}, 50*1024+1), fields)
	r = f.upload(ct, body, f.A.adminHdr...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"file"`) {
		t.Errorf("large file not named: %s", r.Body)
	}
	ct, body = multipartBody(t, f.creds.P12, map[string]string{"password": "x", "rut_firmante": "1-9", "extra": "y"})
	want(t, f.upload(ct, body, f.A.adminHdr...), 400, fault.Validation)
	// Over the whole-body limit: 413.
	ct, body = multipartBody(t, bytes.Repeat([]byte{1}, maxCertBody), fields)
	want(t, f.upload(ct, body, f.A.adminHdr...), 413, fault.PayloadTooLarge)
	want(t, f.upload("multipart/form-data; boundary=x", []byte("garbage"), f.A.adminHdr...), 400, fault.Validation)
}

func (f *fixture) testCAF(t *testing.T) {
	r := f.do("GET", apiBase+"/caf", nil, f.A.readHdr...)
	want(t, r, 200)
	var list struct{ Data []struct{ ID string } }
	r.JSON(t, &list)
	if len(list.Data) != 3 {
		t.Fatalf("A has %d CAFs, want 3: %s", len(list.Data), r.Body)
	}
	last := list.Data[2].ID
	r = f.do("GET", apiBase+"/caf?tipo_dte=39", nil, f.A.readHdr...)
	want(t, r, 200)
	r.JSON(t, &list)
	if len(list.Data) != 1 {
		t.Errorf("tipo 39: %s", r.Body)
	}
	want(t, f.do("GET", apiBase+"/caf?tipo_dte=35", nil, f.A.readHdr...), 400, fault.Validation)
	// Paged like the other lists: 2 of 3, then the last one.
	var page struct {
		Data       []struct{ ID string }
		NextCursor *string `json:"next_cursor"`
		TotalCount int     `json:"total_count"`
	}
	r = f.do("GET", apiBase+"/caf?limit=2", nil, f.A.readHdr...)
	want(t, r, 200)
	r.JSON(t, &page)
	if len(page.Data) != 2 || page.NextCursor == nil || page.TotalCount != 3 {
		t.Fatalf("CAFs limit 2: %s", r.Body)
	}
	r = f.do("GET", apiBase+"/caf?limit=2&cursor="+*page.NextCursor, nil, f.A.readHdr...)
	want(t, r, 200)
	page.NextCursor = nil
	r.JSON(t, &page)
	if len(page.Data) != 1 || page.NextCursor != nil || page.Data[0].ID != last {
		t.Errorf("CAFs after the cursor: %s", r.Body)
	}
	want(t, f.do("GET", apiBase+"/caf?limit=101", nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("GET", apiBase+"/caf?cursor=bogus", nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("GET", apiBase+"/caf/"+list.Data[0].ID, nil, f.A.readHdr...), 200)
	want(t, f.do("GET", apiBase+"/caf/"+newUUID(), nil, f.A.readHdr...), 404, fault.NotFound)
	want(t, f.do("GET", apiBase+"/caf/not-a-uuid", nil, f.A.readHdr...), 404, fault.NotFound)

	file, err := f.creds.Authority.Issue(caftest.IssueRequest{RutEmisor: f.A.rut, RazonSocial: f.creds.Emisor.RazonSocial, Tipo: 34,
		Desde: 1, Hasta: 50, FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -7)})
	if err != nil {
		t.Fatal(err)
	}
	// The CAF travels base64-encoded: its bytes are ISO-8859-1, which a JSON
	// string cannot carry as they are.
	body := map[string]any{"tipo_dte": 34, "caf_xml": base64.StdEncoding.EncodeToString(file)}
	want(t, f.do("POST", apiBase+"/caf", body, f.A.readHdr...), 403, fault.WriteNotAllowed)
	r = f.do("POST", apiBase+"/caf", body, f.A.writeHdr...)
	want(t, r, 201)
	if !strings.Contains(string(r.Body), `"folios_disponibles":50`) {
		t.Errorf("registered CAF: %s", r.Body)
	}
	want(t, f.do("POST", apiBase+"/caf", body, f.A.writeHdr...), 409, "CAF_RANGE_CONFLICT")
	// B cannot register A's CAF (another RUT).
	want(t, f.do("POST", apiBase+"/caf", body, f.B.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 34, "caf_xml": "<nope/>"}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 34}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 34, "caf_xml": "x", "folio": 1}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/caf", `{"tipo_dte":34,"caf_xml":"`+strings.Repeat("a", maxCAFBody)+`"}`, f.A.writeHdr...), 413, fault.PayloadTooLarge)
}

func (f *fixture) testDTE(t *testing.T) {
	id, r := f.emit(f.A, factura(3))
	var em api.EmitResponse
	r.JSON(t, &em)
	// 3 lines of 2 × (1500, 1501, 1502) = 9006 net; IVA 19% = 1711.14 → 1711; total 10717.
	if em.TipoDTE != 33 || em.Estado != dte.EstadoFirmado || em.MontoTotal != 10717 || em.Folio < 1 {
		t.Errorf("emitted %+v", em)
	}
	if r.Header.Get("X-Idempotency-Replay") != "" {
		t.Error("first answer marked as a replay")
	}

	r = f.do("GET", apiBase+"/dte/"+id, nil, f.A.readHdr...)
	want(t, r, 200)
	if strings.Contains(string(r.Body), "xml_documento") {
		t.Error("xml_documento without include_xml")
	}
	r = f.do("GET", apiBase+"/dte/"+id+"?include_xml=true", nil, f.A.readHdr...)
	want(t, r, 200)
	var full api.DTE
	r.JSON(t, &full)
	if !strings.Contains(full.XMLDocumento, "<TED") || full.Folio != em.Folio {
		t.Errorf("include_xml: folio %d, xml %d bytes", full.Folio, len(full.XMLDocumento))
	}
	want(t, f.do("GET", apiBase+"/dte/"+id+"?include_xml=maybe", nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("GET", apiBase+"/dte/"+newUUID(), nil, f.A.readHdr...), 404, fault.NotFound)

	// Signed XML: ISO-8859-1 bytes as stored.
	r = f.do("GET", apiBase+"/dte/"+id+"/xml", nil, f.A.readHdr...)
	want(t, r, 200)
	if ct := r.Header.Get("Content-Type"); ct != "application/xml; charset=ISO-8859-1" {
		t.Errorf("XML content type %q", ct)
	}
	wantDownloadHeaders(t, "XML", r)
	if !bytes.HasPrefix(r.Body, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)) || !bytes.Contains(r.Body, []byte("<Signature")) {
		t.Errorf("XML: %s", truncate(r.Body))
	}
	// The emisor's name carries Ñ (0xD1 in ISO-8859-1, never UTF-8's C3 91).
	if !bytes.Contains(r.Body, []byte{0xD1, 'u', 0xF1, 'o', 'a'}) {
		t.Error("the XML is not ISO-8859-1")
	}

	// PDF, letter and roll, cedible both ways.
	for _, q := range []string{"", "?cedible=true", "?copy=cedible", "?formato=80mm", "?formato=carta&cedible=false"} {
		r = f.do("GET", apiBase+"/dte/"+id+"/pdf"+q, nil, f.A.readHdr...)
		want(t, r, 200)
		if r.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.Body, []byte("%PDF-")) {
			t.Errorf("pdf%s: %s %q", q, r.Header.Get("Content-Type"), truncate(r.Body[:min(len(r.Body), 20)]))
		}
		wantDownloadHeaders(t, "PDF"+q, r)
	}
	for _, q := range []string{"?copy=original", "?formato=a4", "?cedible=2"} {
		want(t, f.do("GET", apiBase+"/dte/"+id+"/pdf"+q, nil, f.A.readHdr...), 400, fault.Validation)
	}
	want(t, f.do("GET", apiBase+"/dte/"+newUUID()+"/pdf", nil, f.A.readHdr...), 404, fault.NotFound)
	want(t, f.do("GET", apiBase+"/dte/"+newUUID()+"/xml", nil, f.A.readHdr...), 404, fault.NotFound)

	// A boleta has no cedible copy.
	boleta := factura(1)
	boleta["tipo_dte"] = 39
	bid, _ := f.emit(f.A, boleta)
	want(t, f.do("GET", apiBase+"/dte/"+bid+"/pdf?cedible=true", nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("GET", apiBase+"/dte/"+bid+"/pdf?formato=80mm", nil, f.A.readHdr...), 200)

	// Validation: every problem with its path, unknown nested members too.
	bad := factura(2)
	bad["receptor"].(map[string]any)["rut"] = "76086428-4"
	bad["detalle"].([]map[string]any)[1]["precios"] = 3
	r = f.do("POST", apiBase+"/dte", bad, append(f.A.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"detalle[1].precios","code":"UNKNOWN_FIELD"`) {
		t.Errorf("unknown nested field not named: %s", r.Body)
	}
	bad = factura(1)
	bad["receptor"].(map[string]any)["rut"] = "76086428-4"
	r = f.do("POST", apiBase+"/dte", bad, append(f.A.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"receptor.rut","code":"INVALID_RUT"`) {
		t.Errorf("invalid rut not named: %s", r.Body)
	}
	want(t, f.do("POST", apiBase+"/dte", factura(1), f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/dte", factura(1), append(f.A.writeHdr, "Idempotency-Key", "not-a-uuid")...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/dte", factura(1), append(f.A.readHdr, "Idempotency-Key", newUUID())...), 403, fault.WriteNotAllowed)
	want(t, f.do("POST", apiBase+"/dte", factura(1), "Idempotency-Key", newUUID()), 401, fault.Unauthorized)
	req := newReq("POST", apiBase+"/dte", "tipo_dte=33", append(f.A.writeHdr, "Idempotency-Key", newUUID())...)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	want(t, f.tt.do(req), 415, fault.UnsupportedMediaType)
	want(t, f.do("POST", apiBase+"/dte", `{"tipo_dte":33,"x":"`+strings.Repeat("a", dte.MaxRequestBytes)+`"}`,
		append(f.A.writeHdr, "Idempotency-Key", newUUID())...), 413, fault.PayloadTooLarge)
	// B holds no CAF of type 39: no folio to give.
	want(t, f.do("POST", apiBase+"/dte", boleta, append(f.B.writeHdr, "Idempotency-Key", newUUID())...), 409, "NO_FOLIOS_AVAILABLE")
	// A JWT may emit.
	r = f.do("POST", apiBase+"/dte", factura(1), append(f.A.userHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 201)

	// List: filters, pages, bounds.
	r = f.do("GET", apiBase+"/dte", nil, f.A.readHdr...)
	want(t, r, 200)
	var page struct {
		Items      []api.DTE
		NextCursor *string `json:"next_cursor"`
		TotalCount int     `json:"total_count"`
	}
	r.JSON(t, &page)
	if page.TotalCount != 3 || len(page.Items) != 3 || page.NextCursor != nil {
		t.Errorf("list: total %d, %d items", page.TotalCount, len(page.Items))
	}
	r = f.do("GET", apiBase+"/dte?limit=2", nil, f.A.readHdr...)
	want(t, r, 200)
	r.JSON(t, &page)
	if len(page.Items) != 2 || page.NextCursor == nil || page.TotalCount != 3 {
		t.Fatalf("page 1: %d items, cursor %v, total %d", len(page.Items), page.NextCursor, page.TotalCount)
	}
	seen := map[string]bool{page.Items[0].ID: true, page.Items[1].ID: true}
	r = f.do("GET", apiBase+"/dte?limit=2&cursor="+url.QueryEscape(*page.NextCursor), nil, f.A.readHdr...)
	want(t, r, 200)
	r.JSON(t, &page)
	if len(page.Items) != 1 || page.NextCursor != nil || seen[page.Items[0].ID] {
		t.Errorf("page 2: %d items, cursor %v", len(page.Items), page.NextCursor)
	}
	today := dte.Today(time.Now())
	for q, n := range map[string]int{
		"tipo_dte=39":                    1,
		"tipo_dte=33&estado=firmado":     2,
		"estado=aceptado":                0,
		"rut_receptor=76086428-5":        3,
		"rut_receptor=11111111-1":        0,
		"fecha_desde=" + today:           3,
		"fecha_hasta=2000-01-01":         0,
		"fecha_desde=2000-01-01&limit=1": 3,
	} {
		r = f.do("GET", apiBase+"/dte?"+q, nil, f.A.readHdr...)
		want(t, r, 200)
		r.JSON(t, &page)
		if page.TotalCount != n {
			t.Errorf("list ?%s: total %d, want %d", q, page.TotalCount, n)
		}
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "tipo_dte=35", "estado=pendiente", "fecha_desde=2024-13-01", "cursor=garbage"} {
		want(t, f.do("GET", apiBase+"/dte?"+q, nil, f.A.readHdr...), 400, fault.Validation)
	}
}

func (f *fixture) testIdempotency(t *testing.T) {
	key := newUUID()
	body := factura(2)
	hdr := append(f.A.writeHdr, "Idempotency-Key", key)
	first := f.do("POST", apiBase+"/dte", body, hdr...)
	want(t, first, 201)
	// The same request written differently is the same request.
	compact, _ := json.Marshal(body)
	spaced := strings.ReplaceAll(string(compact), ",", " ,\n ")
	again := f.do("POST", apiBase+"/dte", spaced, hdr...)
	want(t, again, 201)
	if again.Header.Get("X-Idempotency-Replay") != "true" || !bytes.Equal(again.Body, first.Body) {
		t.Errorf("replay: header %q, body %s vs %s", again.Header.Get("X-Idempotency-Replay"), again.Body, first.Body)
	}
	other := factura(3)
	want(t, f.do("POST", apiBase+"/dte", other, hdr...), 422, fault.IdempotencyMismatch)

	// A key whose first request is still running: recorded as in progress
	// with the stored fingerprint of the first request.
	ctx := context.Background()
	rec, err := f.st.GetIdempotency(ctx, f.A.id, "certificacion", key)
	if err != nil {
		t.Fatal(err)
	}
	busy := newUUID()
	err = f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIdempotency(ctx, &store.Idempotency{EmpresaID: f.A.id, Ambiente: "certificacion", Key: busy, BodyHash: rec.BodyHash, State: store.IdempotencyInProgress})
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, f.do("POST", apiBase+"/dte", body, append(f.A.writeHdr, "Idempotency-Key", busy)...), 409, fault.IdempotencyInProgress)

	// A folio already taken outside the protocol: DUPLICATE_FOLIO.
	cafs, err := f.st.ListCAFs(ctx, f.A.id, 61)
	if err != nil || len(cafs) != 1 {
		t.Fatalf("CAF 61: %v %v", cafs, err)
	}
	err = f.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertDTE(ctx, &store.DTE{EmpresaID: f.A.id, TipoDTE: 61, Folio: cafs[0].NextFolio, CAFID: cafs[0].ID,
			Estado: string(dte.EstadoFirmado), RutReceptor: "76086428-5", RazonSocialReceptor: "x", FechaEmision: dte.Today(time.Now()),
			Request: []byte("{}"), Emisor: []byte("{}"), EmittedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	nc := factura(1)
	nc["tipo_dte"] = 61
	nc["referencias"] = []map[string]any{{"tipo_doc_ref": 33, "folio_ref": 1, "fecha_ref": dte.Today(time.Now()), "codigo_ref": 3, "razon_ref": "Corrige montos"}}
	want(t, f.do("POST", apiBase+"/dte", nc, append(f.A.writeHdr, "Idempotency-Key", newUUID())...), 409, "DUPLICATE_FOLIO")
}

func (f *fixture) testClientes(t *testing.T) {
	c := map[string]any{"rut": "76086428-5", "razon_social": "Cliente Uno SpA", "email": "uno@example.cl"}
	r := f.do("POST", apiBase+"/clientes", c, f.A.writeHdr...)
	want(t, r, 201)
	var cl struct{ ID string }
	r.JSON(t, &cl)
	want(t, f.do("POST", apiBase+"/clientes", c, f.A.writeHdr...), 409, "CLIENTE_RUT_CONFLICT")
	// The same rut in another company is another customer.
	want(t, f.do("POST", apiBase+"/clientes", c, f.B.writeHdr...), 201)
	// A member given twice is refused, not read as the last (issue 20,
	// point 11), in every JSON body.
	r = f.do("POST", apiBase+"/clientes", `{"rut": "77777777-7", "razon_social": "Dos", "razon_social": "Tres"}`, f.A.writeHdr...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"razon_social","code":"DUPLICATE"`) {
		t.Errorf("duplicate member: %s", r.Body)
	}
	r = f.do("POST", apiBase+"/clientes", map[string]any{"rut": "76086428-4", "razon_social": ""}, f.A.writeHdr...)
	want(t, r, 400, fault.Validation)
	if !strings.Contains(string(r.Body), `"field":"rut","code":"INVALID_RUT"`) || !strings.Contains(string(r.Body), `"field":"razon_social"`) {
		t.Errorf("invalid cliente: %s", r.Body)
	}
	want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": "11111111-1", "razon_social": "x", "nombre": "y"}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/clientes", c, f.A.readHdr...), 403, fault.WriteNotAllowed)
	want(t, f.do("POST", apiBase+"/clientes", map[string]any{"rut": "11111111-1", "razon_social": "Otro Cliente Ltda."}, f.A.writeHdr...), 201)

	want(t, f.do("GET", apiBase+"/clientes/"+cl.ID, nil, f.A.readHdr...), 200)
	r = f.do("PUT", apiBase+"/clientes/"+cl.ID, map[string]any{"telefono": "+56 2 2345 6789"}, f.A.writeHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), "2345 6789") {
		t.Errorf("update: %s", r.Body)
	}
	want(t, f.do("PUT", apiBase+"/clientes/"+cl.ID, map[string]any{"rut": "11111111-1"}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("PUT", apiBase+"/clientes/"+newUUID(), map[string]any{"notas": "x"}, f.A.writeHdr...), 404, fault.NotFound)

	var page struct {
		Data       []struct{ ID, Rut string }
		NextCursor *string `json:"next_cursor"`
		TotalCount int     `json:"total_count"`
	}
	r = f.do("GET", apiBase+"/clientes?limit=1", nil, f.A.readHdr...)
	want(t, r, 200)
	r.JSON(t, &page)
	if len(page.Data) != 1 || page.NextCursor == nil || page.TotalCount != 2 {
		t.Errorf("list: %s", r.Body)
	}
	r = f.do("GET", apiBase+"/clientes?cursor="+url.QueryEscape(*page.NextCursor), nil, f.A.readHdr...)
	want(t, r, 200)
	r.JSON(t, &page)
	if len(page.Data) != 1 || page.NextCursor != nil {
		t.Errorf("list page 2: %s", r.Body)
	}
	for q, n := range map[string]int{"UNO": 1, "cliente": 2, "76086428": 1, "otro": 1, "nadie": 0} {
		r = f.do("GET", apiBase+"/clientes/search?q="+url.QueryEscape(q), nil, f.A.readHdr...)
		want(t, r, 200)
		r.JSON(t, &page)
		if len(page.Data) != n {
			t.Errorf("search %q: %d results, want %d", q, len(page.Data), n)
		}
	}
	want(t, f.do("GET", apiBase+"/clientes/search", nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("GET", apiBase+"/clientes?limit=500", nil, f.A.readHdr...), 400, fault.Validation)

	want(t, f.do("DELETE", apiBase+"/clientes/"+cl.ID, nil, f.A.readHdr...), 403, fault.WriteNotAllowed)
	want(t, f.do("DELETE", apiBase+"/clientes/"+cl.ID, nil, f.A.writeHdr...), 200)
	want(t, f.do("GET", apiBase+"/clientes/"+cl.ID, nil, f.A.readHdr...), 404, fault.NotFound)
	want(t, f.do("DELETE", apiBase+"/clientes/"+cl.ID, nil, f.A.writeHdr...), 404, fault.NotFound)
	// Soft-deleted: its rut is free again.
	want(t, f.do("POST", apiBase+"/clientes", c, f.A.writeHdr...), 201)
}

func (f *fixture) testProductos(t *testing.T) {
	p := map[string]any{"codigo": "SKU-1", "nombre": "Resma carta", "precio_unitario": 4990, "unidad": "UN"}
	r := f.do("POST", apiBase+"/productos", p, f.A.writeHdr...)
	want(t, r, 201)
	var pr struct{ ID string }
	r.JSON(t, &pr)
	want(t, f.do("POST", apiBase+"/productos", p, f.A.writeHdr...), 409, "PRODUCTO_CODIGO_CONFLICT")
	want(t, f.do("POST", apiBase+"/productos", map[string]any{"nombre": "", "precio_unitario": -1}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/productos", map[string]any{"nombre": "x", "precio_unitario": 1.5}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/productos", map[string]any{"nombre": "Servicio de instalación", "es_exento": true}, f.A.writeHdr...), 201)
	want(t, f.do("GET", apiBase+"/productos/"+pr.ID, nil, f.A.readHdr...), 200)
	r = f.do("PUT", apiBase+"/productos/"+pr.ID, map[string]any{"precio_unitario": 5290}, f.A.writeHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), `"precio_unitario":5290`) {
		t.Errorf("update: %s", r.Body)
	}
	want(t, f.do("PUT", apiBase+"/productos/"+pr.ID, map[string]any{"precio_unitario": -5}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("PUT", apiBase+"/productos/"+newUUID(), map[string]any{"nombre": "x"}, f.A.writeHdr...), 404, fault.NotFound)
	r = f.do("GET", apiBase+"/productos", nil, f.A.readHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), `"total_count":2`) {
		t.Errorf("list: %s", r.Body)
	}
	r = f.do("GET", apiBase+"/productos/search?q=sku", nil, f.A.readHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), pr.ID) || strings.Contains(string(r.Body), "instalación") {
		t.Errorf("search: %s", r.Body)
	}
	want(t, f.do("GET", apiBase+"/productos/search?q="+strings.Repeat("x", 101), nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("DELETE", apiBase+"/productos/"+pr.ID, nil, f.A.writeHdr...), 200)
	want(t, f.do("GET", apiBase+"/productos/"+pr.ID, nil, f.A.readHdr...), 404, fault.NotFound)
	want(t, f.do("POST", apiBase+"/productos", p, f.A.writeHdr...), 201)
}

func (f *fixture) testWebhooks(t *testing.T) {
	r := f.do("GET", apiBase+"/webhooks", nil, f.A.readHdr...)
	want(t, r, 200)
	body := map[string]any{"url": "https://hooks.example.com/dtekit", "events": []string{"dte.created", "dte.accepted"}}
	want(t, f.do("POST", apiBase+"/webhooks", body, f.A.readHdr...), 403, fault.WriteNotAllowed)
	r = f.do("POST", apiBase+"/webhooks", body, f.A.writeHdr...)
	want(t, r, 201)
	var wh struct{ ID, Secret string }
	r.JSON(t, &wh)
	if !strings.HasPrefix(wh.Secret, "whsec_") {
		t.Errorf("secret %q", wh.Secret)
	}
	r = f.do("GET", apiBase+"/webhooks", nil, f.A.readHdr...)
	want(t, r, 200)
	if strings.Contains(string(r.Body), wh.Secret) {
		t.Error("listed secret in full")
	}
	for _, bad := range []map[string]any{
		{"url": "http://hooks.example.com/x", "events": []string{"dte.created"}},
		{"url": "https://127.0.0.1/x", "events": []string{"dte.created"}},
		{"url": "https://hooks.example.com/x", "events": []string{}},
		{"url": "https://hooks.example.com/x", "events": []string{"dte.deleted"}},
	} {
		want(t, f.do("POST", apiBase+"/webhooks", bad, f.A.writeHdr...), 400, fault.Validation)
	}
	hook := apiBase + "/webhooks/" + wh.ID

	// A ping queues a delivery; it is listed, readable and may be resent.
	want(t, f.do("POST", hook+"/ping", nil, f.A.readHdr...), 403, fault.WriteNotAllowed)
	r = f.do("POST", hook+"/ping", nil, f.A.writeHdr...)
	want(t, r, 202)
	var dl struct {
		ID, State string
		EventType string `json:"event_type"`
	}
	r.JSON(t, &dl)
	if dl.State != "pending" || dl.EventType != "webhook.ping" {
		t.Errorf("ping: %s", r.Body)
	}
	r = f.do("GET", hook+"/deliveries", nil, f.A.readHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), dl.ID) {
		t.Errorf("deliveries: %s", r.Body)
	}
	want(t, f.do("GET", hook+"/deliveries?limit=0", nil, f.A.readHdr...), 400, fault.Validation)
	want(t, f.do("GET", hook+"/deliveries/"+dl.ID, nil, f.A.readHdr...), 200)
	want(t, f.do("GET", hook+"/deliveries/"+newUUID(), nil, f.A.readHdr...), 404, fault.NotFound)
	want(t, f.do("POST", hook+"/deliveries/"+dl.ID+"/resend", nil, f.A.writeHdr...), 202)
	want(t, f.do("POST", hook+"/deliveries/"+newUUID()+"/resend", nil, f.A.writeHdr...), 404, fault.NotFound)

	// A webhook takes 5 pings a minute: 4 more, then 429 with the wait
	// (one ping every 12 s) in Retry-After and the envelope.
	for range 4 {
		want(t, f.do("POST", hook+"/ping", nil, f.A.writeHdr...), 202)
	}
	r = f.do("POST", hook+"/ping", nil, f.A.writeHdr...)
	want(t, r, 429, fault.RateLimited)
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 12 || !strings.Contains(string(r.Body), "5 pings a minute") {
		t.Errorf("sixth ping: Retry-After %q, %s", r.Header.Get("Retry-After"), r.Body)
	}

	// Rotation: a generated secret, or the one sent; a bad one is refused.
	r = f.do("POST", hook+"/rotate-secret", nil, f.A.writeHdr...)
	want(t, r, 200)
	var rot struct{ Secret string }
	r.JSON(t, &rot)
	if !strings.HasPrefix(rot.Secret, "whsec_") || rot.Secret == wh.Secret {
		t.Errorf("rotated secret %q", rot.Secret)
	}
	want(t, f.do("POST", hook+"/rotate-secret", map[string]any{"secret": "plain"}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", hook+"/rotate-secret", map[string]any{"secreto": "x"}, f.A.writeHdr...), 400, fault.Validation)
	want(t, f.do("POST", hook+"/enable", nil, f.A.writeHdr...), 200)

	// Company B sees none of it.
	for _, pb := range []struct{ method, path string }{
		{"POST", hook + "/ping"}, {"GET", hook + "/deliveries"}, {"GET", hook + "/deliveries/" + dl.ID},
		{"POST", hook + "/deliveries/" + dl.ID + "/resend"}, {"POST", hook + "/rotate-secret"},
		{"POST", hook + "/enable"}, {"DELETE", hook},
	} {
		want(t, f.do(pb.method, pb.path, nil, f.B.writeHdr...), 404, fault.NotFound)
	}
	want(t, f.do("DELETE", apiBase+"/webhooks/"+wh.ID, nil, f.A.writeHdr...), 200)
	want(t, f.do("DELETE", apiBase+"/webhooks/"+wh.ID, nil, f.A.writeHdr...), 404, fault.NotFound)
}

func (f *fixture) testRouting(t *testing.T) {
	want(t, f.do("GET", "/api/v1/billing/nothing", nil, f.A.readHdr...), 404, fault.NotFound)
	r := f.do("PATCH", apiBase+"/empresa", nil, f.A.writeHdr...)
	want(t, r, 405, fault.MethodNotAllowed)
	if a := r.Header.Get("Allow"); !strings.Contains(a, "GET") || !strings.Contains(a, "PUT") {
		t.Errorf("Allow %q", a)
	}
	want(t, f.do("DELETE", apiBase+"/dte", nil, f.A.writeHdr...), 405, fault.MethodNotAllowed)
	want(t, f.do("PUT", apiBase+"/dte/"+newUUID()+"/pdf", nil, f.A.writeHdr...), 405, fault.MethodNotAllowed)
}

// testTenants: company B probing every id of company A gets 404, exactly
// as for an id that does not exist.
func (f *fixture) testTenants(t *testing.T) {
	ctx := context.Background()
	dtes, err := f.st.ListDTEs(ctx, f.A.id, store.DTEFilter{Limit: 1})
	if err != nil || len(dtes.Items) == 0 {
		t.Fatalf("A's documents: %v", err)
	}
	cafs, _ := f.st.ListCAFs(ctx, f.A.id, 0)
	cl := f.do("POST", apiBase+"/clientes", map[string]any{"rut": "12345678-5", "razon_social": "Solo de A"}, f.A.writeHdr...)
	pr := f.do("POST", apiBase+"/productos", map[string]any{"nombre": "Solo de A"}, f.A.writeHdr...)
	var c, p struct{ ID string }
	cl.JSON(t, &c)
	pr.JSON(t, &p)
	d := dtes.Items[0].ID
	// A's inbox: a document B sent it, the file that carried it, and a
	// mail of A's document.
	sent, _ := f.emit(f.B, facturaTo(f.A.rut, 1))
	rec, err := f.b.Received.Receive(ctx, f.A.id, api.ReceiveParams{XML: f.envioFrom(f.B, f.A.rut, sent), CorreoEmisor: "dte@empresa-b.cl"})
	if err != nil || len(rec.Recibidos) != 1 {
		t.Fatalf("A's reception: %v %+v", err, rec)
	}
	rcb := rec.Recibidos[0]
	if _, err := f.b.Mail.UpdateSettings(ctx, f.A.id, api.CorreoSettings{Direccion: "dte@empresa-a.cl", EnviarDTE: api.EnviarNunca,
		SMTP: &api.CorreoServidor{Host: "smtp.empresa-a.cl", Port: 587, Seguridad: "starttls"}}); err != nil {
		t.Fatal(err)
	}
	signed, _ := f.emit(f.A, factura(1))
	mail, err := f.b.Documents.Mail(ctx, f.A.id, signed, api.DTEMailParams{Para: "compras@cliente.cl"})
	if err != nil {
		t.Fatal(err)
	}
	probes := []struct{ method, path string }{
		{"GET", apiBase + "/dte/" + d}, {"GET", apiBase + "/dte/" + d + "?include_xml=true"},
		{"GET", apiBase + "/dte/" + d + "/pdf"}, {"GET", apiBase + "/dte/" + d + "/xml"},
		{"GET", apiBase + "/caf/" + cafs[0].ID},
		{"GET", apiBase + "/clientes/" + c.ID}, {"PUT", apiBase + "/clientes/" + c.ID}, {"DELETE", apiBase + "/clientes/" + c.ID},
		{"GET", apiBase + "/productos/" + p.ID}, {"PUT", apiBase + "/productos/" + p.ID}, {"DELETE", apiBase + "/productos/" + p.ID},
		// The inbox and mail.
		{"GET", apiBase + "/recibidos/" + rcb}, {"GET", apiBase + "/recibidos/" + rcb + "/xml"}, {"GET", apiBase + "/recibidos/" + rcb + "/pdf"},
		{"POST", apiBase + "/recibidos/" + rcb + "/aceptar"}, {"POST", apiBase + "/recibidos/" + rcb + "/reclamar"},
		{"POST", apiBase + "/recibidos/" + rcb + "/recibo"}, {"GET", apiBase + "/recibidos/" + rcb + "/correos"},
		{"GET", apiBase + "/recepciones/" + rec.ID},
		{"GET", apiBase + "/correos/" + mail.ID}, {"GET", apiBase + "/correos?dte_id=" + signed}, {"GET", apiBase + "/correos?recibido_id=" + rcb},
		{"GET", apiBase + "/dte/" + signed + "/correos"}, {"POST", apiBase + "/dte/" + signed + "/correo"},
	}
	for _, pb := range probes {
		var body any
		if pb.method == "PUT" {
			body = map[string]any{"notas": "x"}
			if strings.Contains(pb.path, "productos") {
				body = map[string]any{"nombre": "x"}
			}
		}
		if strings.HasSuffix(pb.path, "/reclamar") {
			body = map[string]any{"motivo": "x"}
		}
		for _, hdr := range [][]string{f.B.writeHdr, f.B.adminHdr} {
			r := f.do(pb.method, pb.path, body, hdr...)
			want(t, r, 404, fault.NotFound)
		}
		// The same read of the inbox by A finds it: the 404 is the
		// tenancy's.
		if pb.method == "GET" && (strings.Contains(pb.path, rcb) || strings.Contains(pb.path, rec.ID) || strings.Contains(pb.path, signed) ||
			strings.Contains(pb.path, mail.ID)) {
			want(t, f.do(pb.method, pb.path, nil, f.A.readHdr...), 200)
		}
	}
	// A valid token naming a company that does not exist is no credential
	// at all: 401, not a 404 from the first read (issue 20, point 11).
	_, key := sharedCreds(t)
	ghost := signToken(t, jwt.SigningMethodRS256, key, jwt.MapClaims{"iss": testIssuer, "aud": testAud, "sub": "u-ghost",
		"exp": time.Now().Add(time.Hour).Unix(), "empresa_id": newUUID(), "role": "admin"})
	for _, path := range []string{"/empresa", "/dte"} {
		want(t, f.do("GET", apiBase+path, nil, "Authorization", "Bearer "+ghost), 401, fault.Unauthorized)
	}
	// A's own data is untouched and still there.
	want(t, f.do("GET", apiBase+"/clientes/"+c.ID, nil, f.A.readHdr...), 200)
	want(t, f.do("GET", apiBase+"/productos/"+p.ID, nil, f.A.readHdr...), 200)
	r := f.do("GET", apiBase+"/recibidos/"+rcb, nil, f.A.readHdr...)
	want(t, r, 200)
	if !strings.Contains(string(r.Body), `"estado":"pendiente"`) {
		t.Errorf("A's received document after B's probes: %s", r.Body)
	}
	want(t, f.do("GET", apiBase+"/correos/"+mail.ID, nil, f.A.readHdr...), 200)
	// B's lists and settings hold nothing of A.
	for _, path := range []string{"/dte", "/caf", "/clientes", "/productos", "/webhooks", "/recibidos", "/recepciones", "/correos",
		"/empresa/correo", "/empresa/correo/mensajes"} {
		r := f.do("GET", apiBase+path, nil, f.B.readHdr...)
		want(t, r, 200)
		for _, id := range []string{d, signed, cafs[0].ID, c.ID, p.ID, rcb, rec.ID, mail.ID, "dte@empresa-a.cl"} {
			if strings.Contains(string(r.Body), id) {
				t.Errorf("B's %s lists A's %s", path, id)
			}
		}
	}
}

func TestRateLimitOverBilling(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a real database")
	}
	backends(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		f := newFixture(t, open(t), RateLimit{PerSecond: 1, Burst: 3})
		for i := 0; i < 3; i++ {
			want(t, f.do("GET", apiBase+"/empresa", nil, f.A.readHdr...), 200)
		}
		r := f.do("GET", apiBase+"/empresa", nil, f.A.readHdr...)
		want(t, r, 429, fault.RateLimited)
		if r.Header.Get("Retry-After") != "1" {
			t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
		}
		// Other credentials are not affected.
		want(t, f.do("GET", apiBase+"/empresa", nil, f.A.writeHdr...), 200)
		want(t, f.do("GET", apiBase+"/empresa", nil, f.B.readHdr...), 200)
		// Bad keys are limited per client address.
		for i := 0; i < 3; i++ {
			want(t, f.do("GET", apiBase+"/empresa", nil, "X-Api-Key", "dtk_bad"), 401)
		}
		want(t, f.do("GET", apiBase+"/empresa", nil, "X-Api-Key", "dtk_bad"), 429, fault.RateLimited)
	})
}

func (f *fixture) testMetrics(t *testing.T) {
	r := f.do("GET", "/metrics", nil)
	want(t, r, 200)
	body := string(r.Body)
	for _, s := range []string{
		`dtekit_http_requests_total{method="POST",route="POST /api/v1/billing/dte",status="201"}`,
		`dtekit_http_requests_total{method="GET",route="GET /api/v1/billing/dte/{id}",status="404"}`,
		`dtekit_http_requests_total{method="GET",route="unmatched",status="404"}`,
		"dtekit_emission_duration_seconds_count",
		// The runner is not started in these tests: the jobs the
		// emissions enqueued are still waiting.
		`dtekit_job_queue_depth{queue=`,
		"go_goroutines",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("/metrics lacks %s", s)
		}
	}
	// Raw paths never become labels.
	if strings.Contains(body, f.A.id) {
		t.Error("/metrics carries an id")
	}
}

// TestLogsCarryNoSecrets: one JSON line per request with its request id,
// route and company, and never the key, the token or the body.
func TestLogsCarryNoSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a real database")
	}
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "dtekit.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := newFixture(t, st, RateLimit{PerSecond: -1})
	var logs bytes.Buffer
	f.srv.logger = slog.New(slog.NewJSONHandler(&logs, nil))
	_, r := f.emit(f.A, factura(1))
	f.do("GET", apiBase+"/empresa", nil, f.A.adminHdr...)
	f.do("GET", apiBase+"/empresa", nil, "X-Api-Key", "dtk_wrong-key-value")
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", len(lines), logs.String())
	}
	var first struct {
		RequestID string `json:"request_id"`
		Route     string
		Status    int
		EmpresaID string `json:"empresa_id"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.RequestID != r.Header.Get("X-Request-Id") || first.Route != "POST /api/v1/billing/dte" || first.Status != 201 || first.EmpresaID != f.A.id {
		t.Errorf("log line %s", lines[0])
	}
	for _, secret := range []string{f.A.writeKey, f.A.adminTok, "dtk_wrong-key-value", "Cliente de Prueba", "76086428-5"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the logs carry %q", secret)
		}
	}
}

// wantDownloadHeaders checks that a document download may be neither
// sniffed into another type nor kept by a cache (issue 20, point 11).
func wantDownloadHeaders(t *testing.T, what string, r *response) {
	t.Helper()
	if v := r.Header.Get("X-Content-Type-Options"); v != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, v)
	}
	if v := r.Header.Get("Cache-Control"); v != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", what, v)
	}
}
