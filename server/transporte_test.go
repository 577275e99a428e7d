package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/text/encoding/charmap"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
)

// TestEmitGuiaTransporte emits guías de despacho with and without the
// transport data of Res. Ex. SII 154/2025 through the API, in certificación
// and then in producción (dated today, after 2026-05-01): the data reach
// the signed XML in the schema's order and the PDF (pdftotext); a guía
// without them is emitted with advertencias in certificación and refused
// in producción, one REQUIRED detail per missing field. Every expectation
// is written here by hand from testdata/requests/guia_despacho.json.
func TestEmitGuiaTransporte(t *testing.T) {
	if chileToday := dte.ChileTime(time.Now()).Format(time.DateOnly); chileToday < dte.TransporteDesde {
		t.Skipf("today (%s) is before %s", chileToday, dte.TransporteDesde)
	}
	t.Parallel()
	prod, err := caftest.NewAuthority(nil, 300)
	if err != nil {
		t.Fatal(err)
	}
	trust := billingtest.Creds(t).TrustedKeys.With(300, prod.PublicKey())
	f := newFixtureWith(t, billingtest.Backends()[0].NewStore(t), RateLimit{PerSecond: -1}, billing.Config{TrustedKeys: trust})
	const apiBase = "/api/v1/billing"
	c := f.provision(context.Background(), billingtest.Company{Rut: "96512340-7", RazonSocial: "Distribuidora Bío-Bío Ltda.",
		Tipos: []dte.TipoDTE{52}, Hasta: 10})

	guia, err := os.ReadFile(filepath.Join("..", "testdata", "requests", "guia_despacho.json"))
	if err != nil {
		t.Fatal(err)
	}
	// without returns the guía with the transporte block edited by edit
	// (nil removes it).
	without := func(edit func(tr map[string]any)) map[string]any {
		var req map[string]any
		if err := json.Unmarshal(guia, &req); err != nil {
			t.Fatal(err)
		}
		if edit == nil {
			delete(req, "transporte")
		} else {
			edit(req["transporte"].(map[string]any))
		}
		return req
	}
	post := func(body any, key string) *response {
		return f.do("POST", apiBase+"/dte", body, append(c.writeHdr, "Idempotency-Key", key)...)
	}
	wantTransporte, err := charmap.ISO8859_1.NewEncoder().String(`</Receptor><Transporte><Patente>KXRT45</Patente>` +
		`<RUTTrans>77123456-9</RUTTrans><Chofer><RUTChofer>16789012-1</RUTChofer><NombreChofer>Juan Ñancucheo Pérez</NombreChofer></Chofer>` +
		`<DirDest>Obra Los Canelos, Camino a Penco 1480</DirDest><CmnaDest>Penco</CmnaDest><CiudadDest>Penco</CiudadDest></Transporte><Totales>`)
	if err != nil {
		t.Fatal(err)
	}
	checkEmitted := func(id, env string) {
		t.Helper()
		r := f.do("GET", apiBase+"/dte/"+id+"/xml", nil, c.readHdr...)
		want(t, r, 200)
		if !strings.Contains(string(r.Body), wantTransporte) {
			t.Errorf("%s: the signed XML lacks the Transporte block in schema order", env)
		}
		r = f.do("GET", apiBase+"/dte/"+id+"/pdf", nil, c.readHdr...)
		want(t, r, 200)
		file := filepath.Join(t.TempDir(), "guia.pdf")
		if err := os.WriteFile(file, r.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		text := string(oracle.Run(t, "pdftotext", "-layout", "-enc", "UTF-8", file, "-"))
		for _, s := range []string{"Datos de transporte", "Patente: +KXRT45", "RUT transportista: +77.123.456-9",
			"Chofer: +Juan Ñancucheo Pérez", "RUT chofer: +16.789.012-1", "Dirección destino: +Obra Los Canelos, Camino a Penco 1480",
			"Comuna destino: +Penco", "Ciudad destino: +Penco"} {
			if !regexp.MustCompile(s).MatchString(text) {
				t.Errorf("%s: the PDF lacks %q:\n%s", env, s, text)
			}
		}
	}
	advertencias := func(r *response) []string {
		t.Helper()
		var out api.EmitResponse
		r.JSON(t, &out)
		var fc []string
		for _, a := range out.Advertencias {
			fc = append(fc, a.Field+" "+string(a.Code))
		}
		return fc
	}

	// Certificación: the whole block is written; without it the guía is
	// emitted with a warning, and its replay answers the same.
	r := post(guia, newUUID())
	want(t, r, 201)
	if a := advertencias(r); a != nil {
		t.Errorf("a complete guía has advertencias %v", a)
	}
	var out api.EmitResponse
	r.JSON(t, &out)
	checkEmitted(out.ID, "certificación")

	key := newUUID()
	r = post(without(nil), key)
	want(t, r, 201)
	if d := cmp.Diff([]string{"transporte REQUIRED"}, advertencias(r)); d != "" {
		t.Errorf("certificación advertencias (-want +got):\n%s", d)
	}
	first := r.Body
	r = post(without(nil), key)
	want(t, r, 201)
	if r.Header.Get("X-Idempotency-Replay") != "true" || string(r.Body) != string(first) {
		t.Errorf("the replay answered %s, want the first answer %s", r.Body, first)
	}

	// Producción, with a production CAF of guías.
	want(t, f.do("PUT", apiBase+"/empresa", map[string]any{"ambiente": "produccion", "numero_resolucion": 102, "fecha_resolucion": "2026-11-20"},
		c.writeHdr...), 200)
	cafFile, err := prod.Issue(caftest.IssueRequest{RutEmisor: c.rut, RazonSocial: "Distribuidora Bío-Bío Ltda.", Tipo: 52, Desde: 11, Hasta: 60,
		FechaAutorizacion: dte.ChileTime(time.Now()).AddDate(0, 0, -1)})
	if err != nil {
		t.Fatal(err)
	}
	want(t, f.do("POST", apiBase+"/caf", map[string]any{"tipo_dte": 52, "caf_xml": base64.StdEncoding.EncodeToString(cafFile)}, c.writeHdr...), 201)

	refusals := []struct {
		name string
		body map[string]any
		want []string
	}{
		{"no block", without(nil), []string{"transporte REQUIRED"}},
		{"no plate", without(func(tr map[string]any) { delete(tr, "patente") }), []string{"transporte.patente REQUIRED"}},
		{"no carrier", without(func(tr map[string]any) { delete(tr, "rut_transportista") }), []string{"transporte.rut_transportista REQUIRED"}},
		{"no driver", without(func(tr map[string]any) { delete(tr, "chofer") }), []string{"transporte.chofer REQUIRED"}},
		{"driver without RUT", without(func(tr map[string]any) { tr["chofer"] = map[string]any{"nombre": "Juan Ñancucheo Pérez"} }),
			[]string{"transporte.chofer.rut REQUIRED"}},
		{"no destination", without(func(tr map[string]any) {
			delete(tr, "direccion_destino")
			delete(tr, "comuna_destino")
			delete(tr, "ciudad_destino")
		}), []string{"transporte.direccion_destino REQUIRED", "transporte.comuna_destino REQUIRED", "transporte.ciudad_destino REQUIRED"}},
		{"carrier's check digit", without(func(tr map[string]any) { tr["rut_transportista"] = "77123456-0" }),
			[]string{"transporte.rut_transportista INVALID_RUT"}},
		{"a typo", without(func(tr map[string]any) { tr["pantente"] = "KXRT45" }), []string{"transporte.pantente UNKNOWN_FIELD"}},
	}
	for _, c := range refusals {
		r := post(c.body, newUUID())
		want(t, r, 400, fault.Validation)
		var env struct{ Details []dte.FieldError }
		r.JSON(t, &env)
		var got []string
		for _, d := range env.Details {
			got = append(got, d.Field+" "+string(d.Code))
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("producción, %s (-want +got):\n%s", c.name, d)
		}
	}
	// The refusals took no folio: the complete guía gets the production
	// CAF's first (11: the certificación CAF holds 1–10).
	r = post(guia, newUUID())
	want(t, r, 201)
	r.JSON(t, &out)
	if out.Folio != 11 || out.Advertencias != nil {
		t.Errorf("producción guía: folio %d (want 11, the refusals take none), advertencias %v", out.Folio, out.Advertencias)
	}
	checkEmitted(out.ID, "producción")
}
