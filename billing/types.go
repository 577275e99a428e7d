package billing

import (
	"time"

	"github.com/dtekit/dtekit/dte"
)

// The response types below carry the JSON names of the API contract (§2),
// so the HTTP server encodes them as they are. DTE, EmitirDTEResponse,
// TrackingInfo and SIIStatusInfo are dte's own types.

// Empresa is the issuing company (contract §2.6). It is dte.Emisor under
// the API's name: the contract's fields plus the SII economic activity
// codes every document header needs, declared once. SucursalSII and
// OficinaSII are not stored and stay empty (and absent from the JSON).
type Empresa dte.Emisor

// Emisor returns the company as the document header's issuer.
func (e *Empresa) Emisor() dte.Emisor { return dte.Emisor(*e) }

// EmpresaInput creates a company (an operator's admin operation).
type EmpresaInput struct {
	Rut              string `json:"rut"`
	RazonSocial      string `json:"razon_social"`
	Giro             string `json:"giro"`
	Direccion        string `json:"direccion"`
	Comuna           string `json:"comuna"`
	Ciudad           string `json:"ciudad"`
	Ambiente         string `json:"ambiente"`
	FechaResolucion  string `json:"fecha_resolucion"`
	NumeroResolucion int    `json:"numero_resolucion"`
	Acteco           []int  `json:"acteco"`
}

// EmpresaUpdate changes a company's tax and contact data (contract §4.3);
// nil fields stay as they are.
type EmpresaUpdate struct {
	RazonSocial *string `json:"razon_social,omitempty"`
	Giro        *string `json:"giro,omitempty"`
	Direccion   *string `json:"direccion,omitempty"`
	Comuna      *string `json:"comuna,omitempty"`
	Ciudad      *string `json:"ciudad,omitempty"`
	// OficinaSII is the SII office printed on every PDF ("" prints none).
	OficinaSII *string `json:"oficina_sii,omitempty"`
	// Acteco replaces the economic activity codes (one to four).
	Acteco *[]int `json:"acteco,omitempty"`
	// FechaResolucion and NumeroResolucion are the SII resolution that
	// authorizes the company to issue (number 0 in certificación).
	FechaResolucion  *string `json:"fecha_resolucion,omitempty"`
	NumeroResolucion *int    `json:"numero_resolucion,omitempty"`
	// InboundEmail is the company's intercambio e-mail address, where its
	// suppliers send their documents ("" clears it).
	InboundEmail *string `json:"inbound_email,omitempty"`
	// Ambiente moves the company between certificacion and produccion.
	// Moving to produccion needs a resolution number and date and a
	// signing certificate that has not expired; the company then takes
	// folios only from CAFs of produccion (checked with that
	// environment's SII key), and documents already emitted keep theirs.
	Ambiente *string `json:"ambiente,omitempty"`
	// Logo, when not nil, installs the company's logo as SetLogo does, in
	// the same transaction as the other changes (the operator's command
	// line; the API has /empresa/logo).
	Logo []byte `json:"-"`
}

// CertificadoStatus describes the company's signing certificate (§2.7).
type CertificadoStatus struct {
	HasCertificado      bool       `json:"has_certificado"`
	RutFirmante         *string    `json:"rut_firmante"`
	FechaVencimiento    *string    `json:"fecha_vencimiento"`
	DiasParaVencimiento *int       `json:"dias_para_vencimiento"`
	IsActive            bool       `json:"is_active"`
	UploadedAt          *time.Time `json:"uploaded_at"`
}

// CAF is a registered folio range (contract §2.8).
type CAF struct {
	ID                string      `json:"id"`
	TipoDTE           dte.TipoDTE `json:"tipo_dte"`
	FolioDesde        int64       `json:"folio_desde"`
	FolioHasta        int64       `json:"folio_hasta"`
	FoliosDisponibles int64       `json:"folios_disponibles"`
	Ambiente          string      `json:"ambiente"`
	FechaAutorizacion string      `json:"fecha_autorizacion"`
	IsActive          bool        `json:"is_active"`
	CreatedAt         time.Time   `json:"created_at"`
}

// CAFInput registers a CAF (contract §4.2): the CAF file as raw XML or
// base64.
type CAFInput struct {
	TipoDTE dte.TipoDTE `json:"tipo_dte"`
	CAFXML  string      `json:"caf_xml"`
}

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

// ClientePage is a page of the customer list (contract §4.5).
type ClientePage struct {
	Data       []Cliente `json:"data"`
	NextCursor *string   `json:"next_cursor"`
	TotalCount int64     `json:"total_count"`
}

// ProductoPage is a page of the product list.
type ProductoPage struct {
	Data       []Producto `json:"data"`
	NextCursor *string    `json:"next_cursor"`
	TotalCount int64      `json:"total_count"`
}

// CAFPage is a page of the CAF list, in the order the CAFs were
// registered.
type CAFPage struct {
	Data       []CAF   `json:"data"`
	NextCursor *string `json:"next_cursor"`
	TotalCount int64   `json:"total_count"`
}

// CAFFilter selects CAFs for ListCAF: of one type, or of every type when
// TipoDTE is 0; of one environment (Ambiente, see api.AmbienteTodos).
type CAFFilter struct {
	Ambiente string
	TipoDTE  dte.TipoDTE
	Cursor   string // next_cursor of the previous page
	Limit    int    // 0 means 20; 1 to 100
}

// ListParams pages and searches a catalog. Q, when set, matches the name,
// the rut (clientes) or the codigo (productos).
type ListParams struct {
	Q      string
	Cursor string
	Limit  int // 0 means 20; 1 to 100
}

// Principal is the authenticated caller: the company it acts for and
// what it may do. AuthenticateAPIKey makes one from an API key; an HTTP
// layer makes one from a bearer token the same way.
type Principal struct {
	// EmpresaID is the tenant every call made for the principal is
	// scoped to.
	EmpresaID string
	// Credential identifies the credential without revealing it
	// ("apikey:<id>" or "jwt:<subject>"), for rate limits and logs.
	Credential string
	// Write reports whether the credential may change data.
	Write bool
	// Admin reports the admin role (needed to upload the certificate).
	Admin bool
}

// APIKey is a created API key. Key, the plaintext, is returned once by
// CreateAPIKey and never stored (only its hash is).
type APIKey struct {
	ID        string     `json:"id"`
	EmpresaID string     `json:"empresa_id"`
	Key       string     `json:"key,omitempty"`
	Prefix    string     `json:"prefix"`
	Write     bool       `json:"write"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Webhook is a registered webhook endpoint (contract §2.5). Secret is
// complete only in the answer to its creation, masked afterwards.
type Webhook struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	Secret    string    `json:"secret,omitempty"`
	IsActive  bool      `json:"is_active"`
	CreatedAt time.Time `json:"created_at"`
}
