package client_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/client"
	"github.com/dtekit/dtekit/dte"
)

// notCalled are the operations of the document the client leaves out:
// the server's own infrastructure, for load balancers, scrapers and
// tools rather than for a program's business.
var notCalled = map[string]string{
	"getOpenAPI": "the document itself, for tools",
	"healthz":    "liveness probe, for load balancers",
	"readyz":     "readiness probe, for load balancers",
	"metrics":    "Prometheus scrape, for monitoring",
}

// someID is a UUID the fake server never looks at.
const someID = "0b7e2c1a-5d3f-4e8a-9c6b-2f1d0e9a8b7c"

// operation is one row of the coverage table: an operationId of the
// document, the client's method that calls it, and a call of that method
// (the iterators call their list's operation too, and are rows of their
// own).
type operation struct {
	id, method string
	call       func(ctx context.Context, c *client.Client) error
}

func discard(rc io.ReadCloser, err error) error {
	if rc != nil {
		rc.Close()
	}
	return err
}

func first[T any](seq func(func(T, error) bool)) error {
	for _, err := range seq {
		return err
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

// coverage is the table: every operation of server/openapi.yaml but
// notCalled, with the method that calls it.
func coverage(t *testing.T) []operation {
	req := loadRequest(t, "factura")
	lp := api.ListParams{Cursor: "c1", Limit: 5}
	return []operation{
		{"listDTE", "Documents.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.Documents.List(ctx, api.DTEListParams{ListParams: lp, TipoDTE: 33, Estado: dte.EstadoFirmado,
				FechaDesde: "2026-01-01", FechaHasta: "2026-12-31", RutReceptor: "76086428-5", Ambiente: api.AmbienteTodos, Cedido: true})
			return err
		}},
		{"listDTE", "Documents.All", func(ctx context.Context, c *client.Client) error {
			return first(c.Documents.All(ctx, api.DTEListParams{}))
		}},
		{"emitDTE", "Documents.Emit", func(ctx context.Context, c *client.Client) error {
			_, err := c.Documents.Emit(ctx, api.EmitParams{Request: req})
			return err
		}},
		{"getDTE", "Documents.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.Documents.Get(ctx, someID, api.DTEGetParams{IncludeXML: true})
			return err
		}},
		{"getDTEPDF", "Documents.PDF", func(ctx context.Context, c *client.Client) error {
			return discard(c.Documents.PDF(ctx, someID, api.PDFOptions{Cedible: true, Formato: "80mm"}))
		}},
		{"getDTEXML", "Documents.XML", func(ctx context.Context, c *client.Client) error {
			return discard(c.Documents.XML(ctx, someID))
		}},
		{"submitDTE", "Documents.Submit", func(ctx context.Context, c *client.Client) error {
			_, err := c.Documents.Submit(ctx, someID, api.SubmitParams{})
			return err
		}},
		{"listDTECorreos", "Documents.ListCorreos", func(ctx context.Context, c *client.Client) error {
			_, err := c.Documents.ListCorreos(ctx, someID, lp)
			return err
		}},
		{"listDTECorreos", "Documents.AllCorreos", func(ctx context.Context, c *client.Client) error {
			return first(c.Documents.AllCorreos(ctx, someID, api.ListParams{}))
		}},
		{"mailDTE", "Documents.Mail", func(ctx context.Context, c *client.Client) error {
			_, err := c.Documents.Mail(ctx, someID, api.DTEMailParams{Para: "pagos@cliente.cl"})
			return err
		}},

		{"createCesion", "Cesiones.Create", func(ctx context.Context, c *client.Client) error {
			_, err := c.Cesiones.Create(ctx, someID, api.CesionParams{Cesionario: api.Cesionario{Rut: "96790240-3",
				RazonSocial: "Factoring Austral S.A.", Direccion: "Av. Apoquindo 3000", Email: "cesiones@factoring.cl"},
				EmailNotificacion: "finanzas@empresa.cl"})
			return err
		}},
		{"listCesiones", "Cesiones.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.Cesiones.List(ctx, someID, api.CesionListParams{ListParams: lp})
			return err
		}},
		{"listEnvios", "Envelopes.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.Envelopes.List(ctx, api.EnvioListParams{ListParams: lp, Ambiente: "certificacion"})
			return err
		}},
		{"listEnvios", "Envelopes.All", func(ctx context.Context, c *client.Client) error {
			return first(c.Envelopes.All(ctx, api.EnvioListParams{}))
		}},
		{"createEnvio", "Envelopes.Create", func(ctx context.Context, c *client.Client) error {
			_, err := c.Envelopes.Create(ctx, api.EnvioRequest{DTEIDs: []string{someID}})
			return err
		}},
		{"getEnvio", "Envelopes.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.Envelopes.Get(ctx, someID)
			return err
		}},

		{"listCAF", "CAFs.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.CAFs.List(ctx, api.CAFListParams{ListParams: lp, TipoDTE: 33, Ambiente: api.AmbienteTodos})
			return err
		}},
		{"listCAF", "CAFs.All", func(ctx context.Context, c *client.Client) error {
			return first(c.CAFs.All(ctx, api.CAFListParams{}))
		}},
		{"registerCAF", "CAFs.Register", func(ctx context.Context, c *client.Client) error {
			_, err := c.CAFs.Register(ctx, api.CAFInput{TipoDTE: 33, CAFXML: "<AUTORIZACION/>"})
			return err
		}},
		{"getCAF", "CAFs.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.CAFs.Get(ctx, someID)
			return err
		}},

		{"getEmpresa", "Company.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.Get(ctx)
			return err
		}},
		{"updateEmpresa", "Company.Update", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.Update(ctx, api.EmpresaUpdate{Giro: ptr("Comercio")})
			return err
		}},
		{"getCertificadoStatus", "Company.Certificate", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.Certificate(ctx)
			return err
		}},
		{"uploadCertificado", "Company.UploadCertificate", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.UploadCertificate(ctx, api.CertificadoUpload{File: []byte{0x30, 0x82}, Password: "x", RutFirmante: "11111111-1"})
			return err
		}},
		{"getLogo", "Company.Logo", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.Logo(ctx)
			return err
		}},
		{"putLogo", "Company.SetLogo", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.SetLogo(ctx, tinyPNG)
			return err
		}},
		{"deleteLogo", "Company.DeleteLogo", func(ctx context.Context, c *client.Client) error {
			return c.Company.DeleteLogo(ctx)
		}},
		{"getAlertSettings", "Company.AlertSettings", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.AlertSettings(ctx)
			return err
		}},
		{"putAlertSettings", "Company.UpdateAlertSettings", func(ctx context.Context, c *client.Client) error {
			_, err := c.Company.UpdateAlertSettings(ctx, api.AlertSettingsInput{CAFLowStockThreshold: ptr[int64](50)})
			return err
		}},

		{"listWebhooks", "Webhooks.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.List(ctx)
			return err
		}},
		{"createWebhook", "Webhooks.Create", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.Create(ctx, api.WebhookInput{URL: "https://hooks.example.com/x", Events: []string{"dte.created"}})
			return err
		}},
		{"getWebhook", "Webhooks.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.Get(ctx, someID)
			return err
		}},
		{"updateWebhook", "Webhooks.Update", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.Update(ctx, someID, api.WebhookUpdate{IsActive: ptr(false)})
			return err
		}},
		{"deleteWebhook", "Webhooks.Delete", func(ctx context.Context, c *client.Client) error {
			return c.Webhooks.Delete(ctx, someID)
		}},
		{"rotateWebhookSecret", "Webhooks.RotateSecret", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.RotateSecret(ctx, someID, api.WebhookSecretParams{})
			return err
		}},
		{"enableWebhook", "Webhooks.Enable", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.Enable(ctx, someID)
			return err
		}},
		{"pingWebhook", "Webhooks.Ping", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.Ping(ctx, someID)
			return err
		}},
		{"listWebhookDeliveries", "Webhooks.ListDeliveries", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.ListDeliveries(ctx, api.DeliveryListParams{ListParams: lp, WebhookID: someID})
			return err
		}},
		{"listWebhookDeliveries", "Webhooks.AllDeliveries", func(ctx context.Context, c *client.Client) error {
			return first(c.Webhooks.AllDeliveries(ctx, api.DeliveryListParams{WebhookID: someID}))
		}},
		{"getWebhookDelivery", "Webhooks.GetDelivery", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.GetDelivery(ctx, someID, api.DeliveryParams{WebhookID: someID})
			return err
		}},
		{"resendWebhookDelivery", "Webhooks.ResendDelivery", func(ctx context.Context, c *client.Client) error {
			_, err := c.Webhooks.ResendDelivery(ctx, someID, api.DeliveryParams{WebhookID: someID})
			return err
		}},

		{"listClientes", "Catalog.ListClientes", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.ListClientes(ctx, api.ClienteListParams{ListParams: lp})
			return err
		}},
		{"searchClientes", "Catalog.ListClientes", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.ListClientes(ctx, api.ClienteListParams{ListParams: lp, Q: "andes"})
			return err
		}},
		{"listClientes", "Catalog.AllClientes", func(ctx context.Context, c *client.Client) error {
			return first(c.Catalog.AllClientes(ctx, api.ClienteListParams{}))
		}},
		{"createCliente", "Catalog.CreateCliente", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.CreateCliente(ctx, api.ClienteInput{Rut: "76086428-5", RazonSocial: "Andes"})
			return err
		}},
		{"getCliente", "Catalog.GetCliente", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.GetCliente(ctx, someID)
			return err
		}},
		{"updateCliente", "Catalog.UpdateCliente", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.UpdateCliente(ctx, someID, api.ClienteUpdate{Email: ptr("a@b.cl")})
			return err
		}},
		{"deleteCliente", "Catalog.DeleteCliente", func(ctx context.Context, c *client.Client) error {
			return c.Catalog.DeleteCliente(ctx, someID)
		}},
		{"listProductos", "Catalog.ListProductos", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.ListProductos(ctx, api.ProductoListParams{ListParams: lp})
			return err
		}},
		{"searchProductos", "Catalog.ListProductos", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.ListProductos(ctx, api.ProductoListParams{Q: "café"})
			return err
		}},
		{"listProductos", "Catalog.AllProductos", func(ctx context.Context, c *client.Client) error {
			return first(c.Catalog.AllProductos(ctx, api.ProductoListParams{}))
		}},
		{"createProducto", "Catalog.CreateProducto", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.CreateProducto(ctx, api.ProductoInput{Nombre: "Café", PrecioUnitario: 8990})
			return err
		}},
		{"getProducto", "Catalog.GetProducto", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.GetProducto(ctx, someID)
			return err
		}},
		{"updateProducto", "Catalog.UpdateProducto", func(ctx context.Context, c *client.Client) error {
			_, err := c.Catalog.UpdateProducto(ctx, someID, api.ProductoUpdate{PrecioUnitario: ptr[int64](9990)})
			return err
		}},
		{"deleteProducto", "Catalog.DeleteProducto", func(ctx context.Context, c *client.Client) error {
			return c.Catalog.DeleteProducto(ctx, someID)
		}},

		{"receiveDTE", "Received.Receive", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.Receive(ctx, api.ReceiveParams{XML: []byte("<EnvioDTE/>"), CorreoEmisor: "dte@proveedor.cl"})
			return err
		}},
		{"listRecibidos", "Received.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.List(ctx, api.RecibidoListParams{ListParams: lp, Ambiente: api.AmbienteTodos, RutEmisor: "76086428-5",
				TipoDTE: 33, Estado: "pendiente", FechaDesde: "2026-01-01", FechaHasta: "2026-12-31", DiasRestantes: ptr(0)})
			return err
		}},
		{"listRecibidos", "Received.All", func(ctx context.Context, c *client.Client) error {
			return first(c.Received.All(ctx, api.RecibidoListParams{}))
		}},
		{"refreshRecibidos", "Received.Refresh", func(ctx context.Context, c *client.Client) error {
			return c.Received.Refresh(ctx)
		}},
		{"getRecibido", "Received.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.Get(ctx, someID)
			return err
		}},
		{"getRecibidoXML", "Received.XML", func(ctx context.Context, c *client.Client) error {
			return discard(c.Received.XML(ctx, someID))
		}},
		{"getRecibidoPDF", "Received.PDF", func(ctx context.Context, c *client.Client) error {
			return discard(c.Received.PDF(ctx, someID))
		}},
		{"aceptarRecibido", "Received.Aceptar", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.Aceptar(ctx, someID)
			return err
		}},
		{"reclamarRecibido", "Received.Reclamar", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.Reclamar(ctx, someID, api.DecisionInput{Accion: "RFP", Motivo: "Faltan cajas"})
			return err
		}},
		{"reciboRecibido", "Received.Recibo", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.Recibo(ctx, someID, api.DecisionInput{Recinto: "Bodega 4"})
			return err
		}},
		{"listRecibidoCorreos", "Received.ListCorreos", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.ListCorreos(ctx, someID, lp)
			return err
		}},
		{"listRecibidoCorreos", "Received.AllCorreos", func(ctx context.Context, c *client.Client) error {
			return first(c.Received.AllCorreos(ctx, someID, api.ListParams{}))
		}},
		{"listRecepciones", "Received.ListRecepciones", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.ListRecepciones(ctx, api.RecepcionListParams{ListParams: lp, Ambiente: "produccion"})
			return err
		}},
		{"listRecepciones", "Received.AllRecepciones", func(ctx context.Context, c *client.Client) error {
			return first(c.Received.AllRecepciones(ctx, api.RecepcionListParams{}))
		}},
		{"getRecepcion", "Received.GetRecepcion", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.GetRecepcion(ctx, someID)
			return err
		}},
		{"receiveRespuesta", "Received.ReceiveRespuesta", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.ReceiveRespuesta(ctx, api.ReceiveRespuestaParams{XML: []byte("<RespuestaDTE/>")})
			return err
		}},
		{"getRecepcionSettings", "Received.Settings", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.Settings(ctx)
			return err
		}},
		{"putRecepcionSettings", "Received.UpdateSettings", func(ctx context.Context, c *client.Client) error {
			_, err := c.Received.UpdateSettings(ctx, api.RecepcionLimits{RetencionDias: ptr[int64](30)})
			return err
		}},

		{"listCorreos", "Mail.List", func(ctx context.Context, c *client.Client) error {
			_, err := c.Mail.List(ctx, api.CorreoListParams{ListParams: lp, DTEID: someID})
			return err
		}},
		{"listCorreos", "Mail.All", func(ctx context.Context, c *client.Client) error {
			return first(c.Mail.All(ctx, api.CorreoListParams{RecibidoID: someID}))
		}},
		{"getCorreo", "Mail.Get", func(ctx context.Context, c *client.Client) error {
			_, err := c.Mail.Get(ctx, someID)
			return err
		}},
		{"getCorreoSettings", "Mail.Settings", func(ctx context.Context, c *client.Client) error {
			_, err := c.Mail.Settings(ctx)
			return err
		}},
		{"putCorreoSettings", "Mail.UpdateSettings", func(ctx context.Context, c *client.Client) error {
			_, err := c.Mail.UpdateSettings(ctx, api.CorreoSettings{Direccion: "dte@empresa.cl", EnviarDTE: "nunca"})
			return err
		}},
		{"pollMailbox", "Mail.Poll", func(ctx context.Context, c *client.Client) error {
			_, err := c.Mail.Poll(ctx)
			return err
		}},
		{"listMensajes", "Mail.ListMensajes", func(ctx context.Context, c *client.Client) error {
			_, err := c.Mail.ListMensajes(ctx, api.MensajeListParams{ListParams: lp})
			return err
		}},
		{"listMensajes", "Mail.AllMensajes", func(ctx context.Context, c *client.Client) error {
			return first(c.Mail.AllMensajes(ctx, api.MensajeListParams{}))
		}},
	}
}

// tinyPNG is a 1×1 PNG: the signature, IHDR, IDAT and IEND chunks.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// loadRequest reads testdata/requests/name.json as the server reads a
// request.
func loadRequest(t testing.TB, name string) *dte.EmitirDTERequest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "requests", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	req, err := dte.DecodeRequest(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return req
}

var (
	specOnce sync.Once
	specDoc  *openapi3.T
	specErr  error
)

// loadSpec reads server/openapi.yaml, the document the server serves.
func loadSpec(t testing.TB) *openapi3.T {
	t.Helper()
	specOnce.Do(func() {
		specDoc, specErr = openapi3.NewLoader().LoadFromFile(filepath.Join("..", "server", "openapi.yaml"))
		if specErr == nil {
			specDoc.Servers = nil
		}
	})
	if specErr != nil {
		t.Fatalf("server/openapi.yaml: %v", specErr)
	}
	return specDoc
}

// TestCoverage checks the client against server/openapi.yaml both ways:
// every operation (but those of notCalled) has a row of the table, every
// exported method of every resource service has a row, and every row's
// call sends a request that the document routes to the row's operation
// and that passes the document's checks of parameters, content type and
// body (openapi3filter). The fake server behind it answers 200 with an
// empty page, so the iterators stop after their first request.
func TestCoverage(t *testing.T) {
	t.Parallel()
	doc := loadSpec(t)
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)

	var mu sync.Mutex
	var got []*http.Request
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/billing/webhooks" && r.Method == http.MethodGet {
			io.WriteString(w, `[]`)
			return
		}
		io.WriteString(w, `{"data":[],"next_cursor":null,"total_count":0}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithAPIKey("dtk_coverage"))
	if err != nil {
		t.Fatal(err)
	}

	ops := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
			ops[op.OperationID] = true
		}
	}
	table := coverage(t)
	covered := map[string]bool{}
	methods := map[string]bool{}
	ctx := context.Background()
	for _, row := range table {
		covered[row.id] = true
		methods[row.method] = true
		if !ops[row.id] {
			t.Errorf("%s: the table names operation %s, which the document does not have", row.method, row.id)
			continue
		}
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if err := row.call(ctx, c); err != nil {
			t.Errorf("%s: %v", row.method, err)
			continue
		}
		mu.Lock()
		sent, body := got[n:], bodies[n:]
		mu.Unlock()
		if len(sent) != 1 {
			t.Errorf("%s sent %d requests, want 1", row.method, len(sent))
			continue
		}
		req := sent[0].Clone(ctx)
		req.URL.Scheme, req.URL.Host = "http", sent[0].Host
		route, params, err := router.FindRoute(req)
		if err != nil {
			t.Errorf("%s sent %s %s, which no operation of the document serves: %v", row.method, req.Method, req.URL, err)
			continue
		}
		if route.Operation.OperationID != row.id {
			t.Errorf("%s sent %s %s, operation %s; the table says %s", row.method, req.Method, req.URL.Path, route.Operation.OperationID, row.id)
			continue
		}
		req.Body = io.NopCloser(bytes.NewReader(body[0]))
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}}
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("%s: the request %s %s does not match the document: %v", row.method, req.Method, req.URL, err)
		}
		if k := req.Header.Get("Idempotency-Key"); (req.Method == http.MethodGet) != (k == "") {
			t.Errorf("%s: %s with Idempotency-Key %q: every mutating call carries one, a read none", row.method, req.Method, k)
		}
	}
	var missing []string
	for id := range ops {
		if !covered[id] && notCalled[id] == "" {
			missing = append(missing, id)
		}
	}
	sort.Strings(missing)
	for _, id := range missing {
		t.Errorf("operation %s has no client method", id)
	}
	for id := range notCalled {
		if covered[id] || !ops[id] {
			t.Errorf("notCalled names %s, which is called or not an operation", id)
		}
	}
	// Every exported method of every service is in the table.
	cv := reflect.ValueOf(c).Elem()
	for i := range cv.NumField() {
		f := cv.Type().Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Pointer || !strings.HasSuffix(f.Type.Elem().Name(), "Service") {
			continue
		}
		for j := range f.Type.NumMethod() {
			name := f.Name + "." + f.Type.Method(j).Name
			if !methods[name] {
				t.Errorf("%s maps to no operation of the table", name)
			}
		}
	}
	t.Logf("%d operations, %d called through %d methods, %d left out", len(ops), len(covered), len(methods), len(notCalled))
}
