package sii

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/chile"
)

// rtcSOAP wraps an inner RESPUESTA the way the Axis services return it:
// escaped inside <opReturn>.
func rtcSOAP(op, inner string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><ns1:` + op + `Response xmlns:ns1="http://DefaultNamespace"><` + op + `Return>`)
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	b.WriteString(r.Replace(inner))
	b.WriteString(`</` + op + `Return></ns1:` + op + `Response></soapenv:Body></soapenv:Envelope>`)
	return b.String()
}

// Hand-written answers in the shapes of sii-cesion-notes.md §5 and §6.
const (
	recepcionAECOK   = "<?xml version=\"1.0\"?>\n<RECEPCIONAEC>\n<RUTSENDER>13567890-2</RUTSENDER>\n<RUTCOMPANY>76192083-9</RUTCOMPANY>\n<FILE>aec.xml</FILE>\n<TIMESTAMP>29-11-2026 10:15:42</TIMESTAMP>\n<STATUS>0</STATUS>\n<TRACKID>0000038936</TRACKID>\n</RECEPCIONAEC>"
	recepcionAECAuth = "<RECEPCIONAEC><RUTSENDER>-</RUTSENDER><RUTCOMPANY>76192083-9</RUTCOMPANY><FILE>aec.xml</FILE><TIMESTAMP>29-11-2026 10:15:42</TIMESTAMP><STATUS>5</STATUS></RECEPCIONAEC>"
	estEnvioEOK      = `<?xml version="1.0" encoding="UTF-8"?><SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>0</ESTADO><GLOSA>Informacion Entregada</GLOSA></SII:RESP_HDR><SII:RESP_BODY><TRACKID>38936</TRACKID><ESTADO_ENVIO>EOK</ESTADO_ENVIO><DESC_ESTADO>Envio Aceptado</DESC_ESTADO></SII:RESP_BODY></SII:RESPUESTA>`
	estCesionHolder  = `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY><RUT_TENEDOR>76086428-5</RUT_TENEDOR><FECHA_ULT_ANOT>2026-11-29 10:20:00</FECHA_ULT_ANOT><DEC_JURADA>EXISTE</DEC_JURADA></SII:RESP_BODY><SII:RESP_HDR><ESTADO>0</ESTADO><GLOSA>Documento Cedido</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`
	estCesionNone    = `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>2</ESTADO><GLOSA>No se encontro informacion</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`
)

// readRTC parses a SOAP answer of op down to the RESPUESTA and header.
func readRTC(t *testing.T, op, inner string) (*respuesta, RTCHeader) {
	t.Helper()
	ret, err := parseSOAPReturn(op, http.StatusOK, http.Header{}, []byte(rtcSOAP(op, inner)))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseRespuesta([]byte(ret))
	if err != nil {
		t.Fatal(err)
	}
	h, err := rtcHeader(r)
	if err != nil {
		t.Fatal(err)
	}
	return r, h
}

func TestParseRecepcionAEC(t *testing.T) {
	t.Parallel()
	r, err := parseRecepcionAEC([]byte(recepcionAECOK))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 29, 10, 15, 42, 0, chile.Location())
	if !r.Accepted() || r.TrackID != "0000038936" || r.RUTSender != "13567890-2" || r.RUTCompany != "76192083-9" || r.File != "aec.xml" || !r.Timestamp.Equal(want) {
		t.Errorf("STATUS 0: %+v", r)
	}
	if o := AECUploadOutcome(r); o.Kind != CesionPending || o.Code != "UPLOAD-0" {
		t.Errorf("STATUS 0 outcome %+v", o)
	}
	r, err = parseRecepcionAEC([]byte(recepcionAECAuth))
	if err != nil || r.Accepted() || r.Status != 5 || r.RUTSender != "-" {
		t.Fatalf("STATUS 5: %+v %v", r, err)
	}
	if o := AECUploadOutcome(r); o.Kind != CesionFailure || o.Code != "UPLOAD-5" {
		t.Errorf("STATUS 5 outcome %+v", o)
	}
	for _, bad := range []string{
		"<RECEPCIONAEC><STATUS>0</STATUS></RECEPCIONAEC>",                               // no track
		"<RECEPCIONAEC><STATUS>0</STATUS><TRACKID>12345678901</TRACKID></RECEPCIONAEC>", // 11 digits
		"<RECEPCIONAEC><STATUS>0</STATUS><TRACKID>12a</TRACKID></RECEPCIONAEC>",
		"<RECEPCIONAEC><STATUS>cero</STATUS></RECEPCIONAEC>",
		"<RECEPCIONDTE><STATUS>0</STATUS><TRACKID>1</TRACKID></RECEPCIONDTE>",
		"<RECEPCIONAEC><STATUS>0",
	} {
		if r, err := parseRecepcionAEC([]byte(bad)); err == nil {
			t.Errorf("%s: read as %+v", bad, r)
		}
	}
	// A received upload keeps its track id even with an odd timestamp.
	r, err = parseRecepcionAEC([]byte("<RECEPCIONAEC><TIMESTAMP>2026-11-29 10:15:42</TIMESTAMP><STATUS>0</STATUS><TRACKID>7</TRACKID></RECEPCIONAEC>"))
	if err != nil || r.TrackID != "7" || !r.Timestamp.IsZero() {
		t.Errorf("odd timestamp: %+v %v", r, err)
	}
}

func TestParseEstEnvio(t *testing.T) {
	t.Parallel()
	r, h := readRTC(t, "getEstEnvio", estEnvioEOK)
	s := aecStatus(r, h, "0000038936")
	if s.TrackID != "38936" || s.Estado != "EOK" || s.Descripcion != "Envio Aceptado" || s.Header != (RTCHeader{0, "Informacion Entregada"}) {
		t.Errorf("%+v", s)
	}
	if o := AECStatusOutcome(s); o.Kind != CesionAccepted || o.Code != "EOK" {
		t.Errorf("outcome %+v", o)
	}
	r, h = readRTC(t, "getEstEnvio", `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>-15</ESTADO><GLOSA>x</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`)
	s = aecStatus(r, h, "12")
	if s.TrackID != "12" || s.Header.Estado != -15 {
		t.Errorf("%+v", s)
	}
	if o := AECStatusOutcome(s); o.Kind != CesionFailure || o.Code != "HDR--15" {
		t.Errorf("outcome %+v", o)
	}
	for _, bad := range []string{"", "A", "0x1", "99999"} {
		r, err := parseRespuesta([]byte(`<RESPUESTA><RESP_HDR><ESTADO>` + bad + `</ESTADO></RESP_HDR></RESPUESTA>`))
		if err != nil {
			t.Fatal(err)
		}
		if h, err := rtcHeader(r); err == nil {
			t.Errorf("ESTADO %q read as %+v", bad, h)
		}
	}
}

func TestParseEstCesion(t *testing.T) {
	t.Parallel()
	r, h := readRTC(t, "getEstCesion", estCesionHolder)
	s, err := cesionStatus("getEstCesion", "u", r, h)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 29, 10, 20, 0, 0, chile.Location())
	if !s.Cedido || s.RutTenedor != "76086428-5" || !s.FechaUltAnot.Equal(want) || s.DecJurada != "EXISTE" || s.RutCobranza != "" {
		t.Errorf("%+v", s)
	}
	// Header only: ceded or not by ESTADO.
	r, h = readRTC(t, "getEstCesion", `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>0</ESTADO><GLOSA>Documento Cedido</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`)
	if s, err := cesionStatus("getEstCesion", "u", r, h); err != nil || !s.Cedido || s.RutTenedor != "" || !s.FechaUltAnot.IsZero() {
		t.Errorf("header only: %+v %v", s, err)
	}
	r, h = readRTC(t, "getEstCesion", estCesionNone)
	if s, err := cesionStatus("getEstCesion", "u", r, h); err != nil || s.Cedido || s.Header.Estado != 2 {
		t.Errorf("not found: %+v %v", s, err)
	}
	// A holder the client cannot read is malformed, never "no holder".
	for _, body := range []string{"<RUT_TENEDOR>76086428-4</RUT_TENEDOR>", "<RUT_TENEDOR>dueño</RUT_TENEDOR>", "<FECHA_ULT_ANOT>29-11-2026 10:20:00</FECHA_ULT_ANOT>"} {
		r, h = readRTC(t, "getEstCesion", `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY>`+body+`</SII:RESP_BODY><SII:RESP_HDR><ESTADO>0</ESTADO></SII:RESP_HDR></SII:RESPUESTA>`)
		_, err := cesionStatus("getEstCesion", "u", r, h)
		if te, ok := err.(*TransportError); !ok || te.Kind != KindMalformed {
			t.Errorf("%s: %v, want a malformed answer", body, err)
		}
	}
}

// TestCesionOutcomes checks each table row against the notes' kinds
// (sii-cesion-notes.md §5 and §6), written out here, not read from the
// table under test.
func TestCesionOutcomes(t *testing.T) {
	t.Parallel()
	upload := map[int]CesionKind{0: CesionPending, 1: CesionRejected, 2: CesionRejected, 3: CesionFailure, 4: CesionRejected,
		5: CesionFailure, 6: CesionRejected, 7: CesionFailure, 8: CesionFailure, 9: CesionFailure, 10: CesionFailure, 42: CesionFailure}
	for st, k := range upload {
		r := &AECUploadResult{Status: st}
		if st == 0 {
			r.TrackID = "1"
		}
		if o := AECUploadOutcome(r); o.Kind != k || o.Message == "" || !strings.HasPrefix(o.Code, "UPLOAD-") {
			t.Errorf("STATUS %d: %+v, want %s", st, o, k)
		}
	}
	if o := AECUploadOutcome(&AECUploadResult{Status: 0}); o.Kind != CesionFailure {
		t.Errorf("STATUS 0 without a track: %+v", o)
	}
	envio := map[string]CesionKind{"UPL": CesionPending, "RCP": CesionPending, "SOK": CesionPending, "FSO": CesionPending,
		"COK": CesionPending, "VDC": CesionPending, "VCS": CesionPending, "EOK": CesionAccepted,
		"RSC": CesionRejected, "RFS": CesionRejected, "RCR": CesionRejected, "RDC": CesionRejected, "RCS": CesionRejected, "EAN": CesionRejected,
		"XYZ": CesionFailure}
	for e, k := range envio {
		o := AECStatusOutcome(&AECStatus{Estado: e, Descripcion: "texto del SII"})
		if o.Kind != k || o.Code != e || o.Message == "" {
			t.Errorf("%s: %+v, want %s", e, o, k)
		}
	}
	for _, h := range []int{1, 2, 3, 4, 5, 6, 9, 10, -15, 77} {
		if o := AECStatusOutcome(&AECStatus{Estado: "EOK", Header: RTCHeader{Estado: h}}); o.Kind != CesionFailure || !strings.HasPrefix(o.Code, "HDR-") {
			t.Errorf("RESP_HDR %d: %+v", h, o)
		}
	}
	if len(CesionCodes()) != 8+14+11 {
		t.Errorf("%d rows", len(CesionCodes()))
	}
	for _, c := range CesionCodes() {
		if c.Source == "" || c.Message == "" {
			t.Errorf("row %+v", c)
		}
	}
}

func TestAECUploadBodyOrder(t *testing.T) {
	t.Parallel()
	body, ctype, err := aecUploadBody("cesiones@example.cl", mustRUT(t, "76192083-9"), []byte("<AEC/>"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ctype, "multipart/form-data; boundary=") {
		t.Errorf("content type %q", ctype)
	}
	s := string(body)
	last := -1
	for _, want := range []string{`name="emailNotif"`, "cesiones@example.cl", `name="rutCompany"`, "76192083", `name="dvCompany"`, "\r\n\r\n9\r\n", `name="archivo"`, "Content-Type: text/xml", "<AEC/>"} {
		i := strings.Index(s, want)
		if i <= last {
			t.Fatalf("%q at %d, after %d: %s", want, i, last, s)
		}
		last = i
	}
	for _, bad := range []string{"", "a@b", "finanzas@empresa", "a@[10.0.0.1]", "sin-arroba.cl", "a@b.cl\r\nBcc: x@y.cl", "a b@c.cl", "a@@b.cl", strings.Repeat("a", 80) + "@b.cl"} {
		if checkEmail(bad) == nil {
			t.Errorf("e-mail %q accepted", bad)
		}
	}
}

func mustRUT(t *testing.T, s string) dte.RUT {
	t.Helper()
	r, err := dte.ParseRUT(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
