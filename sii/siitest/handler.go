package siitest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dtekit/dtekit/internal/xmlflat"
	"github.com/dtekit/dtekit/sii"
)

// maxSOAPRequest bounds a SOAP request body (a signed seed is ~3 kB).
const maxSOAPRequest = 1 << 20

// Handler returns the fake's HTTP handler, serving every service on its
// SII path.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(sii.PathSeed, f.soap(Seed, f.getSeed))
	mux.HandleFunc(sii.PathToken, f.soap(Token, f.getToken))
	mux.HandleFunc(sii.PathEstUp, f.soap(EstUp, f.getEstUp))
	mux.HandleFunc(sii.PathEstDte, f.soap(EstDte, f.getEstDte))
	mux.HandleFunc(sii.PathEstDteAv, f.soap(EstDteAv, f.getEstDteAv))
	mux.HandleFunc(sii.PathUpload, f.serveUpload)
	mux.HandleFunc(sii.PathRCV, f.serveRCV)
	mux.HandleFunc(sii.PathRCVCert, f.serveRCV)
	mux.HandleFunc(sii.PathRTCUpload, f.serveRTCUpload)
	mux.HandleFunc(sii.PathRPETC, f.serveRPETC)
	mux.HandleFunc("GET "+sii.PathBoletaSeed, f.serveBoletaSeed)
	mux.HandleFunc("POST "+sii.PathBoletaToken, f.serveBoletaToken)
	mux.HandleFunc("POST "+sii.PathBoletaEnvio, f.serveBoletaUpload)
	mux.HandleFunc("GET "+sii.PathBoletaEnvio+"/{id}", f.serveBoletaStatus)
	mux.HandleFunc("GET "+sii.PathBoletaDTE+"/{id}/estado", f.serveBoletaDTE)
	return mux
}

// begin records a request and applies the next fault queued for ep. It
// returns the record's index and, when the fault already answered, done.
// A FaultAcceptThenHang is returned for the handler to apply after its
// work.
func (f *Fake) begin(ep Endpoint, w http.ResponseWriter, r *http.Request, fields []string, token string) (idx int, fault Fault, done bool) {
	idx = f.record(Request{Endpoint: ep, Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(),
		ContentLength: r.ContentLength, Chunked: len(r.TransferEncoding) > 0, Fields: fields, Token: token, At: f.now()})
	fault, ok := f.nextFault(ep)
	if !ok {
		return idx, Fault{}, false
	}
	switch fault.Kind {
	case FaultError500:
		f.result(idx, "fault error500")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "Error 500")
		return idx, fault, true
	case FaultHTML503, FaultHTML200:
		f.result(idx, "fault html")
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		code := http.StatusServiceUnavailable
		if fault.Kind == FaultHTML200 {
			code = http.StatusOK
		}
		w.WriteHeader(code)
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Servicio no disponible</title></head><body><h1>El servicio no se encuentra disponible</h1><p>Intente m\xe1s tarde.</p></body></html>")
		return idx, fault, true
	case FaultSOAP:
		f.result(idx, "fault soap")
		msg := fault.Code
		if msg == "" {
			msg = "java.lang.NullPointerException"
		}
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>soapenv:Server.userException</faultcode><faultstring>`)
		xmlflat.EscapeText(&b, msg)
		b.WriteString(`</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`)
		io.WriteString(w, b.String())
		return idx, fault, true
	case FaultReset:
		f.result(idx, "fault reset")
		reset(w)
		return idx, fault, true
	case FaultHang:
		f.result(idx, "fault hang")
		hang(r.Context())
		reset(w)
		return idx, fault, true
	case FaultLate:
		f.late.Add(int64(fault.Late))
		return idx, Fault{}, false
	case FaultPlainText:
		f.result(idx, "fault text")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, fault.Code)
		return idx, fault, true
	}
	return idx, fault, false
}

// hang waits until the client goes away (or a minute, so a forgotten
// client cannot hold a test forever).
func hang(ctx context.Context) {
	t := time.NewTimer(time.Minute)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// reset closes the connection without a response.
func reset(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// soapCall is a parsed SOAP request: the operation's parts by name.
type soapCall map[string]string

// soapHandler handles one SOAP operation, returning the RESPUESTA's header
// fields (in order, as name/value pairs) and body XML.
type soapHandler func(call soapCall, idx int, fault Fault) (hdr [][2]string, body string)

// soap wraps an operation: it reads the request, applies faults, and
// writes the answer in the SII's SOAP form.
func (f *Fake) soap(ep Endpoint, h soapHandler) http.HandlerFunc {
	op := string(ep)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Has("WSDL") || r.URL.RawQuery == "wsdl" {
			f.wsdl(w, r, op)
			return
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSOAPRequest))
		call, perr := parseSOAPRequest(data, op)
		idx, fault, done := f.begin(ep, w, r, nil, call["Token"])
		if done {
			return
		}
		if err != nil || perr != nil {
			f.result(idx, "fault bad request")
			f.writeFault(w, fmt.Sprintf("bad request: %v", errors.Join(err, perr)))
			return
		}
		hdr, body := h(call, idx, fault)
		for _, kv := range hdr {
			if kv[0] == "ESTADO" {
				f.mu.Lock()
				if f.requests[idx].Result == "" {
					f.requests[idx].Result = "ESTADO " + kv[1]
				}
				f.mu.Unlock()
			}
		}
		f.reply(w, r, fault, f.soapResponse(op, respuesta(hdr, body)))
	}
}

// reply writes a SOAP answer, or, under FaultAcceptThenHang, keeps the
// client waiting and then drops the connection.
func (f *Fake) reply(w http.ResponseWriter, r *http.Request, fault Fault, out []byte) {
	if fault.Kind == FaultAcceptThenHang {
		hang(r.Context())
		reset(w)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.Write(out)
}

// parseSOAPRequest reads an RPC SOAP request and returns its parts.
func parseSOAPRequest(data []byte, op string) (soapCall, error) {
	root, err := xmlflat.ParseDocument(data)
	if err != nil {
		return soapCall{}, err
	}
	var opEl *xmlflat.Node
	for _, b := range root.Kids {
		if b.Name == "Body" {
			for _, k := range b.Kids {
				if k.Name == op {
					opEl = k
				}
			}
		}
	}
	if root.Name != "Envelope" || opEl == nil {
		return soapCall{}, fmt.Errorf("not a SOAP call of %s", op)
	}
	call := soapCall{}
	for _, k := range opEl.Kids {
		call[k.Name] = k.Text
	}
	return call, nil
}

func (f *Fake) writeFault(w http.ResponseWriter, msg string) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault><faultcode>soapenv:Server.userException</faultcode><faultstring>`)
	xmlflat.EscapeText(&b, msg)
	b.WriteString(`</faultstring></soapenv:Fault></soapenv:Body></soapenv:Envelope>`)
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	io.WriteString(w, b.String())
}

// respuesta writes an SII:RESPUESTA document, RESP_BODY first (as the
// SII's own examples do) when there is one.
func respuesta(hdr [][2]string, body string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema">`)
	if body != "" {
		b.WriteString(`<SII:RESP_BODY>` + body + `</SII:RESP_BODY>`)
	}
	b.WriteString(`<SII:RESP_HDR>`)
	for _, kv := range hdr {
		b.WriteString(`<SII:` + kv[0] + `>`)
		xmlflat.EscapeText(&b, kv[1])
		b.WriteString(`</SII:` + kv[0] + `>`)
	}
	b.WriteString(`</SII:RESP_HDR></SII:RESPUESTA>`)
	return b.String()
}

// soapResponse wraps an inner document in the Axis RPC response, escaped
// (or in CDATA), per the quirks.
func (f *Fake) soapResponse(op, inner string) []byte {
	q := f.opts.Quirks
	ret := op + "Return"
	if q.PrefixedReturn {
		ret = "ns1:" + ret
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>` + "\n")
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`)
	b.WriteString(`<soapenv:Body><ns1:` + op + `Response soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="http://DefaultNamespace">`)
	b.WriteString(`<` + ret + ` xsi:type="xsd:string">`)
	if q.CDATA {
		b.WriteString("<![CDATA[" + inner + "]]>")
	} else {
		xmlflat.EscapeText(&b, inner)
	}
	b.WriteString(`</` + ret + `></ns1:` + op + `Response></soapenv:Body></soapenv:Envelope>`)
	return f.encode(b.String())
}

// encode returns a SOAP answer's bytes: UTF-8, or ISO-8859-1 under the
// UTF-8 declaration with Quirks.Latin1.
func (f *Fake) encode(s string) []byte {
	if f.opts.Quirks.Latin1 {
		if l1, err := xmlflat.ToLatin1(s); err == nil {
			return l1
		}
	}
	return []byte(s)
}

// wsdl serves a minimal WSDL whose service address points back at the
// fake.
func (f *Fake) wsdl(w http.ResponseWriter, r *http.Request, op string) {
	addr := "http://" + r.Host + r.URL.Path
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions targetNamespace="http://DefaultNamespace" xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:wsdlsoap="http://schemas.xmlsoap.org/wsdl/soap/">
<wsdl:service name="%[1]sService"><wsdl:port name="%[1]sPort" binding="impl:%[1]sSoapBinding"><wsdlsoap:address location="%[2]s"/></wsdl:port></wsdl:service>
</wsdl:definitions>
`, op, addr)
}

// numAtencion formats the attention number as the SII does.
func (f *Fake) numAtencion(idx int) string {
	return fmt.Sprintf("%d ( %s)", 370000+idx, f.now().Format("2006/01/02 15:04:05"))
}
