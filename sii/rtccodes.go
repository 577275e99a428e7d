package sii

import (
	"slices"
	"strconv"
)

// CesionKind is what an answer of the credit-transfer registry means for
// the caller, as Outcome is for envelopes.
type CesionKind int

// The kinds of registry outcomes.
const (
	// CesionPending: the registry is still reviewing the AEC; ask again.
	CesionPending CesionKind = iota
	// CesionAccepted: the registry recorded the cesión (EOK).
	CesionAccepted
	// CesionRejected: the registry refused the AEC (RSC, RFS, RCR, RDC,
	// RCS, EAN) or the upload (STATUS 1, 2, 4, 6); a new AEC, or a change
	// of settings, is needed.
	CesionRejected
	// CesionFailure: the answer says nothing about the AEC (an internal
	// error, a token the registry kept refusing, a query error, a code
	// in no table): report it and ask or send again later. It is not a
	// rejection of the AEC.
	CesionFailure
)

// String returns the kind's name: pending, accepted, rejected, failure.
func (k CesionKind) String() string {
	switch k {
	case CesionPending:
		return "pending"
	case CesionAccepted:
		return "accepted"
	case CesionRejected:
		return "rejected"
	case CesionFailure:
		return "failure"
	}
	return "CesionKind(" + strconv.Itoa(int(k)) + ")"
}

// CesionOutcome is the reading of one registry answer.
type CesionOutcome struct {
	// Kind is what to do next.
	Kind CesionKind
	// Code is stable, to store: an ESTADO_ENVIO ("EOK", "RCS"),
	// "UPLOAD-n" for an upload STATUS, "HDR-n" for a RESP_HDR ESTADO
	// other than 0.
	Code string
	// Message is the meaning, in Spanish, from the SII's tables (the
	// registry's own text for a code in no table).
	Message string
}

// CesionCode is one row of the registry's code tables.
type CesionCode struct {
	// Code is the stable code of CesionOutcome.Code.
	Code string
	// Kind is the code's reading.
	Kind CesionKind
	// Message is the meaning, in Spanish.
	Message string
	// Source is the manual and section the row comes from.
	Source string
}

// Sources of the tables (sii-cesion-notes.md, Sources).
const (
	srcUP = "SII, Manual Desarrollador Externo – Envío Automático de AEC v1.0 (2007), §3.2"
	srcWS = "SII, Manual Desarrollador Externo – WS RPETC v1.2 (2008)"
)

// aecUploadCodes are RECEPCIONAEC's STATUS values. 5 is a failure, not a
// rejection: the client already renewed the token and sent once more.
var aecUploadCodes = []CesionCode{
	{"UPLOAD-0", CesionPending, "Envío recibido; el registro entrega un TRACKID", srcUP},
	{"UPLOAD-1", CesionRejected, "El usuario autenticado no tiene permiso para enviar por el cedente", srcUP},
	{"UPLOAD-2", CesionRejected, "Error en el tamaño del archivo", srcUP},
	{"UPLOAD-4", CesionRejected, "Faltan parámetros", srcUP},
	{"UPLOAD-5", CesionFailure, "Error de autenticación: token inválido, inexistente o vencido", srcUP},
	{"UPLOAD-6", CesionRejected, "La empresa no es una empresa autorizada de DTE", srcUP},
	{"UPLOAD-9", CesionFailure, "Error interno", srcUP},
	{"UPLOAD-10", CesionFailure, "Error interno", srcUP},
}

// aecEnvioCodes are getEstEnvio's ESTADO_ENVIO values, in the manual's
// order (the review's steps).
var aecEnvioCodes = []CesionCode{
	{"UPL", CesionPending, "Envío en proceso de upload", srcWS + ", §3.2"},
	{"RCP", CesionPending, "Envío recibido", srcWS + ", §3.2"},
	{"RSC", CesionRejected, "Rechazado por error en schema", srcWS + ", §3.2"},
	{"SOK", CesionPending, "Schema validado", srcWS + ", §3.2"},
	{"RFS", CesionRejected, "Rechazado por error en firma del sobre", srcWS + ", §3.2"},
	{"FSO", CesionPending, "Firma del sobre validada", srcWS + ", §3.2"},
	{"RCR", CesionRejected, "Rechazado por error en carátula", srcWS + ", §3.2"},
	{"COK", CesionPending, "Carátula validada", srcWS + ", §3.2"},
	{"VDC", CesionPending, "En validación del documento", srcWS + ", §3.2"},
	{"RDC", CesionRejected, "Rechazado: documento inválido", srcWS + ", §3.2"},
	{"VCS", CesionPending, "En validación de cesiones", srcWS + ", §3.2"},
	{"RCS", CesionRejected, "Rechazado: cesión inválida", srcWS + ", §3.2"},
	{"EOK", CesionAccepted, "Envío aceptado: cesión registrada", srcWS + ", §3.2"},
	{"EAN", CesionRejected, "Envío anulado", srcWS + ", §3.2"},
}

// rtcHeaderCodes are RESP_HDR's ESTADO values other than 0, all failures
// of the query, none a verdict on the AEC.
var rtcHeaderCodes = []CesionCode{
	{"HDR-1", CesionFailure, "Error en los datos de la consulta", srcWS + ", §3.3"},
	{"HDR-2", CesionFailure, "No se encontró información", srcWS + ", §3.3"},
	{"HDR-3", CesionFailure, "Error de autenticación: token inactivo", srcWS + ", §3.3"},
	{"HDR-4", CesionFailure, "Error de autenticación: token inexistente", srcWS + ", §3.3"},
	{"HDR-5", CesionFailure, "Error de autenticación", srcWS + ", §3.3"},
	{"HDR-6", CesionFailure, "Error interno", srcWS + ", §3.3"},
	{"HDR-7", CesionFailure, "Error interno", srcWS + ", §3.3"},
	{"HDR-8", CesionFailure, "Error interno", srcWS + ", §3.3"},
	{"HDR-9", CesionFailure, "Error de autenticación: no se pudieron obtener los permisos", srcWS + ", §3.3"},
	{"HDR-10", CesionFailure, "El usuario conectado no tiene permiso en la empresa", srcWS + ", §3.3"},
	{"HDR--15", CesionFailure, "La empresa relacionada no está vinculada al documento", srcWS + ", §3.3"},
}

// CesionCodes returns every row of the registry's tables: the upload's
// STATUS, getEstEnvio's ESTADO_ENVIO and RESP_HDR's ESTADO.
func CesionCodes() []CesionCode {
	return slices.Concat(aecUploadCodes, aecEnvioCodes, rtcHeaderCodes)
}

// lookupCesion returns the row of code in table, or a failure carrying
// fallback as its message.
func lookupCesion(table []CesionCode, code, fallback string) CesionOutcome {
	if i := slices.IndexFunc(table, func(c CesionCode) bool { return c.Code == code }); i >= 0 {
		return CesionOutcome{Kind: table[i].Kind, Code: code, Message: table[i].Message}
	}
	if fallback == "" {
		fallback = "Código desconocido del registro"
	}
	return CesionOutcome{Kind: CesionFailure, Code: code, Message: fallback}
}

// AECUploadOutcome reads an upload's answer: STATUS 0 → pending (poll
// AECStatus with the track id); 1, 2, 4, 6 → rejected; 5 (the token, still
// refused after a fresh one), 9, 10 and codes in no table (3, 7, 8 are
// not documented) → failure.
func AECUploadOutcome(r *AECUploadResult) CesionOutcome {
	o := lookupCesion(aecUploadCodes, "UPLOAD-"+strconv.Itoa(r.Status), "")
	if r.Status == 0 && r.TrackID == "" {
		o.Kind = CesionFailure
	}
	return o
}

// AECStatusOutcome reads getEstEnvio's answer: a RESP_HDR ESTADO other
// than 0 is a failure of the query (HDR-n); otherwise ESTADO_ENVIO decides
// (EOK accepted; RSC, RFS, RCR, RDC, RCS, EAN rejected; UPL, RCP, SOK,
// FSO, COK, VDC, VCS pending), and a code in no table is a failure whose
// message is the registry's DESC_ESTADO.
func AECStatusOutcome(s *AECStatus) CesionOutcome {
	if s.Header.Estado != 0 {
		return lookupCesion(rtcHeaderCodes, "HDR-"+strconv.Itoa(s.Header.Estado), s.Header.Glosa)
	}
	if s.Estado == "" {
		return CesionOutcome{Kind: CesionFailure, Code: "HDR-0", Message: "Respuesta sin ESTADO_ENVIO"}
	}
	return lookupCesion(aecEnvioCodes, s.Estado, s.Descripcion)
}
