package sii_test

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/sii"
	"github.com/dtekit/dtekit/sii/siitest"
)

// rtcScript is a registry written by hand: the fake SII gives the tokens,
// and each RTC call takes the next scripted answer, recording what the
// client sent.
type rtcScript struct {
	mu      sync.Mutex
	answers []string
	seen    []rtcSeen
}

type rtcSeen struct {
	path, token string
	fields      []string // upload: the form fields' names in order, then values
	soap        string
}

func (s *rtcScript) next() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a
}

// newRTCScript starts the scripted registry and a client on it.
func newRTCScript(t *testing.T, answers ...string) (*rtcScript, *sii.Client) {
	t.Helper()
	c, err := creds()
	if err != nil {
		t.Fatal(err)
	}
	fake := siitest.New(siitest.Options{})
	fake.Register(dtetest.SignerRUT, dtetest.EmisorRUT)
	s := &rtcScript{answers: answers}
	mux := http.NewServeMux()
	mux.Handle("/", fake.Handler())
	mux.HandleFunc(sii.PathRTCUpload, func(w http.ResponseWriter, r *http.Request) {
		seen := rtcSeen{path: r.URL.Path}
		if ck, err := r.Cookie("TOKEN"); err == nil {
			seen.token = ck.Value
		}
		_, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			v, _ := io.ReadAll(p)
			seen.fields = append(seen.fields, p.FormName()+"="+string(v)[:min(len(v), 20)])
		}
		s.mu.Lock()
		s.seen = append(s.seen, seen)
		s.mu.Unlock()
		io.WriteString(w, s.next())
	})
	mux.HandleFunc(sii.PathRPETC, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, rtcSeen{path: r.URL.Path, soap: string(b)})
		s.mu.Unlock()
		io.WriteString(w, s.next())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	client, err := sii.New(sii.Config{Endpoints: sii.SingleHost(srv.URL), Certificate: c.Cert, RetryPause: time.Millisecond, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s, client
}

// rtcReturn wraps a RESPUESTA in the Axis answer of op.
func rtcReturn(op, inner string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return `<?xml version="1.0" encoding="utf-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><ns1:` + op +
		`Response xmlns:ns1="http://DefaultNamespace"><` + op + `Return>` + r.Replace(inner) + `</` + op + `Return></ns1:` + op + `Response></soapenv:Body></soapenv:Envelope>`
}

const minimalAEC = `<?xml version="1.0" encoding="ISO-8859-1"?><AEC xmlns="http://www.sii.cl/SiiDte" version="1.0"/>`

// TestUploadAECTokenRetry: STATUS 5 drops the token and sends once more,
// with a new token, the fields in the manual's order.
func TestUploadAECTokenRetry(t *testing.T) {
	t.Parallel()
	s, client := newRTCScript(t,
		"<RECEPCIONAEC><RUTSENDER>-</RUTSENDER><STATUS>5</STATUS></RECEPCIONAEC>",
		"<RECEPCIONAEC><RUTSENDER>"+dtetest.SignerRUT+"</RUTSENDER><RUTCOMPANY>"+dtetest.EmisorRUT+"</RUTCOMPANY><FILE>aec.xml</FILE><TIMESTAMP>29-11-2026 10:15:42</TIMESTAMP><STATUS>0</STATUS><TRACKID>0000038936</TRACKID></RECEPCIONAEC>")
	res, err := client.UploadAEC(context.Background(), dtetest.EmisorRUT, "cesiones@example.cl", []byte(minimalAEC))
	if err != nil || !res.Accepted() || res.TrackID != "0000038936" {
		t.Fatalf("%+v %v", res, err)
	}
	if o := sii.AECUploadOutcome(res); o.Kind != sii.CesionPending {
		t.Errorf("outcome %+v", o)
	}
	if len(s.seen) != 2 || s.seen[0].token == "" || s.seen[0].token == s.seen[1].token {
		t.Fatalf("requests %+v: want two, the second with a new token", s.seen)
	}
	rut := strings.Split(dtetest.EmisorRUT, "-")
	want := []string{"emailNotif=cesiones@example.cl", "rutCompany=" + rut[0], "dvCompany=" + rut[1], `archivo=<?xml version="1.0" `}
	if strings.Join(s.seen[1].fields, "|") != strings.Join(want, "|") {
		t.Errorf("fields %q, want %q", s.seen[1].fields, want)
	}
	// Not an AEC, or a bad e-mail: refused before any request.
	if _, err := client.UploadAEC(context.Background(), dtetest.EmisorRUT, "cesiones@example.cl", []byte("<EnvioDTE/>")); err == nil || !strings.Contains(err.Error(), "<AEC>") {
		t.Errorf("EnvioDTE: %v", err)
	}
	if _, err := client.UploadAEC(context.Background(), dtetest.EmisorRUT, "no", []byte(minimalAEC)); err == nil || !strings.Contains(err.Error(), "emailNotif") {
		t.Errorf("e-mail: %v", err)
	}
}

// TestRPETCTokenAndParams: ESTADO 4 (token unknown) gets a new token and
// one more call; the token is the first part, the others as the manual
// names them.
func TestRPETCTokenAndParams(t *testing.T) {
	t.Parallel()
	hdr := func(e, g string) string {
		return `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_HDR><ESTADO>` + e + `</ESTADO><GLOSA>` + g + `</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`
	}
	s, client := newRTCScript(t,
		rtcReturn("getEstEnvio", hdr("4", "Token no existe")),
		rtcReturn("getEstEnvio", `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY><TRACKID>38936</TRACKID><ESTADO_ENVIO>RCS</ESTADO_ENVIO><DESC_ESTADO>Cesion Invalida</DESC_ESTADO></SII:RESP_BODY><SII:RESP_HDR><ESTADO>0</ESTADO><GLOSA>OK</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`),
		rtcReturn("getEstCesion", hdr("0", "Documento Cedido")),
		rtcReturn("getEstCesionRelac", `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY><RUT_TENEDOR>76086428-5</RUT_TENEDOR><FECHA_ULT_ANOT>2026-11-29 10:20:00</FECHA_ULT_ANOT><DEC_JURADA>EXISTE</DEC_JURADA></SII:RESP_BODY><SII:RESP_HDR><ESTADO>0</ESTADO><GLOSA>OK</GLOSA></SII:RESP_HDR></SII:RESPUESTA>`),
	)
	ctx := context.Background()
	st, err := client.AECStatus(ctx, "0000038936")
	if err != nil || st.Estado != "RCS" {
		t.Fatalf("%+v %v", st, err)
	}
	if o := sii.AECStatusOutcome(st); o.Kind != sii.CesionRejected || o.Code != "RCS" {
		t.Errorf("outcome %+v", o)
	}
	if len(s.seen) != 2 || s.seen[0].soap == s.seen[1].soap {
		t.Fatalf("want two calls with different tokens: %+v", s.seen)
	}
	if !strings.Contains(s.seen[1].soap, `<ns1:getEstEnvio xmlns:ns1="http://DefaultNamespace" soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><Token xsi:type="xsd:string">`) ||
		!strings.Contains(s.seen[1].soap, `<TrackId xsi:type="xsd:string">0000038936</TrackId>`) {
		t.Errorf("request %s", s.seen[1].soap)
	}
	q := sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 33, Folio: 42}
	cs, err := client.CesionStatus(ctx, q)
	if err != nil || !cs.Cedido || cs.RutTenedor != "" {
		t.Fatalf("%+v %v", cs, err)
	}
	rut := strings.Split(dtetest.EmisorRUT, "-")
	for _, part := range []string{"<RutEmisor xsi:type=\"xsd:string\">" + rut[0] + "<", "<DVEmisor xsi:type=\"xsd:string\">" + rut[1] + "<", ">33</TipoDoc>", ">42</FolioDoc>"} {
		if !strings.Contains(s.seen[2].soap, part) {
			t.Errorf("getEstCesion request lacks %s: %s", part, s.seen[2].soap)
		}
	}
	if strings.Contains(s.seen[2].soap, "IdCesion") {
		t.Errorf("IdCesion sent when empty")
	}
	cs, err = client.CesionStatusRelac(ctx, q, "76086428-5")
	if err != nil || !cs.Cedido || cs.RutTenedor != "76086428-5" || cs.DecJurada != "EXISTE" || cs.FechaUltAnot.IsZero() {
		t.Fatalf("%+v %v", cs, err)
	}
	if !strings.Contains(s.seen[3].soap, ">76086428</RutEmpresa>") || !strings.Contains(s.seen[3].soap, ">5</DVEmpresa>") {
		t.Errorf("getEstCesionRelac request %s", s.seen[3].soap)
	}
	// Bad parameters name the field and send nothing.
	for _, bad := range []struct {
		q    sii.CesionQuery
		want string
	}{
		{sii.CesionQuery{RutEmisor: "1-2", TipoDoc: 33, Folio: 1}, "RutEmisor"},
		{sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 1000, Folio: 1}, "TipoDoc"},
		{sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 33, Folio: 0}, "Folio"},
		{sii.CesionQuery{RutEmisor: dtetest.EmisorRUT, TipoDoc: 33, Folio: 1, IdCesion: "<x>"}, "IdCesion"},
	} {
		if _, err := client.CesionStatus(ctx, bad.q); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v", bad.q, err)
		}
	}
	if _, err := client.AECStatus(ctx, "12345678901"); err == nil || !strings.Contains(err.Error(), "trackID") {
		t.Errorf("track: %v", err)
	}
	if len(s.seen) != 4 {
		t.Errorf("%d calls, want 4", len(s.seen))
	}
}
