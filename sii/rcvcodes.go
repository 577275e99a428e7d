package sii

import "slices"

// RCVOutcome is what a codResp of the RCV registry means for the caller: a
// typed reading of the SII's number, the same for every operation.
type RCVOutcome string

// The outcomes of the registry's answers.
const (
	// RCVRecorded: the event was registered now (codResp 0).
	RCVRecorded RCVOutcome = "recorded"
	// RCVAlreadyRecorded: the same event was on record already (7). Like
	// RCVRecorded, the caller's decision stands; a repeated call after a
	// lost answer lands here.
	RCVAlreadyRecorded RCVOutcome = "already_recorded"
	// RCVWindowClosed: more than 8 days have passed since the SII received
	// the document (8); nothing can be registered any more, and a document
	// nobody claimed in time counts as accepted.
	RCVWindowClosed RCVOutcome = "window_closed"
	// RCVNotApplicable: the document was paid in cash or is free, and
	// takes no events (27).
	RCVNotApplicable RCVOutcome = "not_applicable"
	// RCVConflict: the event contradicts a decision already on record
	// (5, 6, 11, 12, 13, 19); the first decision stands.
	RCVConflict RCVOutcome = "conflict"
	// RCVNotAuthorized: the caller's company is not the document's
	// receptor (17), or for a query neither its receptor nor its issuer
	// (14).
	RCVNotAuthorized RCVOutcome = "not_authorized"
	// RCVInvalid: the request itself is wrong: the issuer's RUT, the
	// folio, the document type or the action (1, 2, 3, 4).
	RCVInvalid RCVOutcome = "invalid"
	// RCVUnknownDocument: the registry does not have the document (9, 10,
	// 18).
	RCVUnknownDocument RCVOutcome = "unknown_document"
	// RCVEventsListed: the answer lists the document's events (15).
	RCVEventsListed RCVOutcome = "events"
	// RCVNoEvents: the document has no acceptance, claim or receipt on
	// record (16).
	RCVNoEvents RCVOutcome = "no_events"
	// RCVCedible: the document may be assigned (23, 25).
	RCVCedible RCVOutcome = "cedible"
	// RCVNotCedible: the document may not be assigned, or not yet (20,
	// 21, 22, 24).
	RCVNotCedible RCVOutcome = "not_cedible"
	// RCVRetry: the SII failed internally; ask again later (-1).
	RCVRetry RCVOutcome = "retry"
	// RCVUnknownCode: a codResp that is in no table this package knows.
	RCVUnknownCode RCVOutcome = "unknown_code"
)

// Settled reports whether an answer to ingresarAceptacionReclamoDoc leaves
// nothing more to do about the document: the event is on record (0, 7),
// the window has closed (8) or the document takes no events (27). These
// are the codes LibreDTE counts as done. A closed window settles the
// document as accepted, which is a failure for a claim that came late:
// read the outcome, not only this.
func (o RCVOutcome) Settled() bool {
	switch o {
	case RCVRecorded, RCVAlreadyRecorded, RCVWindowClosed, RCVNotApplicable:
		return true
	}
	return false
}

// Retryable reports whether the same call may succeed later as it is.
func (o RCVOutcome) Retryable() bool { return o == RCVRetry }

// RCVCode is one codResp of the registry with its meaning.
type RCVCode struct {
	// Code is the codResp.
	Code int
	// Meaning is the SII's text for the code ("XXX" stands for the event
	// named in the answer's descResp).
	Meaning string
	// Outcome is the code's typed reading.
	Outcome RCVOutcome
	// Source is where the code comes from: "SII" for the manual of the
	// web service (v1.2, 2017), or the third-party client that reported
	// a code the manual does not list.
	Source string
}

// rcvCodes is the one table of codResp values: the union of the manual's
// tables for ingresarAceptacionReclamoDoc, listarEventosHistDoc and
// consultarDocDteCedible (sii-wave3-notes.md §2.2 and §2.4), plus the
// undocumented 27. The fake in sii/siitest answers with these texts.
var rcvCodes = []RCVCode{
	{-1, "Error interno, reintentar", RCVRetry, "SII"},
	{0, "Acción Completada OK", RCVRecorded, "SII"},
	{1, "Rut Emisor Erróneo", RCVInvalid, "SII"},
	{2, "Número de Folio Erróneo", RCVInvalid, "SII"},
	{3, "Tipo de documento no corresponde", RCVInvalid, "SII"},
	{4, "Acción inválida", RCVInvalid, "SII"},
	{5, "DTE ya está reclamado por XXX", RCVConflict, "SII"},
	{6, "No se puede acusar recibo de mercadería de DTE previamente reclamado por XXX", RCVConflict, "SII"},
	{7, "Evento registrado previamente", RCVAlreadyRecorded, "SII"},
	{8, "Pasados 8 días después de la recepción no es posible registrar reclamos o eventos", RCVWindowClosed, "SII"},
	{9, "No existen registros de acuerdo a los parámetros ingresados", RCVUnknownDocument, "SII"},
	{10, "Documento no emitido y/o recibido en el SII desde el 14-01-2017", RCVUnknownDocument, "SII"},
	{11, "No se puede reclamar DTE previamente aceptado", RCVConflict, "SII"},
	{12, "No se puede dar por aceptado DTE previamente rechazado por XXX", RCVConflict, "SII"},
	{13, "No se puede reclamar DTE previamente registrado como acuse de recibo de mercadería", RCVConflict, "SII"},
	{14, "Acción autorizada sólo para empresa receptora o emisora", RCVNotAuthorized, "SII"},
	{15, "Listado de eventos del documento", RCVEventsListed, "SII"},
	{16, "Documento no presenta eventos de reclamos o acuse de recibo", RCVNoEvents, "SII"},
	{17, "Acción autorizada sólo para empresa receptora", RCVNotAuthorized, "SII"},
	{18, "Documento no ha sido recibido", RCVUnknownDocument, "SII"},
	{19, "Reclamo de mercaderías ya realizado", RCVConflict, "SII"},
	{20, "Tipo de documento no es cedible", RCVNotCedible, "SII"},
	{21, "DTE No cedible, referenciado por nota de crédito de anulación del emisor dentro de los primeros 8 días", RCVNotCedible, "SII"},
	{22, "No existe registro de reclamo o de recepción de mercadería o servicios", RCVNotCedible, "SII"},
	{23, "DTE Cedible, sin reclamos", RCVCedible, "SII"},
	{24, "DTE No Cedible, DTE reclamado por el receptor", RCVNotCedible, "SII"},
	{25, "DTE Cedible, habiendo pasado 8 días se entiende dado acuse de recibo", RCVCedible, "SII"},
	{27, "No se puede registrar un evento (acuse de recibo, reclamo o aceptación de contenido) de un DTE pagado al contado o gratuito", RCVNotApplicable,
		"LibreDTE (lib/Sii/RegistroCompraVenta.php, branch legacy): not in the SII's manual"},
}

// RCVCodes returns the registry's codResp table, in ascending order of
// code.
func RCVCodes() []RCVCode { return slices.Clone(rcvCodes) }

// LookupRCVCode returns the table's entry for code; for a code outside
// the table, an entry with Outcome RCVUnknownCode and ok false.
func LookupRCVCode(code int) (c RCVCode, ok bool) {
	i, found := slices.BinarySearchFunc(rcvCodes, code, func(e RCVCode, c int) int { return e.Code - c })
	if !found {
		return RCVCode{Code: code, Outcome: RCVUnknownCode}, false
	}
	return rcvCodes[i], true
}
