package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/inbox"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/pdf"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/store"
)

// Recibido is a document a supplier sent the company
// (GET /api/v1/billing/recibidos/{id}).
type Recibido struct {
	ID          string `json:"id"`
	RecepcionID string `json:"recepcion_id"`
	// Ambiente is the environment the document belongs to: its stamp's
	// (the CAF's IDK), else the company's when it was received.
	Ambiente          string      `json:"ambiente"`
	RutEmisor         string      `json:"rut_emisor"`
	RazonSocialEmisor string      `json:"razon_social_emisor"`
	TipoDTE           dte.TipoDTE `json:"tipo_dte"`
	Folio             int64       `json:"folio"`
	FechaEmision      string      `json:"fecha_emision"`
	MontoTotal        int64       `json:"monto_total"`
	// Estado is "pendiente" (no decision yet), "aceptado", "reclamado" or
	// "rechazado" (it failed verification; see Verificacion).
	Estado string `json:"estado"`
	// MercaderiasRecibidas is true once the receipt of goods or services
	// was registered (ERM).
	MercaderiasRecibidas bool `json:"mercaderias_recibidas"`
	// CorreoEmisor is where answers about it go (null when unknown).
	CorreoEmisor *string `json:"correo_emisor"`
	// FechaRecepcionSII is when the SII received it, PlazoVence when the
	// legal window to accept or claim it closes (8 days later) and
	// DiasRestantes the whole days left; null until the registry tells.
	FechaRecepcionSII *time.Time `json:"fecha_recepcion_sii"`
	PlazoVence        *time.Time `json:"plazo_vence"`
	DiasRestantes     *int       `json:"dias_restantes"`
	// Respuestas are the company's answers so far.
	Respuestas RecibidoRespuestas `json:"respuestas"`
	// RCV is the SII registry's state and events (null until asked).
	RCV *RecibidoRCV `json:"rcv"`
	// Verificacion is the verification report of the document (shown by
	// GET of one document; null in lists).
	Verificacion json.RawMessage `json:"verificacion"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
}

// RecibidoRespuestas are the company's answers about a received document.
type RecibidoRespuestas struct {
	Acuse    *RecibidoAccion `json:"acuse"`
	Decision *RecibidoAccion `json:"decision"`
	Recibo   *RecibidoAccion `json:"recibo"`
}

// RecibidoAccion is one answer: the action (acuse, ACD, RCD, RFP, RFT,
// ERM), its reason, what the registry answered and the mail that carried
// the XML answer.
type RecibidoAccion struct {
	Accion    string    `json:"accion"`
	Motivo    string    `json:"motivo,omitempty"`
	Fecha     time.Time `json:"fecha"`
	RCVCodigo *int      `json:"rcv_codigo,omitempty"`
	RCVGlosa  string    `json:"rcv_glosa,omitempty"`
	CorreoID  string    `json:"correo_id,omitempty"`
	// CorreoEstado is what became of the XML answer's mail: "en_cola"
	// (queued: CorreoID's own state tells its delivery), "sin_direccion"
	// (no address known for the supplier: none came with its file, none
	// is on the SII's list of contribuyentes) or "sin_remitente" (the
	// company has no mail settings); absent for answers recorded before
	// it was kept. CorreoPara is where it was mailed.
	CorreoEstado string `json:"correo_estado,omitempty"`
	CorreoPara   string `json:"correo_para,omitempty"`
}

// RecibidoRCV is what the SII's registry reports of a received document.
type RecibidoRCV struct {
	Codigo     int                 `json:"codigo"`
	Glosa      string              `json:"glosa"`
	Eventos    []RecibidoRCVEvento `json:"eventos"`
	ConsultaAt time.Time           `json:"consultado_at"`
}

// RecibidoRCVEvento is one event of the registry's history.
type RecibidoRCVEvento struct {
	Accion         string     `json:"accion"`
	Glosa          string     `json:"glosa"`
	RutResponsable string     `json:"rut_responsable"`
	Fecha          *time.Time `json:"fecha"`
	FechaTexto     string     `json:"fecha_texto"`
}

// RecibidoPage is a page of received documents, newest first.
type RecibidoPage struct {
	Data       []Recibido `json:"data"`
	NextCursor *string    `json:"next_cursor"`
	TotalCount int64      `json:"total_count"`
}

// RecibidoFilter selects received documents (GET /recibidos).
type RecibidoFilter struct {
	// Ambiente is the environment listed (see api.AmbienteTodos: "" is the
	// company's current one).
	Ambiente   string
	RutEmisor  string
	TipoDTE    int
	Estado     string
	FechaDesde string
	FechaHasta string
	// DiasRestantes, when not nil, keeps the documents whose window is
	// known with at most that many whole days left (Recibido's
	// dias_restantes; 0: it closes within 24 hours).
	DiasRestantes *int
	Cursor        string
	Limit         int
}

// Recepcion is a file received from a supplier (GET /recepciones/{id}).
type Recepcion struct {
	ID     string `json:"id"`
	Numero int64  `json:"numero"`
	// Tipo is "envio" (an EnvioDTE from a supplier) or "respuesta" (an
	// answer a customer sent about the company's documents).
	Tipo string `json:"tipo"`
	// Ambiente is the environment the file belongs to: its documents'
	// when their stamps agree (for an answer, the answered documents'),
	// else the company's when it was received.
	Ambiente string `json:"ambiente"`
	// Estado is "conforme" or "rechazada": for an envelope, the acuse's
	// EstadoRecepEnv; for an answer, whether every document it names
	// took it (the report says what it did to each, or why not).
	Estado    string  `json:"estado"`
	Origen    string  `json:"origen"`
	Remitente *string `json:"remitente"`
	Digest    string  `json:"sha256"`
	// Tamano is the file's size as received, in bytes; Descartado is true
	// for a file refused whole, of which only the digest, size, report
	// and first 4 KiB are kept, and which is deleted after the company's
	// retention period (GET /empresa/recepcion).
	Tamano     int64           `json:"tamano"`
	Descartado bool            `json:"descartado"`
	Reporte    json.RawMessage `json:"reporte"`
	// Recibidos are the ids of its documents (shown by intake).
	Recibidos []string  `json:"recibidos,omitempty"`
	Duplicado bool      `json:"duplicado"`
	CreatedAt time.Time `json:"created_at"`
}

// RecepcionPage is a page of received files, newest first.
type RecepcionPage struct {
	Data       []Recepcion `json:"data"`
	NextCursor *string     `json:"next_cursor"`
	TotalCount int64       `json:"total_count"`
}

// CorreoPage is a page of mails, newest first.
type CorreoPage struct {
	Data       []api.Correo `json:"data"`
	NextCursor *string      `json:"next_cursor"`
	TotalCount int64        `json:"total_count"`
}

// Mensaje is a mail read from the company's mailbox.
type Mensaje struct {
	ID        string    `json:"id"`
	MessageID string    `json:"message_id"`
	From      string    `json:"from"`
	Subject   string    `json:"subject"`
	Estado    string    `json:"estado"`
	Detalle   string    `json:"detalle"`
	CreatedAt time.Time `json:"created_at"`
}

// MensajePage is a page of mails read, newest first.
type MensajePage struct {
	Data       []Mensaje `json:"data"`
	NextCursor *string   `json:"next_cursor"`
	TotalCount int64     `json:"total_count"`
}

// recibidoOut renders a stored received document.
func (s *Service) recibidoOut(r *store.Recibido, full bool) Recibido {
	out := Recibido{ID: r.ID, RecepcionID: r.RecepcionID, Ambiente: r.Ambiente, RutEmisor: r.RutEmisor, RazonSocialEmisor: r.RazonSocialEmisor,
		TipoDTE: dte.TipoDTE(r.TipoDTE), Folio: r.Folio, FechaEmision: r.FechaEmision, MontoTotal: r.MontoTotal, Estado: r.Estado,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(), Verificacion: json.RawMessage("null")}
	if r.CorreoEmisor != "" {
		out.CorreoEmisor = &r.CorreoEmisor
	}
	if !r.FechaRecepcionSII.IsZero() {
		t := r.FechaRecepcionSII.UTC()
		out.FechaRecepcionSII = &t
	}
	if !r.PlazoVence.IsZero() {
		t := r.PlazoVence.UTC()
		out.PlazoVence = &t
		days := int(max(0, r.PlazoVence.Sub(s.now())) / (24 * time.Hour))
		out.DiasRestantes = &days
	}
	conv := func(a *inbox.Accion) *RecibidoAccion {
		if a == nil {
			return nil
		}
		return &RecibidoAccion{Accion: a.Accion, Motivo: a.Motivo, Fecha: a.At.UTC(), RCVCodigo: a.RCVCodigo, RCVGlosa: a.RCVGlosa, CorreoID: a.CorreoID,
			CorreoEstado: a.CorreoEstado, CorreoPara: a.CorreoPara}
	}
	resp := inbox.RespuestasOf(r)
	out.Respuestas = RecibidoRespuestas{Acuse: conv(resp.Acuse), Decision: conv(resp.Decision), Recibo: conv(resp.Recibo)}
	out.MercaderiasRecibidas = resp.Recibo != nil
	if st := inbox.RCVOf(r); st != nil {
		rcv := &RecibidoRCV{Codigo: st.Codigo, Glosa: st.Glosa, ConsultaAt: st.Consulta.UTC(), Eventos: []RecibidoRCVEvento{}}
		for _, e := range st.Eventos {
			rcv.Eventos = append(rcv.Eventos, RecibidoRCVEvento(e))
		}
		out.RCV = rcv
	}
	if full && len(r.Report) > 0 {
		out.Verificacion = json.RawMessage(r.Report)
	}
	return out
}

// recepcionOut renders a stored received file.
func recepcionOut(r *store.Recepcion) Recepcion {
	out := Recepcion{ID: r.ID, Numero: r.Numero, Tipo: r.Tipo, Ambiente: r.Ambiente, Estado: r.Estado, Origen: r.Origen, Digest: r.Digest,
		Tamano: r.Size, Descartado: r.Descartado, Reporte: json.RawMessage("null"), CreatedAt: r.CreatedAt.UTC()}
	if r.Remitente != "" {
		out.Remitente = &r.Remitente
	}
	if len(r.Report) > 0 {
		out.Reporte = json.RawMessage(r.Report)
	}
	return out
}

// ReceiveDTE takes a file a supplier sent (an EnvioDTE, by upload):
// verified, recorded with its report even when it fails, each document
// recorded once however often it arrives, and acknowledged by mail to
// correoEmisor (when given) unless the company turned that off.
func (s *Service) ReceiveDTE(ctx context.Context, empresaID string, file []byte, correoEmisor string) (*Recepcion, error) {
	if correoEmisor != "" {
		if d := checkEmailField(nil, "correo_emisor", correoEmisor); len(d) > 0 {
			return nil, fault.FromValidation(&dte.ValidationError{Details: d})
		}
	}
	res, err := s.inbox.Intake(ctx, empresaID, file, inbox.Source{Origen: inbox.OrigenUpload, Remitente: correoEmisor})
	if err != nil {
		return nil, err
	}
	out := recepcionOut(res.Recepcion)
	out.Duplicado = res.Duplicate
	out.Recibidos = []string{}
	for _, r := range res.Recibidos {
		out.Recibidos = append(out.Recibidos, r.ID)
	}
	return &out, nil
}

// ListRecibidos lists the company's received documents, newest first.
func (s *Service) ListRecibidos(ctx context.Context, empresaID string, f RecibidoFilter) (*RecibidoPage, error) {
	n, verr := pageLimit(f.Limit)
	if verr != nil {
		return nil, verr
	}
	switch f.Estado {
	case "", inbox.Pendiente, inbox.Aceptado, inbox.Reclamado, inbox.Rechazado:
	default:
		return nil, fault.Invalid("estado", dte.CodeInvalidValue, "estado must be pendiente, aceptado, reclamado or rechazado")
	}
	sf := store.RecibidoFilter{RutEmisor: f.RutEmisor, TipoDTE: f.TipoDTE, Estado: f.Estado, FechaDesde: f.FechaDesde,
		FechaHasta: f.FechaHasta, Cursor: f.Cursor, Limit: n}
	if sf.RutEmisor != "" {
		rut, err := dte.ParseRUT(sf.RutEmisor)
		if err != nil {
			return nil, fault.Invalid("rut_emisor", dte.CodeInvalidRUT, "not a valid RUT")
		}
		sf.RutEmisor = rut.String()
	}
	if f.DiasRestantes != nil {
		if *f.DiasRestantes < 0 || *f.DiasRestantes > 365 {
			return nil, fault.Invalid("dias_restantes", dte.CodeOutOfRange, "from 0 to 365")
		}
		// dias_restantes is whole days left (see Recibido.DiasRestantes):
		// N keeps the windows closing less than N+1 days from now.
		sf.PlazoHasta = s.now().Add(time.Duration(*f.DiasRestantes+1)*24*time.Hour - time.Nanosecond)
	}
	amb, err := s.listAmbiente(ctx, empresaID, f.Ambiente)
	if err != nil {
		return nil, err
	}
	sf.Ambiente = amb
	page, err := s.st.ListRecibidos(ctx, empresaID, sf)
	if err != nil {
		return nil, storeErr(err, "listing received documents", "empresa", empresaID)
	}
	out := &RecibidoPage{Data: make([]Recibido, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, s.recibidoOut(&page.Items[i], false))
	}
	return out, nil
}

// GetRecibido returns one received document with its verification report.
func (s *Service) GetRecibido(ctx context.Context, empresaID, id string) (*Recibido, error) {
	r, err := s.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received document", "recibido", id)
	}
	out := s.recibidoOut(r, true)
	return &out, nil
}

// RecibidoXML returns a received document's signed XML as it arrived.
func (s *Service) RecibidoXML(ctx context.Context, empresaID, id string) ([]byte, error) {
	r, err := s.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received document", "recibido", id)
	}
	if len(r.XML) == 0 {
		return nil, fault.Missing("XML of recibido", id)
	}
	return r.XML, nil
}

// RecibidoPDF renders a received document (letter format; the issuer's
// resolution from the envelope's Carátula).
func (s *Service) RecibidoPDF(ctx context.Context, empresaID, id string) ([]byte, error) {
	r, err := s.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received document", "recibido", id)
	}
	if len(r.XML) == 0 || r.Estado == inbox.Rechazado {
		return nil, fault.Clash(fault.InvalidState, "the document failed verification; only its report and XML are kept")
	}
	doc, err := dte.ParseDTE(r.XML)
	if err != nil {
		return nil, fault.Failed("reading the received DTE "+id, err)
	}
	o := pdf.Options{Format: pdf.Carta}
	if rec, err := s.st.GetRecepcion(ctx, empresaID, r.RecepcionID); err == nil {
		if env, err := dte.ParseEnvio(rec.XML); err == nil {
			o.Resolucion = pdf.Resolucion{Numero: env.Caratula.NroResol, Fecha: env.Caratula.FchResol}
		}
	}
	if o.Resolucion.Fecha == "" {
		o.Resolucion.Fecha = doc.FechaEmision
	}
	out, err := pdf.RenderBytes(doc, o)
	if err != nil {
		return nil, fault.Failed("rendering the PDF of recibido "+id, err)
	}
	return out, nil
}

// DecisionInput is a decision on a received document
// (POST /recibidos/{id}/aceptar, /reclamar, /recibo).
type DecisionInput struct {
	// Accion is "ACD" (accept), "RCD" (claim its content), "RFP" (claim a
	// partial lack of goods), "RFT" (claim a total lack) or "ERM" (receipt
	// of goods or services).
	Accion string `json:"accion"`
	// Motivo is the reason (required for a claim).
	Motivo string `json:"motivo,omitempty"`
	// Recinto is where the goods were received (ERM; default the
	// company's address).
	Recinto string `json:"recinto,omitempty"`
}

// DecideRecibido registers a decision on a received document in the SII's
// registry, then records it and mails the XML answer to the emitter.
func (s *Service) DecideRecibido(ctx context.Context, empresaID, id string, in DecisionInput) (*Recibido, error) {
	if err := checkDecision(in); err != nil {
		return nil, err
	}
	r, err := s.inbox.Decide(ctx, empresaID, id, inbox.Decision{Accion: sii.RCVAction(strings.ToUpper(in.Accion)), Motivo: in.Motivo, Recinto: in.Recinto})
	if err != nil {
		return nil, err
	}
	out := s.recibidoOut(r, false)
	return &out, nil
}

// RefreshRecibidos asks the SII's registry now about the company's
// received documents whose window is open or unknown (the periodic job
// does it every hour) and warns of windows about to close.
func (s *Service) RefreshRecibidos(ctx context.Context, empresaID string) error {
	if err := s.inbox.Refresh(ctx, empresaID); err != nil {
		if fe := fault.As(err); fe.Kind != fault.KindInternal {
			return fe
		}
		return &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "the SII's registry (RCV) did not answer; try again later", Err: err}
	}
	return nil
}

// RecepcionFilter selects received files (GET /recepciones).
type RecepcionFilter struct {
	Ambiente string // see api.AmbienteTodos: "" is the company's current environment
	Cursor   string
	Limit    int // 0 means 20; 1 to 100
}

// ListRecepciones lists the files received in one environment (or both),
// newest first.
func (s *Service) ListRecepciones(ctx context.Context, empresaID string, p RecepcionFilter) (*RecepcionPage, error) {
	n, verr := pageLimit(p.Limit)
	if verr != nil {
		return nil, verr
	}
	amb, err := s.listAmbiente(ctx, empresaID, p.Ambiente)
	if err != nil {
		return nil, err
	}
	page, err := s.st.ListRecepciones(ctx, empresaID, store.RecepcionFilter{Ambiente: amb, Cursor: p.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing received files", "empresa", empresaID)
	}
	out := &RecepcionPage{Data: make([]Recepcion, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, recepcionOut(&page.Items[i]))
	}
	return out, nil
}

// GetRecepcion returns one received file with its report.
func (s *Service) GetRecepcion(ctx context.Context, empresaID, id string) (*Recepcion, error) {
	r, err := s.st.GetRecepcion(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received file", "recepcion", id)
	}
	out := recepcionOut(r)
	return &out, nil
}

// RespuestaRecibida is what an uploaded answer did: the company's
// documents it changed and the record of its file, whose report says,
// for each document it names, what it did or why it was refused.
type RespuestaRecibida struct {
	DTEIDs    []string  `json:"dte_ids"`
	Recepcion Recepcion `json:"recepcion"`
}

// ReceiveRespuesta records an answer a receptor sent about the company's
// documents (a RespuestaDTE or EnvioRecibos, by upload): see inbox.Reply
// for what changes a document.
func (s *Service) ReceiveRespuesta(ctx context.Context, empresaID string, file []byte) (*RespuestaRecibida, error) {
	if len(file) > inbox.MaxFileBytes {
		return nil, fault.Invalid("xml", dte.CodeTooLarge, fmt.Sprintf("more than %d bytes", inbox.MaxFileBytes))
	}
	res, err := s.inbox.Reply(ctx, empresaID, file, inbox.Source{Origen: inbox.OrigenUpload})
	if err != nil {
		return nil, err
	}
	out := &RespuestaRecibida{DTEIDs: res.Updated, Recepcion: recepcionOut(res.Recepcion)}
	if out.DTEIDs == nil {
		out.DTEIDs = []string{}
	}
	out.Recepcion.Duplicado = res.Duplicate
	return out, nil
}

// correoOutOf renders a stored mail.
func correoOutOf(c *store.Correo) api.Correo {
	out := api.Correo{ID: c.ID, Tipo: c.Tipo, Para: c.Para, MessageID: c.MessageID, Estado: c.Estado, Intentos: c.Attempts,
		CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	if c.DTEID != "" {
		out.DTEID = &c.DTEID
	}
	if c.RecibidoID != "" {
		out.RecibidoID = &c.RecibidoID
	}
	if c.LastError != "" {
		out.UltimoError = &c.LastError
	}
	if !c.SentAt.IsZero() {
		t := c.SentAt.UTC()
		out.EnviadoAt = &t
	}
	return out
}

// CorreoFilter selects mails: those of one document, of one received
// document, or all.
type CorreoFilter struct {
	DTEID      string
	RecibidoID string
	Cursor     string
	Limit      int
}

// ListCorreos lists the company's mails, newest first: the delivery log
// of its documents and answers.
func (s *Service) ListCorreos(ctx context.Context, empresaID string, f CorreoFilter) (*CorreoPage, error) {
	n, verr := pageLimit(f.Limit)
	if verr != nil {
		return nil, verr
	}
	if f.DTEID != "" {
		if _, err := s.st.GetDTE(ctx, empresaID, f.DTEID); err != nil {
			return nil, storeErr(err, "reading the DTE", "dte", f.DTEID)
		}
	}
	if f.RecibidoID != "" {
		if _, err := s.st.GetRecibido(ctx, empresaID, f.RecibidoID); err != nil {
			return nil, storeErr(err, "reading the received document", "recibido", f.RecibidoID)
		}
	}
	page, err := s.st.ListCorreos(ctx, empresaID, store.CorreoFilter{DTEID: f.DTEID, RecibidoID: f.RecibidoID, Cursor: f.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing mails", "empresa", empresaID)
	}
	out := &CorreoPage{Data: make([]api.Correo, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, correoOutOf(&page.Items[i]))
	}
	return out, nil
}

// GetCorreo returns one mail of the company.
func (s *Service) GetCorreo(ctx context.Context, empresaID, id string) (*api.Correo, error) {
	c, err := s.st.GetCorreo(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the mail", "correo", id)
	}
	out := correoOutOf(c)
	return &out, nil
}

// ListMensajes lists the mails read from the company's mailbox.
func (s *Service) ListMensajes(ctx context.Context, empresaID string, p ListParams) (*MensajePage, error) {
	n, verr := pageLimit(p.Limit)
	if verr != nil {
		return nil, verr
	}
	page, err := s.st.ListMensajes(ctx, empresaID, store.ListFilter{Cursor: p.Cursor, Limit: n})
	if err != nil {
		return nil, storeErr(err, "listing mails read", "empresa", empresaID)
	}
	out := &MensajePage{Data: make([]Mensaje, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for _, m := range page.Items {
		out.Data = append(out.Data, Mensaje{ID: m.ID, MessageID: m.MessageID, From: m.From, Subject: m.Subject, Estado: m.Estado,
			Detalle: m.Detalle, CreatedAt: m.CreatedAt.UTC()})
	}
	return out, nil
}

// LecturaCorreo is what one read of a company's mailbox did
// (POST /empresa/correo/leer).
type LecturaCorreo struct {
	// Leidos are the messages taken, Repetidos those skipped as read
	// before, Rechazados those refused (see ListMensajes).
	Leidos     int `json:"leidos"`
	Repetidos  int `json:"repetidos"`
	Rechazados int `json:"rechazados"`
}

// PollMailbox reads the company's mailbox now (the periodic job does it
// every minute) and reports how many messages it took, skipped as read
// before, and refused.
func (s *Service) PollMailbox(ctx context.Context, empresaID string) (*LecturaCorreo, error) {
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	res, err := s.mailer.Poll(ctx, empresaID)
	if err != nil {
		if fe := fault.As(err); fe.Kind != fault.KindInternal {
			return nil, fe
		}
		var mb *mailer.MailboxError
		if errors.As(err, &mb) {
			// The category only: the server's words and addresses go to
			// the log (the mailer logged them).
			return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable,
				Message: "the company's mailbox could not be read (" + email.Category(err) + "); see buzon in the mail settings", Err: err}
		}
		return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "the company's mailbox could not be read; try again later", Err: err}
	}
	return &LecturaCorreo{Leidos: res.Read, Repetidos: res.Skipped, Rechazados: res.Refused}, nil
}

// signedDTE reads a signed document and its issuer.
func (s *Service) signedDTE(ctx context.Context, empresaID, id string) (*store.DTE, dte.Emisor, error) {
	d, err := s.st.GetDTE(ctx, empresaID, id)
	if err != nil {
		return nil, dte.Emisor{}, storeErr(err, "reading the DTE", "dte", id)
	}
	if len(d.XML) == 0 {
		return nil, dte.Emisor{}, fault.Clash(fault.InvalidState, fmt.Sprintf("DTE %q is not signed yet", id))
	}
	emisor, err := issuerOf(d)
	if err != nil {
		return nil, dte.Emisor{}, fault.Failed("reading the issuer of "+id, err)
	}
	return d, emisor, nil
}

// exchangeEnvelope packs d in an EnvioDTE to its receptor.
func (s *Service) exchangeEnvelope(ctx context.Context, d *store.DTE, emisor dte.Emisor) ([]byte, error) {
	cert, err := s.signingCert(ctx, d.EmpresaID)
	if err != nil {
		return nil, err
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: emisor, RutReceptor: d.RutReceptor, At: s.now()}, cert, d.XML)
	if err != nil {
		return nil, fault.Failed("packing the exchange envelope of "+d.ID, err)
	}
	return env, nil
}

// receptorAddress finds where a document to the receptor with this RUT is
// mailed: the e-mail of the company's cliente with that RUT, else the
// receptor's intercambio address on the SII's list of contribuyentes
// (ImportContribuyentes); "" when neither has one. via names the source.
func (s *Service) receptorAddress(ctx context.Context, empresaID, rut string) (addr, via string, err error) {
	c, err := s.st.GetClienteByRut(ctx, empresaID, rut)
	switch {
	case err == nil && c.Email != "":
		return c.Email, mailer.ViaCliente, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return "", "", fault.Failed("reading the receptor's cliente", err)
	}
	listed, err := inbox.ListedAddress(ctx, s.st, rut)
	if err != nil {
		return "", "", fault.Failed("reading the SII's list of contribuyentes", err)
	}
	if listed != "" {
		return listed, mailer.ViaContribuyentes, nil
	}
	return "", "", nil
}

// documentMail builds the mail of a signed document to its receptor: the
// EnvioDTE addressed to the receptor and the PDF. It returns nil when no
// address is known (para, the cliente's e-mail, the SII's list).
func (s *Service) documentMail(ctx context.Context, empresaID, id, para string) (*mailer.Outgoing, error) {
	d, emisor, err := s.signedDTE(ctx, empresaID, id)
	if err != nil {
		return nil, err
	}
	via := mailer.ViaPara
	if para == "" {
		para, via, err = s.receptorAddress(ctx, empresaID, d.RutReceptor)
		if err != nil {
			return nil, err
		}
	}
	if para == "" {
		return nil, nil
	}
	env, err := s.exchangeEnvelope(ctx, d, emisor)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("DTE_%s_%d_%d", emisor.Rut, d.TipoDTE, d.Folio)
	atts := []email.Attachment{{Filename: name + ".xml", ContentType: "application/xml", Data: env}}
	if p, err := s.Documents.PDF(ctx, empresaID, id, api.PDFOptions{}); err == nil {
		atts = append(atts, email.Attachment{Filename: name + ".pdf", ContentType: "application/pdf", Data: p})
	}
	return &mailer.Outgoing{EmpresaID: empresaID, Tipo: "dte", DTEID: id, To: para, Via: via,
		Subject:     fmt.Sprintf("DTE tipo %d folio %d de %s", d.TipoDTE, d.Folio, emisor.RazonSocial),
		Text:        fmt.Sprintf("Adjuntamos el documento tributario electrónico tipo %d, folio %d, emitido por %s (RUT %s).", d.TipoDTE, d.Folio, emisor.RazonSocial, emisor.Rut),
		Attachments: atts}, nil
}
