package api

import (
	"encoding/json"
	"time"

	"github.com/dtekit/dtekit/dte"
)

// EstadoRecibido is the state of a document a supplier sent the company
// (Recibido.Estado). A document is recorded pendiente when it verified
// and rechazado when it did not; a pendiente one becomes aceptado (an
// acceptance, ACD, or a receipt of goods, ERM, which the law reads as
// acceptance) or reclamado (a claim: RCD, RFP or RFT), registered here
// or seen in the SII's registry. A decided or refused document changes
// state no more (a receipt after an acceptance, or an acceptance after a
// receipt, leaves it aceptado).
type EstadoRecibido string

// The states of a received document.
const (
	// RecibidoPendiente: verified and received; the company has not
	// decided yet.
	RecibidoPendiente EstadoRecibido = "pendiente"
	// RecibidoAceptado: the company accepted it (RCV ACD, or the receipt
	// of goods, ERM).
	RecibidoAceptado EstadoRecibido = "aceptado"
	// RecibidoReclamado: the company claimed it (RCV RCD, RFP or RFT).
	RecibidoReclamado EstadoRecibido = "reclamado"
	// RecibidoRechazado: it failed verification or was not addressed to
	// the company; it cannot be decided.
	RecibidoRechazado EstadoRecibido = "rechazado"
)

// recibidoNext is the received document's transition table.
var recibidoNext = table[EstadoRecibido]{
	RecibidoPendiente: {RecibidoAceptado, RecibidoReclamado},
	RecibidoAceptado:  nil,
	RecibidoReclamado: nil,
	RecibidoRechazado: nil,
}

// Valid reports whether e is one of the states.
func (e EstadoRecibido) Valid() bool { return recibidoNext.valid(e) }

// Next returns the states a document in state e may move to (none for a
// final state or an unknown one).
func (e EstadoRecibido) Next() []EstadoRecibido { return recibidoNext.next(e) }

// CanBecome reports whether a document in state e may move to next.
func (e EstadoRecibido) CanBecome(next EstadoRecibido) bool { return recibidoNext.can(e, next) }

// Recibido is a document a supplier sent the company
// (GET /api/v1/billing/recibidos/{id}).
type Recibido struct {
	ID          string `json:"id"`
	RecepcionID string `json:"recepcion_id"`
	// Ambiente is the environment the document belongs to: its stamp's
	// (the CAF's IDK), else the company's when it was received.
	Ambiente          string      `json:"ambiente"`
	RutEmisor         string      `json:"rut_emisor"`
	RazonSocialEmisor string      `json:"razon_social_emisor"`
	TipoDTE           dte.TipoDTE `json:"tipo_dte"`
	Folio             int64       `json:"folio"`
	FechaEmision      string      `json:"fecha_emision"`
	MontoTotal        int64       `json:"monto_total"`
	// Estado is pendiente (no decision yet), aceptado, reclamado or
	// rechazado (it failed verification; see Verificacion).
	Estado EstadoRecibido `json:"estado"`
	// MercaderiasRecibidas is true once the receipt of goods or services
	// was registered (ERM).
	MercaderiasRecibidas bool `json:"mercaderias_recibidas"`
	// CorreoEmisor is where answers about it go (null when unknown).
	CorreoEmisor *string `json:"correo_emisor"`
	// FechaRecepcionSII is when the SII received it, PlazoVence when the
	// legal window to accept or claim it closes (8 days later) and
	// DiasRestantes the whole days left; null until the registry tells.
	FechaRecepcionSII *time.Time `json:"fecha_recepcion_sii"`
	PlazoVence        *time.Time `json:"plazo_vence"`
	DiasRestantes     *int       `json:"dias_restantes"`
	// Respuestas are the company's answers so far.
	Respuestas RecibidoRespuestas `json:"respuestas"`
	// RCV is the SII registry's state and events (null until asked).
	RCV *RecibidoRCV `json:"rcv"`
	// Verificacion is the verification report of the document (shown by
	// GET of one document; null in lists).
	Verificacion json.RawMessage `json:"verificacion"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
}

// RecibidoRespuestas are the company's answers about a received document.
type RecibidoRespuestas struct {
	Acuse    *RecibidoAccion `json:"acuse"`
	Decision *RecibidoAccion `json:"decision"`
	Recibo   *RecibidoAccion `json:"recibo"`
}

// RecibidoAccion is one answer: the action (acuse, ACD, RCD, RFP, RFT,
// ERM), its reason, what the registry answered and the mail that carried
// the XML answer.
type RecibidoAccion struct {
	Accion    string    `json:"accion"`
	Motivo    string    `json:"motivo,omitempty"`
	Fecha     time.Time `json:"fecha"`
	RCVCodigo *int      `json:"rcv_codigo,omitempty"`
	RCVGlosa  string    `json:"rcv_glosa,omitempty"`
	CorreoID  string    `json:"correo_id,omitempty"`
	// CorreoEstado is what became of the XML answer's mail: "en_cola"
	// (queued: CorreoID's own state tells its delivery), "sin_direccion"
	// (no address known for the supplier: none came with its file, none
	// is on the SII's list of contribuyentes) or "sin_remitente" (the
	// company has no mail settings); absent for answers recorded before
	// it was kept. CorreoPara is where it was mailed.
	CorreoEstado string `json:"correo_estado,omitempty"`
	CorreoPara   string `json:"correo_para,omitempty"`
}

// RecibidoRCV is what the SII's registry reports of a received document.
type RecibidoRCV struct {
	Codigo     int                 `json:"codigo"`
	Glosa      string              `json:"glosa"`
	Eventos    []RecibidoRCVEvento `json:"eventos"`
	ConsultaAt time.Time           `json:"consultado_at"`
}

// RecibidoRCVEvento is one event of the registry's history.
type RecibidoRCVEvento struct {
	Accion         string     `json:"accion"`
	Glosa          string     `json:"glosa"`
	RutResponsable string     `json:"rut_responsable"`
	Fecha          *time.Time `json:"fecha"`
	FechaTexto     string     `json:"fecha_texto"`
}

// RecibidoListParams selects received documents (GET /recibidos), newest
// first.
type RecibidoListParams struct {
	ListParams
	// Ambiente is the environment listed (see AmbienteTodos: "" is the
	// company's current one).
	Ambiente  string
	RutEmisor string
	TipoDTE   int
	// Estado, when set, keeps the documents in that state.
	Estado     EstadoRecibido
	FechaDesde string
	FechaHasta string
	// DiasRestantes, when not nil, keeps the documents whose window is
	// known with at most that many whole days left (Recibido's
	// dias_restantes; 0: it closes within 24 hours).
	DiasRestantes *int
}

// DecisionInput is a decision on a received document
// (POST /recibidos/{id}/aceptar, /reclamar, /recibo).
type DecisionInput struct {
	// Accion is "ACD" (accept), "RCD" (claim its content), "RFP" (claim a
	// partial lack of goods), "RFT" (claim a total lack) or "ERM" (receipt
	// of goods or services).
	Accion string `json:"accion"`
	// Motivo is the reason (required for a claim).
	Motivo string `json:"motivo,omitempty"`
	// Recinto is where the goods were received (ERM; default the
	// company's address).
	Recinto string `json:"recinto,omitempty"`
}

// ReceiveParams is a file a supplier sent the company (POST /recibidos).
type ReceiveParams struct {
	// XML is the file, an EnvioDTE, as received.
	XML []byte
	// CorreoEmisor, when set, is the supplier's address: where the
	// acknowledgment and the answers about its documents are mailed.
	CorreoEmisor string
}

// ReceiveRespuestaParams is an answer a receptor sent about the company's
// documents (POST /respuestas).
type ReceiveRespuestaParams struct {
	// XML is the file, a RespuestaDTE or an EnvioRecibos, as received.
	XML []byte
}

// Recepcion is a file received from a supplier (GET /recepciones/{id}).
type Recepcion struct {
	ID     string `json:"id"`
	Numero int64  `json:"numero"`
	// Tipo is "envio" (an EnvioDTE from a supplier) or "respuesta" (an
	// answer a customer sent about the company's documents).
	Tipo string `json:"tipo"`
	// Ambiente is the environment the file belongs to: its documents'
	// when their stamps agree (for an answer, the answered documents'),
	// else the company's when it was received.
	Ambiente string `json:"ambiente"`
	// Estado is "conforme" or "rechazada": for an envelope, the acuse's
	// EstadoRecepEnv; for an answer, whether every document it names
	// took it (the report says what it did to each, or why not).
	Estado    string  `json:"estado"`
	Origen    string  `json:"origen"`
	Remitente *string `json:"remitente"`
	Digest    string  `json:"sha256"`
	// Tamano is the file's size as received, in bytes; Descartado is true
	// for a file refused whole, of which only the digest, size, report
	// and first 4 KiB are kept, and which is deleted after the company's
	// retention period (GET /empresa/recepcion).
	Tamano     int64           `json:"tamano"`
	Descartado bool            `json:"descartado"`
	Reporte    json.RawMessage `json:"reporte"`
	// Recibidos are the ids of its documents (shown by intake).
	Recibidos []string  `json:"recibidos,omitempty"`
	Duplicado bool      `json:"duplicado"`
	CreatedAt time.Time `json:"created_at"`
}

// RecepcionListParams selects received files (GET /recepciones), newest
// first.
type RecepcionListParams struct {
	ListParams
	// Ambiente is the environment listed (see AmbienteTodos: "" is the
	// company's current one).
	Ambiente string
}

// RespuestaRecibida is what an uploaded answer did: the company's
// documents it changed and the record of its file, whose report says,
// for each document it names, what it did or why it was refused.
type RespuestaRecibida struct {
	DTEIDs    []string  `json:"dte_ids"`
	Recepcion Recepcion `json:"recepcion"`
}

// RecepcionSettings are a company's inbox quota and retention
// (GET/PUT /api/v1/billing/empresa/recepcion): what the operator allows
// (Operador), what the company chose (Empresa; null is the operator's
// value), what applies (Vigente) and what its inbox holds (Uso).
type RecepcionSettings struct {
	Operador  RecepcionCuota  `json:"operador"`
	Empresa   RecepcionLimits `json:"empresa"`
	Vigente   RecepcionCuota  `json:"vigente"`
	Uso       RecepcionUso    `json:"uso"`
	UpdatedAt *time.Time      `json:"updated_at"`
}

// RecepcionCuota is a set of inbox limits: the received files kept
// (their number, and the bytes each keeps: its XML and report and those
// of the documents read from it), the mails read from the mailbox kept,
// and how many days refused files and mails read are kept.
type RecepcionCuota struct {
	MaxRecepciones    int64 `json:"max_recepciones"`
	MaxRecepcionBytes int64 `json:"max_recepcion_bytes"`
	MaxMensajes       int64 `json:"max_mensajes"`
	RetencionDias     int64 `json:"retencion_dias"`
}

// RecepcionLimits are what a company chooses of its inbox limits (PUT
// /api/v1/billing/empresa/recepcion); null is the operator's value. A
// company may lower its quota below the operator's, never raise it, and
// choose any retention from 1 day to ten years.
type RecepcionLimits struct {
	MaxRecepciones    *int64 `json:"max_recepciones"`
	MaxRecepcionBytes *int64 `json:"max_recepcion_bytes"`
	MaxMensajes       *int64 `json:"max_mensajes"`
	RetencionDias     *int64 `json:"retencion_dias"`
}

// RecepcionUso is what a company's inbox holds: its received files and
// the bytes they keep, and the mails read from its mailbox.
type RecepcionUso struct {
	Recepciones    int64 `json:"recepciones"`
	RecepcionBytes int64 `json:"recepcion_bytes"`
	Mensajes       int64 `json:"mensajes"`
}
