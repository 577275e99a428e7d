package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/inbox"
	"github.com/dtekit/dtekit/billing/internal/mailer"
	"github.com/dtekit/dtekit/billing/internal/outbox"
	"github.com/dtekit/dtekit/billing/internal/submission"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/pdf"
	"github.com/dtekit/dtekit/store"
)

// apiEstado is the contract state of a stored state: a pendiente row (folio
// taken, not yet signed) is shown as borrador.
func apiEstado(s string) dte.Estado {
	if s == store.EstadoPendiente {
		return dte.EstadoBorrador
	}
	return dte.Estado(s)
}

// dteFromStore builds the contract's DTE from a stored row; a stored
// value it cannot read is an unreadable fault (409), never a 500.
func dteFromStore(d *store.DTE, includeXML bool) (*api.DTE, error) {
	out := &api.DTE{ID: d.ID, Ambiente: d.Ambiente, TipoDTE: dte.TipoDTE(d.TipoDTE), Folio: d.Folio, Estado: apiEstado(d.Estado),
		RutReceptor: d.RutReceptor, RazonSocialReceptor: d.RazonSocialReceptor, FechaEmision: d.FechaEmision,
		Montos: api.Montos{MontoTotal: d.MontoTotal}, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Detalle: []dte.LineaDetalle{},
		Cedido: d.Cedido}
	// Only the request's lines, references and transport data are shown:
	// its metadata has a column of its own (read below) and is not decoded
	// twice.
	var req struct {
		Detalle     []dte.LineaDetalle `json:"detalle"`
		Referencias []dte.Referencia   `json:"referencias"`
		Transporte  *dte.Transporte    `json:"transporte"`
	}
	if len(d.Request) > 0 {
		if err := json.Unmarshal(d.Request, &req); err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored request: %w", err))
		}
		if req.Detalle != nil {
			out.Detalle = req.Detalle
		}
		out.Referencias = req.Referencias
		out.Transporte = req.Transporte
	}
	if len(d.Totals) > 0 {
		var t api.Montos
		if err := json.Unmarshal(d.Totals, &t); err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored totals: %w", err))
		}
		t.MontoTotal = d.MontoTotal
		out.Montos = t
	}
	if len(d.Tracking) > 0 {
		t, err := outbox.ParseTracking(d.Tracking)
		if err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored tracking: %w", err))
		}
		out.Tracking = &t
	}
	if len(d.SIIStatus) > 0 {
		st, err := submission.ParseStatus(d.SIIStatus)
		if err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored SII status: %w", err))
		}
		out.SIIStatus = &st
	}
	if len(d.Metadata) > 0 {
		// json.Number: an integer beyond 2^53 keeps its digits.
		dec := json.NewDecoder(bytes.NewReader(d.Metadata))
		dec.UseNumber()
		if err := dec.Decode(&out.Metadata); err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored metadata: %w", err))
		}
	}
	out.Intercambio = receptorFromStore(d)
	if includeXML && len(d.XML) > 0 {
		out.XMLDocumento = dte.XMLText(d.XML)
	}
	return out, nil
}

// receptorFromStore renders a stored document's receptor answers (nil
// when none).
func receptorFromStore(d *store.DTE) *api.ReceptorRespuestas {
	if len(d.Intercambio) == 0 {
		return nil
	}
	ic := inbox.IntercambioOf(d)
	conv := func(a *inbox.Answer, tipo string) *api.ReceptorRespuesta {
		if a == nil {
			return nil
		}
		out := &api.ReceptorRespuesta{Tipo: tipo, Resultado: a.Resultado, Codigo: a.Codigo, Glosa: a.Glosa, Motivo: a.Motivo,
			RutReceptor: a.RutReceptor, RecibidoAt: a.At.UTC()}
		if a.RutFirmante != "" {
			out.RutFirmante = &a.RutFirmante
		}
		if a.RecepcionID != "" {
			out.RecepcionID = &a.RecepcionID
		}
		return out
	}
	out := &api.ReceptorRespuestas{Recepcion: conv(ic.Recepcion, "recepcion"), Resultado: conv(ic.Resultado, "resultado"),
		Recibo: conv(ic.Recibo, "recibo"), Historial: make([]api.ReceptorRespuesta, 0, len(ic.Historial))}
	for i := range ic.Historial {
		out.Historial = append(out.Historial, *conv(&ic.Historial[i], ic.Historial[i].Tipo))
	}
	return out
}

// Get returns one of the company's documents with its latest mail to the
// receptor; p.IncludeXML adds the signed XML (xml_documento, as text).
func (r *DocumentService) Get(ctx context.Context, empresaID, id string, p api.DTEGetParams) (*api.DTE, error) {
	s := r.s
	d, err := s.st.GetDTE(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the DTE", "dte", id)
	}
	out, err := dteFromStore(d, p.IncludeXML)
	if err != nil {
		return nil, err
	}
	mails, err := s.st.ListCorreos(ctx, empresaID, store.CorreoFilter{DTEID: id, Limit: 1})
	if err != nil {
		return nil, storeErr(err, "reading the DTE's mail", "dte", id)
	}
	if len(mails.Items) > 0 {
		c := correoFromStore(&mails.Items[0])
		out.Correo = &c
	}
	if err := cesionOf(ctx, s.st, empresaID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// List lists the company's documents, newest first, with keyset cursors
// that stay stable under concurrent inserts, and the total count of
// documents matching the filters.
func (r *DocumentService) List(ctx context.Context, empresaID string, f api.DTEListParams) (*api.Page[api.DTE], error) {
	s := r.s
	limit, e := pageLimit(f.Limit)
	if e != nil {
		return nil, e
	}
	var d []dte.FieldError
	if f.TipoDTE != 0 && !f.TipoDTE.Valid() {
		d = append(d, dte.FieldError{Field: "tipo_dte", Code: dte.CodeInvalidValue, Message: fmt.Sprintf("tipo_dte %d is not one of the twelve DTE types", f.TipoDTE)})
	}
	if f.Estado != "" && !f.Estado.Valid() {
		d = append(d, dte.FieldError{Field: "estado", Code: dte.CodeInvalidValue, Message: fmt.Sprintf("estado %q is not a DTE state", f.Estado)})
	}
	for _, df := range []struct{ name, v string }{{"fecha_desde", f.FechaDesde}, {"fecha_hasta", f.FechaHasta}} {
		if df.v != "" {
			if _, err := time.Parse(time.DateOnly, df.v); err != nil {
				d = append(d, dte.FieldError{Field: df.name, Code: dte.CodeInvalidFormat, Message: df.name + " must be a date YYYY-MM-DD"})
			}
		}
	}
	rut := f.RutReceptor
	if rut != "" {
		if p := dte.CheckRUT("rut_receptor", rut, false); p != nil {
			d = append(d, *p)
		}
		r, _ := dte.ParseRUT(rut)
		rut = r.String()
	}
	if f.Folio < 0 {
		d = append(d, dte.FieldError{Field: "folio", Code: dte.CodeInvalidValue, Message: "folio must be a positive number"})
	}
	if e := invalid(d); e != nil {
		return nil, e
	}
	amb, err := s.listAmbiente(ctx, empresaID, f.Ambiente)
	if err != nil {
		return nil, err
	}
	page, err := s.st.ListDTEs(ctx, empresaID, store.DTEFilter{Ambiente: amb, TipoDTE: int(f.TipoDTE), Estado: string(f.Estado),
		FechaDesde: f.FechaDesde, FechaHasta: f.FechaHasta, RutReceptor: rut, Folio: f.Folio, Cedido: f.Cedido, Cursor: f.Cursor, Limit: limit})
	if err != nil {
		return nil, storeErr(err, "listing DTEs", "empresa", empresaID)
	}
	out := &api.Page[api.DTE]{Data: make([]api.DTE, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		item, err := dteFromStore(&page.Items[i], false)
		if err != nil {
			return nil, err
		}
		out.Data = append(out.Data, *item)
		// The stored row is read: let its bytes go now rather than with
		// the whole page, so the page is not held twice.
		page.Items[i] = store.DTE{}
	}
	return out, nil
}

// signedXML returns a signed document's XML, or a not-found error while it
// is not signed yet.
func (s *Service) signedXML(ctx context.Context, empresaID, id string) ([]byte, error) {
	d, err := s.st.GetDTE(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the DTE", "dte", id)
	}
	if len(d.XML) == 0 {
		return nil, &fault.Error{Kind: fault.KindNotFound, Code: fault.NotFound, Message: fmt.Sprintf("DTE %q is not signed yet", id)}
	}
	return d.XML, nil
}

// XML returns one of the company's documents' signed XML (ISO-8859-1
// bytes, as sent to the SII); a document not signed yet is not found.
func (r *DocumentService) XML(ctx context.Context, empresaID, id string) ([]byte, error) {
	s := r.s
	return s.signedXML(ctx, empresaID, id)
}

// PDF renders one of the company's documents' printed form: letter
// ("carta", the default) or 80 mm paper ("80mm", for 33, 34, 39 and 41),
// optionally the cedible copy (33, 34, 43, 46 and 52).
func (r *DocumentService) PDF(ctx context.Context, empresaID, id string, opts api.PDFOptions) ([]byte, error) {
	s := r.s
	format := pdf.Carta
	if opts.Formato != "" {
		f, err := pdf.ParseFormat(opts.Formato)
		if err != nil {
			return nil, fault.Invalid("formato", dte.CodeInvalidValue, err.Error())
		}
		format = f
	}
	xml, err := s.signedXML(ctx, empresaID, id)
	if err != nil {
		return nil, err
	}
	emp, err := s.st.GetEmpresa(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	doc, err := dte.ParseDTE(xml)
	if err != nil {
		return nil, fault.Failed("reading the signed DTE "+id, err)
	}
	o := pdf.OptionsFor(empresaFromStore(emp).Emisor())
	o.Format, o.Cedible = format, opts.Cedible
	if o.Logo, err = s.logoFor(ctx, empresaID); err != nil {
		return nil, err
	}
	out, err := pdf.RenderBytes(doc, o)
	switch {
	case errors.Is(err, pdf.ErrNoCedible):
		return nil, fault.Invalid("cedible", dte.CodeNotAllowed, fmt.Sprintf("tipo %d has no cedible copy", doc.Tipo))
	case errors.Is(err, pdf.ErrFormat):
		return nil, fault.Invalid("formato", dte.CodeNotAllowed, fmt.Sprintf("the %s format does not print tipo %d", format, doc.Tipo))
	case err != nil:
		return nil, fault.Failed("rendering the PDF of "+id, err)
	}
	return out, nil
}

// Mail queues the mail of one of the company's signed documents to its
// receptor: to p.Para when given, else to the cliente's e-mail, else to
// the receptor's address on the SII's list of contribuyentes. A mail
// asked for this way is a new one each time; a job sends it.
func (r *DocumentService) Mail(ctx context.Context, empresaID, id string, p api.DTEMailParams) (*api.Correo, error) {
	s, para := r.s, p.Para
	if para != "" {
		if d := checkEmailField(nil, "para", para); len(d) > 0 {
			return nil, fault.FromValidation(&dte.ValidationError{Details: d})
		}
	}
	o, err := s.documentMail(ctx, empresaID, id, para)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, fault.Invalid("para", dte.CodeRequired, "no address: give para, or an email to the cliente with the receptor's RUT (or import the SII's list of contribuyentes)")
	}
	// A mail asked for by hand is a new one each time.
	var c *store.Correo
	err = s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c, err = s.mailer.Enqueue(ctx, tx, o)
		return err
	})
	if errors.Is(err, mailer.ErrNoSender) {
		return nil, fault.Clash(fault.InvalidState, "the company has no mail settings to send from: PUT /empresa/correo with direccion and smtp")
	}
	if err != nil {
		return nil, fault.Failed("queuing the mail", err)
	}
	out := correoFromStore(c)
	return &out, nil
}

// Intercambio returns the EnvioDTE that carries one of the company's
// signed documents to its receptor (the Carátula's RutReceptor is the
// receptor's), signed now: the file the receptor gets by mail.
func (r *DocumentService) Intercambio(ctx context.Context, empresaID, id string) ([]byte, error) {
	s := r.s
	d, emisor, err := s.signedDTE(ctx, empresaID, id)
	if err != nil {
		return nil, err
	}
	return s.exchangeEnvelope(ctx, d, emisor)
}
