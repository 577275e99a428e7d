package sii

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParseEstUpCapture reads a getEstUp answer shaped like the capture in
// the protocol notes: RESP_BODY before RESP_HDR, one flat group per type,
// a zero-padded track id.
func TestParseEstUpCapture(t *testing.T) {
	inner, err := parseSOAPReturn("getEstUp", http.StatusOK, http.Header{}, []byte(soapSeeds[0]))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseRespuesta([]byte(inner))
	if err != nil {
		t.Fatal(err)
	}
	s := estUpStatus(r, "")
	if s.TrackID != "0107418640" || s.Estado != "EPR" || s.NumAtencion != "370027 ( 2026/08/04 14:20:53)" {
		t.Errorf("header %+v", s)
	}
	want := []TypeCounts{{Tipo: 33, Informados: 22, Aceptados: 22}, {Tipo: 61, Informados: 6, Aceptados: 3, Reparos: 3}}
	if len(s.Counts) != 2 || s.Counts[0] != want[0] || s.Counts[1] != want[1] {
		t.Errorf("counts %+v, want %+v", s.Counts, want)
	}
	if o := EnvelopeOutcome(s, 61); o.Estado != "con_reparos" {
		t.Errorf("61: %+v", o)
	}
	if o := EnvelopeOutcome(s, 33); o.Estado != "aceptado" {
		t.Errorf("33: %+v", o)
	}
	if o := EnvelopeOutcome(s, 0); o.Estado != "con_reparos" {
		t.Errorf("all: %+v", o)
	}
}

// TestParseQuirks: a CDATA return with a prefix, a token fault, and
// Latin-1 bytes under a UTF-8 declaration.
func TestParseQuirks(t *testing.T) {
	inner, err := parseSOAPReturn("getEstUp", http.StatusOK, nil, []byte(soapSeeds[1]))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseRespuesta([]byte(inner))
	if err != nil || r.Hdr["ESTADO"] != "-11" || r.Hdr["ERR_CODE"] != "2" {
		t.Errorf("CDATA: %+v %v", r, err)
	}
	_, err = parseSOAPReturn("getEstUp", http.StatusInternalServerError, nil, []byte(soapSeeds[2]))
	if !isTokenFault(err) {
		t.Errorf("token fault: %v", err)
	}
	inner, err = parseSOAPReturn("getEstUp", http.StatusOK, nil, []byte(soapSeeds[6]))
	if err != nil || inner != "GLOSA á" {
		t.Errorf("Latin-1 under a UTF-8 declaration: %q %v", inner, err)
	}
	for i, kind := range map[int]TransportKind{3: KindHTML, 4: KindError500, 5: KindEmpty} {
		_, err := parseSOAPReturn("getEstUp", http.StatusOK, nil, []byte(soapSeeds[i]))
		if te, ok := err.(*TransportError); !ok || te.Kind != kind {
			t.Errorf("seed %d: %v, want %s", i, err, kind)
		}
	}
}

// TestParseEstDteAv reads a hand-written getEstDteAv answer (the shape
// third-party clients parse; RESP_BODY first, the return prefixed): the
// track id stays zero-padded, and a refused token or RECIBIDO NO names no
// envelope.
func TestParseEstDteAv(t *testing.T) {
	inner, err := parseSOAPReturn("getEstDteAv", http.StatusOK, http.Header{}, []byte(soapSeeds[len(soapSeeds)-1]))
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseRespuesta([]byte(inner))
	if err != nil {
		t.Fatal(err)
	}
	s := estDteAvStatus(r)
	want := AdvancedStatus{HdrEstado: "0", HdrGlosa: "Consulta OK", Recibido: true, Estado: "DOK",
		Glosa: "Documento Recibido por el SII. Datos Coinciden con los Registrados", TrackID: "0004823107",
		NumAtencion: "44120 (2026/11/23 15:02:11)"}
	s.Raw = nil
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("got %+v\nwant %+v", *s, want)
	}
	if s.Envelope() != "0004823107" {
		t.Errorf("Envelope() = %q", s.Envelope())
	}
	for _, doc := range []string{
		`<SII:RESPUESTA xmlns:SII="x"><SII:RESP_HDR><ESTADO>0</ESTADO></SII:RESP_HDR><SII:RESP_BODY><RECIBIDO>NO</RECIBIDO><ESTADO>FAU</ESTADO><TRACKID>0000000001</TRACKID></SII:RESP_BODY></SII:RESPUESTA>`,
		`<SII:RESPUESTA xmlns:SII="x"><SII:RESP_HDR><ESTADO>002</ESTADO></SII:RESP_HDR><SII:RESP_BODY><RECIBIDO>SI</RECIBIDO><TRACKID>0000000001</TRACKID></SII:RESP_BODY></SII:RESPUESTA>`,
	} {
		r, err := parseRespuesta([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if e := estDteAvStatus(r).Envelope(); e != "" {
			t.Errorf("%s: Envelope() = %q, want none", doc, e)
		}
	}
}

// TestRCVRequestShape: a registry call is document/literal, as the
// third-party clients that read the WSDL write it: the operation element
// in RCVNamespace, the parts unqualified, without xsi:type, in the WSDL's
// order (rutEmisor, dvEmisor upper-case, tipoDoc, folio, accionDoc).
func TestRCVRequestShape(t *testing.T) {
	params, err := RCVDocument{RutEmisor: "96874030-k", Tipo: 33, Folio: 1001}.params("ingresarAceptacionReclamoDoc")
	if err != nil {
		t.Fatal(err)
	}
	got := string(soapEnvelope(rcvLiteral, "ingresarAceptacionReclamoDoc", append(params, soapParam{"accionDoc", "ACD"})...))
	want := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
		`<soapenv:Body><ns1:ingresarAceptacionReclamoDoc xmlns:ns1="http://ws.registroreclamodte.diii.sdi.sii.cl">` +
		`<rutEmisor>96874030</rutEmisor><dvEmisor>K</dvEmisor><tipoDoc>33</tipoDoc><folio>1001</folio><accionDoc>ACD</accionDoc>` +
		`</ns1:ingresarAceptacionReclamoDoc></soapenv:Body></soapenv:Envelope>`
	if got != want {
		t.Errorf("request\n%s\nwant\n%s", got, want)
	}
}

// TestParseRCVAnswers reads hand-written registry answers in the shape
// third-party clients parse: a listing whose second event has a date that
// is not one (kept as written, no instant), a bare reception date, a
// codResp that is not a number, too many events, and a fault.
func TestParseRCVAnswers(t *testing.T) {
	ret, err := parseRCVReturn("listarEventosHistDoc", http.StatusOK, nil, []byte(rcvSeeds[1]))
	if err != nil {
		t.Fatal(err)
	}
	a, events, err := readRCVReturn("listarEventosHistDoc", ret)
	if err != nil || a.Code != 15 || a.Outcome != RCVEventsListed || len(events) != 2 {
		t.Fatalf("%+v %+v %v", a, events, err)
	}
	santiago := time.FixedZone("CLST", -3*3600) // Chile's summer time on 2016-12-29
	if e := events[0]; e.Action != RCVAccept || e.RutResponsable != "11111111-1" || !e.At.Equal(time.Date(2016, 12, 29, 12, 5, 36, 0, santiago)) {
		t.Errorf("event 0: %+v", e)
	}
	if e := events[1]; e.Action != RCVReceipt || !e.At.IsZero() || e.AtText != "2016-12-29" || e.RutResponsable != "" {
		t.Errorf("event 1: %+v", e)
	}
	ret, err = parseRCVReturn("consultarFechaRecepcionSii", http.StatusOK, nil, []byte(rcvSeeds[2]))
	if err != nil {
		t.Fatal(err)
	}
	r, err := readRCVReception(ret)
	if err != nil || !r.Received || !r.At.Equal(time.Date(2026, 9, 28, 19, 2, 3, 0, santiago)) ||
		!r.WindowEnds().Equal(time.Date(2026, 10, 6, 19, 2, 3, 0, santiago)) {
		t.Errorf("reception %+v %v", r, err)
	}
	ret, err = parseRCVReturn("listarEventosHistDoc", http.StatusOK, nil, []byte(rcvSeeds[5]))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := readRCVReturn("listarEventosHistDoc", ret); err == nil || !strings.Contains(err.Error(), "codResp") {
		t.Errorf("codResp 1e3: %v", err)
	}
	many := `<S:Envelope xmlns:S="s"><S:Body><x:listarEventosHistDocResponse xmlns:x="x"><return><codResp>15</codResp>` +
		strings.Repeat(`<listaEventosDoc><codEvento>ACD</codEvento></listaEventosDoc>`, MaxRCVEvents+1) +
		`</return></x:listarEventosHistDocResponse></S:Body></S:Envelope>`
	if ret, err = parseRCVReturn("listarEventosHistDoc", http.StatusOK, nil, []byte(many)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readRCVReturn("listarEventosHistDoc", ret); err == nil {
		t.Errorf("%d events read", MaxRCVEvents+1)
	}
	_, err = parseRCVReturn("listarEventosHistDoc", http.StatusInternalServerError, nil, []byte(rcvSeeds[4]))
	if !isTokenFault(err) {
		t.Errorf("token fault: %v", err)
	}
	if _, err := parseRCVReturn("consultarDocDteCedible", http.StatusOK, nil, []byte(rcvSeeds[0])); err == nil {
		t.Error("an answer to another operation read as consultarDocDteCedible's")
	}
}
