package billing

import (
	"errors"
	"fmt"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"

	"github.com/dtekit/dtekit/store"
)

// storeErr turns a store error into an *fault.Error: not found, conflict (by
// constraint), invalid cursor, or internal.
func storeErr(err error, op, what, id string) error {
	if err == nil {
		return nil
	}
	var be *fault.Error
	if errors.As(err, &be) {
		return be
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fault.Missing(what, id)
	case errors.Is(err, store.ErrInvalidCursor):
		return fault.Invalid("cursor", fault.DetailInvalidCursor, "the cursor is not one this listing produced")
	case errors.Is(err, store.ErrUnreadable):
		return unreadable(what, id, err)
	}
	switch store.ConflictOn(err) {
	case store.ConstraintCAFRange:
		return fault.Clash(fault.CAFRangeConflict, "the CAF's folio range overlaps a CAF already registered for this type and ambiente")
	case store.ConstraintClienteRut:
		return fault.Clash(fault.ClienteRUTConflict, "a cliente with this rut already exists")
	case store.ConstraintProductoCodigo:
		return fault.Clash(fault.ProductoCodigoConflict, "a producto with this codigo already exists")
	case store.ConstraintDTEFolio:
		return fault.Clash(fault.DuplicateFolio, "a DTE with this type and folio already exists")
	case store.ConstraintEmpresaRut:
		return fault.Clash(fault.EmpresaRUTConflict, "a company with this rut already exists")
	case "":
	default:
		return fault.Clash(fault.Conflict, fmt.Sprintf("the write conflicts with existing data (%s)", store.ConflictOn(err)))
	}
	return fault.Failed(op, err)
}

func empresaFromStore(e *store.Empresa) *api.Empresa {
	out := &api.Empresa{
		ID: e.ID, Rut: e.Rut, RazonSocial: e.RazonSocial, Giro: e.Giro, Direccion: e.Direccion,
		Comuna: e.Comuna, Ciudad: e.Ciudad, Ambiente: e.Ambiente, FechaResolucion: e.FechaResolucion,
		NumeroResolucion: int(e.NumeroResolucion), InboundEmail: e.InboundEmail, InboundStatus: e.InboundStatus,
		OficinaSII: e.OficinaSII,
	}
	for _, a := range e.Acteco {
		out.Acteco = append(out.Acteco, int(a))
	}
	return out
}

func cafFromStore(c *store.CAF) api.CAF {
	return api.CAF{ID: c.ID, TipoDTE: dteTipo(c.TipoDTE), FolioDesde: c.FolioDesde, FolioHasta: c.FolioHasta,
		FoliosDisponibles: c.FoliosDisponibles(), Ambiente: c.Ambiente, FechaAutorizacion: c.FechaAutorizacion,
		IsActive: c.IsActive, CreatedAt: c.CreatedAt.UTC()}
}

func clienteFromStore(c *store.Cliente) *api.Cliente {
	return &api.Cliente{ID: c.ID, ClienteInput: api.ClienteInput{Rut: c.Rut, RazonSocial: c.RazonSocial, Giro: c.Giro,
		Direccion: c.Direccion, Comuna: c.Comuna, Ciudad: c.Ciudad, Email: c.Email, Telefono: c.Telefono,
		Contacto: c.Contacto, Notas: c.Notas}, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
}

func productoFromStore(p *store.Producto) *api.Producto {
	return &api.Producto{ID: p.ID, ProductoInput: api.ProductoInput{Codigo: p.Codigo, Nombre: p.Nombre,
		Descripcion: p.Descripcion, PrecioUnitario: p.PrecioUnitario, Unidad: p.Unidad, EsExento: p.EsExento,
		Categoria: p.Categoria}, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
}

func cursorPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// pageLimit checks a page size: 0 means api.DefaultLimit, else 1 to api.MaxLimit.
func pageLimit(n int) (int, *fault.Error) {
	switch {
	case n == 0:
		return api.DefaultLimit, nil
	case n < 1 || n > api.MaxLimit:
		return 0, fault.Invalid("limit", dte.CodeOutOfRange, fmt.Sprintf("limit must be between 1 and %d", api.MaxLimit))
	}
	return n, nil
}
