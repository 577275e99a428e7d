package sii

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/mailaddr"
	"github.com/dtekit/dtekit/internal/textclip"
)

// The registry of credit transfers (Registro Público Electrónico de
// Transferencia de Créditos, "RTC"): the upload of an Archivo Electrónico de
// Cesión and the wsRPETCConsulta queries (sii-cesion-notes.md §5 and §6).

// Paths of the registry, fixed by the protocol: the upload on the Upload
// host, the query service on the Classic host.
const (
	PathRTCUpload = "/cgi_rtc/RTC/RTCAnotEnvio.cgi"
	PathRPETC     = "/DTEWS/services/wsRPETCConsulta"
)

// Layouts of the registry's dates (America/Santiago time).
const (
	// RTCAnotTimeLayout is FECHA_ULT_ANOT's, YYYY-MM-DD HH:MM:SS.
	RTCAnotTimeLayout = "2006-01-02 15:04:05"
)

// Bounds the client holds the registry's answers and its own parameters to.
const (
	maxRTCTrackID  = 10 // digits, [WS] §3.1
	maxRTCText     = 256
	maxRTCCode     = 16
	maxRTCEmail    = 80
	maxRTCIdCesion = 20 // alphanumeric, [WS] §3.1
)

// AECUploadResult is the registry's answer to an upload: the RECEPCIONAEC
// document of RTCAnotEnvio.cgi.
type AECUploadResult struct {
	// Status is STATUS: 0 received (TrackID given), 1 the authenticated
	// person may not send for the cedente, 2 file size, 4 missing
	// parameters, 5 authentication, 6 not a DTE company, 9 and 10 internal
	// errors (see AECUploadOutcome).
	Status int
	// TrackID is the upload's track id exactly as written (zero-padded);
	// empty unless Status is 0.
	TrackID string
	// RUTSender ("-" on an authentication error), RUTCompany and File
	// echo the registry's fields.
	RUTSender, RUTCompany, File string
	// Timestamp is TIMESTAMP read in America/Santiago; zero when the
	// answer carried none or one not in RCVDateLayout (the track id
	// of a received upload is kept whatever its timestamp).
	Timestamp time.Time
	// Raw is the response body.
	Raw []byte
}

// Accepted reports whether the registry took the file and gave a track id.
func (r *AECUploadResult) Accepted() bool { return r.Status == 0 && r.TrackID != "" }

// UploadAEC sends a signed AEC to the registry for rutCedente (the cedente,
// "76192083-9"), whose result the registry e-mails to emailNotif. The
// request is multipart/form-data with emailNotif, rutCompany, dvCompany and
// archivo in that order, the browser-like headers of DTE uploads and the
// classic token as the TOKEN cookie. The file's root must be <AEC> and its
// encoding ISO-8859-1 (one without an XML declaration gets one).
//
// Every RECEPCIONAEC comes back as an AECUploadResult with a nil error,
// whatever its STATUS. STATUS 5 (the token is not valid) drops the token
// and sends once more. Transport failures are a *TransportError and are
// not retried: the registry may have kept the file (see MayHaveArrived).
func (c *Client) UploadAEC(ctx context.Context, rutCedente, emailNotif string, aec []byte) (*AECUploadResult, error) {
	const op = "RTCAnotEnvio"
	cedente, err := dte.ParseRUT(rutCedente)
	if err != nil {
		return nil, fmt.Errorf("sii: %s: rutCedente: %w", op, err)
	}
	if err := checkEmail(emailNotif); err != nil {
		return nil, fmt.Errorf("sii: %s: emailNotif: %w", op, err)
	}
	root, err := dte.RootName(aec)
	if err != nil {
		return nil, fmt.Errorf("sii: %s: %w", op, err)
	}
	if root != "AEC" {
		return nil, fmt.Errorf("sii: %s: the file's root element is <%s>, not <AEC>", op, root)
	}
	aec, err = latin1Declared(aec)
	if err != nil {
		return nil, err
	}
	body, ctype, err := aecUploadBody(emailNotif, cedente, aec)
	if err != nil {
		return nil, fmt.Errorf("sii: %s: %w", op, err)
	}
	var res *AECUploadResult
	err = c.withToken(ctx, soapToken, func(token string) (bool, error) {
		var err error
		res, err = c.postAEC(ctx, op, token, body, ctype)
		return err == nil && res.Status == 5, err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// checkEmail accepts one plain address within the registry's bound, by
// the rule every dtekit check of an address for the SII shares
// (mailaddr.CheckEmail).
func checkEmail(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty; the registry e-mails the result there")
	case len(s) > maxRTCEmail:
		return fmt.Errorf("longer than %d characters", maxRTCEmail)
	}
	if err := mailaddr.CheckEmail(s); err != nil {
		return fmt.Errorf("%q %v", s, err)
	}
	return nil
}

// aecUploadBody builds the multipart body in the order of [UP] §2.2.
func aecUploadBody(email string, cedente dte.RUT, aec []byte) ([]byte, string, error) {
	return multipartBody([][2]string{
		{"emailNotif", email}, {"rutCompany", strconv.Itoa(cedente.Number)}, {"dvCompany", string(cedente.DV)},
	}, "aec.xml", aec)
}

// postAEC posts one upload and reads its RECEPCIONAEC.
func (c *Client) postAEC(ctx context.Context, op, token string, body []byte, ctype string) (*AECUploadResult, error) {
	url := c.ep.Upload + PathRTCUpload
	req, err := c.uploadRequest(url, token, body, ctype)
	if err != nil {
		return nil, err
	}
	res, err := c.do(ctx, op, req)
	if err != nil {
		return nil, err
	}
	if err := classify(op, url, res); err != nil {
		return nil, err
	}
	r, err := parseRecepcionAEC(res.body)
	if err != nil {
		kind := KindMalformed
		if res.status != http.StatusOK {
			kind = KindHTTP
		}
		return nil, &TransportError{Op: op, URL: url, Kind: kind, StatusCode: res.status, Detail: err.Error()}
	}
	return r, nil
}

// parseRecepcionAEC reads a RECEPCIONAEC answer. STATUS must be a number,
// and STATUS 0 must come with a track id of 1 to 10 digits; the echoed
// fields are cut to a bound.
func parseRecepcionAEC(body []byte) (*AECUploadResult, error) {
	root, err := parseXMLLenient(body)
	if err != nil {
		return nil, fmt.Errorf("unreadable RECEPCIONAEC: %v", err)
	}
	if root.Name != "RECEPCIONAEC" {
		return nil, fmt.Errorf("root element is <%s>, not RECEPCIONAEC", textclip.Clip(root.QName, maxRTCCode*4))
	}
	r := &AECUploadResult{Raw: body}
	status, stamp := "", ""
	for _, k := range root.Kids {
		t := textclip.Clip(strings.TrimSpace(k.Text), maxRTCText)
		switch k.Name {
		case "RUTSENDER":
			r.RUTSender = t
		case "RUTCOMPANY":
			r.RUTCompany = t
		case "FILE":
			r.File = t
		case "TIMESTAMP":
			stamp = t
		case "STATUS":
			status = t
		case "TRACKID":
			r.TrackID = t
		}
	}
	n, err := strconv.Atoi(status)
	if err != nil || len(status) > 4 {
		return nil, fmt.Errorf("RECEPCIONAEC STATUS %q is not a number", textclip.Clip(status, maxRTCCode))
	}
	r.Status = n
	if n == 0 && !isTrackID(r.TrackID) {
		return nil, fmt.Errorf("RECEPCIONAEC STATUS 0 with TRACKID %q, not 1 to %d digits", textclip.Clip(r.TrackID, maxRTCCode), maxRTCTrackID)
	}
	if t, err := time.ParseInLocation(RCVDateLayout, stamp, chile.Location()); err == nil {
		r.Timestamp = t
	}
	return r, nil
}

// isTrackID reports whether s is 1 to 10 ASCII digits.
func isTrackID(s string) bool {
	return s != "" && len(s) <= maxRTCTrackID && strings.Trim(s, "0123456789") == ""
}

// RTCHeader is the RESP_HDR of a wsRPETCConsulta answer.
type RTCHeader struct {
	// Estado is ESTADO: 0 the request was answered, 1 data error, 2 no
	// information found, 3–5 authentication, 6–8 internal errors, 9 and
	// 10 permissions, -15 the company is not linked to the document.
	Estado int
	// Glosa is GLOSA, the registry's text.
	Glosa string
}

// AECStatus is getEstEnvio's answer: the state of an uploaded AEC.
type AECStatus struct {
	// TrackID is the track id queried (as the registry echoed it).
	TrackID string
	// Estado is ESTADO_ENVIO: UPL, RCP, SOK, FSO, COK, VDC, VCS while in
	// process, EOK when the cesión is recorded, RSC, RFS, RCR, RDC, RCS or
	// EAN when rejected (see AECStatusOutcome); empty when the header
	// reports an error.
	Estado string
	// Descripcion is DESC_ESTADO, the registry's text for Estado.
	Descripcion string
	// Header is RESP_HDR.
	Header RTCHeader
	// Raw is the inner RESPUESTA document.
	Raw []byte
}

// CesionQuery identifies a ceded document for CesionStatus and
// CesionStatusRelac.
type CesionQuery struct {
	// RutEmisor is the document's issuer ("76192083-9").
	RutEmisor string
	// TipoDoc and Folio identify the document (33, 34, 43 or 46).
	TipoDoc int
	Folio   int64
	// IdCesion is the holder's access key to the cesión (1 to 20 letters
	// and digits); optional, and only CesionStatus sends it. Without it
	// the registry answers only whether the document is ceded.
	IdCesion string
}

// CesionStatus is the registry's answer about a document's cesión
// (getEstCesion, getEstCesionRelac).
type CesionStatus struct {
	// Header is RESP_HDR.
	Header RTCHeader
	// Cedido reports that the registry has a cesión of the document on
	// record: RESP_HDR ESTADO 0 (GLOSA "Documento Cedido" when the query
	// had no IdCesion) whose GLOSA does not say otherwise.
	Cedido bool
	// RutTenedor is RUT_TENEDOR, the current holder ("76086428-5"), when
	// the answer has a body.
	RutTenedor string
	// FechaUltAnot is FECHA_ULT_ANOT, the last annotation's time
	// (America/Santiago); zero without a body.
	FechaUltAnot time.Time
	// RutCobranza and DirCobranza are RUT_COBRANZA and DIR_COBRANZA, set
	// when the document is in collection.
	RutCobranza, DirCobranza string
	// DecJurada is DEC_JURADA ("EXISTE" when a sworn declaration is on
	// record).
	DecJurada string
	// Raw is the inner RESPUESTA document.
	Raw []byte
}

// AECStatus asks getEstEnvio for the state of an AEC upload. RESP_HDR
// ESTADO 3, 4 or 5 (the token is not valid) or a token fault drop the
// token and ask once more; transport errors are retried per
// Config.Retries.
func (c *Client) AECStatus(ctx context.Context, trackID string) (*AECStatus, error) {
	const op = "getEstEnvio"
	trackID = strings.TrimSpace(trackID)
	if !isTrackID(trackID) {
		return nil, fmt.Errorf("sii: %s: trackID %q is not 1 to %d digits", op, textclip.Clip(trackID, maxRTCCode), maxRTCTrackID)
	}
	r, h, err := c.rpetc(ctx, op, soapParam{"TrackId", trackID})
	if err != nil {
		return nil, err
	}
	return aecStatus(r, h, trackID), nil
}

// aecStatus reads getEstEnvio's RESPUESTA.
func aecStatus(r *respuesta, h RTCHeader, trackID string) *AECStatus {
	s := &AECStatus{Header: h, Raw: r.raw,
		TrackID:     textclip.Clip(r.bodyText("TRACKID"), maxRTCCode),
		Estado:      textclip.Clip(r.bodyText("ESTADO_ENVIO"), maxRTCCode),
		Descripcion: textclip.Clip(r.bodyText("DESC_ESTADO"), maxRTCText)}
	if s.TrackID == "" {
		s.TrackID = trackID
	}
	return s
}

// CesionStatus asks getEstCesion about a document's cesión; with
// q.IdCesion the answer names the holder. Token handling and retries are
// as in AECStatus.
func (c *Client) CesionStatus(ctx context.Context, q CesionQuery) (*CesionStatus, error) {
	const op = "getEstCesion"
	params, err := q.params(op)
	if err != nil {
		return nil, err
	}
	if q.IdCesion != "" {
		if len(q.IdCesion) > maxRTCIdCesion || strings.ContainsFunc(q.IdCesion, func(r rune) bool { return !isAlnum(r) }) {
			return nil, fmt.Errorf("sii: %s: IdCesion %q is not 1 to %d letters and digits", op, textclip.Clip(q.IdCesion, maxRTCIdCesion+4), maxRTCIdCesion)
		}
		params = append(params, soapParam{"IdCesion", q.IdCesion})
	}
	r, h, err := c.rpetc(ctx, op, params...)
	if err != nil {
		return nil, err
	}
	return cesionStatus(op, c.ep.Classic+PathRPETC, r, h)
}

// CesionStatusRelac asks getEstCesionRelac about a document's cesión on
// behalf of rutEmpresa, which must be linked to the document as its
// holder or its receptor (ESTADO -15 otherwise). q.IdCesion is not sent.
func (c *Client) CesionStatusRelac(ctx context.Context, q CesionQuery, rutEmpresa string) (*CesionStatus, error) {
	const op = "getEstCesionRelac"
	params, err := q.params(op)
	if err != nil {
		return nil, err
	}
	emp, err := dte.ParseRUT(rutEmpresa)
	if err != nil {
		return nil, fmt.Errorf("sii: %s: rutEmpresa: %w", op, err)
	}
	params = append(params, soapParam{"RutEmpresa", strconv.Itoa(emp.Number)}, soapParam{"DVEmpresa", string(emp.DV)})
	r, h, err := c.rpetc(ctx, op, params...)
	if err != nil {
		return nil, err
	}
	return cesionStatus(op, c.ep.Classic+PathRPETC, r, h)
}

// params checks q and returns its parts in the manual's order.
func (q CesionQuery) params(op string) ([]soapParam, error) {
	em, err := dte.ParseRUT(q.RutEmisor)
	if err != nil {
		return nil, fmt.Errorf("sii: %s: RutEmisor: %w", op, err)
	}
	if q.TipoDoc < 1 || q.TipoDoc > 999 {
		return nil, fmt.Errorf("sii: %s: TipoDoc %d is not 1 to 3 digits", op, q.TipoDoc)
	}
	if q.Folio < 1 || q.Folio > 9999999999 {
		return nil, fmt.Errorf("sii: %s: Folio %d is not 1 to 10 digits", op, q.Folio)
	}
	return []soapParam{{"RutEmisor", strconv.Itoa(em.Number)}, {"DVEmisor", string(em.DV)},
		{"TipoDoc", strconv.Itoa(q.TipoDoc)}, {"FolioDoc", strconv.FormatInt(q.Folio, 10)}}, nil
}

// isAlnum reports an ASCII letter or digit.
func isAlnum(r rune) bool {
	return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// cesionStatus reads a getEstCesion or getEstCesionRelac RESPUESTA. The
// holder's RUT and the annotation time, when present, must be readable:
// an answer that names a holder the client cannot read is malformed, not
// a document without a holder.
func cesionStatus(op, url string, r *respuesta, h RTCHeader) (*CesionStatus, error) {
	s := &CesionStatus{Header: h, Raw: r.raw,
		RutCobranza: textclip.Clip(r.bodyText("RUT_COBRANZA"), maxRTCCode),
		DirCobranza: textclip.Clip(r.bodyText("DIR_COBRANZA"), maxRTCText),
		DecJurada:   textclip.Clip(r.bodyText("DEC_JURADA"), maxRTCCode)}
	bad := func(format string, a ...any) error {
		return &TransportError{Op: op, URL: url, Kind: KindMalformed, Detail: fmt.Sprintf(format, a...)}
	}
	if t := r.bodyText("RUT_TENEDOR"); t != "" {
		rut, err := registryRUT(t)
		if err != nil {
			return nil, bad("RUT_TENEDOR %q is not a RUT", textclip.Clip(t, maxRTCCode))
		}
		s.RutTenedor = rut
	}
	if t := r.bodyText("FECHA_ULT_ANOT"); t != "" {
		f, err := time.ParseInLocation(RTCAnotTimeLayout, t, chile.Location())
		if err != nil {
			return nil, bad("FECHA_ULT_ANOT %q is not YYYY-MM-DD HH:MM:SS", textclip.Clip(t, maxRTCCode*2))
		}
		s.FechaUltAnot = f
	}
	s.Cedido = h.Estado == 0 && !strings.Contains(strings.ToLower(h.Glosa), "no cedido")
	return s, nil
}

// registryRUT reads a RUT the registry wrote, with its check digit
// ("76086428-5", canonical form) or without it (up to 10 digits, kept as
// written).
func registryRUT(s string) (string, error) {
	if r, err := dte.ParseRUT(s); err == nil {
		return r.String(), nil
	}
	if isTrackID(s) {
		return s, nil
	}
	return "", fmt.Errorf("not a RUT")
}

// rpetc calls one wsRPETCConsulta method with the token as its first part
// ([WS] §3.1): transport errors are retried, and RESP_HDR ESTADO 3, 4, 5
// or a token fault get a fresh token and one more call. A RESP_HDR whose
// ESTADO is not an integer is malformed.
func (c *Client) rpetc(ctx context.Context, op string, params ...soapParam) (*respuesta, RTCHeader, error) {
	var (
		r *respuesta
		h RTCHeader
	)
	url := c.ep.Classic + PathRPETC
	err := c.withToken(ctx, soapToken, func(token string) (bool, error) {
		var err error
		r, err = retry(ctx, c, func() (*respuesta, error) {
			return c.callSOAP(ctx, c.ep.Classic, PathRPETC, op, append([]soapParam{{"Token", token}}, params...)...)
		})
		if err != nil {
			return isTokenFault(err), err
		}
		if h, err = rtcHeader(r); err != nil {
			return false, &TransportError{Op: op, URL: url, Kind: KindMalformed, Detail: err.Error()}
		}
		return rtcTokenEstado(h.Estado), nil
	})
	if err != nil {
		return nil, RTCHeader{}, err
	}
	return r, h, nil
}

// rtcHeader reads RESP_HDR's ESTADO and GLOSA.
func rtcHeader(r *respuesta) (RTCHeader, error) {
	e := r.Hdr["ESTADO"]
	n, err := strconv.Atoi(e)
	if err != nil || len(e) > 4 {
		return RTCHeader{}, fmt.Errorf("RESP_HDR ESTADO %q is not an integer", textclip.Clip(e, maxRTCCode))
	}
	return RTCHeader{Estado: n, Glosa: textclip.Clip(r.Hdr["GLOSA"], maxRTCText)}, nil
}

// rtcTokenEstado reports the RESP_HDR codes that mean the token is not
// valid: 3 inactive, 4 unknown, 5 authentication error ([WS] §3.3).
func rtcTokenEstado(e int) bool { return e == 3 || e == 4 || e == 5 }
