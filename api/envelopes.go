package api

import (
	"time"

	"github.com/dtekit/dtekit/dte"
)

// Envio is an envelope of the company's documents sent to the SII, with
// its track id and each document's result (GET /envios/{id}).
type Envio struct {
	ID string `json:"id"`
	// Tipo is the envelope's kind: EnvioBOLETA (boletas 39, 41) or
	// EnvioDTE (the other types).
	Tipo string `json:"tipo"`
	// Ambiente is the environment whose SII it goes to: its documents'
	// own (certificacion or produccion).
	Ambiente string `json:"ambiente"`
	// Estado is pendiente (not uploaded yet), enviando (uploading, or
	// retrying after a failure), procesando (the SII gave a track id and
	// reviews it) or procesado (every document has its final state).
	Estado EstadoEnvio `json:"estado"`
	// TrackID is the SII's track id, null until it gives one (and for
	// boletas whose upload's answer was lost: no query gives it back).
	TrackID *string `json:"track_id"`
	// Intentos counts the uploads of the envelope.
	Intentos int `json:"intentos"`
	// Documentos are its documents in envelope order.
	Documentos []EnvioDocumento `json:"documentos"`
	CreatedAt  time.Time        `json:"created_at"`
	UpdatedAt  time.Time        `json:"updated_at"`
}

// EnvioDocumento is one document of an envelope and its result so far.
type EnvioDocumento struct {
	DTEID     string      `json:"dte_id"`
	TipoDTE   dte.TipoDTE `json:"tipo_dte"`
	Folio     int64       `json:"folio"`
	Estado    dte.Estado  `json:"estado"`
	CodigoSII *string     `json:"codigo_sii"`
	GlosaSII  *string     `json:"glosa_sii"`
}

// EnvioRequest asks for an envelope of held documents (POST /envios).
type EnvioRequest struct {
	// DTEIDs are the documents, in envelope order: all boletas or none,
	// all of one environment.
	DTEIDs []string `json:"dte_ids"`
	// IdempotencyKey is the request's Idempotency-Key, a UUID (a header,
	// not a member of the body).
	IdempotencyKey string `json:"-"`
	// LegacyOperation is what versions before 2026-11-29 named the
	// operation in the key's fingerprint; see SubmitParams.
	LegacyOperation string `json:"-"`
}

// SubmitParams sends one held document in an envelope of its own
// (POST /dte/{id}/enviar).
type SubmitParams struct {
	// IdempotencyKey is the request's Idempotency-Key, a UUID.
	IdempotencyKey string
	// LegacyOperation, when not "", is what versions before 2026-11-29
	// named the operation in the fingerprint a key is recorded with: the
	// route of the request (the server passes it). A key is kept 24
	// hours, so one recorded by such a version, with the same documents,
	// still replays its first answer after an upgrade. A caller that
	// never used those versions leaves it "". It goes once no key that
	// old is kept.
	LegacyOperation string
}

// EnvioListParams selects envelopes for the envelope list, newest first.
type EnvioListParams struct {
	ListParams
	// Ambiente is the environment listed: "" the company's current one,
	// AmbienteTodos both.
	Ambiente string
}

// EstadoEnvio is an envelope's state as the API shows it (Envio.Estado).
type EstadoEnvio string

// The envelope states.
const (
	// EnvioPendiente: queued, not uploaded yet.
	EnvioPendiente EstadoEnvio = "pendiente"
	// EnvioEnviando: being uploaded, or waiting to be uploaded again after
	// a failure.
	EnvioEnviando EstadoEnvio = "enviando"
	// EnvioProcesando: the SII gave its track id and reviews the envelope.
	EnvioProcesando EstadoEnvio = "procesando"
	// EnvioProcesado: every document has its final state.
	EnvioProcesado EstadoEnvio = "procesado"
)

// envioNext is the envelope's transition table. An upload is always
// marked before it is made, so a pendiente envelope becomes enviando
// first; an upload the SII takes gives a track id (procesando), one it
// refuses outright, or whose documents are settled from their own status
// (an answer lost, "already received"), ends it (procesado); a failed
// upload stays enviando until the next attempt. A procesando envelope is
// polled until every document has its final state.
var envioNext = table[EstadoEnvio]{
	EnvioPendiente:  {EnvioEnviando},
	EnvioEnviando:   {EnvioProcesando, EnvioProcesado},
	EnvioProcesando: {EnvioProcesado},
	EnvioProcesado:  nil,
}

// Valid reports whether e is one of the four envelope states.
func (e EstadoEnvio) Valid() bool { return envioNext.valid(e) }

// Next returns the states an envelope in state e may move to (a new
// slice; none for procesado or a value that is not a state).
func (e EstadoEnvio) Next() []EstadoEnvio { return envioNext.next(e) }

// CanBecome reports whether an envelope in state e may move to next.
func (e EstadoEnvio) CanBecome(next EstadoEnvio) bool { return envioNext.can(e, next) }
