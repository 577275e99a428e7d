package billing

import (
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/dte"
)

// DTE is a document as the service shows it (contract §2.2): its
// amounts, lines and references, its state, and how its submission to the
// SII went.
type DTE struct {
	ID string `json:"id"`
	// Ambiente is the environment the document was emitted in
	// ("certificacion" or "produccion"): its CAF's, kept when the company
	// moves (a contract extension).
	Ambiente            string      `json:"ambiente"`
	TipoDTE             dte.TipoDTE `json:"tipo_dte"`
	Folio               int64       `json:"folio"`
	Estado              dte.Estado  `json:"estado"`
	RutReceptor         string      `json:"rut_receptor"`
	RazonSocialReceptor string      `json:"razon_social_receptor"`
	FechaEmision        string      `json:"fecha_emision"`
	Montos
	Detalle     []dte.LineaDetalle `json:"detalle"`
	Referencias []dte.Referencia   `json:"referencias,omitempty"`
	Tracking    *Tracking          `json:"tracking,omitempty"`
	SIIStatus   *SIIStatus         `json:"sii_status,omitempty"`
	// Intercambio is what the receptor answered by mail (its acuse, its
	// commercial result, its receipt of goods); omitted until it answers.
	Intercambio  *ReceptorRespuestas `json:"intercambio,omitempty"`
	XMLDocumento string              `json:"xml_documento,omitempty"`
	Metadata     map[string]any      `json:"metadata,omitempty"`
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`

	// Correo is the latest mail of the document to its receptor, so that
	// one the service could not send says why (estado sin_direccion or
	// sin_remitente); omitted until one is tried, and in lists.
	Correo *api.Correo `json:"correo,omitempty"`
}

// Montos are a document's amounts (contract §2.2), as a DTE row keeps
// them once computed. The monto_* fields are pesos: an export document in
// another currency has the peso amounts of its OtraMoneda conversion
// (export_data.tpo_cambio) there, monto_exento null and monto_total 0
// without one, and its own currency's amounts in MontosMonedaExtranjera.
type Montos struct {
	MontoNeto   *int64      `json:"monto_neto"`
	MontoExento *int64      `json:"monto_exento"`
	TasaIVA     dte.Decimal `json:"tasa_iva,omitempty"`
	IVA         *int64      `json:"iva"`
	MontoTotal  int64       `json:"monto_total"`
	// MontosMonedaExtranjera are an export document's amounts in its own
	// currency when that is not the peso.
	MontosMonedaExtranjera *MontosMoneda `json:"montos_moneda_extranjera,omitempty"`
}

// MontosMoneda are an export document's amounts in the currency it was
// issued in (Totales of its XML), with the exchange rate to pesos when the
// document carries one.
type MontosMoneda struct {
	// TpoMoneda is the SII's name of the currency, e.g. "DOLAR USA".
	TpoMoneda string `json:"tpo_moneda"`
	// MontoExento is the exempt amount (up to 4 decimals).
	MontoExento dte.Decimal `json:"monto_exento,omitempty"`
	// MontoTotal is the document's total (up to 4 decimals).
	MontoTotal dte.Decimal `json:"monto_total"`
	// TpoCambio is the pesos per unit of the currency used for the
	// document's monto_* fields; absent when the document has no peso
	// conversion.
	TpoCambio dte.Decimal `json:"tpo_cambio,omitempty"`
}

// Tracking follows a document's submission to the SII (contract §2.2).
type Tracking struct {
	EnvioID     *string `json:"envio_id,omitempty"`
	TrackID     *string `json:"track_id,omitempty"`
	EstadoEnvio *string `json:"estado_envio,omitempty"`
	CodigoSII   *string `json:"codigo_sii,omitempty"`
	GlosaSII    *string `json:"glosa_sii,omitempty"`
	Informados  *int    `json:"informados,omitempty"`
	Aceptados   *int    `json:"aceptados,omitempty"`
	Rechazados  *int    `json:"rechazados,omitempty"`
	Reparos     *int    `json:"reparos,omitempty"`
	Intentos    *int    `json:"intentos,omitempty"`
}

// SIIStatus is the last fine-grained status query (contract §2.2).
type SIIStatus struct {
	Source      string     `json:"source,omitempty"`
	TrackID     *string    `json:"track_id,omitempty"`
	EstadoSII   *string    `json:"estado_sii,omitempty"`
	Glosa       *string    `json:"glosa,omitempty"`
	GlosaEstado *string    `json:"glosa_estado,omitempty"`
	ErrCode     *string    `json:"err_code,omitempty"`
	GlosaErr    *string    `json:"glosa_err,omitempty"`
	NumAtencion *string    `json:"num_atencion,omitempty"`
	CheckedAt   *time.Time `json:"checked_at,omitempty"`
	RawXML      *string    `json:"raw_xml,omitempty"`
}

// EmitResponse is the outcome of an emission (contract §2.4, EmitirDTEResponse).
type EmitResponse struct {
	ID         string      `json:"id"`
	Folio      int64       `json:"folio"`
	TipoDTE    dte.TipoDTE `json:"tipo_dte"`
	Estado     dte.Estado  `json:"estado"`
	MontoTotal int64       `json:"monto_total"`
	CreatedAt  time.Time   `json:"created_at"`
	// Advertencias are the problems the gate reported without refusing
	// the document (dte.ValidateFor), in the shape of the error's details:
	// today, transport data Res. Ex. SII 154/2025 asks for that a
	// certificación guía or a factura lacks. A dtekit extension of the
	// contract, absent when there are none.
	Advertencias []dte.FieldError `json:"advertencias,omitempty"`
}
