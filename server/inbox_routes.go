package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
)

// inboxRoutes registers the routes of the inbox (documents received from
// suppliers, answers from receptors) and of mail, beyond contract 0.2.0.
func (s *Server) inboxRoutes() {
	const base = "/api/v1/billing"
	// Received documents
	s.handle("POST "+base+"/recibidos", write, s.receiveDTE)
	s.handle("GET "+base+"/recibidos", read, s.listRecibidos)
	s.handle("POST "+base+"/recibidos/actualizar", write, s.refreshRecibidos)
	s.handle("GET "+base+"/recibidos/{id}", read, byID(http.StatusOK, s.billing.Received.Get))
	s.handle("GET "+base+"/recibidos/{id}/xml", read, s.getRecibidoXML)
	s.handle("GET "+base+"/recibidos/{id}/pdf", read, s.getRecibidoPDF)
	s.handle("POST "+base+"/recibidos/{id}/aceptar", write, s.aceptarRecibido)
	s.handle("POST "+base+"/recibidos/{id}/reclamar", write, s.reclamarRecibido)
	s.handle("POST "+base+"/recibidos/{id}/recibo", write, s.reciboRecibido)
	s.handle("GET "+base+"/recibidos/{id}/correos", read, s.listRecibidoCorreos)
	s.handle("GET "+base+"/recepciones", read, s.listRecepciones)
	s.handle("GET "+base+"/recepciones/{id}", read, byID(http.StatusOK, s.billing.Received.GetRecepcion))
	// Answers of the company's receptors
	s.handle("POST "+base+"/respuestas", write, s.receiveRespuesta)
	// Mail
	s.handle("GET "+base+"/correos", read, s.listCorreos)
	s.handle("GET "+base+"/correos/{id}", read, byID(http.StatusOK, s.billing.Mail.Get))
	s.handle("GET "+base+"/dte/{id}/correos", read, s.listDTECorreos)
	s.handle("POST "+base+"/dte/{id}/correo", write, s.mailDTE)
	s.handle("GET "+base+"/empresa/correo", read, ofTenant(s.billing.Mail.Settings))
	s.handle("PUT "+base+"/empresa/correo", admin, s.putCorreo)
	s.handle("POST "+base+"/empresa/correo/leer", write, s.pollMailbox)
	s.handle("GET "+base+"/empresa/correo/mensajes", read, s.listMensajes)
	// The inbox's quota and retention
	s.handle("GET "+base+"/empresa/recepcion", read, ofTenant(s.billing.Received.Settings))
	s.handle("PUT "+base+"/empresa/recepcion", admin, withBody(maxJSONBody, http.StatusOK, s.billing.Received.UpdateSettings))
}

// readXML reads an XML body (application/xml or text/xml) of at most
// billing.MaxRecibidoBytes (413 beyond); an empty one is refused.
func readXML(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/xml" && mt != "text/xml") {
		return nil, newError(http.StatusUnsupportedMediaType, fault.UnsupportedMediaType, "the body must be the XML file itself, application/xml or text/xml")
	}
	b, err := readBody(w, r, mt, billing.MaxRecibidoBytes)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, validation("the body is empty", dte.FieldError{Field: "$", Code: dte.CodeRequired, Message: "the body must be the XML file received"})
	}
	return b, nil
}

// optionalBody decodes an optional JSON body into dst: none (no
// Content-Length, or 0) leaves dst as it is.
func optionalBody(w http.ResponseWriter, r *http.Request, dst any) error {
	if r.ContentLength == 0 {
		return nil
	}
	return decodeJSON(w, r, maxJSONBody, dst)
}

// Received documents

// receiveDTE takes an EnvioDTE a supplier sent: 201 with the new
// reception, 200 with duplicado true when the very same file was received
// before.
func (s *Server) receiveDTE(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	if err := s.allowUpload(p.EmpresaID); err != nil {
		return err
	}
	body, err := readXML(w, r)
	if err != nil {
		return err
	}
	rec, err := s.billing.Received.Receive(r.Context(), p.EmpresaID, api.ReceiveParams{XML: body, CorreoEmisor: r.URL.Query().Get("correo_emisor")})
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if rec.Duplicado {
		status = http.StatusOK
	}
	writeJSON(w, status, rec)
	return nil
}

func (s *Server) listRecibidos(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	q := r.URL.Query()
	var f api.RecibidoListParams
	tipo, err := queryTipo(r)
	if err != nil {
		return err
	}
	f.TipoDTE = int(tipo)
	// billing checks the state with the other filters.
	f.Estado = api.EstadoRecibido(q.Get("estado"))
	if f.FechaDesde, err = queryDate(r, "fecha_desde"); err != nil {
		return err
	}
	if f.FechaHasta, err = queryDate(r, "fecha_hasta"); err != nil {
		return err
	}
	if v := q.Get("dias_restantes"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return invalidParam("dias_restantes", dte.CodeInvalidValue, "dias_restantes must be a whole number of days")
		}
		// billing checks the range.
		f.DiasRestantes = &n
	}
	f.RutEmisor = q.Get("rut_emisor")
	// billing checks the environment with the other filters.
	f.Ambiente = q.Get("ambiente")
	f.Cursor = q.Get("cursor")
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	page, err := s.billing.Received.List(r.Context(), p.EmpresaID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// listRecepciones lists the files received in one environment
// (ambiente; the company's current one when absent, todos for both).
func (s *Server) listRecepciones(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var f api.RecepcionListParams
	var err error
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	f.Cursor = r.URL.Query().Get("cursor")
	f.Ambiente = r.URL.Query().Get("ambiente")
	page, err := s.billing.Received.ListRecepciones(r.Context(), p.EmpresaID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// refreshRecibidos asks the SII's registry about the pending documents
// now, as the hourly job does, and answers once it is done.
func (s *Server) refreshRecibidos(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var none struct{}
	if err := optionalBody(w, r, &none); err != nil {
		return err
	}
	if err := s.billing.Received.Refresh(r.Context(), p.EmpresaID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "refreshed"})
	return nil
}

func (s *Server) getRecibidoXML(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	xml, err := s.billing.Received.XML(r.Context(), p.EmpresaID, id)
	if err != nil {
		return err
	}
	writeDocument(w, "application/xml", `attachment; filename="recibido-`+id+`.xml"`, xml)
	return nil
}

func (s *Server) getRecibidoPDF(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	pdf, err := s.billing.Received.PDF(r.Context(), p.EmpresaID, id)
	if err != nil {
		return err
	}
	writeDocument(w, "application/pdf", `inline; filename="recibido-`+id+`.pdf"`, pdf)
	return nil
}

// decide registers a decision on the received document {id} and answers
// it with 200.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, p *api.Principal, id string, in api.DecisionInput) error {
	rec, err := s.billing.Received.Decide(r.Context(), p.EmpresaID, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// aceptarRecibido accepts a received document (RCV ACD); the body is
// optional (none, or {}).
func (s *Server) aceptarRecibido(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var none struct{}
	if err := optionalBody(w, r, &none); err != nil {
		return err
	}
	return s.decide(w, r, p, id, api.DecisionInput{Accion: "ACD"})
}

// reclamoTipos are the claims a received document may get.
var reclamoTipos = map[string]bool{"RCD": true, "RFP": true, "RFT": true}

// reclamarRecibido claims a received document: tipo RCD (default), RFP or
// RFT, with its motivo.
func (s *Server) reclamarRecibido(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in struct {
		Tipo   string `json:"tipo"`
		Motivo string `json:"motivo"`
	}
	if err := decodeJSON(w, r, maxJSONBody, &in); err != nil {
		return err
	}
	if in.Tipo == "" {
		in.Tipo = "RCD"
	}
	if !reclamoTipos[in.Tipo] {
		return validation("invalid field tipo", dte.FieldError{Field: "tipo", Code: dte.CodeInvalidValue,
			Message: "tipo must be RCD (content), RFP (partial lack of goods) or RFT (total lack of goods)"})
	}
	return s.decide(w, r, p, id, api.DecisionInput{Accion: in.Tipo, Motivo: in.Motivo})
}

// reciboRecibido registers the receipt of goods or services (RCV ERM);
// the body is optional ({recinto}).
func (s *Server) reciboRecibido(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in struct {
		Recinto string `json:"recinto"`
	}
	if err := optionalBody(w, r, &in); err != nil {
		return err
	}
	return s.decide(w, r, p, id, api.DecisionInput{Accion: "ERM", Recinto: in.Recinto})
}

func (s *Server) listRecibidoCorreos(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.correos(w, r, p, api.CorreoListParams{RecibidoID: id})
}

// Answers

// receiveRespuesta records an answer a receptor sent about the company's
// documents and names the documents it changed, with the record of its
// file.
func (s *Server) receiveRespuesta(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	if err := s.allowUpload(p.EmpresaID); err != nil {
		return err
	}
	body, err := readXML(w, r)
	if err != nil {
		return err
	}
	res, err := s.billing.Received.ReceiveRespuesta(r.Context(), p.EmpresaID, api.ReceiveRespuestaParams{XML: body})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// Mail

// correos answers a page of the company's mails selected by f (cursor
// and limit from the query).
func (s *Server) correos(w http.ResponseWriter, r *http.Request, p *api.Principal, f api.CorreoListParams) error {
	var err error
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	f.Cursor = r.URL.Query().Get("cursor")
	page, err := s.billing.Mail.List(r.Context(), p.EmpresaID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) listCorreos(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var f api.CorreoListParams
	for _, q := range []struct {
		name string
		dst  *string
	}{{"dte_id", &f.DTEID}, {"recibido_id", &f.RecibidoID}} {
		v := r.URL.Query().Get(q.name)
		if v != "" && !isUUID(v) {
			return invalidParam(q.name, dte.CodeInvalidFormat, q.name+" must be a UUID")
		}
		// Ids are stored lower-case, as pathID reads them.
		*q.dst = strings.ToLower(v)
	}
	return s.correos(w, r, p, f)
}

func (s *Server) listDTECorreos(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.correos(w, r, p, api.CorreoListParams{DTEID: id})
}

// mailDTE queues the mail of a document to its receptor: 202 with the
// mail, which a job sends.
func (s *Server) mailDTE(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in struct {
		Para string `json:"para"`
	}
	if err := optionalBody(w, r, &in); err != nil {
		return err
	}
	c, err := s.billing.Documents.Mail(r.Context(), p.EmpresaID, id, api.DTEMailParams{Para: in.Para})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, c)
	return nil
}

// putCorreo replaces the company's mail settings. The servers (smtp,
// imap) are objects decoded as strictly as the body: an unknown member is
// named with its path (smtp.puerto).
func (s *Server) putCorreo(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	b, err := readBody(w, r, "application/json", maxJSONBody)
	if err != nil {
		return err
	}
	var in api.CorreoSettings
	if err := unmarshalStrict(b, &in); err != nil {
		return err
	}
	var members map[string]json.RawMessage
	_ = json.Unmarshal(b, &members)
	for _, name := range []string{"imap", "smtp"} {
		raw := members[name]
		if len(raw) == 0 || string(raw) == "null" {
			continue
		}
		var srv api.CorreoServidor
		if err := unmarshalStrict(raw, &srv); err != nil {
			if he, ok := err.(*httpError); ok {
				for i := range he.details {
					if f := he.details[i].Field; f == "$" {
						he.details[i].Field = name
					} else {
						he.details[i].Field = name + "." + f
					}
				}
			}
			return err
		}
	}
	out, err := s.billing.Mail.UpdateSettings(r.Context(), p.EmpresaID, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pollMailbox reads the company's mailbox now, as the periodic job does.
func (s *Server) pollMailbox(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var none struct{}
	if err := optionalBody(w, r, &none); err != nil {
		return err
	}
	res, err := s.billing.Mail.Poll(r.Context(), p.EmpresaID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// listMensajes lists the mails read from the company's mailbox (cursor
// and limit from the query).
func (s *Server) listMensajes(w http.ResponseWriter, r *http.Request, p *api.Principal) error {
	var lp api.MensajeListParams
	var err error
	if lp.Limit, err = queryLimit(r); err != nil {
		return err
	}
	lp.Cursor = r.URL.Query().Get("cursor")
	page, err := s.billing.Mail.ListMensajes(r.Context(), p.EmpresaID, lp)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
