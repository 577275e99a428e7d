package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/client"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// requestFiles are the emission requests of testdata/requests, one per
// document type (the server's OpenAPI examples are these files).
var requestFiles = map[dte.TipoDTE]string{
	33: "factura", 34: "factura_exenta", 39: "boleta", 41: "boleta_exenta", 43: "liquidacion_factura",
	46: "factura_compra", 52: "guia_despacho", 56: "nota_debito", 61: "nota_credito",
	110: "factura_exportacion", 111: "nota_debito_exportacion", 112: "nota_credito_exportacion",
}

// held returns the request of testdata/requests/name.json, held (not
// sent to the SII when emitted).
func held(t testing.TB, name string) *dte.EmitirDTERequest {
	req := loadRequest(t, name)
	no := false
	req.AutoSend = &no
	return req
}

// readAll reads a download whole: readAll(t)(c.Documents.XML(ctx, id)).
func readAll(t *testing.T) func(rc io.ReadCloser, err error) []byte {
	return func(rc io.ReadCloser, err error) []byte {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// testDocuments emits one document of each of the 12 types through the
// client, reads each back (JSON, XML, PDF), and walks the list page by
// page and with the iterator.
func testDocuments(t *testing.T, e *env) {
	tipos := make([]dte.TipoDTE, 0, len(requestFiles))
	for tipo := range requestFiles {
		tipos = append(tipos, tipo)
	}
	slices.Sort(tipos)
	tn := e.tenant(t, tipos...)
	ctx := context.Background()
	var mu sync.Mutex
	ids := map[string]dte.TipoDTE{}
	t.Run("emit", func(t *testing.T) {
		for _, tipo := range tipos {
			t.Run(requestFiles[tipo], func(t *testing.T) {
				t.Parallel()
				res, err := tn.w.Documents.Emit(ctx, api.EmitParams{Request: held(t, requestFiles[tipo])})
				if err != nil {
					t.Fatal(err)
				}
				// Each type has its own CAF from folio 1, and this
				// company emits one document of each.
				if res.TipoDTE != tipo || res.Folio != 1 || res.Estado != dte.EstadoFirmado || res.ID == "" {
					t.Fatalf("emitted %+v, want tipo %d folio 1 firmado", res, tipo)
				}
				mu.Lock()
				ids[res.ID] = tipo
				mu.Unlock()

				d, err := tn.r.Documents.Get(ctx, res.ID, api.DTEGetParams{IncludeXML: true})
				if err != nil || d.ID != res.ID || d.TipoDTE != tipo || d.Folio != 1 || d.XMLDocumento == "" {
					t.Fatalf("Get: %+v, %v", d, err)
				}
				// The XML: the very bytes the service holds, ISO-8859-1.
				got := readAll(t)(tn.r.Documents.XML(ctx, res.ID))
				want, err := e.b.Documents.XML(ctx, tn.id, res.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("the XML streamed (%d bytes) differs from the one held (%d bytes)", len(got), len(want))
				}
				if !bytes.HasPrefix(got, []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`)) {
					t.Errorf("the XML starts %.60q", got)
				}
				pdf := readAll(t)(tn.r.Documents.PDF(ctx, res.ID, api.PDFOptions{Cedible: tipo == 33, Formato: "carta"}))
				if !bytes.HasPrefix(pdf, []byte("%PDF-")) {
					t.Errorf("the PDF starts %.8q", pdf)
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	// The factura's receptor is "Comercial Ñandú & Cía. ...": in
	// ISO-8859-1 Ñ is the byte D1 and ú FA, so the text is not UTF-8.
	for id, tipo := range ids {
		if tipo != 33 {
			continue
		}
		x := readAll(t)(tn.r.Documents.XML(ctx, id))
		if !bytes.Contains(x, []byte("Comercial \xd1and\xfa &amp; C\xeda.")) || utf8.Valid(x) {
			t.Errorf("the factura's XML is not the ISO-8859-1 bytes: %q", x[:min(len(x), 400)])
		}
	}

	// The factura's PDF read by an independent tool (pdftotext).
	for id, tipo := range ids {
		if tipo != 33 {
			continue
		}
		path := filepath.Join(t.TempDir(), "factura.pdf")
		if err := os.WriteFile(path, readAll(t)(tn.r.Documents.PDF(ctx, id, api.PDFOptions{})), 0o600); err != nil {
			t.Fatal(err)
		}
		// testdata/requests/factura.json by hand: 12 × 6490 less 10 % =
		// 70092, 6 × 8990 = 53940, exempt 350000; taxable 124032 less the
		// global 5 % (6201.6 → 6202) = 117830, IVA 19 % = 22387.7 → 22388;
		// total 117830 + 350000 + 22388 = 490218.
		text := string(oracle.Run(t, "pdftotext", "-layout", path, "-"))
		for _, want := range []string{"FACTURA ELECTRÓNICA N° 1", "Comercial Ñandú & Cía.", "$ 490.218"} {
			if !strings.Contains(text, want) {
				t.Errorf("the factura's PDF lacks %q:\n%s", want, text)
			}
		}
	}

	// One page of 5 of the 12, then the iterator over pages of 5.
	p, err := tn.r.Documents.List(ctx, api.DTEListParams{ListParams: api.ListParams{Limit: 5}})
	if err != nil || p.TotalCount != 12 || len(p.Data) != 5 || p.NextCursor == nil {
		t.Fatalf("the first page: %+v, %v", p, err)
	}
	seen := map[string]bool{}
	for d, err := range tn.r.Documents.All(ctx, api.DTEListParams{ListParams: api.ListParams{Limit: 5}}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[d.ID] || ids[d.ID] != d.TipoDTE {
			t.Errorf("the iterator gave %s (tipo %d) twice or unknown", d.ID, d.TipoDTE)
		}
		seen[d.ID] = true
	}
	if len(seen) != 12 {
		t.Errorf("the iterator gave %d documents over pages of 5, want the 12", len(seen))
	}
	p, err = tn.r.Documents.List(ctx, api.DTEListParams{TipoDTE: 110})
	if err != nil || p.TotalCount != 1 || len(p.Data) != 1 || p.Data[0].TipoDTE != 110 {
		t.Errorf("the export facturas: %+v, %v", p, err)
	}
	// None of the 12 is ceded: the filter reaches the server (cedido=true).
	if p, err = tn.r.Documents.List(ctx, api.DTEListParams{Cedido: true}); err != nil || p.TotalCount != 0 {
		t.Errorf("the ceded documents: %+v, %v", p, err)
	}
	// A read-only key cannot emit: 403 WRITE_NOT_ALLOWED, typed.
	_, err = tn.r.Documents.Emit(ctx, api.EmitParams{Request: held(t, "factura")})
	var ce *client.Error
	if !errors.Is(err, fault.WriteNotAllowed) || !errors.As(err, &ce) || ce.StatusCode != 403 || ce.RequestID == "" {
		t.Errorf("emission with a read-only key: %v", err)
	}
	// A refused request names its field in dot notation.
	bad := held(t, "factura")
	bad.Detalle[0].Nombre = ""
	_, err = tn.w.Documents.Emit(ctx, api.EmitParams{Request: bad})
	if !errors.As(err, &ce) || ce.Code != fault.Validation || len(ce.Details) == 0 {
		t.Fatalf("a line without a name: %v", err)
	}
	if len(ce.Field("detalle[0].nombre")) == 0 && len(ce.Field("detalle.0.nombre")) == 0 {
		t.Errorf("the refusal names %+v, want the first line's nombre", ce.Details)
	}
}

// testEnvelopes packs a held factura into an envelope (the same key twice:
// one envelope, replayed), sends another by itself, and follows both to
// the SII's answer.
func testEnvelopes(t *testing.T, e *env) {
	tn := e.tenant(t, 33)
	ctx := context.Background()
	var ids []string
	for range 2 {
		res := must[*api.EmitResponse](t, "emit")(tn.w.Documents.Emit(ctx, api.EmitParams{Request: held(t, "factura")}))
		ids = append(ids, res.ID)
	}
	key := "5f0c8a52-7d4e-4b1a-9e3f-6a2b1c0d9e8f"
	var first, again client.Response
	env1, err := tn.w.Envelopes.Create(client.WithResponse(ctx, &first), api.EnvioRequest{DTEIDs: ids[:1], IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	env2, err := tn.w.Envelopes.Create(client.WithResponse(ctx, &again), api.EnvioRequest{DTEIDs: ids[:1], IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if env1.ID != env2.ID || first.Replayed || !again.Replayed || again.IdempotencyKey != key || first.StatusCode != 201 {
		t.Errorf("the same key twice: envelopes %s and %s, replayed %v then %v", env1.ID, env2.ID, first.Replayed, again.Replayed)
	}
	if len(env1.Documentos) != 1 || env1.Documentos[0].DTEID != ids[0] {
		t.Errorf("the envelope holds %+v", env1.Documentos)
	}
	env3, err := tn.w.Documents.Submit(ctx, ids[1], api.SubmitParams{})
	if err != nil || len(env3.Documentos) != 1 || env3.Documentos[0].DTEID != ids[1] || env3.ID == env1.ID {
		t.Fatalf("Submit: %+v, %v", env3, err)
	}
	for _, id := range []string{env1.ID, env3.ID} {
		eventually(t, "envelope "+id+" processed", func() (bool, error) {
			got, err := tn.r.Envelopes.Get(ctx, id)
			return err == nil && got.Estado == api.EnvioProcesado, err
		})
	}
	p, err := tn.r.Envelopes.List(ctx, api.EnvioListParams{ListParams: api.ListParams{Limit: 1}})
	if err != nil || p.TotalCount != 2 || len(p.Data) != 1 || p.NextCursor == nil {
		t.Errorf("a page of one envelope: %+v, %v", p, err)
	}
	n := 0
	for _, err := range tn.r.Envelopes.All(ctx, api.EnvioListParams{ListParams: api.ListParams{Limit: 1}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("the iterator gave %d envelopes, want 2", n)
	}
	d := must[*api.DTE](t, "Get")(tn.r.Documents.Get(ctx, ids[0], api.DTEGetParams{}))
	if d.Estado != dte.EstadoAceptado || d.Tracking == nil || d.Tracking.EnvioID == nil || *d.Tracking.EnvioID != env1.ID {
		t.Errorf("the first factura after its envelope: estado %s, tracking %+v", d.Estado, d.Tracking)
	}
	// Sending it again is refused, typed.
	if _, err := tn.w.Documents.Submit(ctx, ids[0], api.SubmitParams{}); !errors.Is(err, fault.InvalidState) && !errors.Is(err, fault.Conflict) {
		t.Errorf("submitting a sent document again: %v", err)
	}
}

// testRetryAfterLostAnswer puts a proxy in front of the server that
// forwards the first emission, lets the server commit it, and then drops
// the answer (the connection is closed without a byte). The client sends
// the request again with the same Idempotency-Key and gets the first
// document back: one folio taken, one document listed.
func testRetryAfterLostAnswer(t *testing.T, e *env) {
	tn := e.tenant(t, 33)
	target, _ := url.Parse(e.url)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var keys []string
	var dropped api.EmitResponse
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v1/billing/dte" {
			proxy.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		n := len(keys)
		mu.Unlock()
		if n > 1 {
			proxy.ServeHTTP(w, r)
			return
		}
		// Forward the first and read the whole answer: the server has
		// committed the document when it has answered.
		out, err := http.NewRequestWithContext(r.Context(), r.Method, e.url+r.URL.RequestURI(), r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			t.Error(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || json.Unmarshal(body, &dropped) != nil {
			t.Errorf("the first emission answered %d: %s", resp.StatusCode, body)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	}))
	defer ps.Close()
	key := tn.wkey
	c := e.client(t, client.WithAPIKey(key))
	c2, err := client.New(ps.URL, client.WithAPIKey(key),
		client.WithRetryPolicy(client.RetryPolicy{BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var r client.Response
	res, err := c2.Documents.Emit(client.WithResponse(ctx, &r), api.EmitParams{Request: held(t, "factura")})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != keys[1] || keys[0] != r.IdempotencyKey || r.Attempts != 2 || !r.Replayed {
		t.Errorf("keys sent %q, attempts %d, replayed %v: want one key twice and the replay", keys, r.Attempts, r.Replayed)
	}
	if res.ID != dropped.ID || res.Folio != 1 || dropped.Folio != 1 {
		t.Errorf("the retry answered %s folio %d; the lost answer was %s folio %d", res.ID, res.Folio, dropped.ID, dropped.Folio)
	}
	p, err := c.Documents.List(ctx, api.DTEListParams{})
	if err != nil || p.TotalCount != 1 || len(p.Data) != 1 || p.Data[0].ID != res.ID || p.Data[0].Folio != 1 {
		t.Errorf("the company's documents after the retry: %+v, %v; want exactly the one", p, err)
	}
	// The CAF of folios 1–1000 has given one folio: 999 are left.
	cafs, err := c.CAFs.List(ctx, api.CAFListParams{TipoDTE: 33})
	if err != nil || len(cafs.Data) != 1 || cafs.Data[0].FoliosDisponibles != 999 {
		t.Errorf("the CAF after the retry: %+v, %v; want 999 folios left", cafs, err)
	}
}
