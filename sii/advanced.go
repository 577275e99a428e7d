package sii

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// AdvancedStatus is getEstDteAv's answer about one document: whether the
// SII received it and in which envelope. Unlike getEstDte, which knows a
// document only once its envelope's review accepted it, the advanced
// query is keyed by the document's signature, so it names the track id
// of the envelope that carried it: the way back to an upload whose answer
// was lost.
//
// The service and its parameters are the SII's; the fields of the answer
// (RESP_HDR ESTADO and GLOSA; RESP_BODY RECIBIDO, ESTADO, GLOSA, TRACKID,
// NUMATENCION) are the ones public third-party clients read. They have not
// been checked against the SII itself.
type AdvancedStatus struct {
	// HdrEstado and HdrGlosa are RESP_HDR's ESTADO and GLOSA: the query's
	// own status ("0" when answered; 001–003 for a token the SII refused;
	// negative codes for its errors).
	HdrEstado, HdrGlosa string
	// Recibido is RECIBIDO "SI": the SII holds this document, with this
	// signature.
	Recibido bool
	// Estado is the document's state, with getEstDte's codes (DOK, DNK,
	// FAU, FNA, FAN, EMP, ...), and Glosa its text.
	Estado, Glosa string
	// TrackID is the track id of the envelope that carried the document,
	// as written (zero-padded); "" when not received.
	TrackID string
	// NumAtencion is the SII's attention number, as written.
	NumAtencion string
	// Raw is the inner response document.
	Raw []byte
}

// DocumentStatusAdvanced asks getEstDteAv (QueryEstDteAv) about one
// document of the classic protocol (not boletas): q identifies it and
// signatureValue is the DTE's own SignatureValue (dte.Document's
// SignatureValue; whitespace is removed here). The date goes as
// DD-MM-YYYY. Token refresh and retries are as in EnvelopeStatus.
func (c *Client) DocumentStatusAdvanced(ctx context.Context, q DocumentQuery, signatureValue string) (*AdvancedStatus, error) {
	em, rec, fecha, err := q.parse("getEstDteAv")
	if err != nil {
		return nil, err
	}
	firma := strings.Join(strings.Fields(signatureValue), "")
	if firma == "" {
		return nil, fmt.Errorf("sii: getEstDteAv: FirmaDte: the document's SignatureValue is empty")
	}
	r, err := c.query(ctx, PathEstDteAv, "getEstDteAv",
		soapParam{"RutEmpresa", strconv.Itoa(em.Number)}, soapParam{"DvEmpresa", string(em.DV)},
		soapParam{"RutReceptor", strconv.Itoa(rec.Number)}, soapParam{"DvReceptor", string(rec.DV)},
		soapParam{"TipoDte", strconv.Itoa(q.Tipo)}, soapParam{"FolioDte", strconv.FormatInt(q.Folio, 10)},
		soapParam{"FechaEmisionDte", fecha.Format("02-01-2006")}, soapParam{"MontoDte", strconv.FormatInt(q.Monto, 10)},
		soapParam{"FirmaDte", firma})
	if err != nil {
		return nil, err
	}
	return estDteAvStatus(r), nil
}

// estDteAvStatus reads getEstDteAv's RESPUESTA.
func estDteAvStatus(r *respuesta) *AdvancedStatus {
	s := &AdvancedStatus{HdrEstado: r.Hdr["ESTADO"], HdrGlosa: r.Hdr["GLOSA"], Estado: r.bodyText("ESTADO"),
		Glosa: r.bodyText("GLOSA"), TrackID: r.bodyText("TRACKID"), NumAtencion: r.bodyText("NUMATENCION"), Raw: r.raw}
	s.Recibido = strings.EqualFold(r.bodyText("RECIBIDO"), "SI")
	if s.NumAtencion == "" {
		s.NumAtencion = r.Hdr["NUM_ATENCION"]
	}
	return s
}

// Envelope returns the track id of the envelope that carried the document
// when the answer says the SII received it, and "" otherwise (not
// received, another document under the same folio, or a refused query).
func (s *AdvancedStatus) Envelope() string {
	if !s.Recibido || tokenEstado(s.HdrEstado) || strings.HasPrefix(s.HdrEstado, "-") {
		return ""
	}
	return s.TrackID
}
