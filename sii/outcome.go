package sii

import (
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

// Outcome is what an answer of the SII means for a DTE, per the mapping
// table of the protocol notes (sii-protocol.md §3.3): the contract state to
// move to and what to do next.
type Outcome struct {
	// Estado is the contract state: enviando (upload again later),
	// procesando (poll the envelope), aceptado, con_reparos or rechazado.
	Estado dte.Estado
	// Code is the SII code to store as codigo_sii (upload STATUS, envelope
	// ESTADO, document ESTADO, or a detail code such as DTE-3-101).
	Code string
	// Glosa is the SII's text (glosa_sii).
	Glosa string
	// RefreshToken means the answer was an authentication signal: drop the
	// token before the next call (the client already retried once).
	RefreshToken bool
	// Reconcile means the state is a rejection (or an unknown upload) that
	// may hide an accepted earlier copy of the same document: ask
	// DocumentStatus (getEstDte) and believe DOK over this outcome.
	Reconcile bool
}

// Final reports whether the outcome is a final contract state.
func (o Outcome) Final() bool { return o.Estado.Final() }

// UploadOutcome maps an upload answer. STATUS 0 (or REST estado REC) →
// procesando; 1, 2, 6, 7, 8 → rechazado at upload; 5 → enviando with a
// token refresh; 3, 9 and any other code → enviando (try again later);
// 99 ("already received", reported by one implementation only) →
// enviando with Reconcile. A boleta answer other than REC is rechazado.
func UploadOutcome(r *UploadResult) Outcome {
	if r.Boleta {
		if r.Status == 0 {
			return Outcome{Estado: dte.EstadoProcesando, Code: r.Estado}
		}
		return Outcome{Estado: dte.EstadoRechazado, Code: r.Estado, Glosa: strings.Join(r.Errors, "; ")}
	}
	code := strconv.Itoa(r.Status)
	glosa := uploadStatusText(r.Status)
	if len(r.Errors) > 0 {
		glosa += ": " + strings.Join(r.Errors, "; ")
	}
	o := Outcome{Code: code, Glosa: glosa}
	switch r.Status {
	case 0:
		o.Estado = dte.EstadoProcesando
	case 1, 2, 6, 7, 8:
		o.Estado = dte.EstadoRechazado
	case 5:
		o.Estado, o.RefreshToken = dte.EstadoEnviando, true
	case 99:
		o.Estado, o.Reconcile = dte.EstadoEnviando, true
	default:
		o.Estado = dte.EstadoEnviando
	}
	return o
}

// uploadStatusText is the meaning of each DTEUpload STATUS.
func uploadStatusText(s int) string {
	switch s {
	case 0:
		return "Upload OK"
	case 1:
		return "El Sender no tiene permiso para enviar"
	case 2:
		return "Error en tamaño del archivo (muy grande o muy chico)"
	case 3:
		return "Archivo cortado (tamaño <> al parámetro size)"
	case 5:
		return "No está autenticado"
	case 6:
		return "Empresa no autorizada a enviar archivos"
	case 7:
		return "Esquema inválido"
	case 8:
		return "Firma del documento"
	case 9:
		return "Sistema bloqueado"
	case 99:
		return "XML ya recibido"
	}
	return "Error interno"
}

// EnvelopeOutcome maps an envelope status for the documents of type tipo
// in it (0: all types). EPR decides by the counts: rechazados > 0 →
// rechazado (with Reconcile: a duplicate upload is rejected even when the
// first copy was accepted); reparos > 0 → con_reparos; aceptados ==
// informados → aceptado; no counts for the type → procesando (ask again).
// RPR and RLV → con_reparos; RSC, RFR, RCT, RCH, RCO, RPT, VOF →
// rechazado; 001–003 → procesando with a token refresh; anything else
// (SOK, CRT, FOK, PDR, PRD, REC, -11, other negatives) → procesando.
// A boleta status still Pending is procesando whatever its estado.
func EnvelopeOutcome(s *EnvelopeStatus, tipo int) Outcome {
	o := Outcome{Code: s.Estado, Glosa: s.Glosa, Estado: dte.EstadoProcesando}
	switch s.Estado {
	case "EPR":
		if s.Pending {
			return o
		}
		c, ok := s.CountsFor(tipo)
		switch {
		case !ok || c.Informados == 0:
		case c.Rechazados > 0:
			o.Estado, o.Reconcile = dte.EstadoRechazado, true
			if code := issueCode(s, tipo, "RCH"); code != "" {
				o.Code = code
			}
		case c.Reparos > 0:
			o.Estado = dte.EstadoConReparos
			if code := issueCode(s, tipo, ""); code != "" {
				o.Code = code
			}
		case c.Aceptados == c.Informados:
			o.Estado = dte.EstadoAceptado
		}
	case "RPR", "RLV":
		o.Estado = dte.EstadoConReparos
	case "RSC", "RFR", "RCT", "RCH", "RCO", "VOF":
		o.Estado = dte.EstadoRechazado
	case "RPT":
		o.Estado, o.Reconcile = dte.EstadoRechazado, true
	case "001", "002", "003":
		o.RefreshToken = true
	}
	return o
}

// EnvelopeDocument maps an envelope status for one document of it (tipo
// and folio), for envelopes of several documents. ok is false when the
// answer does not tell this document's fate apart from the others of its
// type: an EPR review whose counts for the type mix results and that names
// no document (getEstUp); the caller then asks the document's own status.
//
// A state other than EPR, and a boleta review not finished, apply to every
// document alike (EnvelopeOutcome); so do counts that agree (all accepted,
// all with reparos, all rejected). The boleta API's detalle_rep_rech names
// the documents it rejected or accepted with reparos: a document named is
// settled by its own entry (an entry without a folio rejects the whole
// envelope), and one not named is accepted once the named entries of its
// type account for every rejection and reparo the counts report.
func EnvelopeDocument(s *EnvelopeStatus, tipo int, folio int64) (o Outcome, ok bool) {
	o = EnvelopeOutcome(s, tipo)
	if s.Estado != "EPR" || s.Pending {
		return o, true
	}
	c, found := s.CountsFor(tipo)
	if !found || c.Informados == 0 {
		return o, true // procesando: no review of the type yet
	}
	named, listed := -1, 0
	for i, is := range s.Issues {
		if is.Folio == 0 && (is.Tipo == 0 || is.Tipo == tipo) && is.Estado == "RCH" {
			return issueOutcome(s, is, dte.EstadoRechazado), true
		}
		if is.Tipo == tipo && is.Folio != 0 {
			listed++
			if is.Folio == folio {
				named = i
			}
		}
	}
	if named >= 0 {
		is := s.Issues[named]
		switch is.Estado {
		case "RCH":
			o = issueOutcome(s, is, dte.EstadoRechazado)
			o.Reconcile = true
			return o, true
		case "RPR", "RLV":
			return issueOutcome(s, is, dte.EstadoConReparos), true
		case "DOK":
			return Outcome{Estado: dte.EstadoAceptado, Code: s.Estado, Glosa: s.Glosa}, true
		}
	}
	switch {
	case c.Aceptados == c.Informados:
		return Outcome{Estado: dte.EstadoAceptado, Code: s.Estado, Glosa: s.Glosa}, true
	case c.Reparos == c.Informados, c.Rechazados == c.Informados:
		return o, true
	case listed > 0 && named < 0 && listed == c.Rechazados+c.Reparos:
		return Outcome{Estado: dte.EstadoAceptado, Code: s.Estado, Glosa: s.Glosa}, true
	}
	return Outcome{Estado: dte.EstadoProcesando, Code: s.Estado, Glosa: s.Glosa}, false
}

// issueOutcome is the outcome estado of one detalle_rep_rech entry, with
// its first detail code (the entry's estado when it has none).
func issueOutcome(s *EnvelopeStatus, is DocumentIssue, estado dte.Estado) Outcome {
	o := Outcome{Estado: estado, Code: is.Estado, Glosa: s.Glosa}
	if is.Descripcion != "" {
		o.Glosa = is.Descripcion
	}
	for _, e := range is.Errors {
		if c := e.Code(); c != "" {
			o.Code = c
			if e.Descripcion != "" {
				o.Glosa = e.Descripcion
			}
			break
		}
	}
	return o
}

// issueCode returns the first detail code of a boleta issue of tipo
// (with the given estado, any when empty).
func issueCode(s *EnvelopeStatus, tipo int, estado string) string {
	for _, is := range s.Issues {
		if (tipo == 0 || is.Tipo == tipo) && (estado == "" || is.Estado == estado) {
			for _, e := range is.Errors {
				if c := e.Code(); c != "" {
					return c
				}
			}
			return is.Estado
		}
	}
	return ""
}

// DocumentOutcome maps a per-document status (getEstDte or the boleta
// API), used to reconcile. DOK → aceptado. DNK (received, but the date,
// amount or receiver queried do not match) → aceptado as well: the SII has
// the document; the mismatch points at the query's data. TMD/TMC/MMD/MMC/
// AND/ANC (a later note changed or annulled it) → aceptado: the document
// itself was received. FNA, FAN, EMP → rechazado. 001–003 → procesando
// with a token refresh. FAU (not received, or not yet) and anything else →
// procesando: the document's fate is not known from this answer.
func DocumentOutcome(s *DocumentStatus) Outcome {
	o := Outcome{Code: s.Estado, Glosa: s.GlosaEstado, Estado: dte.EstadoProcesando}
	switch s.Estado {
	case "DOK", "DNK", "TMD", "TMC", "MMD", "MMC", "AND", "ANC":
		o.Estado = dte.EstadoAceptado
	case "FNA", "FAN", "EMP":
		o.Estado = dte.EstadoRechazado
	case "001", "002", "003":
		o.RefreshToken = true
	}
	return o
}

// Repeated reports whether a document's rejection code says the SII
// already holds the document: DTE-3-100 "DTE Repetido" (the boleta API's
// error code 100, with or without its section and level). It judges the
// upload, not the document: sent again after a lost answer, it proves the
// first copy arrived, and the document's own status is what settles it.
// DTE-3-101 (the folio with other data) is not a repeat.
func Repeated(code string) bool {
	parts := strings.Split(code, "-")
	if parts[len(parts)-1] != "100" {
		return false
	}
	return len(parts) < 3 || parts[0] == "DTE" // "100", "3-100", "DTE-3-100"
}
