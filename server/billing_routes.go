package server

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// billingRoutes registers the routes of contract §4.
func (s *Server) billingRoutes() {
	const base = "/api/v1/billing"
	// DTE
	s.handle("GET "+base+"/dte", read, s.listDTE)
	s.handle("POST "+base+"/dte", write, s.emitDTE)
	s.handle("GET "+base+"/dte/{id}", read, s.getDTE)
	s.handle("GET "+base+"/dte/{id}/pdf", read, s.getDTEPDF)
	s.handle("GET "+base+"/dte/{id}/xml", read, s.getDTEXML)
	s.handle("POST "+base+"/dte/{id}/enviar", write, s.submitDTE)
	s.cesionRoutes(base)
	// Envelopes to the SII
	s.handle("GET "+base+"/envios", read, s.listEnvios)
	s.handle("POST "+base+"/envios", write, s.createEnvio)
	s.handle("GET "+base+"/envios/{id}", read, byID(http.StatusOK, s.billing.Envelopes.Get))
	// CAF
	s.handle("GET "+base+"/caf", read, s.listCAF)
	s.handle("POST "+base+"/caf", write, withBody(maxCAFBody, http.StatusCreated, s.billing.CAFs.Register))
	s.handle("GET "+base+"/caf/{id}", read, byID(http.StatusOK, s.billing.CAFs.Get))
	// Empresa and certificate
	s.handle("GET "+base+"/empresa", read, ofTenant(s.billing.Company.Get))
	s.handle("PUT "+base+"/empresa", write, withBody(maxJSONBody, http.StatusOK, s.billing.Company.Update))
	s.handle("GET "+base+"/empresa/certificado", read, ofTenant(s.billing.Company.Certificate))
	s.handle("GET "+base+"/empresa/logo", read, s.getLogo)
	s.handle("PUT "+base+"/empresa/logo", write, s.putLogo)
	s.handle("DELETE "+base+"/empresa/logo", write, s.deleteLogo)
	s.handle("POST "+base+"/empresa/certificado/pfx", admin, s.uploadCertificado)
	s.handle("GET "+base+"/empresa/alertas", read, ofTenant(s.billing.Company.AlertSettings))
	s.handle("PUT "+base+"/empresa/alertas", write, withBody(maxJSONBody, http.StatusOK, s.billing.Company.UpdateAlertSettings))
	// Webhooks
	s.handle("GET "+base+"/webhooks", read, s.listWebhooks)
	s.handle("POST "+base+"/webhooks", write, withBody(maxJSONBody, http.StatusCreated, s.billing.Webhooks.Create))
	s.handle("GET "+base+"/webhooks/{id}", read, byID(http.StatusOK, s.billing.Webhooks.Get))
	s.handle("PATCH "+base+"/webhooks/{id}", write, byIDWithBody(s.billing.Webhooks.Update))
	s.handle("DELETE "+base+"/webhooks/{id}", write, deleteByID(s.billing.Webhooks.Delete))
	s.handle("POST "+base+"/webhooks/{id}/rotate-secret", write, s.rotateWebhookSecret)
	s.handle("POST "+base+"/webhooks/{id}/enable", write, byID(http.StatusOK, s.billing.Webhooks.Enable))
	s.handle("POST "+base+"/webhooks/{id}/ping", write, byID(http.StatusAccepted, s.billing.Webhooks.Ping))
	s.handle("GET "+base+"/webhooks/{id}/deliveries", read, s.listDeliveries)
	s.handle("GET "+base+"/webhooks/{id}/deliveries/{delivery_id}", read, byDelivery(http.StatusOK, s.billing.Webhooks.GetDelivery))
	s.handle("POST "+base+"/webhooks/{id}/deliveries/{delivery_id}/resend", write, byDelivery(http.StatusAccepted, s.billing.Webhooks.ResendDelivery))
	// Clientes
	s.handle("GET "+base+"/clientes", read, catalogPage(false, clienteParams, s.billing.Catalog.ListClientes))
	s.handle("GET "+base+"/clientes/search", read, catalogPage(true, clienteParams, s.billing.Catalog.ListClientes))
	s.handle("POST "+base+"/clientes", write, withBody(maxJSONBody, http.StatusCreated, s.billing.Catalog.CreateCliente))
	s.handle("GET "+base+"/clientes/{id}", read, byID(http.StatusOK, s.billing.Catalog.GetCliente))
	s.handle("PUT "+base+"/clientes/{id}", write, byIDWithBody(s.billing.Catalog.UpdateCliente))
	s.handle("DELETE "+base+"/clientes/{id}", write, deleteByID(s.billing.Catalog.DeleteCliente))
	// Productos
	s.handle("GET "+base+"/productos", read, catalogPage(false, productoParams, s.billing.Catalog.ListProductos))
	s.handle("GET "+base+"/productos/search", read, catalogPage(true, productoParams, s.billing.Catalog.ListProductos))
	s.handle("POST "+base+"/productos", write, withBody(maxJSONBody, http.StatusCreated, s.billing.Catalog.CreateProducto))
	s.handle("GET "+base+"/productos/{id}", read, byID(http.StatusOK, s.billing.Catalog.GetProducto))
	s.handle("PUT "+base+"/productos/{id}", write, byIDWithBody(s.billing.Catalog.UpdateProducto))
	s.handle("DELETE "+base+"/productos/{id}", write, deleteByID(s.billing.Catalog.DeleteProducto))
}

// deleted is the body of a successful delete.
var deleted = map[string]string{"status": "deleted"}

// DTE

func (s *Server) listDTE(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var f api.DTEListParams
	var err error
	if f.TipoDTE, err = queryTipo(r); err != nil {
		return err
	}
	// billing checks the state (dte.Estado.Valid) with the other filters.
	f.Estado = dte.Estado(r.URL.Query().Get("estado"))
	if f.FechaDesde, err = queryDate(r, "fecha_desde"); err != nil {
		return err
	}
	if f.FechaHasta, err = queryDate(r, "fecha_hasta"); err != nil {
		return err
	}
	f.RutReceptor = r.URL.Query().Get("rut_receptor")
	if f.Cedido, err = queryBool(r, "cedido"); err != nil {
		return err
	}
	// billing checks the environment with the other filters.
	f.Ambiente = r.URL.Query().Get("ambiente")
	f.Cursor = r.URL.Query().Get("cursor")
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	page, err := s.billing.Documents.List(r.Context(), p.EmpresaID, f)
	if err != nil {
		return err
	}
	if page.Data == nil {
		page.Data = []api.DTE{}
	}
	// The contract names the DTE list's items "items" (the other lists'
	// "data").
	writeJSON(w, http.StatusOK, dtePage{Items: page.Data, NextCursor: page.NextCursor, TotalCount: page.TotalCount})
	return nil
}

// dtePage is the body of the DTE list (contract §4.1).
type dtePage struct {
	Items      []api.DTE `json:"items"`
	NextCursor *string   `json:"next_cursor"`
	TotalCount int64     `json:"total_count"`
}

func (s *Server) emitDTE(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	start := time.Now()
	body, err := readBody(w, r, "application/json", dte.MaxRequestBytes)
	if err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	key, err = billing.ParseIdempotencyKey(key)
	if err != nil {
		return err
	}
	req, err := dte.DecodeRequest(bytes.NewReader(body))
	if err != nil {
		var ve *dte.ValidationError
		if errors.As(err, &ve) {
			return err
		}
		return validation("the request body cannot be read",
			dte.FieldError{Field: "body", Code: dte.CodeInvalidJSON, Message: "the request body cannot be read: " + err.Error()})
	}
	res, replayed, err := s.billing.Documents.Emit(r.Context(), p.EmpresaID, api.EmitParams{IdempotencyKey: key, Request: req})
	if err != nil {
		return err
	}
	// A replay answers the first response: the same value, encoded the
	// same way, so the same bytes.
	if replayed {
		w.Header().Set("X-Idempotency-Replay", "true")
	} else {
		s.metrics.emission.Observe(time.Since(start).Seconds())
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

func (s *Server) getDTE(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	withXML, err := queryBool(r, "include_xml")
	if err != nil {
		return err
	}
	d, err := s.billing.Documents.Get(r.Context(), p.EmpresaID, id, api.DTEGetParams{IncludeXML: withXML})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) getDTEPDF(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var opts api.PDFOptions
	if opts.Cedible, err = queryBool(r, "cedible"); err != nil {
		return err
	}
	switch c := r.URL.Query().Get("copy"); c {
	case "":
	case "cedible":
		opts.Cedible = true
	default:
		return invalidParam("copy", dte.CodeInvalidValue, "copy takes only the value cedible")
	}
	switch f := r.URL.Query().Get("formato"); f {
	case "", "carta", "80mm":
		opts.Formato = f
	default:
		return invalidParam("formato", dte.CodeInvalidValue, "formato must be carta or 80mm")
	}
	pdf, err := s.billing.Documents.PDF(r.Context(), p.EmpresaID, id, opts)
	if err != nil {
		return err
	}
	writeDocument(w, "application/pdf", `inline; filename="DTE-`+id+`.pdf"`, pdf)
	return nil
}

// submitDTE sends a held document to the SII in an envelope of its own
// and answers the envelope. The body is optional: none, or an empty JSON
// object.
func (s *Server) submitDTE(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	key, err := billing.ParseIdempotencyKey(r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	if r.ContentLength != 0 {
		var none struct{}
		if err := decodeJSON(w, r, maxJSONBody, &none); err != nil {
			return err
		}
	}
	e, replayed, err := s.billing.Envelopes.Submit(r.Context(), p.EmpresaID, id,
		api.SubmitParams{IdempotencyKey: key, LegacyOperation: legacySubmitOperation(id)})
	return writeEnvio(w, e, replayed, err)
}

// createEnvio packs held documents into one envelope to the SII.
func (s *Server) createEnvio(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	key, err := billing.ParseIdempotencyKey(r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	var in api.EnvioRequest
	if err := decodeJSON(w, r, maxJSONBody, &in); err != nil {
		return err
	}
	in.IdempotencyKey, in.LegacyOperation = key, legacyEnvioOperation
	e, replayed, err := s.billing.Envelopes.Create(r.Context(), p.EmpresaID, in)
	return writeEnvio(w, e, replayed, err)
}

// The operation names versions before 2026-11-29 recorded an envelope
// request's Idempotency-Key with: the route that reached it, the
// document's id in canonical form (pathID's) for /enviar. The server
// passes them so that such a key still replays (api.SubmitParams).
const legacyEnvioOperation = "POST /api/v1/billing/envios"

func legacySubmitOperation(id string) string { return "POST /api/v1/billing/dte/" + id + "/enviar" }

// writeEnvio answers a new envelope with 201, or the first answer of its
// Idempotency-Key, encoded the same way (so the same bytes), with
// X-Idempotency-Replay.
func writeEnvio(w http.ResponseWriter, e *api.Envio, replayed bool, err error) error {
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("X-Idempotency-Replay", "true")
	}
	writeJSON(w, http.StatusCreated, e)
	return nil
}

// writeDocument answers a downloaded document: its type, never sniffed
// into another, and no-store, since it carries a company's data and a
// shared cache must not keep it.
func writeDocument(w http.ResponseWriter, contentType, disposition string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Content-Disposition", disposition)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (s *Server) getDTEXML(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	xml, err := s.billing.Documents.XML(r.Context(), p.EmpresaID, id)
	if err != nil {
		return err
	}
	writeDocument(w, "application/xml; charset=ISO-8859-1", `attachment; filename="DTE-`+id+`.xml"`, xml)
	return nil
}

// CAF

func (s *Server) listCAF(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var f api.CAFListParams
	var err error
	if f.TipoDTE, err = queryTipo(r); err != nil {
		return err
	}
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	f.Cursor = r.URL.Query().Get("cursor")
	f.Ambiente = r.URL.Query().Get("ambiente")
	page, err := s.billing.CAFs.List(r.Context(), p.EmpresaID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// listEnvios lists the envelopes of one environment (ambiente; the
// company's current one when absent, todos for both).
func (s *Server) listEnvios(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var f api.EnvioListParams
	var err error
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	f.Cursor = r.URL.Query().Get("cursor")
	f.Ambiente = r.URL.Query().Get("ambiente")
	page, err := s.billing.Envelopes.List(r.Context(), p.EmpresaID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// Empresa and certificate

// maxFormField bounds the text fields of the certificate upload.
const maxFormField = 1024

func (s *Server) uploadCertificado(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return newError(http.StatusUnsupportedMediaType, fault.UnsupportedMediaType, "the body must be multipart/form-data")
	}
	if r.ContentLength > maxCertBody {
		return tooLarge(maxCertBody)
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxCertBody)
	mr, err := r.MultipartReader()
	if err != nil {
		return validation("the body is not a multipart form",
			dte.FieldError{Field: "$", Code: dte.CodeInvalidFormat, Message: "the body is not a valid multipart/form-data body"})
	}
	var file []byte
	fields := map[string]string{}
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return formError(err)
		}
		name := part.FormName()
		if seen[name] {
			return validation("repeated form field "+name, dte.FieldError{Field: name, Code: dte.CodeNotAllowed, Message: "the field is sent more than once"})
		}
		seen[name] = true
		switch name {
		case "file":
			// One byte over the limit lets billing report the size.
			file, err = io.ReadAll(io.LimitReader(part, billing.MaxCertificateSize+1))
		case "password", "rut_firmante":
			var b []byte
			b, err = io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err == nil && len(b) > maxFormField {
				return validation("field "+name+" is too long", dte.FieldError{Field: name, Code: dte.CodeTooLong, Message: "at most 1024 bytes"})
			}
			fields[name] = string(b)
		default:
			return validation("unknown form field "+strconv.Quote(name),
				dte.FieldError{Field: name, Code: dte.CodeUnknownField, Message: "unknown field " + strconv.Quote(name), Action: "send only file, password and rut_firmante"})
		}
		if err != nil {
			return formError(err)
		}
	}
	var missing []dte.FieldError
	for _, name := range []string{"file", "password", "rut_firmante"} {
		if !seen[name] {
			missing = append(missing, dte.FieldError{Field: name, Code: dte.CodeRequired, Message: "the form field " + name + " is required"})
		}
	}
	if len(missing) > 0 {
		return validation("the form lacks required fields", missing...)
	}
	st, err := s.billing.Company.UploadCertificate(r.Context(), p.EmpresaID,
		api.CertificadoUpload{File: file, Password: fields["password"], RutFirmante: fields["rut_firmante"]})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// formError maps a multipart reading error: the body limit answers 413,
// anything else is a malformed form.
func formError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	return validation("the body is not a valid multipart form",
		dte.FieldError{Field: "$", Code: dte.CodeInvalidFormat, Message: "the multipart body could not be read"})
}

// Webhooks

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	hooks, err := s.billing.Webhooks.List(r.Context(), p.EmpresaID)
	if err != nil {
		return err
	}
	if hooks == nil {
		hooks = []api.Webhook{}
	}
	writeJSON(w, http.StatusOK, hooks)
	return nil
}

func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	// The body is optional: without one the server generates the secret.
	var in api.WebhookSecretParams
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, maxJSONBody, &in); err != nil {
			return err
		}
	}
	h, err := s.billing.Webhooks.RotateSecret(r.Context(), p.EmpresaID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h)
	return nil
}

func (s *Server) listDeliveries(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	lp, _, err := listParams(r, false)
	if err != nil {
		return err
	}
	page, err := s.billing.Webhooks.ListDeliveries(r.Context(), p.EmpresaID, api.DeliveryListParams{ListParams: lp, WebhookID: id})
	if err != nil {
		return err
	}
	if page.Data == nil {
		page.Data = []api.Delivery{}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// listParams reads cursor, limit and, for searches, the required q.
func listParams(r *http.Request, search bool) (lp api.ListParams, q string, err error) {
	if lp.Limit, err = queryLimit(r); err != nil {
		return lp, "", err
	}
	lp.Cursor = r.URL.Query().Get("cursor")
	if search {
		q = r.URL.Query().Get("q")
		if q == "" {
			return lp, "", invalidParam("q", dte.CodeRequired, "q, the text to search, is required")
		}
		if len([]rune(q)) > 100 {
			return lp, "", invalidParam("q", dte.CodeTooLong, "q holds at most 100 characters")
		}
	}
	return lp, q, nil
}

// Logo

func (s *Server) getLogo(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	l, err := s.billing.Company.Logo(r.Context(), p.EmpresaID)
	if err != nil {
		return err
	}
	ext := map[string]string{"image/png": "png", "image/jpeg": "jpg"}[l.ContentType]
	writeDocument(w, l.ContentType, `inline; filename="logo.`+ext+`"`, l.Data)
	return nil
}

// putLogo reads the logo as the body, image/png or image/jpeg.
func (s *Server) putLogo(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "image/png" && ct != "image/jpeg" {
		return newError(http.StatusUnsupportedMediaType, fault.UnsupportedMediaType, "the body must be image/png or image/jpeg")
	}
	body, err := readBody(w, r, ct, billing.MaxLogoSize)
	if err != nil {
		return err
	}
	l, err := s.billing.Company.SetLogo(r.Context(), p.EmpresaID, body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"content_type": l.ContentType, "size": len(l.Data)})
	return nil
}

func (s *Server) deleteLogo(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	if err := s.billing.Company.DeleteLogo(r.Context(), p.EmpresaID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deleted)
	return nil
}
