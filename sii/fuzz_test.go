package sii

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// soapSeeds are realistic and broken SOAP answers.
var soapSeeds = []string{
	`<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><ns1:getEstUpResponse xmlns:ns1="http://DefaultNamespace"><getEstUpReturn>&lt;?xml version="1.0" encoding="UTF-8"?&gt;&lt;SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"&gt;&lt;SII:RESP_BODY&gt;&lt;TIPO_DOCTO&gt;33&lt;/TIPO_DOCTO&gt;&lt;INFORMADOS&gt;22&lt;/INFORMADOS&gt;&lt;ACEPTADOS&gt;22&lt;/ACEPTADOS&gt;&lt;RECHAZADOS&gt;0&lt;/RECHAZADOS&gt;&lt;REPAROS&gt;0&lt;/REPAROS&gt;&lt;TIPO_DOCTO&gt;61&lt;/TIPO_DOCTO&gt;&lt;INFORMADOS&gt;6&lt;/INFORMADOS&gt;&lt;ACEPTADOS&gt;3&lt;/ACEPTADOS&gt;&lt;RECHAZADOS&gt;0&lt;/RECHAZADOS&gt;&lt;REPAROS&gt;3&lt;/REPAROS&gt;&lt;/SII:RESP_BODY&gt;&lt;SII:RESP_HDR&gt;&lt;TRACKID&gt;0107418640&lt;/TRACKID&gt;&lt;ESTADO&gt;EPR&lt;/ESTADO&gt;&lt;GLOSA&gt;Envio Procesado&lt;/GLOSA&gt;&lt;NUM_ATENCION&gt;370027 ( 2026/08/04 14:20:53)&lt;/NUM_ATENCION&gt;&lt;/SII:RESP_HDR&gt;&lt;/SII:RESPUESTA&gt;</getEstUpReturn></ns1:getEstUpResponse></soapenv:Body></soapenv:Envelope>`,
	`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><ns1:getEstUpResponse xmlns:ns1="x"><ns1:getEstUpReturn><![CDATA[<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>-11</ESTADO><ERR_CODE>2</ERR_CODE></SII:RESP_HDR></SII:RESPUESTA>]]></ns1:getEstUpReturn></ns1:getEstUpResponse></soapenv:Body></soapenv:Envelope>`,
	`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>x</faultcode><faultstring>Error de Autenticacion: TOKEN invalido</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`,
	"<html><body>Servicio no disponible</body></html>",
	"Error 500",
	"",
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?><soapenv:Envelope xmlns:soapenv=\"s\"><soapenv:Body><getEstUpReturn>GLOSA \xe1</getEstUpReturn></soapenv:Body></soapenv:Envelope>",
	// A getEstDteAv answer written by hand in the shape third-party
	// clients read: RESP_BODY first, the return prefixed.
	`<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><ns1:getEstDteAvResponse xmlns:ns1="http://DefaultNamespace"><ns1:getEstDteAvReturn>&lt;?xml version="1.0" encoding="UTF-8"?&gt;&lt;SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"&gt;&lt;SII:RESP_BODY&gt;&lt;RECIBIDO&gt;SI&lt;/RECIBIDO&gt;&lt;ESTADO&gt;DOK&lt;/ESTADO&gt;&lt;GLOSA&gt;Documento Recibido por el SII. Datos Coinciden con los Registrados&lt;/GLOSA&gt;&lt;TRACKID&gt;0004823107&lt;/TRACKID&gt;&lt;NUMATENCION&gt;44120 (2026/11/23 15:02:11)&lt;/NUMATENCION&gt;&lt;/SII:RESP_BODY&gt;&lt;SII:RESP_HDR&gt;&lt;ESTADO&gt;0&lt;/ESTADO&gt;&lt;GLOSA&gt;Consulta OK&lt;/GLOSA&gt;&lt;/SII:RESP_HDR&gt;&lt;/SII:RESPUESTA&gt;</ns1:getEstDteAvReturn></ns1:getEstDteAvResponse></soapenv:Body></soapenv:Envelope>`,
}

// FuzzParseSOAP feeds arbitrary bodies to the SOAP and RESPUESTA readers
// and to getEstUp's and getEstDteAv's interpretations: never a panic, an
// error is always a *TransportError, and getEstDteAv never names an
// envelope for a document not received.
func FuzzParseSOAP(f *testing.F) {
	for _, s := range soapSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, op := range []string{"getEstUp", "getEstDteAv"} {
			inner, err := parseSOAPReturn(op, http.StatusOK, http.Header{}, body)
			if err != nil {
				if _, ok := err.(*TransportError); !ok {
					t.Fatalf("error %T is not a *TransportError: %v", err, err)
				}
				continue
			}
			r, err := parseRespuesta([]byte(inner))
			if err != nil {
				continue
			}
			if op == "getEstDteAv" {
				if s := estDteAvStatus(r); s.Envelope() != "" && !s.Recibido {
					t.Fatalf("an envelope %q named for a document not received", s.Envelope())
				}
				continue
			}
			s := estUpStatus(r, "1")
			for _, tipo := range []int{0, 33} {
				_ = EnvelopeOutcome(s, tipo)
			}
		}
	})
}

// FuzzParseRecepcion feeds arbitrary bodies to the DTEUpload answer reader.
func FuzzParseRecepcion(f *testing.F) {
	for _, s := range []string{
		"<?xml version=\"1.0\"?>\n<RECEPCIONDTE>\n<RUTSENDER>13567890-2</RUTSENDER>\n<RUTCOMPANY>76192083-9</RUTCOMPANY>\n<FILE>envio.xml</FILE>\n<TIMESTAMP>2026-11-23 12:00:00</TIMESTAMP>\n<STATUS>0</STATUS>\n<TRACKID>0000004712</TRACKID>\n</RECEPCIONDTE>",
		"<RECEPCIONDTE><STATUS>7</STATUS><DETAIL><ERROR>LSX-00265</ERROR><ERROR>LSX-00213</ERROR></DETAIL></RECEPCIONDTE>",
		"<RECEPCIONDTE><RUTSENDER>0-0</RUTSENDER><TIMESTAMP>0 0</TIMESTAMP><STATUS>5</STATUS></RECEPCIONDTE>",
		"<RECEPCIONDTE><STATUS>0</STATUS></RECEPCIONDTE>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseRecepcion(body)
		if err != nil {
			return
		}
		if r.Status == 0 && r.TrackID == "" {
			t.Fatal("STATUS 0 accepted without a track id")
		}
		_ = UploadOutcome(r)
	})
}

// FuzzBoletaJSON feeds arbitrary JSON to the flexible scalar readers the
// boleta answers use.
func FuzzBoletaJSON(f *testing.F) {
	for _, s := range []string{`{"trackid": 12345, "estado": "REC"}`, `{"trackid": "0000004712"}`, `{"trackid": null}`, `{"trackid": 1e99}`, `{"trackid": [1]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var v struct {
			T flexString `json:"trackid"`
			N flexInt    `json:"n"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return
		}
		if strings.ContainsAny(string(v.T), "\"") && !strings.Contains(s, `\"`) {
			t.Fatalf("track id %q kept JSON quotes", v.T)
		}
	})
}

// rcvSeeds are registry answers: the shapes the fake writes and
// third-party clients parse, and broken ones.
var rcvSeeds = []string{
	`<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:ingresarAceptacionReclamoDocResponse xmlns:ns2="http://ws.registroreclamodte.diii.sdi.sii.cl"><return><codResp>0</codResp><descResp>Acción Completada OK</descResp></return></ns2:ingresarAceptacionReclamoDocResponse></S:Body></S:Envelope>`,
	`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:listarEventosHistDocResponse xmlns:ns2="http://ws.registroreclamodte.diii.sdi.sii.cl"><return><codResp>15</codResp><descResp>Listado de eventos del documento</descResp><listaEventosDoc><codEvento>ACD</codEvento><descEvento>Acepta Contenido del Documento</descEvento><rutResponsable>11111111</rutResponsable><dvResponsable>1</dvResponsable><fechaEvento>29-12-2016 12:05:36</fechaEvento></listaEventosDoc><listaEventosDoc><codEvento>ERM</codEvento><fechaEvento>2016-12-29</fechaEvento></listaEventosDoc></return></ns2:listarEventosHistDocResponse></S:Body></S:Envelope>`,
	`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:consultarFechaRecepcionSiiResponse xmlns:ns2="x"><return>28-09-2026 19:02:03</return></ns2:consultarFechaRecepcionSiiResponse></S:Body></S:Envelope>`,
	`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:consultarDocDteCedibleResponse xmlns:ns2="x"><return><codResp>-1</codResp></return></ns2:consultarDocDteCedibleResponse></S:Body></S:Envelope>`,
	`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><S:Fault><faultcode>S:Server</faultcode><faultstring>Error de Autenticacion: TOKEN invalido</faultstring></S:Fault></S:Body></S:Envelope>`,
	`<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><ns2:listarEventosHistDocResponse xmlns:ns2="x"><return><codResp>1e3</codResp></return></ns2:listarEventosHistDocResponse></S:Body></S:Envelope>`,
	"<html><body>Servicio no disponible</body></html>",
}

// FuzzParseRCV feeds arbitrary bodies to the registry's readers, as each
// of its four operations: never a panic; a failure is a *TransportError
// (the envelope) or an error (the return); an answer has a code from
// -999 to 999 whose outcome is the table's, at most MaxRCVEvents events
// with bounded texts and a date only where one was written, and a
// reception date only with a date.
func FuzzParseRCV(f *testing.F) {
	for _, s := range rcvSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, op := range []string{"ingresarAceptacionReclamoDoc", "listarEventosHistDoc", "consultarDocDteCedible", "consultarFechaRecepcionSii"} {
			ret, err := parseRCVReturn(op, http.StatusOK, http.Header{}, body)
			if err != nil {
				if _, ok := err.(*TransportError); !ok {
					t.Fatalf("%s: error %T is not a *TransportError: %v", op, err, err)
				}
				continue
			}
			if op == "consultarFechaRecepcionSii" {
				r, err := readRCVReception(ret)
				if err == nil && r.Received == r.At.IsZero() {
					t.Fatalf("reception %+v: Received disagrees with the date", r)
				}
				continue
			}
			a, events, err := readRCVReturn(op, ret)
			if err != nil {
				continue
			}
			entry, _ := LookupRCVCode(a.Code)
			if a.Code < -999 || a.Code > 999 || a.Outcome != entry.Outcome || len(events) > MaxRCVEvents {
				t.Fatalf("%s: answer %+v with %d events", op, a, len(events))
			}
			for _, e := range events {
				if len(e.Desc) > maxRCVText || len(e.AtText) > maxRCVText || (!e.At.IsZero() && e.AtText == "") {
					t.Fatalf("%s: event %+v", op, e)
				}
			}
		}
	})
}

// FuzzParseRecepcionAEC feeds arbitrary bodies to the registry's upload
// answer reader: never a panic, STATUS 0 only with a track id of 1 to 10
// digits, echoed fields bounded, and an outcome for every answer.
func FuzzParseRecepcionAEC(f *testing.F) {
	for _, s := range []string{recepcionAECOK, recepcionAECAuth,
		"<RECEPCIONAEC><STATUS>0</STATUS></RECEPCIONAEC>",
		"<RECEPCIONAEC><STATUS>6</STATUS><TRACKID>0000000001</TRACKID></RECEPCIONAEC>",
		"<RECEPCIONAEC><TIMESTAMP>31-02-2026 25:00:00</TIMESTAMP><STATUS>0</STATUS><TRACKID>1</TRACKID></RECEPCIONAEC>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := parseRecepcionAEC(body)
		if err != nil {
			return
		}
		if r.Status == 0 && !isTrackID(r.TrackID) {
			t.Fatalf("STATUS 0 with track id %q", r.TrackID)
		}
		if len(r.RUTSender) > maxRTCText || len(r.File) > maxRTCText || len(r.TrackID) > maxRTCText {
			t.Fatalf("unbounded field in %+v", r)
		}
		if o := AECUploadOutcome(r); o.Code == "" || o.Message == "" {
			t.Fatalf("outcome %+v", o)
		}
	})
}

// FuzzParseRPETC feeds arbitrary bodies to the wsRPETCConsulta readers, as
// each of its three methods: never a panic, a failure is a
// *TransportError, texts are bounded, and a holder is a RUT.
func FuzzParseRPETC(f *testing.F) {
	for _, s := range []string{rtcSOAP("getEstEnvio", estEnvioEOK), rtcSOAP("getEstCesion", estCesionHolder),
		rtcSOAP("getEstCesionRelac", estCesionNone), soapSeeds[2], soapSeeds[3],
		rtcSOAP("getEstCesion", `<RESPUESTA><RESP_BODY><RUT_TENEDOR>123</RUT_TENEDOR><FECHA_ULT_ANOT>2026-02-30 00:00:00</FECHA_ULT_ANOT></RESP_BODY><RESP_HDR><ESTADO>0</ESTADO></RESP_HDR></RESPUESTA>`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, op := range []string{"getEstEnvio", "getEstCesion", "getEstCesionRelac"} {
			ret, err := parseSOAPReturn(op, http.StatusOK, http.Header{}, body)
			if err != nil {
				if _, ok := err.(*TransportError); !ok {
					t.Fatalf("%s: error %T is not a *TransportError: %v", op, err, err)
				}
				continue
			}
			r, err := parseRespuesta([]byte(ret))
			if err != nil {
				continue
			}
			h, err := rtcHeader(r)
			if err != nil {
				continue
			}
			if len(h.Glosa) > maxRTCText {
				t.Fatalf("%s: glosa of %d bytes", op, len(h.Glosa))
			}
			if op == "getEstEnvio" {
				s := aecStatus(r, h, "1")
				if len(s.Estado) > maxRTCCode || len(s.Descripcion) > maxRTCText {
					t.Fatalf("unbounded status %+v", s)
				}
				if o := AECStatusOutcome(s); o.Code == "" || o.Message == "" {
					t.Fatalf("outcome %+v", o)
				}
				continue
			}
			s, err := cesionStatus(op, "u", r, h)
			if err != nil {
				if _, ok := err.(*TransportError); !ok {
					t.Fatalf("%s: error %T", op, err)
				}
				continue
			}
			if s.RutTenedor != "" {
				if _, err := registryRUT(s.RutTenedor); err != nil {
					t.Fatalf("%s: holder %q", op, s.RutTenedor)
				}
			}
			if len(s.DirCobranza) > maxRTCText || len(s.DecJurada) > maxRTCCode {
				t.Fatalf("%s: unbounded %+v", op, s)
			}
		}
	})
}
