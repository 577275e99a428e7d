package billing

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/mailaddr"
	"github.com/dtekit/dtekit/store"
)

// Field length limits of the catalogs (the SII's limits where the field
// ends up in a document: a cliente's fields become a receptor's, so they
// are dte's receptor limits).
const (
	maxRazonSocial = dte.MaxRazonSocialReceptor
	maxGiro        = dte.MaxGiroReceptor
	maxDireccion   = dte.MaxDireccionReceptor
	maxComuna      = dte.MaxComunaReceptor
	maxCiudad      = dte.MaxCiudadReceptor
	maxShortText   = 200
	maxNotas       = 2000
	maxNombre      = 200
	maxDescripcion = 1000
	maxCodigo      = 35
	maxUnidad      = 4
)

type textField struct {
	name     string
	v        *string
	required bool
	max      int
}

func checkFields(fs []textField) []dte.FieldError {
	var d []dte.FieldError
	for _, f := range fs {
		if f.v != nil {
			*f.v = strings.TrimSpace(*f.v)
			d = checkText(d, f.name, *f.v, f.required, f.max)
		}
	}
	return d
}

// maxEmail is the longest e-mail address (RFC 5321: a path of 256 with
// its brackets).
const maxEmail = 254

func checkEmail(d []dte.FieldError, v string) []dte.FieldError { return checkEmailField(d, "email", v) }

// checkEmailField appends a problem when field's value v, not empty, is
// not a bare e-mail address of at most 254 characters (RFC 5321's path)
// that the SII takes (mailaddr.CheckEmail: the documents and cesiones that
// carry it reach the SII).
func checkEmailField(d []dte.FieldError, field, v string) []dte.FieldError {
	if v == "" {
		return d
	}
	if len(v) > maxEmail {
		return append(d, dte.FieldError{Field: field, Code: dte.CodeTooLong, Message: fmt.Sprintf("%s has %d characters; an e-mail address has at most %d", field, len(v), maxEmail)})
	}
	if err := mailaddr.CheckEmail(v); err != nil {
		return append(d, dte.FieldError{Field: field, Code: dte.CodeInvalidFormat, Message: field + " " + err.Error()})
	}
	return d
}

func clienteFields(razon, giro, dir, comuna, ciudad, email, tel, contacto, notas *string, create bool) []textField {
	return []textField{{"razon_social", razon, true, maxRazonSocial}, {"giro", giro, false, maxGiro},
		{"direccion", dir, false, maxDireccion}, {"comuna", comuna, false, maxComuna}, {"ciudad", ciudad, false, maxCiudad},
		{"email", email, false, maxShortText}, {"telefono", tel, false, maxShortText}, {"contacto", contacto, false, maxShortText},
		{"notas", notas, false, maxNotas}}
}

// CreateCliente adds a customer; its rut is unique within the company
// (fault.KindConflict, CLIENTE_RUT_CONFLICT), and a company holds at most
// Limits.Clientes (LIMIT_EXCEEDED).
func (r *CatalogService) CreateCliente(ctx context.Context, empresaID string, in api.ClienteInput) (*api.Cliente, error) {
	s := r.s
	var d []dte.FieldError
	rut, _ := dte.ParseRUT(in.Rut)
	if p := dte.CheckRUT("rut", in.Rut, true); p != nil {
		d = append(d, *p)
	}
	d = append(d, checkFields(clienteFields(&in.RazonSocial, &in.Giro, &in.Direccion, &in.Comuna, &in.Ciudad,
		&in.Email, &in.Telefono, &in.Contacto, &in.Notas, true))...)
	d = checkEmail(d, in.Email)
	if e := invalid(d); e != nil {
		return nil, e
	}
	rec := &store.Cliente{ID: newID(), EmpresaID: empresaID, Rut: rut.String(), RazonSocial: in.RazonSocial, Giro: in.Giro,
		Direccion: in.Direccion, Comuna: in.Comuna, Ciudad: in.Ciudad, Email: in.Email, Telefono: in.Telefono,
		Contacto: in.Contacto, Notas: in.Notas}
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		if err := s.roomForCliente(ctx, tx, empresaID); err != nil {
			return err
		}
		return tx.InsertCliente(ctx, rec)
	})
	if err != nil {
		return nil, storeErr(err, "creating the cliente", "empresa", empresaID)
	}
	return clienteFromStore(rec), nil
}

// GetCliente returns a customer that was not deleted.
func (r *CatalogService) GetCliente(ctx context.Context, empresaID, id string) (*api.Cliente, error) {
	s := r.s
	c, err := s.st.GetCliente(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the cliente", "cliente", id)
	}
	return clienteFromStore(c), nil
}

// UpdateCliente changes a customer (never its rut).
func (r *CatalogService) UpdateCliente(ctx context.Context, empresaID, id string, in api.ClienteUpdate) (*api.Cliente, error) {
	s := r.s
	d := checkFields(clienteFields(in.RazonSocial, in.Giro, in.Direccion, in.Comuna, in.Ciudad, in.Email, in.Telefono, in.Contacto, in.Notas, false))
	if in.Email != nil {
		d = checkEmail(d, *in.Email)
	}
	if e := invalid(d); e != nil {
		return nil, e
	}
	var out *store.Cliente
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		c, err := tx.GetCliente(ctx, empresaID, id)
		if err != nil {
			return err
		}
		for _, f := range []struct{ dst, v *string }{{&c.RazonSocial, in.RazonSocial}, {&c.Giro, in.Giro}, {&c.Direccion, in.Direccion},
			{&c.Comuna, in.Comuna}, {&c.Ciudad, in.Ciudad}, {&c.Email, in.Email}, {&c.Telefono, in.Telefono},
			{&c.Contacto, in.Contacto}, {&c.Notas, in.Notas}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		c.UpdatedAt = time.Time{}
		out = c
		return tx.UpdateCliente(ctx, c)
	})
	if err != nil {
		return nil, storeErr(err, "updating the cliente", "cliente", id)
	}
	return clienteFromStore(out), nil
}

// DeleteCliente soft-deletes a customer: it disappears from reads and its
// rut may be used again.
func (r *CatalogService) DeleteCliente(ctx context.Context, empresaID, id string) error {
	s := r.s
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteCliente(ctx, empresaID, id) })
	return storeErr(err, "deleting the cliente", "cliente", id)
}

// ListClientes pages through the customers, oldest first; p.Q searches by
// razon_social or rut.
func (r *CatalogService) ListClientes(ctx context.Context, empresaID string, p api.ClienteListParams) (*api.Page[api.Cliente], error) {
	s := r.s
	limit, e := pageLimit(p.Limit)
	if e != nil {
		return nil, e
	}
	if e := checkSearch(p.Q); e != nil {
		return nil, e
	}
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	page, err := s.st.ListClientes(ctx, empresaID, store.CatalogFilter{Query: searchQuery(p.Q), Cursor: p.Cursor, Limit: limit})
	if err != nil {
		return nil, storeErr(err, "listing clientes", "empresa", empresaID)
	}
	out := &api.Page[api.Cliente]{Data: make([]api.Cliente, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, *clienteFromStore(&page.Items[i]))
	}
	return out, nil
}

// searchQuery normalizes a search text: a RUT written with dots is
// searched in its canonical form.
func searchQuery(q string) string {
	q = strings.TrimSpace(q)
	if r, err := dte.ParseRUT(q); err == nil && strings.ContainsAny(q, ".-") {
		return r.String()
	}
	return q
}

func productoFields(codigo, nombre, desc, unidad, cat *string) []textField {
	return []textField{{"codigo", codigo, false, maxCodigo}, {"nombre", nombre, true, maxNombre},
		{"descripcion", desc, false, maxDescripcion}, {"unidad", unidad, false, maxUnidad}, {"categoria", cat, false, maxShortText}}
}

func checkPrecio(d []dte.FieldError, p int64) []dte.FieldError {
	if p < 0 {
		return append(d, dte.FieldError{Field: "precio_unitario", Code: dte.CodeOutOfRange, Message: "precio_unitario must not be negative"})
	}
	return d
}

// CreateProducto adds a product; a codigo, when given, is unique within
// the company (fault.KindConflict, PRODUCTO_CODIGO_CONFLICT), and a
// company holds at most Limits.Productos (LIMIT_EXCEEDED).
func (r *CatalogService) CreateProducto(ctx context.Context, empresaID string, in api.ProductoInput) (*api.Producto, error) {
	s := r.s
	d := checkFields(productoFields(&in.Codigo, &in.Nombre, &in.Descripcion, &in.Unidad, &in.Categoria))
	d = checkPrecio(d, in.PrecioUnitario)
	if e := invalid(d); e != nil {
		return nil, e
	}
	rec := &store.Producto{ID: newID(), EmpresaID: empresaID, Codigo: in.Codigo, Nombre: in.Nombre, Descripcion: in.Descripcion,
		PrecioUnitario: in.PrecioUnitario, Unidad: in.Unidad, EsExento: in.EsExento, Categoria: in.Categoria}
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		if err := s.roomForProducto(ctx, tx, empresaID); err != nil {
			return err
		}
		return tx.InsertProducto(ctx, rec)
	})
	if err != nil {
		return nil, storeErr(err, "creating the producto", "empresa", empresaID)
	}
	return productoFromStore(rec), nil
}

// GetProducto returns a product that was not deleted.
func (r *CatalogService) GetProducto(ctx context.Context, empresaID, id string) (*api.Producto, error) {
	s := r.s
	p, err := s.st.GetProducto(ctx, empresaID, id)
	if err != nil {
		return nil, storeErr(err, "reading the producto", "producto", id)
	}
	return productoFromStore(p), nil
}

// UpdateProducto changes a product; a new codigo follows the same
// uniqueness rule as creation.
func (r *CatalogService) UpdateProducto(ctx context.Context, empresaID, id string, in api.ProductoUpdate) (*api.Producto, error) {
	s := r.s
	d := checkFields(productoFields(in.Codigo, in.Nombre, in.Descripcion, in.Unidad, in.Categoria))
	if in.PrecioUnitario != nil {
		d = checkPrecio(d, *in.PrecioUnitario)
	}
	if e := invalid(d); e != nil {
		return nil, e
	}
	var out *store.Producto
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		p, err := tx.GetProducto(ctx, empresaID, id)
		if err != nil {
			return err
		}
		for _, f := range []struct{ dst, v *string }{{&p.Codigo, in.Codigo}, {&p.Nombre, in.Nombre}, {&p.Descripcion, in.Descripcion},
			{&p.Unidad, in.Unidad}, {&p.Categoria, in.Categoria}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		if in.PrecioUnitario != nil {
			p.PrecioUnitario = *in.PrecioUnitario
		}
		if in.EsExento != nil {
			p.EsExento = *in.EsExento
		}
		p.UpdatedAt = time.Time{}
		out = p
		return tx.UpdateProducto(ctx, p)
	})
	if err != nil {
		return nil, storeErr(err, "updating the producto", "producto", id)
	}
	return productoFromStore(out), nil
}

// DeleteProducto soft-deletes a product.
func (r *CatalogService) DeleteProducto(ctx context.Context, empresaID, id string) error {
	s := r.s
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error { return tx.DeleteProducto(ctx, empresaID, id) })
	return storeErr(err, "deleting the producto", "producto", id)
}

// ListProductos pages through the products, oldest first; p.Q searches by
// nombre or codigo.
func (r *CatalogService) ListProductos(ctx context.Context, empresaID string, p api.ProductoListParams) (*api.Page[api.Producto], error) {
	s := r.s
	limit, e := pageLimit(p.Limit)
	if e != nil {
		return nil, e
	}
	if e := checkSearch(p.Q); e != nil {
		return nil, e
	}
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	page, err := s.st.ListProductos(ctx, empresaID, store.CatalogFilter{Query: strings.TrimSpace(p.Q), Cursor: p.Cursor, Limit: limit})
	if err != nil {
		return nil, storeErr(err, "listing productos", "empresa", empresaID)
	}
	out := &api.Page[api.Producto]{Data: make([]api.Producto, 0, len(page.Items)), NextCursor: cursorPtr(page.NextCursor), TotalCount: page.TotalCount}
	for i := range page.Items {
		out.Data = append(out.Data, *productoFromStore(&page.Items[i]))
	}
	return out, nil
}
