package server

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestEmpresaProductionSettings: the settings a company needs for
// production, through the API. The SII office and the logo reach the
// PDF (pdftotext and pdfimages, independent readers, find them); moving
// to produccion is refused without a resolution and then allowed; from
// then on the company takes folios only from production CAFs, which
// verify with the production key (a test authority with IDK 300 stands in
// for the SII's), while its certificación documents keep their
// environment.
func TestEmpresaProductionSettings(t *testing.T) {
	t.Parallel()
	prod, err := caftest.NewAuthority(nil, 300)
	if err != nil {
		t.Fatal(err)
	}
	trust := billingtest.Creds(t).TrustedKeys.With(300, prod.PublicKey())
	f := newFixtureWith(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1}, billing.Config{TrustedKeys: trust})
	c := f.A

	// SII office and logo.
	r := f.do("PUT", apiBase+"/empresa", map[string]any{"oficina_sii": "SANTIAGO ORIENTE", "inbound_email": "dte@empresa.cl"}, c.writeHdr...)
	want(t, r, 200)
	var e api.Empresa
	r.JSON(t, &e)
	if e.OficinaSII != "SANTIAGO ORIENTE" || e.InboundEmail != "dte@empresa.cl" {
		t.Errorf("after PUT: oficina %q, inbound_email %q", e.OficinaSII, e.InboundEmail)
	}
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"inbound_email": "not an address"}, c.writeHdr...), 400, fault.Validation)
	img := image.NewRGBA(image.Rect(0, 0, 160, 48))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var logo bytes.Buffer
	png.Encode(&logo, img)
	put := func(ct string, body []byte) *response {
		req := newReq("PUT", apiBase+"/empresa/logo", nil, c.writeHdr...)
		req.Body, req.ContentLength = ioNopCloser(body), int64(len(body))
		req.Header.Set("Content-Type", ct)
		return f.tt.do(req)
	}
	want(t, put("image/png", logo.Bytes()), 200)
	want(t, put("image/png", []byte("not a png")), 400, fault.Validation)
	want(t, put("image/gif", logo.Bytes()), 415, fault.UnsupportedMediaType)
	want(t, put("image/png", make([]byte, billing.MaxLogoSize+1)), 413, fault.PayloadTooLarge)
	r = f.do("GET", apiBase+"/empresa/logo", nil, c.readHdr...)
	want(t, r, 200)
	if r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("logo content type %q", r.Header.Get("Content-Type"))
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(r.Body)); err != nil || cfg.Width != 160 || cfg.Height != 48 {
		t.Errorf("stored logo: %+v, %v", cfg, err)
	}
	id, _ := f.emit(c, factura(1))
	r = f.do("GET", apiBase+"/dte/"+id+"/pdf", nil, c.readHdr...)
	want(t, r, 200)
	dir := t.TempDir()
	file := filepath.Join(dir, "dte.pdf")
	os.WriteFile(file, r.Body, 0o600)
	if text := strings.Join(strings.Fields(string(oracle.Run(t, "pdftotext", "-enc", "UTF-8", file, "-"))), " "); !strings.Contains(text, "S.I.I. - SANTIAGO ORIENTE") {
		t.Errorf("the PDF does not print the SII office:\n%s", text)
	}
	if list := string(oracle.Run(t, "pdfimages", "-list", file)); !containsFields(list, "160", "48") {
		t.Errorf("pdfimages finds no 160×48 logo:\n%s", list)
	}
	want(t, f.do("DELETE", apiBase+"/empresa/logo", nil, c.writeHdr...), 200)
	want(t, f.do("GET", apiBase+"/empresa/logo", nil, c.readHdr...), 404, fault.NotFound)

	// Production: refused without a resolution number, then allowed.
	r = f.do("PUT", apiBase+"/empresa", map[string]any{"ambiente": "produccion"}, c.writeHdr...)
	want(t, r, 400, fault.Validation)
	if !bytes.Contains(r.Body, []byte(`"numero_resolucion"`)) {
		t.Errorf("refusal does not name numero_resolucion: %s", r.Body)
	}
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"ambiente": "producción"}, c.writeHdr...), 400, fault.Validation)
	r = f.do("PUT", apiBase+"/empresa", map[string]any{"ambiente": "produccion", "numero_resolucion": 102, "fecha_resolucion": "2026-11-20"}, c.writeHdr...)
	want(t, r, 200)
	r.JSON(t, &e)
	if e.Ambiente != "produccion" || e.NumeroResolucion != 102 {
		t.Errorf("after the move: %s, resolution %d", e.Ambiente, e.NumeroResolucion)
	}
	// Its certificación CAFs no longer give folios; a certificación CAF
	// is refused, a production one (IDK 300) registers.
	r = f.do("POST", apiBase+"/dte", factura(1), append(c.writeHdr, "Idempotency-Key", newUUID())...)
	want(t, r, 409, fault.NoFolios)
	issue := func(a *caftest.Authority, desde int64) string {
		file, err := a.Issue(caftest.IssueRequest{RutEmisor: c.rut, RazonSocial: "Empresa A", Tipo: 33, Desde: desde, Hasta: desde + 99,
			FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -1)})
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(file)
	}
	r = f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 33, "caf_xml": issue(f.creds.Authority, 5001)}, c.writeHdr...)
	want(t, r, 400, fault.Validation)
	want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 33, "caf_xml": issue(prod, 7001)}, c.writeHdr...), 201)
	pid, pr := f.emit(c, factura(1))
	var em api.EmitResponse
	pr.JSON(t, &em)
	if em.Folio != 7001 {
		t.Errorf("first production folio %d, want 7001", em.Folio)
	}
	xmlOf := func(id string) []byte {
		r := f.do("GET", apiBase+"/dte/"+id+"/xml", nil, c.readHdr...)
		want(t, r, 200)
		return r.Body
	}
	if x := xmlOf(pid); !bytes.Contains(x, []byte("<IDK>300</IDK>")) {
		t.Errorf("the production document's stamp does not carry the production CAF (IDK 300)")
	}
	r = f.do("GET", apiBase+"/dte/"+pid+"/pdf", nil, c.readHdr...)
	want(t, r, 200)
	os.WriteFile(file, r.Body, 0o600)
	if text := strings.Join(strings.Fields(string(oracle.Run(t, "pdftotext", "-enc", "UTF-8", file, "-"))), " "); !strings.Contains(text, "Res. N° 102 de 2026") {
		t.Errorf("the production PDF does not print its resolution:\n%s", text)
	}
	if x := xmlOf(id); !bytes.Contains(x, []byte("<IDK>100</IDK>")) {
		t.Errorf("the certificación document changed environment")
	}
}

// containsFields reports whether pdfimages -list lists an image of w×h
// pixels.
func containsFields(list string, w, h string) bool {
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[2] == "image" && f[3] == w && f[4] == h {
			return true
		}
	}
	return false
}

func ioNopCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
