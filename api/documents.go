package api

import (
	"time"

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
	// Transporte is the transport data the emission request carried
	// (Res. Ex. SII 154/2025: vehicle, carrier, driver, destination), as
	// it was sent; omitted when the request had none.
	Transporte *dte.Transporte `json:"transporte,omitempty"`
	Tracking   *Tracking       `json:"tracking,omitempty"`
	SIIStatus  *SIIStatus      `json:"sii_status,omitempty"`
	// Intercambio is what the receptor answered by mail (its acuse, its
	// commercial result, its receipt of goods); omitted until it answers.
	Intercambio  *ReceptorRespuestas `json:"intercambio,omitempty"`
	XMLDocumento string              `json:"xml_documento,omitempty"`
	Metadata     map[string]any      `json:"metadata,omitempty"`
	CreatedAt    time.Time           `json:"created_at"`
	UpdatedAt    time.Time           `json:"updated_at"`

	// Cedido is true once the SII's registry recorded a cesión of the
	// document made through the service: its holder is then Cesion's
	// cesionario; lists show it too. Cesion is the document's cesión that
	// is not rechazada (in flight or recorded); both omitted when there is
	// none, and Cesion in lists.
	Cedido bool    `json:"cedido,omitempty"`
	Cesion *Cesion `json:"cesion,omitempty"`

	// Correo is the latest mail of the document to its receptor, so that
	// one the service could not send says why (estado sin_direccion or
	// sin_remitente); omitted until one is tried, and in lists.
	Correo *Correo `json:"correo,omitempty"`
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
// It is also the JSON the service stores for it: the submission writes
// it, the document's events and its read model read it.
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

// SIIStatus is the last fine-grained status query (contract §2.2). It is
// also the JSON the service stores for it, written by the submission.
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

// ReceptorRespuestas are what a document's receptor answered by mail
// (DTE.Intercambio).
type ReceptorRespuestas struct {
	Recepcion *ReceptorRespuesta `json:"recepcion"`
	Resultado *ReceptorRespuesta `json:"resultado"`
	Recibo    *ReceptorRespuesta `json:"recibo"`
	// Historial are the later answers that differ from the one that
	// stands (the first of each kind), oldest first: kept, never applied.
	Historial []ReceptorRespuesta `json:"historial"`
}

// ReceptorRespuesta is one answer of a receptor.
type ReceptorRespuesta struct {
	// Tipo is its kind: recepcion, resultado or recibo.
	Tipo        string `json:"tipo"`
	Resultado   string `json:"resultado"`
	Codigo      int    `json:"codigo"`
	Glosa       string `json:"glosa"`
	Motivo      string `json:"motivo"`
	RutReceptor string `json:"rut_receptor"`
	// RutFirmante is the RUT of the certificate that signed it (nil when
	// the certificate names none, or for answers recorded before it was
	// kept).
	RutFirmante *string `json:"rut_firmante"`
	// RecepcionID is the record of the file that carried it (nil for
	// answers recorded before files of answers were kept).
	RecepcionID *string   `json:"recepcion_id"`
	RecibidoAt  time.Time `json:"recibido_at"`
}

// EmitParams asks for an emission: the request (contract §2.3; read one
// strictly with dte.DecodeRequest) under its Idempotency-Key.
type EmitParams struct {
	// IdempotencyKey is the request's Idempotency-Key, a UUID (its
	// spellings are one key).
	IdempotencyKey string
	// Request is the document to emit.
	Request *dte.EmitirDTERequest
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

// DTEGetParams chooses what reading one document returns.
type DTEGetParams struct {
	// IncludeXML adds the signed XML (DTE.XMLDocumento, as text).
	IncludeXML bool
}

// DTEListParams selects documents for the DTE list (contract §4.1). Zero
// fields do not filter, but for Ambiente (see AmbienteTodos).
type DTEListParams struct {
	ListParams
	Ambiente    string
	TipoDTE     dte.TipoDTE
	Estado      dte.Estado
	FechaDesde  string // YYYY-MM-DD, inclusive
	FechaHasta  string // YYYY-MM-DD, inclusive
	RutReceptor string
	// Folio, when not 0, keeps the documents with that folio (a dtekit
	// extension the console uses; the REST list does not take it yet).
	Folio int64
	// Cedido, when true, keeps the documents that are cedido (GET /dte's
	// cedido=true, an extension of the contract); false does not filter.
	Cedido bool
}

// PDFOptions chooses the printed form: the cedible copy and the paper
// format ("carta", the default, or "80mm").
type PDFOptions struct {
	Cedible bool
	Formato string
}

// DTEMailParams addresses the mail of a document to its receptor.
type DTEMailParams struct {
	// Para is the address; "" mails the cliente's e-mail, else the
	// receptor's address on the SII's list of contribuyentes.
	Para string
}

// dteNext is the DTE's transition table: for each state, the states it
// may move to. The contract (§3) shows emission (none → firmado) and
// holding (firmado stays); the submission follows the mapping of the
// SII's answers (docs: sii-domain-notes §6): firmado → enviando (the
// platform holds the envelope, retries included) → procesando (the SII
// gave a track id) → aceptado, con_reparos or rechazado. An upload the
// SII refuses outright, or a document settled from its own status while
// its envelope's answer was lost, goes from enviando to its final state.
// borrador is a document whose folio is taken and which is not signed
// yet; generado, built and not signed, is a step dtekit does not store.
var dteNext = table[dte.Estado]{
	dte.EstadoBorrador:   {dte.EstadoGenerado, dte.EstadoFirmado},
	dte.EstadoGenerado:   {dte.EstadoFirmado},
	dte.EstadoFirmado:    {dte.EstadoEnviando},
	dte.EstadoEnviando:   {dte.EstadoProcesando, dte.EstadoAceptado, dte.EstadoConReparos, dte.EstadoRechazado},
	dte.EstadoProcesando: {dte.EstadoAceptado, dte.EstadoConReparos, dte.EstadoRechazado},
	dte.EstadoAceptado:   nil,
	dte.EstadoConReparos: nil,
	dte.EstadoRechazado:  nil,
}

// DTENext returns the states a document in state e may move to (a new
// slice; none for a final state or one that is not a DTE state).
func DTENext(e dte.Estado) []dte.Estado { return dteNext.next(e) }

// DTECanBecome reports whether a document in state from may move to
// state to.
func DTECanBecome(from, to dte.Estado) bool { return dteNext.can(from, to) }
