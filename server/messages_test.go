package server

import (
	"encoding/base64"
	"github.com/dtekit/dtekit/api"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
)

// internalChain matches the prefix a Go package puts on its errors
// ("caf: ", "smallrsa: ", "pkcs12: ", "dte: emit tipo 33 folio 1: "): text
// for logs, not for an API answer.
var internalChain = regexp.MustCompile(`(^|[\s(])(dte|caf|ted|billing|store|signer|smallrsa|pkcs12|x509|asn1|sii|xmltree|xmlflat|xml|json|strconv|rsa|crypto/[a-z0-9]+|pem|base64|multipart|http|io|os)(\s[a-z0-9 ]+)?: `)

// TestErrorMessagesCarryNoInternalChains drives the errors a client meets
// most (a document dated before its CAF, a broken CAF, a broken or
// misused certificate, a bad RUT, a bad filter, a broken body) and checks
// that no message of the answer, top level or detail, carries an internal
// error chain, and that none repeats itself.
func TestErrorMessagesCarryNoInternalChains(t *testing.T) {
	t.Parallel()
	f := newFixture(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1})
	const apiBase = "/api/v1/billing"
	old := factura(1)
	old["fecha_emision"] = dte.ChileTime(time.Now()).AddDate(0, 0, -30).Format(time.DateOnly)
	otherCA, err := caftest.NewAuthority(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := otherCA.Issue(caftest.IssueRequest{RutEmisor: f.A.rut, RazonSocial: "X", Tipo: 34, Desde: 1, Hasta: 5,
		FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	ct, garbage := multipartBody(t, []byte("not a pkcs12 file"), map[string]string{"password": "x", "rut_firmante": "13567890-2"})
	ct2, wrongPass := multipartBody(t, f.creds.P12, map[string]string{"password": "wrong", "rut_firmante": "13567890-2"})
	for _, tc := range []struct {
		name, method, target string
		body                 any
		ct                   string
	}{
		{"document before its CAF", "POST", apiBase + "/dte", old, ""},
		{"CAF not XML", "POST", apiBase + "/caf", map[string]any{"tipo_dte": 34, "caf_xml": "<nope/>"}, ""},
		{"CAF of another authority", "POST", apiBase + "/caf", map[string]any{"tipo_dte": 34, "caf_xml": base64.StdEncoding.EncodeToString(foreign)}, ""},
		{"CAF base64 of garbage", "POST", apiBase + "/caf", map[string]any{"tipo_dte": 34, "caf_xml": base64.StdEncoding.EncodeToString([]byte("garbage"))}, ""},
		{"certificate garbage", "POST", apiBase + "/empresa/certificado/pfx", garbage, ct},
		{"certificate wrong password", "POST", apiBase + "/empresa/certificado/pfx", wrongPass, ct2},
		{"cliente bad rut", "POST", apiBase + "/clientes", map[string]any{"rut": "76086428-4", "razon_social": "X"}, ""},
		{"filter bad rut", "GET", apiBase + "/dte?rut_receptor=1-2", nil, ""},
		{"body not JSON", "POST", apiBase + "/dte", `{"tipo_dte": 33,`, ""},
		{"body wrong type", "POST", apiBase + "/dte", `{"tipo_dte": "33"}`, ""},
	} {
		hdr := append([]string{}, f.A.adminHdr...)
		if strings.HasPrefix(tc.target, apiBase+"/dte") || strings.HasPrefix(tc.target, apiBase+"/caf") || strings.HasPrefix(tc.target, apiBase+"/clientes") {
			hdr = append([]string{}, f.A.writeHdr...)
		}
		if tc.method == "POST" {
			hdr = append(hdr, "Idempotency-Key", newUUID())
		}
		req := newReq(tc.method, tc.target, tc.body, hdr...)
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		r := f.tt.do(req)
		if r.Status < 400 || r.Status >= 500 {
			t.Errorf("%s: %d %s, want a 4xx", tc.name, r.Status, truncate(r.Body))
			continue
		}
		var env api.ErrorResponse
		r.JSON(t, &env)
		msgs := []string{env.Message}
		for _, d := range env.Details {
			msgs = append(msgs, d.Message)
		}
		for _, m := range msgs {
			if loc := internalChain.FindStringIndex(m); loc != nil {
				t.Errorf("%s: message carries an internal error chain at %q: %q", tc.name, m[loc[0]:loc[1]], m)
			}
			checkNoRepeatedPrefix(t, tc.name, m)
		}
		if env.Error != "" {
			t.Errorf("%s: the body states its message twice (error: %q)", tc.name, env.Error)
		}
	}
}

// checkNoRepeatedPrefix fails when a message repeats a word followed by a
// colon ("caf: caf: ").
func checkNoRepeatedPrefix(t *testing.T, what, msg string) {
	t.Helper()
	for _, m := range repeatedPrefix.FindAllStringSubmatch(msg, -1) {
		if m[1] == m[2] {
			t.Errorf("%s: message repeats %q: %q", what, m[1], msg)
		}
	}
}

var repeatedPrefix = regexp.MustCompile(`(?:^|\s)([^\s:]+): ([^\s:]+): `)
