package api

import "time"

// Cliente is a customer of the company (contract §2.9): the fields it was
// created with, its id and its timestamps.
type Cliente struct {
	ID string `json:"id"`
	ClienteInput
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ClienteInput creates a customer: a valid rut and a non-empty razon_social
// are required.
type ClienteInput struct {
	Rut         string `json:"rut"`
	RazonSocial string `json:"razon_social"`
	Giro        string `json:"giro,omitempty"`
	Direccion   string `json:"direccion,omitempty"`
	Comuna      string `json:"comuna,omitempty"`
	Ciudad      string `json:"ciudad,omitempty"`
	Email       string `json:"email,omitempty"`
	Telefono    string `json:"telefono,omitempty"`
	Contacto    string `json:"contacto,omitempty"`
	Notas       string `json:"notas,omitempty"`
}

// ClienteUpdate changes a customer; nil fields stay, the rut never changes.
type ClienteUpdate struct {
	RazonSocial *string `json:"razon_social,omitempty"`
	Giro        *string `json:"giro,omitempty"`
	Direccion   *string `json:"direccion,omitempty"`
	Comuna      *string `json:"comuna,omitempty"`
	Ciudad      *string `json:"ciudad,omitempty"`
	Email       *string `json:"email,omitempty"`
	Telefono    *string `json:"telefono,omitempty"`
	Contacto    *string `json:"contacto,omitempty"`
	Notas       *string `json:"notas,omitempty"`
}

// ClienteListParams pages the customers (contract §4.5), oldest first.
type ClienteListParams struct {
	ListParams
	// Q, when set, keeps the customers whose razon_social or rut matches
	// it (a rut written with dots matches its canonical form).
	Q string
}

// Producto is a product of the company's catalog (contract §2.10): the
// fields it was created with, its id and its timestamps.
type Producto struct {
	ID string `json:"id"`
	ProductoInput
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ProductoInput creates a product: a non-empty nombre and a non-negative
// precio_unitario are required; codigo, when given, is unique.
type ProductoInput struct {
	Codigo         string `json:"codigo,omitempty"`
	Nombre         string `json:"nombre"`
	Descripcion    string `json:"descripcion,omitempty"`
	PrecioUnitario int64  `json:"precio_unitario"`
	Unidad         string `json:"unidad,omitempty"`
	EsExento       bool   `json:"es_exento"`
	Categoria      string `json:"categoria,omitempty"`
}

// ProductoUpdate changes a product; nil fields stay.
type ProductoUpdate struct {
	Codigo         *string `json:"codigo,omitempty"`
	Nombre         *string `json:"nombre,omitempty"`
	Descripcion    *string `json:"descripcion,omitempty"`
	PrecioUnitario *int64  `json:"precio_unitario,omitempty"`
	Unidad         *string `json:"unidad,omitempty"`
	EsExento       *bool   `json:"es_exento,omitempty"`
	Categoria      *string `json:"categoria,omitempty"`
}

// ProductoListParams pages the products, oldest first.
type ProductoListParams struct {
	ListParams
	// Q, when set, keeps the products whose nombre or codigo matches it.
	Q string
}
