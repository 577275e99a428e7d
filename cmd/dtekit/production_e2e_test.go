package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/signer/signertest"
	"github.com/dtekit/dtekit/sii/siitest"
)

// The company of the production end-to-end test, and its signer (RUTs
// with hand-checked módulo-11 digits, as in admin_test.go).
const (
	prodRUT    = "76543210-3"
	prodSigner = "13567890-2"
)

// prodRig is a company taken to production with the admin command line
// alone, and "dtekit serve" running over it against a fake SII.
type prodRig struct {
	data, dir string   // data directory; folder of the files the test wrote
	env       []string // environment of every command
	fake      *siitest.Fake
	authority *caftest.Authority // IDK 300: stands in for the SII's production key
	trustArg  string             // "300=…pem", as given to --trust
	serve     *serveProc
	api, key  string // …/api/v1/billing and a write API key
}

// admin runs "dtekit admin args…" with the rig's database and fails the
// test unless it exits with code.
func (r *prodRig) admin(t *testing.T, code int, args ...string) result {
	t.Helper()
	res := runBin(t, r.dir, r.env, append(append([]string{"admin"}, args...), "--data", r.data)...)
	if res.code != code {
		t.Fatalf("dtekit admin %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.code, code, res.stdout, res.stderr)
	}
	return res
}

// writeFile writes a file of the test under r.dir.
func (r *prodRig) writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// issueCAF writes a CAF of r.authority (IDK 300) for the company, tipo
// 33, folios desde–hasta, authorized yesterday.
func (r *prodRig) issueCAF(t *testing.T, name string, desde, hasta int64) string {
	t.Helper()
	b, err := r.authority.Issue(caftest.IssueRequest{RutEmisor: prodRUT, RazonSocial: "Mi Empresa SpA", Tipo: 33,
		Desde: desde, Hasta: hasta, FechaAutorizacion: time.Now().AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	return r.writeFile(t, name, b)
}

// newProdRig takes a company to production through the built binary:
// "admin empresa create", "admin certificado upload", "admin empresa
// update --ambiente produccion" (refused first without a resolution), a
// production CAF of a test authority with IDK 300 through "admin caf
// upload --trust 300=KEY.pem" (refused without the trust), a write API
// key; then "serve --trust 300=KEY.pem" with DTEKIT_SII_URL at a fake SII
// in this process.
func newProdRig(t *testing.T) *prodRig {
	t.Helper()
	r := &prodRig{dir: t.TempDir()}
	r.data = filepath.Join(r.dir, "data")
	if err := os.MkdirAll(r.data, 0o700); err != nil {
		t.Fatal(err)
	}
	// The envelope advances with time, so the server's first poll (15 s
	// after the upload, its production schedule) finds it reviewed.
	r.fake = siitest.New(siitest.Options{Steps: []string{"SOK", "FOK"}, StepEvery: 500 * time.Millisecond}).Start()
	t.Cleanup(r.fake.Close)
	r.fake.Register(prodSigner, prodRUT)
	r.env = []string{"DTEKIT_KEK=", "DTEKIT_DATABASE_URL=", siiURLEnv + "=" + r.fake.Endpoints().Classic}

	// The company, in certificación as every company starts.
	res := r.admin(t, exitOK, "empresa", "create", "--rut", prodRUT, "--razon-social", "Mi Empresa SpA", "--giro", "Comercio",
		"--direccion", "Calle 1", "--comuna", "Santiago", "--ciudad", "Santiago", "--fecha-resolucion", "2024-01-01", "--acteco", "620200")
	var e struct{ ID, Ambiente string }
	if json.Unmarshal([]byte(res.stdout), &e) != nil || e.Ambiente != "certificacion" {
		t.Fatalf("empresa create: %s", res.stdout)
	}
	// Production is refused without a resolution number and a certificate,
	// each named.
	res = r.admin(t, exitFail, "empresa", "update", "--empresa", prodRUT, "--ambiente", "produccion")
	for _, s := range []string{"numero_resolucion", "CERTIFICATE_REQUIRED"} {
		if !strings.Contains(res.stderr, s) {
			t.Errorf("the refused move to produccion does not name %s: %s", s, res.stderr)
		}
	}
	cert, err := signertest.NewCertificate(nil, signertest.CertOptions{RUT: prodSigner})
	if err != nil {
		t.Fatal(err)
	}
	p12, err := signertest.EncodePKCS12(cert, "s3cret", signertest.Modern)
	if err != nil {
		t.Fatal(err)
	}
	r.admin(t, exitOK, "certificado", "upload", "--empresa", prodRUT, "--cert", r.writeFile(t, "firma.p12", p12),
		"--rut-firmante", prodSigner, "--cert-password-file", r.writeFile(t, "pw", []byte("s3cret\n")))
	res = r.admin(t, exitOK, "empresa", "update", "--empresa", prodRUT, "--ambiente", "produccion",
		"--numero-resolucion", "80", "--fecha-resolucion", "2014-08-22", "--oficina-sii", "SANTIAGO ORIENTE")
	var prod struct {
		Ambiente         string
		NumeroResolucion int    `json:"numero_resolucion"`
		FechaResolucion  string `json:"fecha_resolucion"`
		OficinaSII       string `json:"oficina_sii"`
	}
	if json.Unmarshal([]byte(res.stdout), &prod) != nil || prod.Ambiente != "produccion" || prod.NumeroResolucion != 80 ||
		prod.FechaResolucion != "2014-08-22" || prod.OficinaSII != "SANTIAGO ORIENTE" {
		t.Fatalf("empresa update to produccion: %s", res.stdout)
	}
	res = r.admin(t, exitOK, "empresa", "list", "--ambiente", "produccion")
	if !strings.Contains(res.stdout, e.ID) {
		t.Errorf("empresa list --ambiente produccion lacks the company: %s", res.stdout)
	}
	if res = r.admin(t, exitOK, "empresa", "list", "--ambiente", "certificacion"); strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("empresa list --ambiente certificacion: %s, want []", res.stdout)
	}

	// The production CAF: refused while its authority is not trusted,
	// registered with --trust 300=KEY.pem.
	if r.authority, err = caftest.NewAuthority(nil, 300); err != nil {
		t.Fatal(err)
	}
	pub, err := r.authority.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	r.trustArg = "300=" + r.writeFile(t, "production-authority.pub.pem", pub)
	cafFile := r.issueCAF(t, "caf33.xml", 1, 100)
	res = r.admin(t, exitFail, "caf", "upload", "--empresa", prodRUT, cafFile)
	if !strings.Contains(res.stderr, "CAF_SIGNATURE") && !strings.Contains(res.stderr, "IDK 300") {
		t.Errorf("an untrusted production CAF: %s", res.stderr)
	}
	res = r.admin(t, exitOK, "caf", "upload", "--empresa", prodRUT, "--trust", r.trustArg, cafFile)
	if !strings.Contains(res.stdout, `"folio_desde": 1`) || !strings.Contains(res.stdout, `"folio_hasta": 100`) {
		t.Errorf("caf upload: %s", res.stdout)
	}

	res = r.admin(t, exitOK, "apikey", "create", "--empresa", prodRUT, "--write")
	var k struct{ Key string }
	if json.Unmarshal([]byte(res.stdout), &k) != nil || k.Key == "" {
		t.Fatalf("apikey create: %s", res.stdout)
	}
	r.key = k.Key
	r.serve = startServeArgs(t, builtBinary(t), []string{"--data", r.data, "--trust", r.trustArg}, r.env...)
	r.api = r.serve.base + "/api/v1/billing"
	return r
}

// TestProductionEndToEnd: a company taken to production with the admin
// command line (newProdRig) emits through the API of "dtekit serve": the
// document is stamped with the production CAF (IDK 300), reaches the fake
// SII in an envelope whose carátula carries the resolution, and ends
// aceptado with its track id. The server also takes a second production
// CAF over the API (serve --trust), and a document emitted with auto_send
// false is held in firmado. Three more held facturas travel together in
// one envelope (POST /envios), the fake's review rejecting the second: GET
// /envios/{id} gives the envelope's track id and each document's result,
// and each document's own tracking agrees.
func TestProductionEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary against a fake SII for about 30 seconds; skipped with -short")
	}
	t.Parallel()
	r := newProdRig(t)
	hc := &http.Client{Timeout: 30 * time.Second}

	// The API takes a production CAF of the trusted test authority too.
	caf2, err := os.ReadFile(r.issueCAF(t, "caf33-2.xml", 101, 200))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"tipo_dte": 33, "caf_xml": string(caf2)})
	if st, b := call(t, hc, "POST", r.api+"/caf", r.key, body); st != http.StatusCreated {
		t.Errorf("POST /caf of a production CAF: %d %s", st, b)
	}

	st, b := call(t, hc, "POST", r.api+"/dte", r.key, []byte(demoFactura))
	if st != http.StatusCreated {
		t.Fatalf("emission: %d %s", st, b)
	}
	var emitted struct {
		ID    string
		Folio int64
	}
	json.Unmarshal(b, &emitted)
	if emitted.Folio != 1 {
		t.Errorf("first production folio %d, want 1 (the first CAF's)", emitted.Folio)
	}
	var held struct {
		ID, Estado string
	}
	hold := strings.Replace(demoFactura, `"tipo_dte":33,`, `"tipo_dte":33,"auto_send":false,`, 1)
	st, b = call(t, hc, "POST", r.api+"/dte", r.key, []byte(hold))
	if json.Unmarshal(b, &held); st != http.StatusCreated || held.Estado != "firmado" {
		t.Fatalf("emission with auto_send false: %d %s", st, b)
	}

	// The envelope of several documents: folios 3, 4 and 5, held, then
	// sent together; the SII's review rejects folio 4.
	r.fake.Script(prodRUT, 33, 4, siitest.Outcome{Result: siitest.Rejected, Detail: "DTE-3-101"})
	var batch []string
	for i := range 3 {
		var d struct {
			ID, Estado string
			Folio      int64
		}
		st, b := call(t, hc, "POST", r.api+"/dte", r.key, []byte(hold))
		if json.Unmarshal(b, &d); st != http.StatusCreated || d.Estado != "firmado" || d.Folio != int64(3+i) {
			t.Fatalf("held factura %d: %d %s, want folio %d firmado", i+1, st, b, 3+i)
		}
		batch = append(batch, d.ID)
	}
	type envio struct {
		ID, Tipo, Ambiente, Estado string
		TrackID                    *string `json:"track_id"`
		Documentos                 []struct {
			DTEID     string  `json:"dte_id"`
			Folio     int64   `json:"folio"`
			Estado    string  `json:"estado"`
			CodigoSII *string `json:"codigo_sii"`
		}
	}
	body, _ = json.Marshal(map[string]any{"dte_ids": batch})
	st, b = call(t, hc, "POST", r.api+"/envios", r.key, body)
	var sent envio
	if json.Unmarshal(b, &sent); st != http.StatusCreated || sent.Tipo != "EnvioDTE" || sent.Ambiente != "produccion" || len(sent.Documentos) != 3 {
		t.Fatalf("POST /envios of three held facturas: %d %s", st, b)
	}
	for i, d := range sent.Documentos {
		if d.DTEID != batch[i] || d.Folio != int64(3+i) || d.Estado != "enviando" {
			t.Errorf("document %d of the new envelope: %+v, want folio %d enviando", i, d, 3+i)
		}
	}

	var doc struct {
		Estado       string
		XMLDocumento string `json:"xml_documento"`
		Tracking     struct {
			TrackID *string `json:"track_id"`
		}
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		st, b = call(t, hc, "GET", r.api+"/dte/"+emitted.ID+"?include_xml=true", r.key, nil)
		if st != http.StatusOK || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("GET the document: %d %s", st, b)
		}
		if doc.Estado == "aceptado" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the production document is still %s after 90 s: %s", doc.Estado, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if doc.Tracking.TrackID == nil || *doc.Tracking.TrackID == "" {
		t.Errorf("aceptado without a track id: %s", b)
	}
	// Stamped with the production CAF: its authorization names IDK 300.
	if !strings.Contains(doc.XMLDocumento, "<IDK>300</IDK>") {
		t.Errorf("the signed document does not carry the production CAF (IDK 300)")
	}
	// The fake got it in one envelope of the company whose carátula has
	// the production resolution.
	var found int
	for _, env := range r.fake.Envelopes() {
		if env.TrackID == *doc.Tracking.TrackID {
			found++
			if env.Company != prodRUT || !strings.Contains(string(env.Raw), "<NroResol>80</NroResol>") ||
				!strings.Contains(string(env.Raw), "<FchResol>2014-08-22</FchResol>") {
				t.Errorf("envelope %s: company %s, carátula without the production resolution", env.TrackID, env.Company)
			}
		}
	}
	if found != 1 {
		t.Errorf("the fake holds %d envelopes with the document's track id, want 1", found)
	}
	// The envelope's per-document results.
	var got envio
	for {
		st, b = call(t, hc, "GET", r.api+"/envios/"+sent.ID, r.key, nil)
		if st != http.StatusOK || json.Unmarshal(b, &got) != nil {
			t.Fatalf("GET the envelope: %d %s", st, b)
		}
		if got.Estado == "procesado" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the envelope is still %s after 90 s: %s", got.Estado, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if got.TrackID == nil || *got.TrackID == "" || *got.TrackID == *doc.Tracking.TrackID {
		t.Errorf("the envelope's track id: %s, want its own", b)
	}
	want := []string{"aceptado", "rechazado", "aceptado"}
	for i, d := range got.Documentos {
		if d.DTEID != batch[i] || d.Folio != int64(3+i) || d.Estado != want[i] || d.CodigoSII == nil {
			t.Errorf("document %d of the envelope: %+v, want folio %d %s with the SII's code", i, d, 3+i, want[i])
		}
		var own struct {
			Estado   string
			Tracking struct {
				EnvioID *string `json:"envio_id"`
				TrackID *string `json:"track_id"`
			}
		}
		st, b := call(t, hc, "GET", r.api+"/dte/"+batch[i], r.key, nil)
		if json.Unmarshal(b, &own); st != http.StatusOK || own.Estado != want[i] || own.Tracking.EnvioID == nil ||
			*own.Tracking.EnvioID != sent.ID || own.Tracking.TrackID == nil || got.TrackID == nil || *own.Tracking.TrackID != *got.TrackID {
			t.Errorf("folio %d's own tracking: %d %s, want %s in envelope %s", 3+i, st, b, want[i], sent.ID)
		}
	}
	// The fake filed it once, with the three folios and the production
	// resolution.
	found = 0
	for _, env := range r.fake.Envelopes() {
		if got.TrackID != nil && env.TrackID == *got.TrackID {
			found++
			var folios []int64
			for _, d := range env.Docs {
				folios = append(folios, d.Folio)
			}
			if len(folios) != 3 || folios[0] != 3 || folios[1] != 4 || folios[2] != 5 || !strings.Contains(string(env.Raw), "<NroResol>80</NroResol>") {
				t.Errorf("the fake's envelope %s: folios %v, want 3 4 5 with resolution 80", env.TrackID, folios)
			}
		}
	}
	if found != 1 {
		t.Errorf("the fake holds %d envelopes with the envelope's track id, want 1", found)
	}

	// The held document stays firmado: nothing sent it.
	st, b = call(t, hc, "GET", r.api+"/dte/"+held.ID, r.key, nil)
	if json.Unmarshal(b, &held); st != http.StatusOK || held.Estado != "firmado" {
		t.Errorf("the held document: %d %s", st, b)
	}
	r.serve.stop(t)
}
