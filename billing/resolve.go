package billing

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/store"
)

// resolveStored fills what an emission request takes from the company's
// stored records, before the request meets the validation gate:
//   - cliente_id: the receptor's empty fields from the cliente;
//   - detalle[i].producto_id: the line's empty nombre, precio, unidad and
//     exemption (ind_exe 1 for an exempt producto) from the producto;
//   - referencias[i].dte_id: the reference's empty tipo_doc_ref, folio_ref
//     and fecha_ref from one of the company's documents.
//
// Fields the request gives explicitly win. req itself is left as sent (the
// idempotency hash covers the request as sent); the answer is a copy when
// anything was filled. An id that names nothing of the company is a
// validation error on its field, all such fields named at once.
//
// A document named by dte_id must be of ambiente, the company's
// environment: a document of producción never refers to one of
// certificación (whose folios the SII numbers apart).
func (s *Service) resolveStored(ctx context.Context, empresaID, ambiente string, req *dte.EmitirDTERequest) (*dte.EmitirDTERequest, error) {
	if !needsResolving(req) {
		return req, nil
	}
	out := *req
	out.Detalle = append([]dte.LineaDetalle(nil), req.Detalle...)
	out.Referencias = append([]dte.Referencia(nil), req.Referencias...)
	var details []dte.FieldError
	missing := func(field, what, id string) {
		details = append(details, dte.FieldError{Field: field, Code: fault.DetailNotFound,
			Message: fmt.Sprintf("%s names no %s of this company (%q)", field, what, id)})
	}
	// lookup reports whether err is "not found" (recorded as a detail)
	// and returns any other error.
	lookup := func(err error, field, what, id string) (bool, error) {
		if err == nil {
			return true, nil
		}
		if errors.Is(err, store.ErrNotFound) {
			missing(field, what, id)
			return false, nil
		}
		return false, fault.Failed("reading the "+what+" of "+field, err)
	}

	if id := req.ClienteID; id != "" {
		c, err := s.st.GetCliente(ctx, empresaID, id)
		if ok, err := lookup(err, "cliente_id", "cliente", id); err != nil {
			return nil, err
		} else if ok {
			r := &out.Receptor
			fill(&r.Rut, c.Rut)
			fill(&r.RazonSocial, c.RazonSocial)
			fill(&r.Giro, c.Giro)
			fill(&r.Direccion, c.Direccion)
			fill(&r.Comuna, c.Comuna)
			fill(&r.Ciudad, c.Ciudad)
		}
	}
	for i := range out.Detalle {
		l := &out.Detalle[i]
		if l.ProductoID == "" {
			continue
		}
		field := "detalle[" + strconv.Itoa(i) + "].producto_id"
		p, err := s.st.GetProducto(ctx, empresaID, l.ProductoID)
		if ok, err := lookup(err, field, "producto", l.ProductoID); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		fill(&l.Nombre, p.Nombre)
		fill(&l.Unidad, p.Unidad)
		if l.Precio == "" && l.MontoItem == "" {
			l.Precio = dte.Decimal(strconv.FormatInt(p.PrecioUnitario, 10))
		}
		if l.IndExe == nil && p.EsExento {
			exento := 1
			l.IndExe = &exento
		}
	}
	for i := range out.Referencias {
		r := &out.Referencias[i]
		if r.DTEID == "" {
			continue
		}
		field := "referencias[" + strconv.Itoa(i) + "].dte_id"
		d, err := s.st.GetDTE(ctx, empresaID, r.DTEID)
		if ok, err := lookup(err, field, "document", r.DTEID); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		if d.Ambiente != ambiente {
			details = append(details, dte.FieldError{Field: field, Code: fault.DetailAmbienteMismatch,
				Message: fmt.Sprintf("%s names a document emitted in %s (tipo %d, folio %d); the company emits in %s", field, d.Ambiente, d.TipoDTE, d.Folio, ambiente),
				Action:  "refer to a document of " + ambiente})
			continue
		}
		if r.TipoDocRef.IsZero() {
			r.TipoDocRef = dte.RefTipo(dte.TipoDTE(d.TipoDTE))
		}
		if r.FolioRef == 0 {
			r.FolioRef = d.Folio
		}
		fill(&r.FechaRef, d.FechaEmision)
	}
	if len(details) > 0 {
		return nil, &fault.Error{Kind: fault.KindValidation, Code: fault.Validation,
			Message: fmt.Sprintf("the request names %d record(s) the company does not have", len(details)), Details: details}
	}
	return &out, nil
}

// needsResolving reports whether the request names any stored record.
func needsResolving(req *dte.EmitirDTERequest) bool {
	if req.ClienteID != "" {
		return true
	}
	for i := range req.Detalle {
		if req.Detalle[i].ProductoID != "" {
			return true
		}
	}
	for i := range req.Referencias {
		if req.Referencias[i].DTEID != "" {
			return true
		}
	}
	return false
}

// fill sets *dst to v when *dst is empty: a field the request gives wins.
func fill(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}
