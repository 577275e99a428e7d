package billing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dtekit/dtekit/billing/fault"
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
func dteFromStore(d *store.DTE, includeXML bool) (*DTE, error) {
	out := &DTE{ID: d.ID, Ambiente: d.Ambiente, TipoDTE: dte.TipoDTE(d.TipoDTE), Folio: d.Folio, Estado: apiEstado(d.Estado),
		RutReceptor: d.RutReceptor, RazonSocialReceptor: d.RazonSocialReceptor, FechaEmision: d.FechaEmision,
		Montos: Montos{MontoTotal: d.MontoTotal}, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(), Detalle: []dte.LineaDetalle{}}
	// Only the request's lines and references are shown: its metadata
	// has a column of its own (read below) and is not decoded twice.
	var req struct {
		Detalle     []dte.LineaDetalle `json:"detalle"`
		Referencias []dte.Referencia   `json:"referencias"`
	}
	if len(d.Request) > 0 {
		if err := json.Unmarshal(d.Request, &req); err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored request: %w", err))
		}
		if req.Detalle != nil {
			out.Detalle = req.Detalle
		}
		out.Referencias = req.Referencias
	}
	if len(d.Totals) > 0 {
		var t Montos
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
		tr := Tracking(t)
		out.Tracking = &tr
	}
	if len(d.SIIStatus) > 0 {
		st, err := submission.ParseStatus(d.SIIStatus)
		if err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored SII status: %w", err))
		}
		ss := SIIStatus(st)
		out.SIIStatus = &ss
	}
	if len(d.Metadata) > 0 {
		// json.Number: an integer beyond 2^53 keeps its digits.
		dec := json.NewDecoder(bytes.NewReader(d.Metadata))
		dec.UseNumber()
		if err := dec.Decode(&out.Metadata); err != nil {
			return nil, unreadable("dte", d.ID, fmt.Errorf("stored metadata: %w", err))
		}
	}
	out.Intercambio = receptorOut(d)
	if includeXML && len(d.XML) > 0 {
		out.XMLDocumento = dte.XMLText(d.XML)
	}
	return out, nil
}

// GetDTE returns a document; includeXML adds the signed XML
// (xml_documento, as text).
func (s *Service) GetDTE(ctx context.Context, empresaID, id string, includeXML bool) (*DTE, error) {
	d, err := s.st.GetDTE(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the DTE", "dte", id)
	}
	out, err := dteFromStore(d, includeXML)
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
	return out, nil
}

// ListDTE lists the company's documents, newest first, with keyset
// cursors that stay stable under concurrent inserts, and the total count
// of documents matching the filter.
func (s *Service) ListDTE(ctx context.Context, empresaID string, f DTEFilter) (*DTEPage, error) {
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
	if e := invalid(d); e != nil {
		return nil, e
	}
	amb, err := s.listAmbiente(ctx, empresaID, f.Ambiente)
	if err != nil {
		return nil, err
	}
	page, err := s.st.ListDTEs(ctx, empresaID, store.DTEFilter{Ambiente: amb, TipoDTE: int(f.TipoDTE), Estado: string(f.Estado),
		FechaDesde: f.FechaDesde, FechaHasta: f.FechaHasta, RutReceptor: rut, Cursor: f.Cursor, Limit: limit})
	if err != nil {
		return nil, storeErr(err, "listing DTEs", "empresa", empresaID)
	}
	out := &DTEPage{Items: make([]DTE, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		item, err := dteFromStore(&page.Items[i], false)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *item)
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

// DTEXML returns a document's signed XML (ISO-8859-1 bytes, as sent to
// the SII).
func (s *Service) DTEXML(ctx context.Context, empresaID, id string) ([]byte, error) {
	return s.signedXML(ctx, empresaID, id)
}

// DTEPDF renders a document's printed form: letter ("carta", the default)
// or 80 mm paper ("80mm", for 33, 34, 39 and 41), optionally the cedible
// copy (33, 34, 43, 46 and 52).
func (s *Service) DTEPDF(ctx context.Context, empresaID, id string, opts PDFOptions) ([]byte, error) {
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
