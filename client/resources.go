package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"

	"github.com/dtekit/dtekit/api"
)

// resources sets the resource services of c.
func (c *Client) resources() {
	c.Documents = &DocumentService{c: c}
	c.Envelopes = &EnvelopeService{c: c}
	c.CAFs = &CAFService{c: c}
	c.Company = &CompanyService{c: c}
	c.Webhooks = &WebhookService{c: c}
	c.Catalog = &CatalogService{c: c}
	c.Received = &ReceivedService{c: c}
	c.Mail = &MailService{c: c}
	c.Cesiones = &CesionService{c: c}
}

// call sends r and decodes its answer into r.out.
func (c *Client) call(ctx context.Context, r request) error {
	resp, _, err := c.do(ctx, r)
	report(ctx, resp)
	return err
}

// open sends r and returns its answer's body, open.
func (c *Client) open(ctx context.Context, r request) (io.ReadCloser, error) {
	r.stream = true
	resp, body, err := c.do(ctx, r)
	report(ctx, resp)
	return body, err
}

// respKey is the context key of WithResponse.
type respKey struct{}

// WithResponse returns a context that makes the call it is given to fill
// *r with what the call learnt besides its answer: the status, the
// request id, the Idempotency-Key it carried, whether the server replayed
// an earlier answer, and how many attempts it took.
//
//	var r client.Response
//	d, err := c.Documents.Emit(client.WithResponse(ctx, &r), p)
//	log.Printf("request %s, replayed %v", r.RequestID, r.Replayed)
func WithResponse(ctx context.Context, r *Response) context.Context {
	return context.WithValue(ctx, respKey{}, r)
}

func report(ctx context.Context, resp *Response) {
	if p, ok := ctx.Value(respKey{}).(*Response); ok && p != nil && resp != nil {
		*p = *resp
	}
}

// seg escapes one path segment (an id).
func seg(s string) string { return url.PathEscape(s) }

// values builds a query from name, value pairs, leaving out empty values:
// the server refuses a parameter a route does not declare, and an empty
// one means the default anyway.
func values(pairs ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			q.Set(pairs[i], pairs[i+1])
		}
	}
	return q
}

// paging adds a list's cursor and limit to q.
func paging(q url.Values, lp api.ListParams) url.Values {
	if q == nil {
		q = url.Values{}
	}
	if lp.Cursor != "" {
		q.Set("cursor", lp.Cursor)
	}
	if lp.Limit != 0 {
		q.Set("limit", strconv.Itoa(lp.Limit))
	}
	return q
}

func itoa[T ~int | ~int64](n T) string {
	if n == 0 {
		return ""
	}
	return strconv.FormatInt(int64(n), 10)
}

// into sends r and decodes its answer into a new T.
func into[T any](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	r.out = &out
	if err := c.call(ctx, r); err != nil {
		return nil, err
	}
	return &out, nil
}

// page gets one page of a list at path.
func page[T any](ctx context.Context, c *Client, path string, q url.Values) (*api.Page[T], error) {
	return into[api.Page[T]](ctx, c, request{method: http.MethodGet, path: path, query: q})
}

// maxSmallDownload bounds a download read whole (a logo).
const maxSmallDownload = 4 << 20

// Documents

// DocumentService calls the routes of the company's documents (/dte).
type DocumentService struct{ c *Client }

// dtePage is the DTE list's answer, whose items are named "items"
// (contract §4.1; the other lists' "data").
type dtePage struct {
	Items      []api.DTE `json:"items"`
	NextCursor *string   `json:"next_cursor"`
	TotalCount int64     `json:"total_count"`
}

// List returns one page of the company's documents (GET /dte).
func (s *DocumentService) List(ctx context.Context, p api.DTEListParams) (*api.Page[api.DTE], error) {
	q := paging(values("tipo_dte", itoa(p.TipoDTE), "estado", string(p.Estado), "fecha_desde", p.FechaDesde,
		"fecha_hasta", p.FechaHasta, "rut_receptor", p.RutReceptor, "ambiente", p.Ambiente), p.ListParams)
	if p.Cedido {
		q.Set("cedido", "true")
	}
	var dp dtePage
	if err := s.c.call(ctx, request{method: http.MethodGet, path: "/dte", query: q, out: &dp}); err != nil {
		return nil, err
	}
	return &api.Page[api.DTE]{Data: dp.Items, NextCursor: dp.NextCursor, TotalCount: dp.TotalCount}, nil
}

// All iterates over every document p selects, page after page from
// p.Cursor.
func (s *DocumentService) All(ctx context.Context, p api.DTEListParams) iter.Seq2[api.DTE, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.DTE], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.List(ctx, p)
	})
}

// Emit emits a document (POST /dte) under p.IdempotencyKey, or a key the
// client makes: every retry of the call sends the same key, so a lost
// answer costs no second folio.
func (s *DocumentService) Emit(ctx context.Context, p api.EmitParams) (*api.EmitResponse, error) {
	if p.Request == nil {
		return nil, fmt.Errorf("client: Documents.Emit: the request is nil")
	}
	return into[api.EmitResponse](ctx, s.c, request{method: http.MethodPost, path: "/dte", body: p.Request,
		idempotencyKey: p.IdempotencyKey})
}

// Get reads one document (GET /dte/{id}); p.IncludeXML adds its signed
// XML as text.
func (s *DocumentService) Get(ctx context.Context, id string, p api.DTEGetParams) (*api.DTE, error) {
	var q url.Values
	if p.IncludeXML {
		q = values("include_xml", "true")
	}
	return into[api.DTE](ctx, s.c, request{method: http.MethodGet, path: "/dte/" + seg(id), query: q})
}

// PDF returns the printed document (GET /dte/{id}/pdf) as a stream the
// caller closes.
func (s *DocumentService) PDF(ctx context.Context, id string, opts api.PDFOptions) (io.ReadCloser, error) {
	q := values("formato", opts.Formato)
	if opts.Cedible {
		q.Set("cedible", "true")
	}
	return s.c.open(ctx, request{method: http.MethodGet, path: "/dte/" + seg(id) + "/pdf", query: q})
}

// XML returns the signed document (GET /dte/{id}/xml) as a stream the
// caller closes: the bytes the server holds, ISO-8859-1 as the SII wants
// them, never re-encoded.
func (s *DocumentService) XML(ctx context.Context, id string) (io.ReadCloser, error) {
	return s.c.open(ctx, request{method: http.MethodGet, path: "/dte/" + seg(id) + "/xml"})
}

// Submit sends a held document to the SII in an envelope of its own
// (POST /dte/{id}/enviar) under p.IdempotencyKey, or a key the client
// makes; p.LegacyOperation is the server's business and is not sent.
func (s *DocumentService) Submit(ctx context.Context, id string, p api.SubmitParams) (*api.Envio, error) {
	return into[api.Envio](ctx, s.c, request{method: http.MethodPost, path: "/dte/" + seg(id) + "/enviar",
		idempotencyKey: p.IdempotencyKey})
}

// ListCorreos returns one page of the mails of a document (GET
// /dte/{id}/correos).
func (s *DocumentService) ListCorreos(ctx context.Context, id string, p api.ListParams) (*api.Page[api.Correo], error) {
	return page[api.Correo](ctx, s.c, "/dte/"+seg(id)+"/correos", paging(nil, p))
}

// AllCorreos iterates over every mail of a document.
func (s *DocumentService) AllCorreos(ctx context.Context, id string, p api.ListParams) iter.Seq2[api.Correo, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Correo], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListCorreos(ctx, id, p)
	})
}

// Mail queues the mail of a document to its receptor (POST
// /dte/{id}/correo); a job sends it.
func (s *DocumentService) Mail(ctx context.Context, id string, p api.DTEMailParams) (*api.Correo, error) {
	var body any
	if p.Para != "" {
		body = struct {
			Para string `json:"para"`
		}{p.Para}
	}
	return into[api.Correo](ctx, s.c, request{method: http.MethodPost, path: "/dte/" + seg(id) + "/correo", body: body, once: true})
}

// Envelopes

// EnvelopeService calls the routes of the envelopes to the SII (/envios).
type EnvelopeService struct{ c *Client }

// Create packs held documents into one envelope to the SII (POST
// /envios) under req.IdempotencyKey, or a key the client makes.
func (s *EnvelopeService) Create(ctx context.Context, req api.EnvioRequest) (*api.Envio, error) {
	return into[api.Envio](ctx, s.c, request{method: http.MethodPost, path: "/envios", body: req,
		idempotencyKey: req.IdempotencyKey})
}

// Get reads one envelope (GET /envios/{id}).
func (s *EnvelopeService) Get(ctx context.Context, id string) (*api.Envio, error) {
	return into[api.Envio](ctx, s.c, request{method: http.MethodGet, path: "/envios/" + seg(id)})
}

// List returns one page of the envelopes (GET /envios), newest first.
func (s *EnvelopeService) List(ctx context.Context, p api.EnvioListParams) (*api.Page[api.Envio], error) {
	return page[api.Envio](ctx, s.c, "/envios", paging(values("ambiente", p.Ambiente), p.ListParams))
}

// All iterates over every envelope p selects.
func (s *EnvelopeService) All(ctx context.Context, p api.EnvioListParams) iter.Seq2[api.Envio, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Envio], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.List(ctx, p)
	})
}

// CAFs

// CAFService calls the routes of the folio authorizations (/caf).
type CAFService struct{ c *Client }

// Register adds a CAF (POST /caf).
func (s *CAFService) Register(ctx context.Context, in api.CAFInput) (*api.CAF, error) {
	return into[api.CAF](ctx, s.c, request{method: http.MethodPost, path: "/caf", body: in, once: true})
}

// Get reads one CAF (GET /caf/{id}).
func (s *CAFService) Get(ctx context.Context, id string) (*api.CAF, error) {
	return into[api.CAF](ctx, s.c, request{method: http.MethodGet, path: "/caf/" + seg(id)})
}

// List returns one page of the CAFs (GET /caf).
func (s *CAFService) List(ctx context.Context, p api.CAFListParams) (*api.Page[api.CAF], error) {
	return page[api.CAF](ctx, s.c, "/caf", paging(values("tipo_dte", itoa(p.TipoDTE), "ambiente", p.Ambiente), p.ListParams))
}

// All iterates over every CAF p selects.
func (s *CAFService) All(ctx context.Context, p api.CAFListParams) iter.Seq2[api.CAF, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.CAF], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.List(ctx, p)
	})
}

// Company

// CompanyService calls the routes of the caller's company (/empresa):
// its data, certificate, logo and alert settings.
type CompanyService struct{ c *Client }

// Get reads the company (GET /empresa).
func (s *CompanyService) Get(ctx context.Context) (*api.Empresa, error) {
	return into[api.Empresa](ctx, s.c, request{method: http.MethodGet, path: "/empresa"})
}

// Update changes the fields in of the company that are set (PUT
// /empresa); in.Logo is not sent (see SetLogo).
func (s *CompanyService) Update(ctx context.Context, in api.EmpresaUpdate) (*api.Empresa, error) {
	return into[api.Empresa](ctx, s.c, request{method: http.MethodPut, path: "/empresa", body: in})
}

// Certificate reads the state of the company's signing certificate (GET
// /empresa/certificado).
func (s *CompanyService) Certificate(ctx context.Context) (*api.CertificadoStatus, error) {
	return into[api.CertificadoStatus](ctx, s.c, request{method: http.MethodGet, path: "/empresa/certificado"})
}

// UploadCertificate installs the company's signing certificate (POST
// /empresa/certificado/pfx, a multipart form; the admin role).
func (s *CompanyService) UploadCertificate(ctx context.Context, in api.CertificadoUpload) (*api.CertificadoStatus, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "certificado.pfx")
	if err == nil {
		_, err = fw.Write(in.File)
	}
	if err == nil {
		err = mw.WriteField("password", in.Password)
	}
	if err == nil {
		err = mw.WriteField("rut_firmante", in.RutFirmante)
	}
	if err == nil {
		err = mw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("client: building the certificate form: %w", err)
	}
	return into[api.CertificadoStatus](ctx, s.c, request{method: http.MethodPost, path: "/empresa/certificado/pfx", raw: buf.Bytes(),
		contentType: mw.FormDataContentType()})
}

// Logo reads the company's logo (GET /empresa/logo); a company without
// one answers an *Error matching fault.NotFound.
func (s *CompanyService) Logo(ctx context.Context) (*api.Logo, error) {
	var resp Response
	body, err := s.c.open(WithResponse(ctx, &resp), request{method: http.MethodGet, path: "/empresa/logo"})
	report(ctx, &resp)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxSmallDownload+1))
	if err != nil {
		return nil, fmt.Errorf("client: reading the logo: %w", err)
	}
	if len(data) > maxSmallDownload {
		return nil, fmt.Errorf("client: the logo is larger than %d bytes", maxSmallDownload)
	}
	return &api.Logo{ContentType: resp.ContentType, Data: data}, nil
}

// LogoInfo is what setting a logo answers: its type and size.
type LogoInfo struct {
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
}

// SetLogo replaces the company's logo (PUT /empresa/logo) with a PNG or
// JPEG image, whose type is read from its first bytes.
func (s *CompanyService) SetLogo(ctx context.Context, image []byte) (*LogoInfo, error) {
	ct := http.DetectContentType(image)
	if ct != "image/png" && ct != "image/jpeg" {
		return nil, fmt.Errorf("client: Company.SetLogo: the image is %s, want a PNG or a JPEG", ct)
	}
	return into[LogoInfo](ctx, s.c, request{method: http.MethodPut, path: "/empresa/logo", raw: image, contentType: ct})
}

// DeleteLogo removes the company's logo (DELETE /empresa/logo).
func (s *CompanyService) DeleteLogo(ctx context.Context) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: "/empresa/logo"})
}

// AlertSettings reads the company's alert preferences (GET
// /empresa/alertas).
func (s *CompanyService) AlertSettings(ctx context.Context) (*api.AlertSettings, error) {
	return into[api.AlertSettings](ctx, s.c, request{method: http.MethodGet, path: "/empresa/alertas"})
}

// UpdateAlertSettings replaces the company's alert preferences (PUT
// /empresa/alertas).
func (s *CompanyService) UpdateAlertSettings(ctx context.Context, in api.AlertSettingsInput) (*api.AlertSettings, error) {
	return into[api.AlertSettings](ctx, s.c, request{method: http.MethodPut, path: "/empresa/alertas", body: in})
}

// Webhooks

// WebhookService calls the routes of the company's webhooks and their
// deliveries (/webhooks).
type WebhookService struct{ c *Client }

// List returns every webhook of the company (GET /webhooks: a whole
// list, not paged; a company has few).
func (s *WebhookService) List(ctx context.Context) ([]api.Webhook, error) {
	var out []api.Webhook
	if err := s.c.call(ctx, request{method: http.MethodGet, path: "/webhooks", out: &out}); err != nil {
		return nil, err
	}
	return out, nil
}

// Create adds a webhook (POST /webhooks); its answer carries the secret,
// the only time it is shown.
func (s *WebhookService) Create(ctx context.Context, in api.WebhookInput) (*api.Webhook, error) {
	return into[api.Webhook](ctx, s.c, request{method: http.MethodPost, path: "/webhooks", body: in, once: true})
}

// Get reads one webhook (GET /webhooks/{id}).
func (s *WebhookService) Get(ctx context.Context, id string) (*api.Webhook, error) {
	return s.one(ctx, http.MethodGet, id, "")
}

// Update changes the fields of in that are set (PATCH /webhooks/{id}).
func (s *WebhookService) Update(ctx context.Context, id string, in api.WebhookUpdate) (*api.Webhook, error) {
	return into[api.Webhook](ctx, s.c, request{method: http.MethodPatch, path: "/webhooks/" + seg(id), body: in})
}

// Delete removes a webhook (DELETE /webhooks/{id}).
func (s *WebhookService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: "/webhooks/" + seg(id)})
}

// RotateSecret replaces a webhook's secret (POST
// /webhooks/{id}/rotate-secret) with p.Secret, or one the server
// generates when it is "".
func (s *WebhookService) RotateSecret(ctx context.Context, id string, p api.WebhookSecretParams) (*api.Webhook, error) {
	var body any
	if p.Secret != "" {
		body = p
	}
	return into[api.Webhook](ctx, s.c, request{method: http.MethodPost, path: "/webhooks/" + seg(id) + "/rotate-secret", body: body})
}

// Enable turns a webhook back on (POST /webhooks/{id}/enable).
func (s *WebhookService) Enable(ctx context.Context, id string) (*api.Webhook, error) {
	return s.one(ctx, http.MethodPost, id, "/enable")
}

func (s *WebhookService) one(ctx context.Context, method, id, suffix string) (*api.Webhook, error) {
	return into[api.Webhook](ctx, s.c, request{method: method, path: "/webhooks/" + seg(id) + suffix})
}

// Ping queues a test delivery to a webhook (POST /webhooks/{id}/ping).
func (s *WebhookService) Ping(ctx context.Context, id string) (*api.Delivery, error) {
	return into[api.Delivery](ctx, s.c, request{method: http.MethodPost, path: "/webhooks/" + seg(id) + "/ping", once: true})
}

// ListDeliveries returns one page of a webhook's deliveries (GET
// /webhooks/{id}/deliveries), newest first.
func (s *WebhookService) ListDeliveries(ctx context.Context, p api.DeliveryListParams) (*api.Page[api.Delivery], error) {
	if p.WebhookID == "" {
		return nil, fmt.Errorf("client: Webhooks.ListDeliveries: WebhookID is required")
	}
	return page[api.Delivery](ctx, s.c, "/webhooks/"+seg(p.WebhookID)+"/deliveries", paging(nil, p.ListParams))
}

// AllDeliveries iterates over every delivery of a webhook.
func (s *WebhookService) AllDeliveries(ctx context.Context, p api.DeliveryListParams) iter.Seq2[api.Delivery, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Delivery], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListDeliveries(ctx, p)
	})
}

// GetDelivery reads one delivery of webhook p.WebhookID (GET
// /webhooks/{id}/deliveries/{delivery_id}).
func (s *WebhookService) GetDelivery(ctx context.Context, id string, p api.DeliveryParams) (*api.Delivery, error) {
	return s.delivery(ctx, http.MethodGet, id, p, "")
}

// ResendDelivery queues a delivery again (POST
// /webhooks/{id}/deliveries/{delivery_id}/resend).
func (s *WebhookService) ResendDelivery(ctx context.Context, id string, p api.DeliveryParams) (*api.Delivery, error) {
	return s.delivery(ctx, http.MethodPost, id, p, "/resend")
}

func (s *WebhookService) delivery(ctx context.Context, method, id string, p api.DeliveryParams, suffix string) (*api.Delivery, error) {
	if p.WebhookID == "" {
		return nil, fmt.Errorf("client: the delivery's WebhookID is required")
	}
	return into[api.Delivery](ctx, s.c, request{method: method, path: "/webhooks/" + seg(p.WebhookID) + "/deliveries/" + seg(id) + suffix,
		once: method == http.MethodPost})
}

// Catalog

// CatalogService calls the routes of the company's catalog: its
// customers (/clientes) and products (/productos).
type CatalogService struct{ c *Client }

// ListClientes returns one page of the customers (GET /clientes), or of
// those matching p.Q when it is set (GET /clientes/search).
func (s *CatalogService) ListClientes(ctx context.Context, p api.ClienteListParams) (*api.Page[api.Cliente], error) {
	return catalogPage[api.Cliente](ctx, s.c, "/clientes", p.Q, p.ListParams)
}

// AllClientes iterates over every customer p selects.
func (s *CatalogService) AllClientes(ctx context.Context, p api.ClienteListParams) iter.Seq2[api.Cliente, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Cliente], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListClientes(ctx, p)
	})
}

// CreateCliente adds a customer (POST /clientes).
func (s *CatalogService) CreateCliente(ctx context.Context, in api.ClienteInput) (*api.Cliente, error) {
	return into[api.Cliente](ctx, s.c, request{method: http.MethodPost, path: "/clientes", body: in, once: true})
}

// GetCliente reads one customer (GET /clientes/{id}).
func (s *CatalogService) GetCliente(ctx context.Context, id string) (*api.Cliente, error) {
	return into[api.Cliente](ctx, s.c, request{method: http.MethodGet, path: "/clientes/" + seg(id)})
}

// UpdateCliente changes the fields of in that are set (PUT
// /clientes/{id}).
func (s *CatalogService) UpdateCliente(ctx context.Context, id string, in api.ClienteUpdate) (*api.Cliente, error) {
	return into[api.Cliente](ctx, s.c, request{method: http.MethodPut, path: "/clientes/" + seg(id), body: in})
}

// DeleteCliente removes a customer (DELETE /clientes/{id}).
func (s *CatalogService) DeleteCliente(ctx context.Context, id string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: "/clientes/" + seg(id)})
}

// ListProductos returns one page of the products (GET /productos), or
// of those matching p.Q when it is set (GET /productos/search).
func (s *CatalogService) ListProductos(ctx context.Context, p api.ProductoListParams) (*api.Page[api.Producto], error) {
	return catalogPage[api.Producto](ctx, s.c, "/productos", p.Q, p.ListParams)
}

// AllProductos iterates over every product p selects.
func (s *CatalogService) AllProductos(ctx context.Context, p api.ProductoListParams) iter.Seq2[api.Producto, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Producto], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListProductos(ctx, p)
	})
}

// CreateProducto adds a product (POST /productos).
func (s *CatalogService) CreateProducto(ctx context.Context, in api.ProductoInput) (*api.Producto, error) {
	return into[api.Producto](ctx, s.c, request{method: http.MethodPost, path: "/productos", body: in, once: true})
}

// GetProducto reads one product (GET /productos/{id}).
func (s *CatalogService) GetProducto(ctx context.Context, id string) (*api.Producto, error) {
	return into[api.Producto](ctx, s.c, request{method: http.MethodGet, path: "/productos/" + seg(id)})
}

// UpdateProducto changes the fields of in that are set (PUT
// /productos/{id}).
func (s *CatalogService) UpdateProducto(ctx context.Context, id string, in api.ProductoUpdate) (*api.Producto, error) {
	return into[api.Producto](ctx, s.c, request{method: http.MethodPut, path: "/productos/" + seg(id), body: in})
}

// DeleteProducto removes a product (DELETE /productos/{id}).
func (s *CatalogService) DeleteProducto(ctx context.Context, id string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: "/productos/" + seg(id)})
}

// catalogPage gets a page of a catalog at base, or of its search when q
// is set.
func catalogPage[T any](ctx context.Context, c *Client, base, q string, lp api.ListParams) (*api.Page[T], error) {
	if q != "" {
		return page[T](ctx, c, base+"/search", paging(values("q", q), lp))
	}
	return page[T](ctx, c, base, paging(nil, lp))
}

// Received documents

// ReceivedService calls the routes of the inbox: the documents suppliers
// sent the company (/recibidos), the files they came in (/recepciones),
// the answers of the company's receptors (/respuestas) and the inbox's
// quota (/empresa/recepcion).
type ReceivedService struct{ c *Client }

// Receive takes a file a supplier sent, an EnvioDTE, as received (POST
// /recibidos, the XML itself as the body). The very same file received
// before answers its first reception with Duplicado set.
func (s *ReceivedService) Receive(ctx context.Context, p api.ReceiveParams) (*api.Recepcion, error) {
	return into[api.Recepcion](ctx, s.c, request{method: http.MethodPost, path: "/recibidos", query: values("correo_emisor", p.CorreoEmisor),
		raw: nonNil(p.XML), contentType: "application/xml"})
}

// nonNil makes an empty body a body, so that the server names it.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// List returns one page of the received documents (GET /recibidos),
// newest first.
func (s *ReceivedService) List(ctx context.Context, p api.RecibidoListParams) (*api.Page[api.Recibido], error) {
	q := values("ambiente", p.Ambiente, "rut_emisor", p.RutEmisor, "tipo_dte", itoa(p.TipoDTE), "estado", string(p.Estado),
		"fecha_desde", p.FechaDesde, "fecha_hasta", p.FechaHasta)
	if p.DiasRestantes != nil {
		q.Set("dias_restantes", strconv.Itoa(*p.DiasRestantes))
	}
	return page[api.Recibido](ctx, s.c, "/recibidos", paging(q, p.ListParams))
}

// All iterates over every received document p selects.
func (s *ReceivedService) All(ctx context.Context, p api.RecibidoListParams) iter.Seq2[api.Recibido, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Recibido], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one received document (GET /recibidos/{id}).
func (s *ReceivedService) Get(ctx context.Context, id string) (*api.Recibido, error) {
	return into[api.Recibido](ctx, s.c, request{method: http.MethodGet, path: "/recibidos/" + seg(id)})
}

// XML returns a received document as the supplier signed it (GET
// /recibidos/{id}/xml), a stream the caller closes.
func (s *ReceivedService) XML(ctx context.Context, id string) (io.ReadCloser, error) {
	return s.c.open(ctx, request{method: http.MethodGet, path: "/recibidos/" + seg(id) + "/xml"})
}

// PDF returns a received document printed (GET /recibidos/{id}/pdf), a
// stream the caller closes.
func (s *ReceivedService) PDF(ctx context.Context, id string) (io.ReadCloser, error) {
	return s.c.open(ctx, request{method: http.MethodGet, path: "/recibidos/" + seg(id) + "/pdf"})
}

// Aceptar accepts a received document (POST /recibidos/{id}/aceptar; the
// SII's registry action ACD).
func (s *ReceivedService) Aceptar(ctx context.Context, id string) (*api.Recibido, error) {
	return s.decide(ctx, id, "/aceptar", nil)
}

// Reclamar claims a received document (POST /recibidos/{id}/reclamar):
// in.Accion is the claim, "RCD" (its content; the default when ""),
// "RFP" or "RFT" (a partial or total lack of goods), and in.Motivo the
// reason; in.Recinto is not sent.
func (s *ReceivedService) Reclamar(ctx context.Context, id string, in api.DecisionInput) (*api.Recibido, error) {
	return s.decide(ctx, id, "/reclamar", struct {
		Tipo   string `json:"tipo,omitempty"`
		Motivo string `json:"motivo"`
	}{in.Accion, in.Motivo})
}

// Recibo registers the receipt of the goods or services of a received
// document (POST /recibidos/{id}/recibo; the registry's ERM) at
// in.Recinto (the company's address when ""); in.Accion and in.Motivo
// are not sent.
func (s *ReceivedService) Recibo(ctx context.Context, id string, in api.DecisionInput) (*api.Recibido, error) {
	var body any
	if in.Recinto != "" {
		body = struct {
			Recinto string `json:"recinto"`
		}{in.Recinto}
	}
	return s.decide(ctx, id, "/recibo", body)
}

// decide registers a decision. A decision is made once (a second one is
// refused as INVALID_STATE), so it is not resent after a network error.
func (s *ReceivedService) decide(ctx context.Context, id, suffix string, body any) (*api.Recibido, error) {
	return into[api.Recibido](ctx, s.c, request{method: http.MethodPost, path: "/recibidos/" + seg(id) + suffix, body: body, once: true})
}

// Refresh asks the SII's registry about the pending received documents
// now, as the hourly job does (POST /recibidos/actualizar), and returns
// once it is done.
func (s *ReceivedService) Refresh(ctx context.Context) error {
	return s.c.call(ctx, request{method: http.MethodPost, path: "/recibidos/actualizar"})
}

// ListCorreos returns one page of the mails about a received document
// (GET /recibidos/{id}/correos): the answers mailed to its supplier.
func (s *ReceivedService) ListCorreos(ctx context.Context, id string, p api.ListParams) (*api.Page[api.Correo], error) {
	return page[api.Correo](ctx, s.c, "/recibidos/"+seg(id)+"/correos", paging(nil, p))
}

// AllCorreos iterates over every mail about a received document.
func (s *ReceivedService) AllCorreos(ctx context.Context, id string, p api.ListParams) iter.Seq2[api.Correo, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Correo], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListCorreos(ctx, id, p)
	})
}

// ListRecepciones returns one page of the received files (GET
// /recepciones), newest first.
func (s *ReceivedService) ListRecepciones(ctx context.Context, p api.RecepcionListParams) (*api.Page[api.Recepcion], error) {
	return page[api.Recepcion](ctx, s.c, "/recepciones", paging(values("ambiente", p.Ambiente), p.ListParams))
}

// AllRecepciones iterates over every received file p selects.
func (s *ReceivedService) AllRecepciones(ctx context.Context, p api.RecepcionListParams) iter.Seq2[api.Recepcion, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Recepcion], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListRecepciones(ctx, p)
	})
}

// GetRecepcion reads one received file (GET /recepciones/{id}).
func (s *ReceivedService) GetRecepcion(ctx context.Context, id string) (*api.Recepcion, error) {
	return into[api.Recepcion](ctx, s.c, request{method: http.MethodGet, path: "/recepciones/" + seg(id)})
}

// ReceiveRespuesta records an answer a receptor sent about the company's
// documents, a RespuestaDTE or an EnvioRecibos as received (POST
// /respuestas, the XML itself as the body).
func (s *ReceivedService) ReceiveRespuesta(ctx context.Context, p api.ReceiveRespuestaParams) (*api.RespuestaRecibida, error) {
	return into[api.RespuestaRecibida](ctx, s.c, request{method: http.MethodPost, path: "/respuestas", raw: nonNil(p.XML), contentType: "application/xml"})
}

// Settings reads the inbox's quota and retention (GET
// /empresa/recepcion).
func (s *ReceivedService) Settings(ctx context.Context) (*api.RecepcionSettings, error) {
	return into[api.RecepcionSettings](ctx, s.c, request{method: http.MethodGet, path: "/empresa/recepcion"})
}

// UpdateSettings sets the company's own limits of its inbox (PUT
// /empresa/recepcion; the admin role).
func (s *ReceivedService) UpdateSettings(ctx context.Context, in api.RecepcionLimits) (*api.RecepcionSettings, error) {
	return into[api.RecepcionSettings](ctx, s.c, request{method: http.MethodPut, path: "/empresa/recepcion", body: in})
}

// Mail

// MailService calls the routes of the company's mail: the mails sent
// (/correos), the mail settings and the mailbox (/empresa/correo).
type MailService struct{ c *Client }

// List returns one page of the company's mails (GET /correos), those of
// p.DTEID or p.RecibidoID when set.
func (s *MailService) List(ctx context.Context, p api.CorreoListParams) (*api.Page[api.Correo], error) {
	return page[api.Correo](ctx, s.c, "/correos", paging(values("dte_id", p.DTEID, "recibido_id", p.RecibidoID), p.ListParams))
}

// All iterates over every mail p selects.
func (s *MailService) All(ctx context.Context, p api.CorreoListParams) iter.Seq2[api.Correo, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Correo], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one mail (GET /correos/{id}).
func (s *MailService) Get(ctx context.Context, id string) (*api.Correo, error) {
	return into[api.Correo](ctx, s.c, request{method: http.MethodGet, path: "/correos/" + seg(id)})
}

// Settings reads the company's mail settings (GET /empresa/correo);
// passwords are never shown, only whether they are set.
func (s *MailService) Settings(ctx context.Context) (*api.CorreoSettings, error) {
	return into[api.CorreoSettings](ctx, s.c, request{method: http.MethodGet, path: "/empresa/correo"})
}

// UpdateSettings replaces the company's mail settings (PUT
// /empresa/correo; the admin role). in.Buzon, the mailbox's state, is
// the server's and is not sent.
func (s *MailService) UpdateSettings(ctx context.Context, in api.CorreoSettings) (*api.CorreoSettings, error) {
	in.Buzon = nil
	return into[api.CorreoSettings](ctx, s.c, request{method: http.MethodPut, path: "/empresa/correo", body: in})
}

// Poll reads the company's mailbox now, as the periodic job does (POST
// /empresa/correo/leer).
func (s *MailService) Poll(ctx context.Context) (*api.LecturaCorreo, error) {
	return into[api.LecturaCorreo](ctx, s.c, request{method: http.MethodPost, path: "/empresa/correo/leer"})
}

// ListMensajes returns one page of the mails read from the company's
// mailbox (GET /empresa/correo/mensajes), newest first.
func (s *MailService) ListMensajes(ctx context.Context, p api.MensajeListParams) (*api.Page[api.Mensaje], error) {
	return page[api.Mensaje](ctx, s.c, "/empresa/correo/mensajes", paging(nil, p.ListParams))
}

// AllMensajes iterates over every mail read from the mailbox.
func (s *MailService) AllMensajes(ctx context.Context, p api.MensajeListParams) iter.Seq2[api.Mensaje, error] {
	return all(ctx, func(ctx context.Context, cursor string) (*api.Page[api.Mensaje], error) {
		if cursor != "" {
			p.Cursor = cursor
		}
		return s.ListMensajes(ctx, p)
	})
}
