package api

import (
	"time"

	"github.com/dtekit/dtekit/dte"
)

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
	// Logo, when not nil, installs the company's logo as the logo's own
	// upload does, in the same transaction as the other changes (the
	// operator's command line; the API has /empresa/logo).
	Logo []byte `json:"-"`
}

// EmpresaListParams selects the companies of an operator's list, which
// no API route serves: every company, oldest first.
type EmpresaListParams struct {
	// Ambiente, when not empty, keeps the companies working in that
	// environment ("certificacion" or "produccion").
	Ambiente string
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

// CertificadoUpload installs the company's signing certificate (the
// multipart form of POST /empresa/certificado).
type CertificadoUpload struct {
	// File is the .pfx/.p12 file.
	File []byte
	// Password opens File; it is not kept.
	Password string
	// RutFirmante is the RUT the certificate must belong to.
	RutFirmante string
}

// Logo is a company's logo as stored: a PNG or JPEG image.
type Logo struct {
	ContentType string // "image/png" or "image/jpeg"
	Data        []byte
}

// AlertSettings are a company's alert preferences.
type AlertSettings struct {
	// CAFLowStockThreshold is how many available folios of a type
	// (summed over its active CAFs) an emission must leave for
	// caf.low_stock to fire, 0 to 1,000,000 (0: when the last folio is
	// taken); 20 until the company sets it.
	CAFLowStockThreshold int64 `json:"caf_low_stock_threshold"`
}

// AlertSettingsInput changes a company's alert preferences; every field
// is required.
type AlertSettingsInput struct {
	CAFLowStockThreshold *int64 `json:"caf_low_stock_threshold"`
}
