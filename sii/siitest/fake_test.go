package siitest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/clocktest"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

var creds = sync.OnceValues(func() (*dtetest.Creds, error) { return dtetest.New(nil) })

func started(t *testing.T, opts siitest.Options) (*siitest.Fake, *dtetest.Creds) {
	t.Helper()
	c, err := creds()
	if err != nil {
		t.Fatal(err)
	}
	f := siitest.New(opts).Start()
	t.Cleanup(f.Close)
	f.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	return f, c
}

// soapToken gets a token from the fake through the sii client.
func soapToken(t *testing.T, f *siitest.Fake, c *dtetest.Creds) string {
	t.Helper()
	client, err := sii.New(sii.Config{Endpoints: f.Endpoints(), Certificate: c.Cert})
	if err != nil {
		t.Fatal(err)
	}
	token, err := client.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// soapCall posts a hand-written SOAP call and returns the unescaped
// return text.
func soapCall(t *testing.T, url, op, params string) string {
	t.Helper()
	body := `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><` +
		op + ` xmlns="http://DefaultNamespace">` + params + `</` + op + `></soapenv:Body></soapenv:Envelope>`
	res, err := http.Post(url, "text/xml", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?s)<` + op + `Return[^>]*>(.*)</` + op + `Return>`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s answered %d without a return: %s", op, res.StatusCode, b)
	}
	return html.UnescapeString(string(m[1]))
}

var (
	seedRE   = regexp.MustCompile(`<SII:SEMILLA>([0-9]+)</SII:SEMILLA>`)
	estadoRE = regexp.MustCompile(`<SII:ESTADO>([^<]*)</SII:ESTADO>`)
	glosaRE  = regexp.MustCompile(`<SII:GLOSA>([^<]*)</SII:GLOSA>`)
)

func seed(t *testing.T, f *siitest.Fake) string {
	t.Helper()
	inner := soapCall(t, f.Endpoints().Classic+sii.PathSeed, "getSeed", "")
	m := seedRE.FindStringSubmatch(inner)
	if m == nil || len(m[1]) != 12 {
		t.Fatalf("getSeed: %s", inner)
	}
	if strings.Index(inner, "RESP_BODY") > strings.Index(inner, "RESP_HDR") {
		t.Errorf("the fake's seed answer does not put RESP_BODY first: %s", inner)
	}
	return m[1]
}

func getToken(t *testing.T, f *siitest.Fake, signed string) (estado, glosa string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<pszXml>`)
	b.WriteString(html.EscapeString(signed))
	b.WriteString(`</pszXml>`)
	inner := soapCall(t, f.Endpoints().Classic+sii.PathToken, "getToken", b.String())
	e, g := estadoRE.FindStringSubmatch(inner), glosaRE.FindStringSubmatch(inner)
	if e == nil {
		t.Fatalf("getToken: %s", inner)
	}
	if g == nil {
		return e[1], ""
	}
	return e[1], g[1]
}

// TestTokenChecks presents signed seeds broken in each way the SII
// documents and expects its ESTADO codes, in its order of checks.
func TestTokenChecks(t *testing.T) {
	clock := clocktest.New(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	f, c := started(t, siitest.Options{Clock: clock.Now})
	other, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: dtetest.SignerRUT, Bits: 1024})
	if err != nil {
		t.Fatal(err)
	}
	otherDER := base64.StdEncoding.EncodeToString(other.Leaf.Raw)
	sign := func(s string) string {
		b, err := c.Cert.SignSeed(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	certRE := regexp.MustCompile(`(?s)<X509Certificate>.*</X509Certificate>`)
	x509DataRE := regexp.MustCompile(`(?s)<X509Data>.*</X509Data>`)
	sigValRE := regexp.MustCompile(`<SignatureValue>(.)`)
	cases := []struct {
		name, estado, glosa string
		doc                 func() string
	}{
		{"not XML", "02", "", func() string { return "<getToken><item>" }},
		{"no Signature", "04", "", func() string { return "<getToken><item><Semilla>" + seed(t, f) + "</Semilla></item></getToken>" }},
		{"no Semilla", "06", "", func() string {
			return strings.ReplaceAll(sign(seed(t, f)), "Semilla>", "Seed>")
		}},
		{"unknown seed", "08", "NO Existe SEED", func() string { return sign("000000999999") }},
		{"no certificate", "11", "", func() string { return x509DataRE.ReplaceAllString(sign(seed(t, f)), "") }},
		{"bad signature", "05", "", func() string {
			return sigValRE.ReplaceAllStringFunc(sign(seed(t, f)), func(m string) string {
				if strings.HasSuffix(m, "A") {
					return "<SignatureValue>B"
				}
				return "<SignatureValue>A"
			})
		}},
		{"key not the certificate's", "21", "", func() string {
			return certRE.ReplaceAllString(sign(seed(t, f)), "<X509Certificate>"+otherDER+"</X509Certificate>")
		}},
		{"expired seed", "08", "TIME-OUT DEL SEED", func() string {
			s := seed(t, f)
			clock.Advance(2 * time.Minute)
			return sign(s)
		}},
		{"good", "00", "Token Creado", func() string { return sign(seed(t, f)) }},
	}
	for _, tc := range cases {
		estado, glosa := getToken(t, f, tc.doc())
		if estado != tc.estado || (tc.glosa != "" && glosa != tc.glosa) {
			t.Errorf("%s: ESTADO %s (%s), want %s %s", tc.name, estado, glosa, tc.estado, tc.glosa)
		}
	}
	// A seed serves once.
	s := seed(t, f)
	doc := sign(s)
	if e, _ := getToken(t, f, doc); e != "00" {
		t.Fatalf("first use: %s", e)
	}
	if e, g := getToken(t, f, doc); e != "08" || g != "NO Existe SEED" {
		t.Errorf("second use of a seed: %s %s, want 08 NO Existe SEED", e, g)
	}
}

// TestUploadChecks sends hand-made uploads that break the rules the client
// follows: fields out of order, no Content-Length, a Go User-Agent, no
// token.
func TestUploadChecks(t *testing.T) {
	f, c := started(t, siitest.Options{})
	token := soapToken(t, f, c)
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := em.Emit(context.Background(), &dte.EmitirDTERequest{TipoDTE: 33, Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Cliente",
		Giro: "Comercio", Direccion: "Calle 1", Comuna: "Santiago"}, Detalle: []dte.LineaDetalle{{Nombre: "Item", Cantidad: "1", Precio: "1000"}}})
	if err != nil {
		t.Fatal(err)
	}
	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, res.XML)
	if err != nil {
		t.Fatal(err)
	}
	build := func(order []string) (*bytes.Buffer, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		vals := map[string]string{"rutSender": "13567890", "dvSender": "2", "rutCompany": "76192083", "dvCompany": "9"}
		for _, name := range order {
			if name == "archivo" {
				w, _ := mw.CreateFormFile("archivo", "envio.xml")
				w.Write(env)
			} else {
				mw.WriteField(name, vals[name])
			}
		}
		mw.Close()
		return &buf, mw.FormDataContentType()
	}
	good := []string{"rutSender", "dvSender", "rutCompany", "dvCompany", "archivo"}
	send := func(order []string, ua, tok string, chunked bool) string {
		body, ct := build(order)
		var rd io.Reader = body
		if chunked {
			rd = io.MultiReader(body) // hides the length: sent chunked
		}
		req, _ := http.NewRequest(http.MethodPost, f.Endpoints().Upload+sii.PathUpload, rd)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("User-Agent", ua)
		if tok != "" {
			req.Header.Set("Cookie", "TOKEN="+tok)
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		m := regexp.MustCompile(`<STATUS>([0-9]+)</STATUS>`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("no STATUS in %s", b)
		}
		return string(m[1])
	}
	browser := sii.DefaultUserAgent
	for _, tc := range []struct {
		name, want string
		got        string
	}{
		{"good", "0", send(good, browser, token, false)},
		{"no token", "5", send(good, browser, "", false)},
		{"unknown token", "5", send(good, browser, "XAuSbYXiNh9Ik", false)},
		{"Go User-Agent", "5", send(good, "Go-http-client/1.1", token, false)},
		{"chunked", "3", send(good, browser, token, true)},
		{"archivo first", "3", send([]string{"archivo", "rutSender", "dvSender", "rutCompany", "dvCompany"}, browser, token, false)},
		{"missing dvCompany", "3", send([]string{"rutSender", "dvSender", "rutCompany", "archivo"}, browser, token, false)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: STATUS %s, want %s", tc.name, tc.got, tc.want)
		}
	}
	var fields []string
	for _, r := range f.Requests(siitest.Upload) {
		fields = append(fields, fmt.Sprint(len(r.Fields)))
	}
	if strings.Join(fields, ",") != "5,5,5,5,5,5,4" {
		t.Errorf("recorded field counts %v", fields)
	}
}

// TestWSDL: the fake serves a WSDL that points back at itself.
func TestWSDL(t *testing.T) {
	f, _ := started(t, siitest.Options{})
	res, err := http.Get(f.Endpoints().Classic + sii.PathSeed + "?WSDL")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(b), `location="`+f.Endpoints().Classic+sii.PathSeed+`"`) {
		t.Errorf("WSDL does not point back at the fake:\n%s", b)
	}
}

// TestEstDteAvChecks sends hand-written getEstDteAv calls: a bad token
// gives 003, a date in getEstDte's DDMMYYYY form or a FirmaDte that is not
// base64 gives -3; well-formed parameters for a document never uploaded
// give RECIBIDO NO, FAU. Every call is recorded.
func TestEstDteAvChecks(t *testing.T) {
	f, c := started(t, siitest.Options{})
	token := soapToken(t, f, c)
	call := func(tok, fecha, firma string) string {
		params := `<RutEmpresa>76192083</RutEmpresa><DvEmpresa>9</DvEmpresa><RutReceptor>76086428</RutReceptor><DvReceptor>5</DvReceptor>` +
			`<TipoDte>33</TipoDte><FolioDte>7</FolioDte><FechaEmisionDte>` + fecha + `</FechaEmisionDte><MontoDte>11900</MontoDte>` +
			`<FirmaDte>` + firma + `</FirmaDte><Token>` + tok + `</Token>`
		return soapCall(t, f.Endpoints().Classic+sii.PathEstDteAv, "getEstDteAv", params)
	}
	hdrEstado := regexp.MustCompile(`<SII:RESP_HDR><SII:ESTADO>([^<]*)</SII:ESTADO>`)
	for _, tc := range []struct {
		name, tok, fecha, firma, estado string
	}{
		{"unknown token", "XAuSbYXiNh9Ik", "23-11-2026", "c2lnbmF0dXJl", "003"},
		{"DDMMYYYY date", token, "23112026", "c2lnbmF0dXJl", "-3"},
		{"ISO date", token, "2026-11-23", "c2lnbmF0dXJl", "-3"},
		{"firma not base64", token, "23-11-2026", "no es base64!", "-3"},
		{"empty firma", token, "23-11-2026", "", "-3"},
		{"never uploaded", token, "23-11-2026", "c2lnbmF0dXJl", "0"},
	} {
		inner := call(tc.tok, tc.fecha, tc.firma)
		m := hdrEstado.FindStringSubmatch(inner)
		if m == nil || m[1] != tc.estado {
			t.Errorf("%s: %s, want RESP_HDR ESTADO %s", tc.name, inner, tc.estado)
			continue
		}
		if tc.estado == "0" && (!strings.Contains(inner, "<SII:RECIBIDO>NO</SII:RECIBIDO>") || !strings.Contains(inner, "<SII:ESTADO>FAU</SII:ESTADO>") ||
			strings.Contains(inner, "TRACKID") || strings.Index(inner, "RESP_BODY") > strings.Index(inner, "RESP_HDR")) {
			t.Errorf("%s: %s, want RESP_BODY first with RECIBIDO NO, FAU and no TRACKID", tc.name, inner)
		}
	}
	if n := len(f.Requests(siitest.EstDteAv)); n != 6 {
		t.Errorf("%d getEstDteAv requests recorded, want 6", n)
	}
}

// TestBoletaDTEPlainText: the per-boleta status answers a missing query
// parameter with HTTP 200 and plain text naming it, as the certification
// API does, and an unreadable one with HTTP 400 and plain text; a complete
// query the JSON of exactly codigo and descripcion.
func TestBoletaDTEPlainText(t *testing.T) {
	f, c := started(t, siitest.Options{})
	client, err := sii.New(sii.Config{Endpoints: f.Endpoints(), Certificate: c.Cert})
	if err != nil {
		t.Fatal(err)
	}
	token, err := client.BoletaToken(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rut, dv, _ := strings.Cut(dtetest.EmisorRUT, "-")
	get := func(query string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", f.Endpoints().BoletaAPI+sii.PathBoletaDTE+"/"+rut+"-"+dv+"-39-1/estado?"+query, nil)
		req.Header.Set("Cookie", "TOKEN="+token)
		req.Header.Set("User-Agent", "Mozilla/5.0 (compatible; test)")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header.Get("Content-Type"), strings.TrimSpace(string(b))
	}
	status, ctype, body := get("rut_receptor=66666666&dv_receptor=6&fechaEmision=01-12-2026")
	if status != 200 || !strings.HasPrefix(ctype, "text/plain") || body != "falta monto" {
		t.Errorf("without monto: %d %s %q, want 200 text/plain \"falta monto\"", status, ctype, body)
	}
	status, ctype, body = get("rut_receptor=66666666&dv_receptor=6&monto=diez&fechaEmision=01-12-2026")
	if status != 400 || !strings.HasPrefix(ctype, "text/plain") {
		t.Errorf("an unreadable monto: %d %s %q, want 400 text/plain", status, ctype, body)
	}
	status, ctype, body = get("rut_receptor=66666666&dv_receptor=6&monto=100&fechaEmision=01-12-2026")
	if status != 200 || ctype != "application/json" || body != `{"codigo":"FAU","descripcion":"Documento No Recibido por el SII"}` {
		t.Errorf("a complete query: %d %s %s, want FAU as JSON of codigo and descripcion", status, ctype, body)
	}
}
