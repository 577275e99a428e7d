package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// EventType is the kind of an event, the envelope's "type".
type EventType string

// The event kinds of the API contract (§6), the only values a webhook
// registration may subscribe to.
const (
	// EventDTECreated: a DTE was emitted (estado "firmado"). Data: DTEData.
	EventDTECreated EventType = "dte.created"
	// EventDTEAccepted: the tax authority accepted the DTE (estado
	// "aceptado"). Data: DTEData.
	EventDTEAccepted EventType = "dte.accepted"
	// EventDTERejected: the tax authority rejected the DTE (estado
	// "rechazado"). Data: DTEData.
	EventDTERejected EventType = "dte.rejected"
	// EventDTERepaired: the tax authority accepted the DTE with
	// observations (estado "con_reparos"). Data: DTEData.
	EventDTERepaired EventType = "dte.repaired"
	// EventCAFLowStock: a CAF is running out of folios. Data:
	// CAFLowStockData.
	EventCAFLowStock EventType = "caf.low_stock"
	// EventCertificadoExpiring: the signing certificate is close to
	// expiring. Data: CertificadoExpiringData.
	EventCertificadoExpiring EventType = "certificado.expiring"
)

// The event kinds beyond the contract: the exchange of documents between
// companies (intercambio) and the inbox of received documents.
const (
	// EventDTEReceptorRecibido: the receptor acknowledged the file that
	// carried the DTE (acuse de recibo), or refused it at reception.
	// Data: DTEData with Receptor.
	EventDTEReceptorRecibido EventType = "dte.receptor_recibido"
	// EventDTEReceptorAceptado: the receptor accepted the DTE
	// commercially (with or without discrepancies). Data: DTEData with
	// Receptor.
	EventDTEReceptorAceptado EventType = "dte.receptor_aceptado"
	// EventDTEReceptorRechazado: the receptor rejected the DTE. Data:
	// DTEData with Receptor.
	EventDTEReceptorRechazado EventType = "dte.receptor_rechazado"
	// EventDTEMercaderiasRecibidas: the receptor signed the receipt of the
	// goods or services (Ley 19.983). Data: DTEData with Receptor.
	EventDTEMercaderiasRecibidas EventType = "dte.mercaderias_recibidas"
	// EventRecibidoCreated: a supplier's document was received. Data:
	// RecibidoData.
	EventRecibidoCreated EventType = "recibido.created"
	// EventRecibidoPlazoPorVencer: the legal window to accept or claim a
	// received document closes within a day. Data: RecibidoData.
	EventRecibidoPlazoPorVencer EventType = "recibido.plazo_por_vencer"
	// EventDTECedido: the SII's registry of credit transfers recorded a
	// cesión of the DTE made through the service; the cesionario holds
	// it. Data: DTEData with Cesion.
	EventDTECedido EventType = "dte.cedido"
	// EventDTECesionRechazada: the registry refused a cesión of the DTE
	// (or it could not be uploaded); the DTE may be ceded again. Data:
	// DTEData with Cesion, whose codigo and glosa say why.
	EventDTECesionRechazada EventType = "dte.cesion_rechazada"
)

// EventPing is the kind of the test delivery an integrator requests for
// one webhook (the ping operation). It is not one of [EventTypes]: it
// cannot be subscribed to and reaches only the webhook it was asked for.
// Data: PingData. Answer it with a 2xx like any other delivery.
const EventPing EventType = "webhook.ping"

// EventTypes returns the event kinds a webhook may subscribe to: the six
// of the contract, in its order, then those of the intercambio and the
// inbox.
func EventTypes() []EventType {
	return []EventType{EventDTECreated, EventDTEAccepted, EventDTERejected, EventDTERepaired, EventCAFLowStock, EventCertificadoExpiring,
		EventDTEReceptorRecibido, EventDTEReceptorAceptado, EventDTEReceptorRechazado, EventDTEMercaderiasRecibidas,
		EventRecibidoCreated, EventRecibidoPlazoPorVencer, EventDTECedido, EventDTECesionRechazada}
}

// Known reports whether t is one of the kinds of [EventTypes].
func (t EventType) Known() bool {
	switch t {
	case EventDTECreated, EventDTEAccepted, EventDTERejected, EventDTERepaired, EventCAFLowStock, EventCertificadoExpiring,
		EventDTEReceptorRecibido, EventDTEReceptorAceptado, EventDTEReceptorRechazado, EventDTEMercaderiasRecibidas,
		EventRecibidoCreated, EventRecibidoPlazoPorVencer, EventDTECedido, EventDTECesionRechazada:
		return true
	}
	return false
}

// IsDTE reports whether t is one of the dte.* kinds, whose data is DTEData.
func (t EventType) IsDTE() bool {
	switch t {
	case EventDTECreated, EventDTEAccepted, EventDTERejected, EventDTERepaired,
		EventDTEReceptorRecibido, EventDTEReceptorAceptado, EventDTEReceptorRechazado, EventDTEMercaderiasRecibidas,
		EventDTECedido, EventDTECesionRechazada:
		return true
	}
	return false
}

// Event is the JSON body of every delivery:
//
//	{"type": "dte.accepted", "timestamp": "2026-03-02T14:05:09Z", "data": {...}}
//
// Verify the raw body first; parse it afterwards with [ParseEvent].
type Event struct {
	// Type is the event kind. Kinds not in EventTypes may appear in the
	// future: acknowledge them with a 2xx and ignore them.
	Type EventType `json:"type"`
	// Timestamp is when the event happened (RFC 3339, UTC). It stays the
	// same on every retry, unlike the webhook-timestamp header.
	Timestamp time.Time `json:"timestamp"`
	// Data is the event's payload, a JSON object whose fields depend on
	// Type: DTEData, CAFLowStockData or CertificadoExpiringData.
	Data json.RawMessage `json:"data"`
}

// DTEData is the data of the dte.* events: the state of one DTE when the
// event fired. Field names and types follow the contract's DTE resource
// (§2.2).
type DTEData struct {
	// ID is the DTE's id (uuid), as in GET /api/v1/billing/dte/{id}.
	ID string `json:"id"`
	// TipoDTE is the document type code: 33, 34, 39, 41, 43, 46, 52, 56,
	// 61, 110, 111 or 112.
	TipoDTE int `json:"tipo_dte"`
	// Folio is the document number assigned from the CAF.
	Folio int64 `json:"folio"`
	// Estado is the DTE state after the event: "firmado" for dte.created,
	// "aceptado", "rechazado" and "con_reparos" for dte.accepted,
	// dte.rejected and dte.repaired.
	Estado string `json:"estado"`
	// RutReceptor is the receiver's RUT with check digit, e.g. "76192083-9".
	RutReceptor string `json:"rut_receptor"`
	// RazonSocialReceptor is the receiver's legal name.
	RazonSocialReceptor string `json:"razon_social_receptor"`
	// MontoTotal is the document total in CLP (integer pesos).
	MontoTotal int64 `json:"monto_total"`
	// FechaEmision is the issue date, "YYYY-MM-DD".
	FechaEmision string `json:"fecha_emision"`
	// Ambiente is the environment the DTE was emitted in: "certificacion"
	// (a test document the SII certifies with, of no tax effect) or
	// "produccion" (a real one), as GET /api/v1/billing/dte/{id} shows it.
	// Empty in events recorded before it was added to the payload.
	Ambiente string `json:"ambiente,omitempty"`
	// TrackID is the tax authority's submission tracking number; null
	// until the DTE has been submitted (so usually null in dte.created).
	TrackID *string `json:"track_id"`
	// CodigoSII is the tax authority's status code for the DTE when known
	// (dte.accepted, dte.rejected, dte.repaired); omitted otherwise.
	CodigoSII string `json:"codigo_sii,omitempty"`
	// GlosaSII is the tax authority's description of that status, e.g. the
	// rejection reason or the observations; omitted when unknown.
	GlosaSII string `json:"glosa_sii,omitempty"`
	// Receptor is what the receptor answered, in the dte.receptor_* and
	// dte.mercaderias_recibidas events; omitted otherwise.
	Receptor *ReceptorData `json:"receptor,omitempty"`
	// Cesion is the cesión the dte.cedido and dte.cesion_rechazada events
	// report; omitted otherwise.
	Cesion *CesionData `json:"cesion,omitempty"`
}

// CesionData is a cesión of a DTE to a factoring company, as
// GET /api/v1/billing/dte/{id}/cesiones shows it.
type CesionData struct {
	// ID is the cesión's id.
	ID string `json:"id"`
	// Estado is "aceptada" (dte.cedido) or "rechazada"
	// (dte.cesion_rechazada).
	Estado string `json:"estado"`
	// RutCesionario is who the document is ceded to, Monto the amount.
	RutCesionario string `json:"rut_cesionario"`
	Monto         int64  `json:"monto"`
	// TrackID is the registry's track id of the upload; null when none
	// was given.
	TrackID *string `json:"track_id"`
	// Codigo and Glosa are the registry's answer (EOK, RCS…, or an
	// upload's STATUS) and its text.
	Codigo string `json:"codigo"`
	Glosa  string `json:"glosa"`
}

// ReceptorData is one answer of a DTE's receptor (intercambio).
type ReceptorData struct {
	// Resultado is "recibido", "recibido_con_reparos", "aceptado",
	// "aceptado_con_discrepancias", "rechazado" or
	// "mercaderias_recibidas".
	Resultado string `json:"resultado"`
	// Codigo is the code the answer carries, Glosa its text and Motivo
	// the receptor's reason, when it gave one.
	Codigo int    `json:"codigo"`
	Glosa  string `json:"glosa"`
	Motivo string `json:"motivo"`
	// RutReceptor is who answered.
	RutReceptor string `json:"rut_receptor"`
}

// RecibidoData is the data of the recibido.* events: a document a
// supplier sent the company, as GET /api/v1/billing/recibidos/{id} shows
// it.
type RecibidoData struct {
	// ID is the received document's id.
	ID string `json:"id"`
	// RutEmisor and RazonSocialEmisor are the supplier's.
	RutEmisor         string `json:"rut_emisor"`
	RazonSocialEmisor string `json:"razon_social_emisor"`
	// TipoDTE, Folio, FechaEmision and MontoTotal identify the document.
	TipoDTE      int    `json:"tipo_dte"`
	Folio        int64  `json:"folio"`
	FechaEmision string `json:"fecha_emision"`
	MontoTotal   int64  `json:"monto_total"`
	// Estado is "pendiente", "aceptado", "reclamado" or "rechazado" (it
	// failed verification).
	Estado string `json:"estado"`
	// PlazoVence is when the legal window to accept or claim it closes;
	// null until the SII's reception date is known.
	PlazoVence *time.Time `json:"plazo_vence"`
	// Ambiente is the environment the document belongs to
	// ("certificacion" or "produccion"): its stamp's, else the company's
	// when it was received.
	Ambiente string `json:"ambiente"`
}

// CAFLowStockData is the data of caf.low_stock: an emission has just left
// the company with Umbral available folios of one document type (summed
// over its active CAFs of that type), coming from more. It fires once per
// crossing; registering a new CAF lifts the count, and the next crossing
// fires again. The threshold is the company's alert setting (20 unless
// changed). Field names follow the contract's CAF resource (§2.8); the
// CAF is the one the last folio was taken from.
type CAFLowStockData struct {
	// ID is the CAF's id (uuid), as in the CAF list.
	ID string `json:"id"`
	// TipoDTE is the document type the CAF authorizes.
	TipoDTE int `json:"tipo_dte"`
	// FolioDesde is the first folio of the range.
	FolioDesde int64 `json:"folio_desde"`
	// FolioHasta is the last folio of the range.
	FolioHasta int64 `json:"folio_hasta"`
	// FoliosDisponibles is the number of folios of this type still
	// available across the company's active CAFs (equal to Umbral).
	FoliosDisponibles int64 `json:"folios_disponibles"`
	// Umbral is the threshold that fired the event.
	Umbral int64 `json:"umbral"`
	// Ambiente is "certificacion" or "produccion".
	Ambiente string `json:"ambiente"`
}

// CertificadoExpiringData is the data of certificado.expiring: the
// company's signing certificate is close to expiring. Field names follow the
// contract's certificate status (§2.7).
type CertificadoExpiringData struct {
	// RutFirmante is the RUT of the certificate holder, with check digit.
	RutFirmante string `json:"rut_firmante"`
	// FechaVencimiento is the certificate's expiry date, "YYYY-MM-DD".
	FechaVencimiento string `json:"fecha_vencimiento"`
	// DiasParaVencimiento is the number of whole days left until
	// FechaVencimiento when the event fired (0 on the last day).
	DiasParaVencimiento int `json:"dias_para_vencimiento"`
}

// PingData is the data of webhook.ping, the test delivery.
type PingData struct {
	// WebhookID is the id (uuid) of the webhook the ping was sent to.
	WebhookID string `json:"webhook_id"`
}

// ParseEvent decodes a verified delivery body into its envelope. It
// requires a non-empty type, an RFC 3339 timestamp and a JSON object as
// data; unknown envelope fields and unknown types are accepted, for forward
// compatibility.
func ParseEvent(body []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		return Event{}, fmt.Errorf("webhook: parse event: %w", err)
	}
	if e.Type == "" {
		return Event{}, errors.New(`webhook: parse event: missing "type"`)
	}
	if e.Timestamp.IsZero() {
		return Event{}, fmt.Errorf(`webhook: parse event %s: missing "timestamp"`, e.Type)
	}
	if d := bytes.TrimLeft(e.Data, " \t\r\n"); len(d) == 0 || d[0] != '{' {
		return Event{}, fmt.Errorf(`webhook: parse event %s: "data" is not a JSON object`, e.Type)
	}
	return e, nil
}

// DTE decodes the data of a dte.* event.
func (e Event) DTE() (DTEData, error) {
	var d DTEData
	if !e.Type.IsDTE() {
		return d, fmt.Errorf("webhook: event %q does not carry DTE data", e.Type)
	}
	return d, e.decode(&d)
}

// CAFLowStock decodes the data of a caf.low_stock event.
func (e Event) CAFLowStock() (CAFLowStockData, error) {
	var d CAFLowStockData
	if e.Type != EventCAFLowStock {
		return d, fmt.Errorf("webhook: event %q does not carry caf.low_stock data", e.Type)
	}
	return d, e.decode(&d)
}

// CertificadoExpiring decodes the data of a certificado.expiring event.
func (e Event) CertificadoExpiring() (CertificadoExpiringData, error) {
	var d CertificadoExpiringData
	if e.Type != EventCertificadoExpiring {
		return d, fmt.Errorf("webhook: event %q does not carry certificado.expiring data", e.Type)
	}
	return d, e.decode(&d)
}

// Recibido decodes the data of a recibido.* event.
func (e Event) Recibido() (RecibidoData, error) {
	var d RecibidoData
	if e.Type != EventRecibidoCreated && e.Type != EventRecibidoPlazoPorVencer {
		return d, fmt.Errorf("webhook: event %q does not carry recibido data", e.Type)
	}
	return d, e.decode(&d)
}

// Ping decodes the data of a webhook.ping event.
func (e Event) Ping() (PingData, error) {
	var d PingData
	if e.Type != EventPing {
		return d, fmt.Errorf("webhook: event %q does not carry webhook.ping data", e.Type)
	}
	return d, e.decode(&d)
}

// decode unmarshals e.Data into v.
func (e Event) decode(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("webhook: decode %s data: %w", e.Type, err)
	}
	return nil
}

// MarshalEvent builds the body of an event delivery. data must be the type
// documented for typ (DTEData for dte.*, CAFLowStockData,
// CertificadoExpiringData, RecibidoData for recibido.*, or PingData; a pointer to it works too), and typ
// one of [EventTypes] or [EventPing]. The timestamp is written in UTC, RFC 3339.
func MarshalEvent(typ EventType, ts time.Time, data any) ([]byte, error) {
	ok := false
	switch data.(type) {
	case DTEData, *DTEData:
		ok = typ.IsDTE()
	case CAFLowStockData, *CAFLowStockData:
		ok = typ == EventCAFLowStock
	case CertificadoExpiringData, *CertificadoExpiringData:
		ok = typ == EventCertificadoExpiring
	case PingData, *PingData:
		ok = typ == EventPing
	case RecibidoData, *RecibidoData:
		ok = typ == EventRecibidoCreated || typ == EventRecibidoPlazoPorVencer
	}
	if !typ.Known() && typ != EventPing {
		return nil, fmt.Errorf("webhook: marshal event: unknown type %q (want one of %s)", typ, eventTypeList())
	}
	if !ok || isNilPointer(data) {
		return nil, fmt.Errorf("webhook: marshal event %s: data of type %T does not fit", typ, data)
	}
	if ts.IsZero() {
		return nil, fmt.Errorf("webhook: marshal event %s: zero timestamp", typ)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("webhook: marshal event %s data: %w", typ, err)
	}
	return json.Marshal(Event{Type: typ, Timestamp: ts.UTC(), Data: raw})
}

// isNilPointer reports whether v is a nil pointer to one of the data types.
func isNilPointer(v any) bool {
	switch p := v.(type) {
	case *DTEData:
		return p == nil
	case *CAFLowStockData:
		return p == nil
	case *CertificadoExpiringData:
		return p == nil
	case *PingData:
		return p == nil
	}
	return false
}

// String returns the type as written on the wire.
func (t EventType) String() string { return string(t) }

// eventTypeList is used in messages listing the allowed kinds.
func eventTypeList() string {
	var b strings.Builder
	for i, t := range EventTypes() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(t))
	}
	return b.String()
}
