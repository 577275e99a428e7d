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

// recibidoFromStore renders a stored received document; full adds its
// verification report.
func (s *Service) recibidoFromStore(r *store.Recibido, full bool) api.Recibido {
	out := api.Recibido{ID: r.ID, RecepcionID: r.RecepcionID, Ambiente: r.Ambiente, RutEmisor: r.RutEmisor, RazonSocialEmisor: r.RazonSocialEmisor,
		TipoDTE: dte.TipoDTE(r.TipoDTE), Folio: r.Folio, FechaEmision: r.FechaEmision, MontoTotal: r.MontoTotal, Estado: api.EstadoRecibido(r.Estado),
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
	conv := func(a *inbox.Accion) *api.RecibidoAccion {
		if a == nil {
			return nil
		}
		return &api.RecibidoAccion{Accion: a.Accion, Motivo: a.Motivo, Fecha: a.At.UTC(), RCVCodigo: a.RCVCodigo, RCVGlosa: a.RCVGlosa, CorreoID: a.CorreoID,
			CorreoEstado: a.CorreoEstado, CorreoPara: a.CorreoPara}
	}
	resp := inbox.RespuestasOf(r)
	out.Respuestas = api.RecibidoRespuestas{Acuse: conv(resp.Acuse), Decision: conv(resp.Decision), Recibo: conv(resp.Recibo)}
	out.MercaderiasRecibidas = resp.Recibo != nil
	out.RCV = inbox.RCVOf(r)
	if full && len(r.Report) > 0 {
		out.Verificacion = json.RawMessage(r.Report)
	}
	return out
}

// recepcionFromStore renders a stored received file.
func recepcionFromStore(r *store.Recepcion) api.Recepcion {
	out := api.Recepcion{ID: r.ID, Numero: r.Numero, Tipo: r.Tipo, Ambiente: r.Ambiente, Estado: r.Estado, Origen: r.Origen, Digest: r.Digest,
		Tamano: r.Size, Descartado: r.Descartado, Reporte: json.RawMessage("null"), CreatedAt: r.CreatedAt.UTC()}
	if r.Remitente != "" {
		out.Remitente = &r.Remitente
	}
	if len(r.Report) > 0 {
		out.Reporte = json.RawMessage(r.Report)
	}
	return out
}

// Receive takes a file a supplier sent (an EnvioDTE, by upload):
// verified, recorded with its report even when it fails, each document
// recorded once however often it arrives, and acknowledged by mail to
// p.CorreoEmisor (when given) unless the company turned that off. The
// record says Duplicado when the very same file was received before.
func (rs *ReceivedService) Receive(ctx context.Context, empresaID string, p api.ReceiveParams) (*api.Recepcion, error) {
	s := rs.s
	if p.CorreoEmisor != "" {
		if d := checkEmailField(nil, "correo_emisor", p.CorreoEmisor); len(d) > 0 {
			return nil, fault.FromValidation(&dte.ValidationError{Details: d})
		}
	}
	res, err := s.inbox.Intake(ctx, empresaID, p.XML, inbox.Source{Origen: inbox.OrigenUpload, Remitente: p.CorreoEmisor})
	if err != nil {
		return nil, err
	}
	out := recepcionFromStore(res.Recepcion)
	out.Duplicado = res.Duplicate
	out.Recibidos = []string{}
	for _, r := range res.Recibidos {
		out.Recibidos = append(out.Recibidos, r.ID)
	}
	return &out, nil
}

// List lists the company's received documents, newest first.
func (rs *ReceivedService) List(ctx context.Context, empresaID string, f api.RecibidoListParams) (*api.Page[api.Recibido], error) {
	s := rs.s
	n, verr := pageLimit(f.Limit)
	if verr != nil {
		return nil, verr
	}
	if f.Estado != "" && !f.Estado.Valid() {
		return nil, fault.Invalid("estado", dte.CodeInvalidValue, "estado must be pendiente, aceptado, reclamado or rechazado")
	}
	sf := store.RecibidoFilter{RutEmisor: f.RutEmisor, TipoDTE: f.TipoDTE, Estado: string(f.Estado), FechaDesde: f.FechaDesde,
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
	out := &api.Page[api.Recibido]{Data: make([]api.Recibido, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, s.recibidoFromStore(&page.Items[i], false))
	}
	return out, nil
}

// Get returns one received document with its verification report.
func (rs *ReceivedService) Get(ctx context.Context, empresaID, id string) (*api.Recibido, error) {
	s := rs.s
	r, err := s.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received document", "recibido", id)
	}
	out := s.recibidoFromStore(r, true)
	return &out, nil
}

// XML returns a received document's signed XML as it arrived.
func (rs *ReceivedService) XML(ctx context.Context, empresaID, id string) ([]byte, error) {
	s := rs.s
	r, err := s.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received document", "recibido", id)
	}
	if len(r.XML) == 0 {
		return nil, fault.Missing("XML of recibido", id)
	}
	return r.XML, nil
}

// PDF renders a received document (letter format; the issuer's
// resolution from the envelope's Carátula). A document that failed
// verification has none (INVALID_STATE).
func (rs *ReceivedService) PDF(ctx context.Context, empresaID, id string) ([]byte, error) {
	s := rs.s
	r, err := s.st.GetRecibido(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received document", "recibido", id)
	}
	if len(r.XML) == 0 || api.EstadoRecibido(r.Estado) == api.RecibidoRechazado {
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

// Decide registers a decision on a received document in the SII's
// registry, then records it and mails the XML answer to the emitter.
func (rs *ReceivedService) Decide(ctx context.Context, empresaID, id string, in api.DecisionInput) (*api.Recibido, error) {
	s := rs.s
	if err := checkDecision(in); err != nil {
		return nil, err
	}
	r, err := s.inbox.Decide(ctx, empresaID, id, inbox.Decision{Accion: sii.RCVAction(strings.ToUpper(in.Accion)), Motivo: in.Motivo, Recinto: in.Recinto})
	if err != nil {
		return nil, err
	}
	out := s.recibidoFromStore(r, false)
	return &out, nil
}

// Refresh asks the SII's registry now about the company's received
// documents whose window is open or unknown (the periodic job does it
// every hour) and warns of windows about to close.
func (rs *ReceivedService) Refresh(ctx context.Context, empresaID string) error {
	s := rs.s
	if err := s.inbox.Refresh(ctx, empresaID); err != nil {
		if fe := fault.As(err); fe.Kind != fault.KindInternal {
			return fe
		}
		return &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "the SII's registry (RCV) did not answer; try again later", Err: err}
	}
	return nil
}

// ListRecepciones lists the files received in one environment (or both),
// newest first.
func (rs *ReceivedService) ListRecepciones(ctx context.Context, empresaID string, p api.RecepcionListParams) (*api.Page[api.Recepcion], error) {
	s := rs.s
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
	out := &api.Page[api.Recepcion]{Data: make([]api.Recepcion, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, recepcionFromStore(&page.Items[i]))
	}
	return out, nil
}

// GetRecepcion returns one received file with its report.
func (rs *ReceivedService) GetRecepcion(ctx context.Context, empresaID, id string) (*api.Recepcion, error) {
	s := rs.s
	r, err := s.st.GetRecepcion(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the received file", "recepcion", id)
	}
	out := recepcionFromStore(r)
	return &out, nil
}

// ReceiveRespuesta records an answer a receptor sent about the company's
// documents (a RespuestaDTE or EnvioRecibos, by upload): see inbox.Reply
// for what changes a document.
func (rs *ReceivedService) ReceiveRespuesta(ctx context.Context, empresaID string, p api.ReceiveRespuestaParams) (*api.RespuestaRecibida, error) {
	s := rs.s
	if len(p.XML) > inbox.MaxFileBytes {
		return nil, fault.Invalid("xml", dte.CodeTooLarge, fmt.Sprintf("more than %d bytes", inbox.MaxFileBytes))
	}
	res, err := s.inbox.Reply(ctx, empresaID, p.XML, inbox.Source{Origen: inbox.OrigenUpload})
	if err != nil {
		return nil, err
	}
	out := &api.RespuestaRecibida{DTEIDs: res.Updated, Recepcion: recepcionFromStore(res.Recepcion)}
	if out.DTEIDs == nil {
		out.DTEIDs = []string{}
	}
	out.Recepcion.Duplicado = res.Duplicate
	return out, nil
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
// (Mail.ImportContribuyentes); "" when neither has one. via names the source.
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
