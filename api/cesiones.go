package api

import "time"

// EstadoCesion is the state of a cesión of one of the company's documents
// to a factoring company, as the SII's registry of credit transfers (RTC)
// has it (Cesion.Estado).
type EstadoCesion string

// The states of a cesión.
const (
	// CesionPendiente: the AEC is built, signed and recorded; it waits
	// for its upload to the registry (or for a new try after a failure).
	CesionPendiente EstadoCesion = "pendiente"
	// CesionEnviada: the registry took the upload and gave a track id;
	// it is reviewing the AEC.
	CesionEnviada EstadoCesion = "enviada"
	// CesionAceptada: the registry recorded the cesión; the cesionario
	// holds the document.
	CesionAceptada EstadoCesion = "aceptada"
	// CesionRechazada: the registry refused the AEC (codigo_sii and
	// glosa_sii say why), or it could not be uploaded within its
	// attempts. The document may be ceded again.
	CesionRechazada EstadoCesion = "rechazada"
)

// cesionNext is a cesión's transition table. pendiente becomes enviada
// when the registry gives a track id, rechazada when it refuses the
// upload (or the attempts run out), and aceptada without a track id when
// an upload whose answer was lost turns out recorded (the registry shows
// the document ceded to the cesionario); enviada becomes aceptada (EOK)
// or rechazada. Both final states are final.
var cesionNext = table[EstadoCesion]{
	CesionPendiente: {CesionEnviada, CesionAceptada, CesionRechazada},
	CesionEnviada:   {CesionAceptada, CesionRechazada},
	CesionAceptada:  nil,
	CesionRechazada: nil,
}

// Valid reports whether e is one of the states of a cesión.
func (e EstadoCesion) Valid() bool { return cesionNext.valid(e) }

// Next returns the states a cesión in state e may move to (a new slice).
func (e EstadoCesion) Next() []EstadoCesion { return cesionNext.next(e) }

// CanBecome reports whether a cesión in state e may move to next.
func (e EstadoCesion) CanBecome(next EstadoCesion) bool { return cesionNext.can(e, next) }

// Final reports whether e is aceptada or rechazada.
func (e EstadoCesion) Final() bool { return e == CesionAceptada || e == CesionRechazada }

// Cesionario is the factoring company a document is ceded to.
type Cesionario struct {
	// Rut is its RUT with check digit, e.g. "96790240-3".
	Rut string `json:"rut"`
	// RazonSocial (1–100 characters), Direccion (5–60) and Email (6–40)
	// are written in the AEC.
	RazonSocial string `json:"razon_social"`
	Direccion   string `json:"direccion"`
	Email       string `json:"email"`
}

// Cesion is one cesión of a company's document to a factoring company
// (GET /dte/{id}/cesiones) and where the SII's registry has it.
type Cesion struct {
	ID    string `json:"id"`
	DTEID string `json:"dte_id"`
	// Ambiente is the environment whose registry the cesión goes to: its
	// document's.
	Ambiente   string       `json:"ambiente"`
	Estado     EstadoCesion `json:"estado"`
	Cesionario Cesionario   `json:"cesionario"`
	// Monto is the amount ceded (MontoCesion), at most the document's
	// total.
	Monto int64 `json:"monto"`
	// UltimoVencimiento is the last due date written in the AEC
	// (YYYY-MM-DD).
	UltimoVencimiento string `json:"ultimo_vencimiento"`
	// EmailNotificacion is where the registry mails its result, and the
	// cedente's e-mail in the AEC.
	EmailNotificacion string `json:"email_notificacion"`
	// TrackID is the registry's track id of the upload; null until it
	// gives one (and for a cesión found recorded after an answer lost).
	TrackID *string `json:"track_id"`
	// Intentos counts the uploads tried.
	Intentos int `json:"intentos"`
	// CodigoSII and GlosaSII are the registry's last answer: an upload's
	// STATUS or the review's ESTADO_ENVIO (EOK, RCS…), and its text;
	// null until it answers.
	CodigoSII *string   `json:"codigo_sii"`
	GlosaSII  *string   `json:"glosa_sii"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CesionParams asks for the cesión of one of the company's documents
// (POST /dte/{id}/cesiones). The document must be a factura the SII
// accepted (tipos 33, 34, 43, 46; aceptado or con_reparos) and neither
// ceded nor being ceded by the company.
type CesionParams struct {
	// Cesionario receives the credit: its RUT (valid, not the emisor's),
	// name, address and e-mail, all required.
	Cesionario Cesionario `json:"cesionario"`
	// Monto is the amount ceded, 1 to the document's total; 0 (omitted)
	// cedes the total.
	Monto int64 `json:"monto,omitempty"`
	// UltimoVencimiento is the last due date (YYYY-MM-DD, not before the
	// document's date); "" means the document's date plus 30 days.
	UltimoVencimiento string `json:"ultimo_vencimiento,omitempty"`
	// EmailNotificacion (required, 6–40 characters) is where the registry
	// mails its result; it is also the cedente's e-mail in the AEC.
	EmailNotificacion string `json:"email_notificacion"`
	// IdempotencyKey is the request's Idempotency-Key, a UUID (a header,
	// not a member of the body).
	IdempotencyKey string `json:"-"`
}

// CesionListParams pages the cesiones of one document, newest first.
type CesionListParams struct {
	ListParams
}
