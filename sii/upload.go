package sii

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/xmltree"
)

// UploadResult is the SII's answer to an upload: the RECEPCIONDTE document
// of DTEUpload, or the JSON of the boleta REST upload.
type UploadResult struct {
	// Boleta is true when the envelope was an EnvioBOLETA sent through the
	// REST API.
	Boleta bool
	// Status is RECEPCIONDTE's STATUS (0 received, 1 sender without
	// permission, 2 size, 3 truncated, 5 not authenticated, 6 company not
	// authorised, 7 schema, 8 signature, 9 system locked...). For a boleta
	// it is 0 when Estado is "REC" and -1 otherwise.
	Status int
	// Estado is the REST answer's estado ("REC" when received); empty for
	// DTEUpload.
	Estado string
	// TrackID is the envelope's track id exactly as written by the SII
	// (zero-padded); empty unless received.
	TrackID string
	// RutSender, RutCompany, File and Timestamp echo the SII's fields.
	RutSender, RutCompany, File, Timestamp string
	// Errors holds the DETAIL/ERROR lines of a refused upload.
	Errors []string
	// Raw is the response body.
	Raw []byte
}

// Accepted reports whether the SII took the envelope and gave a track id.
func (r *UploadResult) Accepted() bool { return r.Status == 0 && r.TrackID != "" }

// Upload sends a signed envelope for rutCompany (the issuer, "76192083-9"):
// an EnvioDTE through DTEUpload, an EnvioBOLETA through the boleta REST
// API, chosen by the root element. A libro (LibroCompraVenta, LibroGuia)
// or an RCOF (ConsumoFolios, which the REST API does not take) goes
// through DTEUpload like an EnvioDTE; its getEstUp states are the libros'
// (LSO, then LOK, LRH, LRC, LRF or LNC). The request is multipart/form-data
// with the fields rutSender, dvSender, rutCompany, dvCompany and archivo in
// that order, an explicit Content-Length, the browser-like headers of the
// SII's manual and the token cookie. The envelope must be ISO-8859-1; an
// envelope without an XML declaration gets one.
//
// Every answer the SII gives in its own format comes back as an
// UploadResult with a nil error, whatever its Status (see UploadOutcome).
// When the SII says the token is not valid (STATUS 5, HTTP 401) the token
// is renewed and the upload sent once more. Transport failures are a
// *TransportError and are not retried: the SII may have kept the envelope.
func (c *Client) Upload(ctx context.Context, rutCompany string, envelope []byte) (*UploadResult, error) {
	return c.upload(ctx, rutCompany, envelope, false)
}

// UploadClassic sends a signed file through DTEUpload, with the SOAP
// token, whatever its root: an EnvioDTE, a libro, an RCOF, and also an
// EnvioBOLETA. That is the channel of the boleta certification: the SII's
// reviewer of the boleta set sees only the EnvioBOLETA uploaded there (one
// sent through the REST API ends EPR and the set SRH, "El Documento no
// está en el envío"; sii-wave3-notes §6.4). Its state is then asked with
// EnvelopeStatus (getEstUp), not BoletaEnvelopeStatus. Everything else is
// as Upload.
func (c *Client) UploadClassic(ctx context.Context, rutCompany string, envelope []byte) (*UploadResult, error) {
	return c.upload(ctx, rutCompany, envelope, true)
}

// upload is Upload, or UploadClassic when classic is true.
func (c *Client) upload(ctx context.Context, rutCompany string, envelope []byte, classic bool) (*UploadResult, error) {
	company, err := dte.ParseRUT(rutCompany)
	if err != nil {
		return nil, fmt.Errorf("sii: upload: company RUT: %w", err)
	}
	sender, err := dte.ParseRUT(c.senderRUT)
	if err != nil {
		return nil, fmt.Errorf("sii: upload: sender RUT: %w", err)
	}
	root, err := dte.RootName(envelope)
	if err != nil {
		return nil, fmt.Errorf("sii: upload: %w", err)
	}
	switch root {
	case "EnvioDTE", "EnvioBOLETA", "LibroCompraVenta", "LibroGuia", "ConsumoFolios":
	default:
		return nil, fmt.Errorf("sii: upload: the file's root element is <%s>, not <EnvioDTE>, <EnvioBOLETA> or a libro (<LibroCompraVenta>, <LibroGuia>, <ConsumoFolios>)", root)
	}
	envelope, err = latin1Declared(envelope)
	if err != nil {
		return nil, err
	}
	boleta := root == "EnvioBOLETA" && !classic
	body, ctype, err := uploadBody(sender, company, envelope)
	if err != nil {
		return nil, err
	}
	kind := soapToken
	if boleta {
		kind = restToken
	}
	send := func(token string) (*UploadResult, bool, error) {
		if boleta {
			return c.uploadBoleta(ctx, token, body, ctype)
		}
		return c.uploadDTE(ctx, token, body, ctype)
	}
	for attempt := 0; ; attempt++ {
		token, err := c.token(ctx, kind)
		if err != nil {
			return nil, err
		}
		res, authFailed, err := send(token)
		if !authFailed {
			return res, err
		}
		c.invalidate(kind, token)
		if attempt == 1 {
			return res, err
		}
	}
}

// latin1Declared checks that the envelope is declared ISO-8859-1, and
// prepends the declaration when there is none.
func latin1Declared(envelope []byte) ([]byte, error) {
	decl, err := xmltree.ParseDeclaration(envelope)
	if err != nil {
		return nil, fmt.Errorf("sii: upload: the envelope's XML declaration: %w", err)
	}
	enc := decl.Encoding
	if e, err := xmltree.EncodingOf(enc); err == nil && e == xmltree.Latin1 {
		return envelope, nil
	}
	switch enc {
	case "":
		if bytes.HasPrefix(envelope, []byte("<?xml")) {
			return nil, fmt.Errorf("sii: upload: the envelope's XML declaration names no encoding; the SII wants ISO-8859-1")
		}
		return append([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?>`+"\n"), envelope...), nil
	default:
		return nil, fmt.Errorf("sii: upload: the envelope is declared %q; the SII wants ISO-8859-1", enc)
	}
}

// uploadBody builds the multipart body in the order the SII requires.
func uploadBody(sender, company dte.RUT, envelope []byte) ([]byte, string, error) {
	return multipartBody([][2]string{
		{"rutSender", strconv.Itoa(sender.Number)}, {"dvSender", string(sender.DV)},
		{"rutCompany", strconv.Itoa(company.Number)}, {"dvCompany", string(company.DV)},
	}, "envio.xml", envelope)
}

// multipartBody writes fields in order and then file as the text/xml part
// "archivo", the shape of the SII's upload CGIs; it returns the body and
// its Content-Type.
func multipartBody(fields [][2]string, filename string, file []byte) ([]byte, string, error) {
	var buf bytes.Buffer
	buf.Grow(len(file) + 1024)
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="archivo"; filename="`+filename+`"`)
	h.Set("Content-Type", "text/xml")
	pw, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := pw.Write(file); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// uploadRequest builds the POST with the header block of the SII's upload
// manual. bytes.Reader gives the request its Content-Length, so the body
// is never sent chunked.
func (c *Client) uploadRequest(url, token string, body []byte, ctype string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sii: upload: %w", err)
	}
	req.Header.Set("Accept", "image/gif, image/x-xbitmap, image/jpeg, image/pjpeg, application/vnd.ms-powerpoint, application/ms-excel, application/msword, */*")
	req.Header.Set("Accept-Language", "es-cl")
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	if c.cfg.Referer != "" {
		req.Header.Set("Referer", c.cfg.Referer)
	}
	req.Header.Set("Connection", "Keep-Alive")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("Cookie", "TOKEN="+token)
	req.Header.Set("Content-Type", ctype)
	return req, nil
}

// uploadDTE posts to DTEUpload; authFailed reports STATUS 5.
func (c *Client) uploadDTE(ctx context.Context, token string, body []byte, ctype string) (*UploadResult, bool, error) {
	url := c.ep.Upload + PathUpload
	req, err := c.uploadRequest(url, token, body, ctype)
	if err != nil {
		return nil, false, err
	}
	res, err := c.do(ctx, "upload", req)
	if err != nil {
		return nil, false, err
	}
	if err := classify("upload", url, res); err != nil {
		return nil, false, err
	}
	r, err := parseRecepcion(res.body)
	if err != nil {
		if _, ferr := parseSOAPReturn("upload", res.status, res.header, res.body); ferr != nil {
			if te, ok := ferr.(*TransportError); ok && te.Kind == KindFault {
				te.URL = url
				return nil, false, te
			}
		}
		kind := KindMalformed
		if res.status != http.StatusOK {
			kind = KindHTTP
		}
		return nil, false, &TransportError{Op: "upload", URL: url, Kind: kind, StatusCode: res.status, Detail: err.Error()}
	}
	return r, r.Status == 5, nil
}

// parseRecepcion reads a RECEPCIONDTE answer.
func parseRecepcion(body []byte) (*UploadResult, error) {
	root, err := parseXMLLenient(body)
	if err != nil {
		return nil, fmt.Errorf("unreadable RECEPCIONDTE: %v", err)
	}
	if root.Name != "RECEPCIONDTE" {
		return nil, fmt.Errorf("root element is <%s>, not RECEPCIONDTE", root.QName)
	}
	r := &UploadResult{Raw: body}
	status := ""
	for _, k := range root.Kids {
		t := strings.TrimSpace(k.Text)
		switch k.Name {
		case "RUTSENDER":
			r.RutSender = t
		case "RUTCOMPANY":
			r.RutCompany = t
		case "FILE":
			r.File = t
		case "TIMESTAMP":
			r.Timestamp = t
		case "STATUS":
			status = t
		case "TRACKID":
			r.TrackID = t
		case "DETAIL":
			for _, e := range k.Kids {
				if e.Name == "ERROR" {
					r.Errors = append(r.Errors, strings.TrimSpace(e.Text))
				}
			}
		}
	}
	n, err := strconv.Atoi(status)
	if err != nil {
		return nil, fmt.Errorf("RECEPCIONDTE STATUS %q is not a number", status)
	}
	r.Status = n
	if n == 0 && r.TrackID == "" {
		return nil, fmt.Errorf("RECEPCIONDTE STATUS 0 without TRACKID")
	}
	return r, nil
}

// uploadBoleta posts an EnvioBOLETA to the REST API; authFailed reports
// HTTP 401.
func (c *Client) uploadBoleta(ctx context.Context, token string, body []byte, ctype string) (*UploadResult, bool, error) {
	url := c.ep.BoletaUpload + PathBoletaEnvio
	req, err := c.uploadRequest(url, token, body, ctype)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.do(ctx, "boleta.envio", req)
	if err != nil {
		return nil, false, err
	}
	if res.status == http.StatusUnauthorized {
		return nil, true, &AuthError{Op: "boleta.envio", Estado: "401", Glosa: snippet(res.body)}
	}
	if err := classify("boleta.envio", url, res); err != nil {
		return nil, false, err
	}
	if res.status != http.StatusOK {
		return nil, false, &TransportError{Op: "boleta.envio", URL: url, Kind: KindHTTP, StatusCode: res.status, Detail: snippet(res.body)}
	}
	var j struct {
		RutEmisor      flexString `json:"rut_emisor"`
		RutEnvia       flexString `json:"rut_envia"`
		TrackID        flexString `json:"trackid"`
		FechaRecepcion flexString `json:"fecha_recepcion"`
		Estado         flexString `json:"estado"`
		File           flexString `json:"file"`
	}
	if err := json.Unmarshal(res.body, &j); err != nil {
		return nil, false, &TransportError{Op: "boleta.envio", URL: url, Kind: KindMalformed, StatusCode: res.status, Detail: "unreadable JSON: " + err.Error()}
	}
	r := &UploadResult{Boleta: true, Estado: string(j.Estado), TrackID: string(j.TrackID), RutSender: string(j.RutEnvia),
		RutCompany: string(j.RutEmisor), File: string(j.File), Timestamp: string(j.FechaRecepcion), Raw: res.body, Status: -1}
	if r.Estado == "REC" && r.TrackID != "" {
		r.Status = 0
	}
	return r, false, nil
}

// flexString reads a JSON string or number (the REST API is not consistent
// about track ids) as text; null reads as "".
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(strings.TrimSpace(s))
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want a string or a number, got %s", snippet(b))
		}
		*f = flexString(n.String())
	}
	return nil
}

// flexInt reads a JSON number or numeric string; null reads as 0.
type flexInt int64

func (f *flexInt) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s == "" {
		*f = 0
		return nil
	}
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not an integer", string(s))
	}
	*f = flexInt(n)
	return nil
}
