package sii

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/dtekit/dtekit/internal/xmlflat"
)

// soapParam is one part of a SOAP call.
type soapParam struct{ name, value string }

// soapDialect is how a family of services wants its calls written.
type soapDialect struct {
	// ns is the operation element's namespace.
	ns string
	// encoded writes the Axis RPC/encoded form: an encodingStyle on the
	// operation and an xsi:type on each part. Without it the parts are
	// plain unqualified elements (document/literal).
	encoded bool
}

// The two dialects the SII's services speak.
var (
	// axisRPC is the classic Axis services' (CrSeed, GetTokenFromSeed,
	// QueryEstUp, QueryEstDte, QueryEstDteAv).
	axisRPC = soapDialect{ns: "http://DefaultNamespace", encoded: true}
	// rcvLiteral is the RCV registry's (registroreclamodteservice): the
	// operation in RCVNamespace, the parts unqualified.
	rcvLiteral = soapDialect{ns: RCVNamespace}
)

// soapEnvelope builds a request in dialect d: the operation element in its
// namespace, one child per part in order, values escaped.
func soapEnvelope(d soapDialect, op string, params ...soapParam) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"` +
		` xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`)
	b.WriteString(`<soapenv:Body><ns1:` + op + ` xmlns:ns1="` + d.ns + `"`)
	if d.encoded {
		b.WriteString(` soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"`)
	}
	b.WriteString(`>`)
	for _, p := range params {
		b.WriteString(`<` + p.name)
		if d.encoded {
			b.WriteString(` xsi:type="xsd:string"`)
		}
		b.WriteString(`>`)
		xmlflat.EscapeText(&b, p.value)
		b.WriteString(`</` + p.name + `>`)
	}
	b.WriteString(`</ns1:` + op + `></soapenv:Body></soapenv:Envelope>`)
	return []byte(b.String())
}

// callSOAP posts one SOAP call to base+path and returns the parsed inner
// SII:RESPUESTA document of its <op>Return.
func (c *Client) callSOAP(ctx context.Context, base, path, op string, params ...soapParam) (*respuesta, error) {
	url := base + path
	res, err := c.postSOAP(ctx, url, op, soapEnvelope(axisRPC, op, params...), "")
	if err != nil {
		return nil, err
	}
	inner, err := parseSOAPReturn(op, res.status, res.header, res.body)
	if err != nil {
		if te, ok := err.(*TransportError); ok {
			te.URL = url
		}
		return nil, err
	}
	r, err := parseRespuesta([]byte(inner))
	if err != nil {
		return nil, &TransportError{Op: op, URL: url, Kind: KindMalformed, StatusCode: res.status, Detail: err.Error()}
	}
	return r, nil
}

// postSOAP posts one SOAP request to url, with the token as the cookie
// when one is given, and reads the answer (see Client.do).
func (c *Client) postSOAP(ctx context.Context, url, op string, body []byte, token string) (*response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sii: %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	req.Header.Set("SOAPAction", `""`)
	if token != "" {
		req.Header.Set("Cookie", "TOKEN="+token)
	}
	return c.do(ctx, op, req)
}

// lenientText turns a response body into UTF-8 text: a UTF-8 byte order
// mark is dropped, valid UTF-8 is kept, and anything else is read as
// ISO-8859-1 (the SII declares UTF-8 and sometimes sends Latin-1 bytes).
func lenientText(b []byte) string {
	b = bytes.TrimPrefix(b, []byte{0xef, 0xbb, 0xbf})
	if utf8.Valid(b) {
		return string(b)
	}
	return xmlflat.Latin1ToString(b)
}

// parseXMLLenient reads a body as XML whatever its declared encoding.
func parseXMLLenient(b []byte) (*xmlflat.Node, error) {
	return xmlflat.Parse(strings.TrimSpace(lenientText(b)))
}

// parseSOAPReturn extracts the text of the <op>Return element from a SOAP
// response body: the inner XML document the SII escapes (or wraps in
// CDATA), unescaped. Elements are matched by local name, whatever their
// prefix. An empty body, "Error 500", an HTML page, a SOAP Fault or a body
// without the return element is a *TransportError; a fault whose text says
// the token is invalid also satisfies isTokenFault.
func parseSOAPReturn(op string, status int, header http.Header, body []byte) (string, error) {
	bodyEl, err := soapBody(op, status, header, body)
	if err != nil {
		return "", err
	}
	ret := bodyEl.Find(op + "Return")
	if ret == nil {
		return "", &TransportError{Op: op, Kind: KindMalformed, StatusCode: status, Detail: fmt.Sprintf("SOAP Body without <%sReturn>", op)}
	}
	if status != http.StatusOK {
		return "", &TransportError{Op: op, Kind: KindHTTP, StatusCode: status, Detail: "a SOAP answer with an error status"}
	}
	return ret.Text, nil
}

// soapBody reads a SOAP response and returns its Body element. An empty
// body, "Error 500", an HTML page, a document that is not a SOAP Envelope
// with a Body, and a SOAP Fault (Detail: its faultstring) are each a
// *TransportError.
func soapBody(op string, status int, header http.Header, body []byte) (*xmlflat.Node, error) {
	if err := classify(op, "", &response{status: status, header: header, body: body}); err != nil {
		return nil, err
	}
	root, err := parseXMLLenient(body)
	if err != nil {
		return nil, &TransportError{Op: op, Kind: KindMalformed, StatusCode: status, Detail: "unreadable SOAP response: " + err.Error()}
	}
	if root.Name != "Envelope" {
		return nil, &TransportError{Op: op, Kind: KindMalformed, StatusCode: status, Detail: fmt.Sprintf("root element is <%s>, not a SOAP Envelope", root.QName)}
	}
	var bodyEl *xmlflat.Node
	for _, k := range root.Kids {
		if k.Name == "Body" {
			bodyEl = k
		}
	}
	if bodyEl == nil {
		return nil, &TransportError{Op: op, Kind: KindMalformed, StatusCode: status, Detail: "SOAP Envelope without a Body"}
	}
	if f := bodyEl.Find("Fault"); f != nil {
		detail := "SOAP Fault"
		if fs := f.Find("faultstring"); fs != nil {
			detail = fs.Text
		}
		return nil, &TransportError{Op: op, Kind: KindFault, StatusCode: status, Detail: detail}
	}
	return bodyEl, nil
}

// isTokenFault reports whether err is a SOAP fault saying the token is not
// valid ("Error de Autenticacion: TOKEN invalido"), one of the signals to
// get a new token.
func isTokenFault(err error) bool {
	te, ok := err.(*TransportError)
	if !ok || te.Kind != KindFault {
		return false
	}
	d := strings.ToLower(te.Detail)
	return strings.Contains(d, "token") && (strings.Contains(d, "invalid") || strings.Contains(d, "autentica"))
}

// respuesta is a parsed SII:RESPUESTA document: the header fields and the
// body, in whatever order they came.
type respuesta struct {
	// Hdr maps each RESP_HDR child's local name to its text (the first
	// occurrence).
	Hdr map[string]string
	// Body holds RESP_BODY's children in document order (nil without a
	// body).
	Body []*xmlflat.Node
	// raw is the document as received.
	raw []byte
}

// parseRespuesta reads an SII:RESPUESTA document (the inner payload of a
// SOAP return, or a REST seed/token answer). RESP_BODY may come before
// RESP_HDR; prefixes are ignored; the text may be ISO-8859-1 whatever it
// declares.
func parseRespuesta(doc []byte) (*respuesta, error) {
	root, err := parseXMLLenient(doc)
	if err != nil {
		return nil, fmt.Errorf("sii: unreadable RESPUESTA: %w", err)
	}
	if root.Name != "RESPUESTA" {
		return nil, fmt.Errorf("sii: root element is <%s>, not RESPUESTA", root.QName)
	}
	r := &respuesta{Hdr: map[string]string{}, raw: doc}
	hasHdr := false
	for _, k := range root.Kids {
		switch k.Name {
		case "RESP_HDR":
			hasHdr = true
			for _, h := range k.Kids {
				if _, seen := r.Hdr[h.Name]; !seen {
					r.Hdr[h.Name] = strings.TrimSpace(h.Text)
				}
			}
		case "RESP_BODY":
			r.Body = append(r.Body, k.Kids...)
		}
	}
	if !hasHdr {
		return nil, fmt.Errorf("sii: RESPUESTA without RESP_HDR")
	}
	return r, nil
}

// bodyText returns the text of the first RESP_BODY child named local.
func (r *respuesta) bodyText(local string) string {
	for _, k := range r.Body {
		if k.Name == local {
			return strings.TrimSpace(k.Text)
		}
	}
	return ""
}
