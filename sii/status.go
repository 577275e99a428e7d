package sii

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
)

// TypeCounts is one document type's line of an envelope's review.
type TypeCounts struct {
	Tipo                                       int
	Informados, Aceptados, Rechazados, Reparos int
}

// DocumentIssue is one entry of the boleta API's detalle_rep_rech: a
// document rejected or accepted with objections, with its error lines.
type DocumentIssue struct {
	Tipo        int
	Folio       int64
	Estado      string // RCH, RPR, RLV...
	Descripcion string
	Errors      []DetailError
}

// DetailError is one error line of a document review.
type DetailError struct {
	Seccion, Linea, Nivel, Codigo, Descripcion, Detalle string
}

// Code returns the error in the SII's "SECCION-NIVEL-CODIGO" form, e.g.
// "DTE-3-101".
func (e DetailError) Code() string {
	return strings.Trim(e.Seccion+"-"+e.Nivel+"-"+e.Codigo, "-")
}

// EnvelopeStatus is an envelope's state: getEstUp's answer, or the boleta
// API's envelope status.
type EnvelopeStatus struct {
	// TrackID is the track id queried.
	TrackID string
	// Estado is the SII's code: SOK, CRT, FOK, PDR, EPR, RSC, RFR, RCT,
	// -11, 001–003 ... (REST: REC, EPR, ...).
	Estado string
	// Glosa is the SII's text for Estado.
	Glosa string
	// NumAtencion is the SII's attention number, as written
	// ("370027 ( 2026/08/04 14:20:53)").
	NumAtencion string
	// ErrCode, SQLCode and SrvCode accompany ESTADO -11.
	ErrCode, SQLCode, SrvCode string
	// Counts holds one entry per document type once the envelope was
	// processed (EPR).
	Counts []TypeCounts
	// Issues holds the boleta API's detalle_rep_rech entries.
	Issues []DocumentIssue
	// Pending is true for a boleta envelope whose detalle_rep_rech is
	// still null (not finished).
	Pending bool
	// Raw is the inner response document (SOAP) or the JSON body (REST).
	Raw []byte
}

// CountsFor returns the counts of tipo (all types summed when tipo is 0)
// and whether the answer had any for it.
func (s *EnvelopeStatus) CountsFor(tipo int) (TypeCounts, bool) {
	out := TypeCounts{Tipo: tipo}
	found := false
	for _, c := range s.Counts {
		if tipo == 0 || c.Tipo == tipo {
			found = true
			out.Informados += c.Informados
			out.Aceptados += c.Aceptados
			out.Rechazados += c.Rechazados
			out.Reparos += c.Reparos
		}
	}
	return out, found
}

// tokenEstado reports the ESTADO codes that mean the token is not valid.
func tokenEstado(e string) bool { return e == "001" || e == "002" || e == "003" }

// EnvelopeStatus asks getEstUp for the state of an envelope uploaded
// through DTEUpload for rutCompany. ESTADO 001–003 (the token is not valid)
// or a token fault get a fresh token and one more query; if the SII still
// refuses it, the answer is returned as it came. Transport errors are
// retried per Config.Retries.
func (c *Client) EnvelopeStatus(ctx context.Context, rutCompany, trackID string) (*EnvelopeStatus, error) {
	company, err := dte.ParseRUT(rutCompany)
	if err != nil {
		return nil, fmt.Errorf("sii: getEstUp: company RUT: %w", err)
	}
	if strings.TrimSpace(trackID) == "" {
		return nil, fmt.Errorf("sii: getEstUp: empty track id")
	}
	r, err := c.query(ctx, PathEstUp, "getEstUp",
		soapParam{"RutCompania", strconv.Itoa(company.Number)}, soapParam{"DvCompania", string(company.DV)},
		soapParam{"TrackId", trackID})
	if err != nil {
		return nil, err
	}
	return estUpStatus(r, trackID), nil
}

// estUpStatus reads getEstUp's RESPUESTA.
func estUpStatus(r *respuesta, trackID string) *EnvelopeStatus {
	s := &EnvelopeStatus{TrackID: r.Hdr["TRACKID"], Estado: r.Hdr["ESTADO"], Glosa: r.Hdr["GLOSA"], Raw: r.raw,
		NumAtencion: r.Hdr["NUM_ATENCION"], ErrCode: r.Hdr["ERR_CODE"], SQLCode: r.Hdr["SQL_CODE"], SrvCode: r.Hdr["SRV_CODE"]}
	if s.TrackID == "" {
		s.TrackID = trackID
	}
	// RESP_BODY repeats flat groups; a TIPO_DOCTO opens each one.
	var cur *TypeCounts
	for _, k := range r.Body {
		v, _ := strconv.Atoi(strings.TrimSpace(k.Text))
		if k.Name == "TIPO_DOCTO" {
			s.Counts = append(s.Counts, TypeCounts{Tipo: v})
			cur = &s.Counts[len(s.Counts)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch k.Name {
		case "INFORMADOS":
			cur.Informados = v
		case "ACEPTADOS":
			cur.Aceptados = v
		case "RECHAZADOS":
			cur.Rechazados = v
		case "REPAROS":
			cur.Reparos = v
		}
	}
	return s
}

// query calls a status operation of the classic services with params and
// the token as the last part (Token): transport errors are retried, and
// ESTADO 001–003 or a token fault get a fresh token and one more call.
func (c *Client) query(ctx context.Context, path, op string, params ...soapParam) (*respuesta, error) {
	var r *respuesta
	err := c.withToken(ctx, soapToken, func(token string) (bool, error) {
		var err error
		r, err = retry(ctx, c, func() (*respuesta, error) {
			return c.callSOAP(ctx, c.ep.Classic, path, op, append(params[:len(params):len(params)], soapParam{"Token", token})...)
		})
		if err != nil {
			return isTokenFault(err), err
		}
		return tokenEstado(r.Hdr["ESTADO"]), nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// withToken runs f with the cached token of kind, and once more with a new
// token when f reports that the SII refused the first.
func (c *Client) withToken(ctx context.Context, kind tokenKind, f func(token string) (authFailed bool, err error)) error {
	for attempt := 0; ; attempt++ {
		token, err := c.token(ctx, kind)
		if err != nil {
			return err
		}
		authFailed, err := f(token)
		if !authFailed || attempt == 1 {
			return err
		}
		c.invalidate(kind, token)
	}
}

// DocumentQuery identifies one document for DocumentStatus.
type DocumentQuery struct {
	// RutEmisor is the issuer, RutReceptor the receiver ("12345678-9").
	RutEmisor, RutReceptor string
	// Tipo and Folio identify the document.
	Tipo  int
	Folio int64
	// FechaEmision is the issue date, YYYY-MM-DD.
	FechaEmision string
	// Monto is the document's total (MntTotal).
	Monto int64
}

// parse checks q for op and returns its RUTs and date.
func (q DocumentQuery) parse(op string) (em, rec dte.RUT, fecha time.Time, err error) {
	if em, err = dte.ParseRUT(q.RutEmisor); err != nil {
		return em, rec, fecha, fmt.Errorf("sii: %s: RutEmisor: %w", op, err)
	}
	if rec, err = dte.ParseRUT(q.RutReceptor); err != nil {
		return em, rec, fecha, fmt.Errorf("sii: %s: RutReceptor: %w", op, err)
	}
	if fecha, err = time.Parse("2006-01-02", q.FechaEmision); err != nil {
		return em, rec, fecha, fmt.Errorf("sii: %s: FechaEmision %q is not a YYYY-MM-DD date", op, q.FechaEmision)
	}
	return em, rec, fecha, nil
}

// DocumentStatus is the SII's answer about one document (getEstDte, or the
// boleta API's per-document status). Its fields are the contract's status
// query fields.
type DocumentStatus struct {
	// Estado is DOK, DNK, FAU, FNA, FAN, EMP, TMD, TMC, MMD, MMC, AND, ANC,
	// or a token/error code (001–003, -1…).
	Estado      string
	GlosaEstado string
	ErrCode     string
	GlosaErr    string
	NumAtencion string
	// Raw is the inner response document (SOAP) or the JSON body (REST).
	Raw []byte
}

// DocumentStatus asks getEstDte for one document, the authoritative check
// after an ambiguous envelope outcome. The consultant is the certificate
// holder. Token refresh and retries are as in EnvelopeStatus.
func (c *Client) DocumentStatus(ctx context.Context, q DocumentQuery) (*DocumentStatus, error) {
	cons, err := dte.ParseRUT(c.senderRUT)
	if err != nil {
		return nil, fmt.Errorf("sii: getEstDte: consultant RUT: %w", err)
	}
	em, rec, fecha, err := q.parse("getEstDte")
	if err != nil {
		return nil, err
	}
	r, err := c.query(ctx, PathEstDte, "getEstDte",
		soapParam{"RutConsultante", strconv.Itoa(cons.Number)}, soapParam{"DvConsultante", string(cons.DV)},
		soapParam{"RutCompania", strconv.Itoa(em.Number)}, soapParam{"DvCompania", string(em.DV)},
		soapParam{"RutReceptor", strconv.Itoa(rec.Number)}, soapParam{"DvReceptor", string(rec.DV)},
		soapParam{"TipoDte", strconv.Itoa(q.Tipo)}, soapParam{"FolioDte", strconv.FormatInt(q.Folio, 10)},
		soapParam{"FechaEmisionDte", fecha.Format("02012006")}, soapParam{"MontoDte", strconv.FormatInt(q.Monto, 10)})
	if err != nil {
		return nil, err
	}
	return &DocumentStatus{Estado: r.Hdr["ESTADO"], GlosaEstado: r.Hdr["GLOSA_ESTADO"], ErrCode: r.Hdr["ERR_CODE"],
		GlosaErr: r.Hdr["GLOSA_ERR"], NumAtencion: r.Hdr["NUM_ATENCION"], Raw: r.raw}, nil
}

// BoletaEnvelopeStatus asks the boleta API for the state of an envelope
// uploaded for rutCompany. HTTP 401 gets a fresh token and one more query;
// a 404 (unknown track) is an error naming the track.
func (c *Client) BoletaEnvelopeStatus(ctx context.Context, rutCompany, trackID string) (*EnvelopeStatus, error) {
	company, err := dte.ParseRUT(rutCompany)
	if err != nil {
		return nil, fmt.Errorf("sii: boleta status: company RUT: %w", err)
	}
	if strings.TrimSpace(trackID) == "" || strings.ContainsAny(trackID, "/?#") {
		return nil, fmt.Errorf("sii: boleta status: track id %q is not valid", trackID)
	}
	u := fmt.Sprintf("%s%s/%d-%c-%s", c.ep.BoletaAPI, PathBoletaEnvio, company.Number, company.DV, url.PathEscape(trackID))
	body, err := c.restGet(ctx, "boleta.estado", u)
	if err != nil {
		return nil, err
	}
	var j struct {
		TrackID     flexString `json:"trackid"`
		Estado      flexString `json:"estado"`
		Glosa       flexString `json:"glosa"`
		Estadistica []struct {
			Tipo       flexInt `json:"tipo"`
			Informados flexInt `json:"informados"`
			Aceptados  flexInt `json:"aceptados"`
			Rechazados flexInt `json:"rechazados"`
			Reparos    flexInt `json:"reparos"`
		} `json:"estadistica"`
		Detalle *[]struct {
			Tipo        flexInt    `json:"tipo"`
			Folio       flexInt    `json:"folio"`
			Estado      flexString `json:"estado"`
			Descripcion flexString `json:"descripcion"`
			Error       []struct {
				Seccion     flexString `json:"seccion"`
				Linea       flexString `json:"linea"`
				Nivel       flexString `json:"nivel"`
				Codigo      flexString `json:"codigo"`
				Descripcion flexString `json:"descripcion"`
				Detalle     flexString `json:"detalle"`
			} `json:"error"`
		} `json:"detalle_rep_rech"`
	}
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, &TransportError{Op: "boleta.estado", URL: u, Kind: KindMalformed, Detail: "unreadable JSON: " + err.Error()}
	}
	s := &EnvelopeStatus{TrackID: string(j.TrackID), Estado: string(j.Estado), Glosa: string(j.Glosa), Raw: body, Pending: j.Detalle == nil}
	if s.TrackID == "" {
		s.TrackID = trackID
	}
	for _, e := range j.Estadistica {
		s.Counts = append(s.Counts, TypeCounts{Tipo: int(e.Tipo), Informados: int(e.Informados), Aceptados: int(e.Aceptados),
			Rechazados: int(e.Rechazados), Reparos: int(e.Reparos)})
	}
	if j.Detalle != nil {
		for _, d := range *j.Detalle {
			is := DocumentIssue{Tipo: int(d.Tipo), Folio: int64(d.Folio), Estado: string(d.Estado), Descripcion: string(d.Descripcion)}
			for _, e := range d.Error {
				is.Errors = append(is.Errors, DetailError{Seccion: string(e.Seccion), Linea: string(e.Linea), Nivel: string(e.Nivel),
					Codigo: string(e.Codigo), Descripcion: string(e.Descripcion), Detalle: string(e.Detalle)})
			}
			s.Issues = append(s.Issues, is)
		}
	}
	return s, nil
}

// BoletaStatus asks the boleta API for one boleta's state, with the four
// query parameters (rut_receptor, dv_receptor, monto, fechaEmision) from
// q. Only a JSON 200 answer with a codigo is an answer: plain text (the
// certification API answers a missing parameter with HTTP 200 and
// "falta monto"), another body, a 4xx or 5xx answer or a timeout is an
// error, never a status (see BoletaArrival).
func (c *Client) BoletaStatus(ctx context.Context, q DocumentQuery) (*DocumentStatus, error) {
	em, rec, fecha, err := q.parse("boleta dte status")
	if err != nil {
		return nil, err
	}
	v := url.Values{}
	v.Set("rut_receptor", strconv.Itoa(rec.Number))
	v.Set("dv_receptor", string(rec.DV))
	v.Set("monto", strconv.FormatInt(q.Monto, 10))
	v.Set("fechaEmision", fecha.Format("02-01-2006"))
	u := fmt.Sprintf("%s%s/%d-%c-%d-%d/estado?%s", c.ep.BoletaAPI, PathBoletaDTE, em.Number, em.DV, q.Tipo, q.Folio, v.Encode())
	body, err := c.restGet(ctx, "boleta.dte", u)
	if err != nil {
		return nil, err
	}
	var j struct {
		Codigo      flexString `json:"codigo"`
		Descripcion flexString `json:"descripcion"`
		ErrCode     flexString `json:"err_code"`
		GlosaErr    flexString `json:"glosa_err"`
		NumAtencion flexString `json:"num_atencion"`
	}
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, &TransportError{Op: "boleta.dte", URL: u, Kind: KindMalformed, Detail: "not a JSON answer (" + err.Error() + "): " + snippet(body)}
	}
	if j.Codigo == "" {
		return nil, &TransportError{Op: "boleta.dte", URL: u, Kind: KindMalformed, Detail: "a JSON answer without codigo: " + snippet(body)}
	}
	return &DocumentStatus{Estado: string(j.Codigo), GlosaEstado: string(j.Descripcion), ErrCode: string(j.ErrCode),
		GlosaErr: string(j.GlosaErr), NumAtencion: string(j.NumAtencion), Raw: body}, nil
}

// restGet sends an authenticated GET to the boleta API and returns the
// JSON body of a 200 answer; 401 renews the token once.
func (c *Client) restGet(ctx context.Context, op, u string) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		token, err := c.token(ctx, restToken)
		if err != nil {
			return nil, err
		}
		res, err := retry(ctx, c, func() (*response, error) {
			req, err := http.NewRequest(http.MethodGet, u, nil)
			if err != nil {
				return nil, fmt.Errorf("sii: %s: %w", op, err)
			}
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Cookie", "TOKEN="+token)
			res, err := c.do(ctx, op, req)
			if err != nil {
				return nil, err
			}
			if res.status == http.StatusUnauthorized || res.status == http.StatusNotFound {
				return res, nil
			}
			if err := classify(op, u, res); err != nil {
				return nil, err
			}
			if res.status != http.StatusOK {
				return nil, &TransportError{Op: op, URL: u, Kind: KindHTTP, StatusCode: res.status, Detail: snippet(res.body)}
			}
			return res, nil
		})
		if err != nil {
			return nil, err
		}
		switch res.status {
		case http.StatusNotFound:
			return nil, fmt.Errorf("sii: %s %s: %w (HTTP 404)", op, u, ErrNotFound)
		case http.StatusUnauthorized:
			c.invalidate(restToken, token)
			if attempt == 1 {
				return nil, &AuthError{Op: op, Estado: "401", Glosa: snippet(res.body)}
			}
			continue
		}
		return res.body, nil
	}
}
