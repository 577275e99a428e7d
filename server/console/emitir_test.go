package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/billingtest"
	"github.com/dtekit/dtekit/dte"
)

// rutD is a fourth company's RUT, which issues every type the form
// offers; its check digit by hand from the right: 2·2+3·3+4·4+5·5+6·6+
// 7·7+6·2+7·3 = 172, 172 mod 11 = 7, 11−7 = 4.
const rutD = "76765432-4"

// emitted posts form (with a fresh key) as an emission and returns the
// document it emitted.
func (f *fixture) emitted(t *testing.T, b *browser, empresaID string, form url.Values) *api.DTE {
	t.Helper()
	form.Set("clave", newUUID())
	form.Set("paso", "emitir")
	p := b.post(Prefix+"emitir", form)
	loc, ok := strings.CutPrefix(p.header.Get("Location"), Prefix+"documentos/")
	if p.status != http.StatusSeeOther || !ok {
		t.Fatalf("emitting %s: %d %s", form.Get("tipo"), p.status, p.body)
	}
	d, err := f.b.Documents.Get(context.Background(), empresaID, strings.TrimSuffix(loc, "?hecho=emitido"), api.DTEGetParams{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Emitir issues a boleta, a guía with its transport data (its errors
// beside their fields) and a nota de crédito prefilled from a document;
// another company's document cannot prefill it.
func (f *fixture) testEmitirTipos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := billingtest.Provision(ctx, f.b, billingtest.Creds(t), billingtest.Company{Rut: rutD, RazonSocial: "Empresa D",
		Tipos: []dte.TipoDTE{33, 39, 52, 61}, Hasta: 20})
	if err != nil {
		t.Fatal(err)
	}
	k, err := f.b.Keys.Create(ctx, e.ID, api.APIKeyInput{Write: true})
	if err != nil {
		t.Fatal(err)
	}
	b := f.session(t, k.Key)
	p := b.get(Prefix + "emitir")
	for _, want := range []string{`<option value="39"`, `<option value="52"`, `<option value="61"`, `<label for="t_patente">`, `<label for="ind_traslado">`, `<label for="ref_folio">`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the form lacks %s", want)
		}
	}

	// A boleta to the final consumer: its prices include IVA, so the
	// total is 3 × 2.500 = 7.500.
	d := f.emitted(t, b, e.ID, url.Values{"tipo": {"39"}, "rut": {"66666666-6"}, "razon_social": {"Consumidor final"},
		"nombre0": {"Empanada de pino"}, "cantidad0": {"3"}, "precio0": {"2500"}})
	if d.TipoDTE != 39 || d.MontoTotal != 7500 || d.Estado != dte.EstadoFirmado {
		t.Fatalf("the boleta: %d %d %s", d.TipoDTE, d.MontoTotal, d.Estado)
	}

	// A guía: a plate too long and a driver's RUT with a wrong check
	// digit stand beside their fields.
	guia := url.Values{"tipo": {"52"}, "rut": {"76086428-5"}, "razon_social": {"Obra Los Canelos"}, "giro": {"Construcción"},
		"direccion": {"Camino a Penco 1480"}, "comuna": {"Penco"}, "ind_traslado": {"5"},
		"t_patente": {"KXRT45-123"}, "t_rut_transportista": {"76086428-5"}, "t_chofer_rut": {"16789012-2"}, "t_chofer_nombre": {"Juan Ñancucheo"},
		"t_direccion_destino": {"Camino a Penco 1480"}, "t_comuna_destino": {"Penco"}, "t_ciudad_destino": {"Penco"},
		"nombre0": {"Cemento 25 kg"}, "cantidad0": {"10"}, "precio0": {"5000"}, "clave": {newUUID()}}
	p = b.post(Prefix+"emitir", guia)
	wantStatus(t, "a guía with a long plate", p, http.StatusBadRequest)
	for _, want := range []string{`id="t_patente-error"`, `id="t_chofer_rut-error"`, `value="Juan Ñancucheo"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the refused guía lacks %s: %s", want, p.body)
		}
	}
	// 16789012 from the right: 2·2+1·3+0·4+9·5+8·6+7·7+6·2+1·3 = 164, 164 mod 11 = 10,
	// 11−10 = 1.
	guia.Set("t_patente", "KXRT45")
	guia.Set("t_chofer_rut", "16789012-1")
	d = f.emitted(t, b, e.ID, guia)
	x, err := f.b.Documents.XML(ctx, e.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<IndTraslado>5</IndTraslado>", "<Patente>KXRT45</Patente>", "<RUTChofer>16789012-1</RUTChofer>", "<CmnaDest>Penco</CmnaDest>"} {
		if !strings.Contains(string(x), want) {
			t.Errorf("the guía's XML lacks %s", want)
		}
	}

	// A nota de crédito from a factura: the form comes filled with the
	// receptor, the lines and a reference that cancels the factura.
	fac := f.emitted(t, b, e.ID, url.Values{"tipo": {"33"}, "rut": {"76086428-5"}, "razon_social": {"Cliente & Cía"}, "giro": {"Comercio"},
		"direccion": {"Calle 1"}, "comuna": {"Santiago"}, "nombre0": {"Servicio"}, "cantidad0": {"1"}, "precio0": {"10000"}})
	p = b.get(Prefix + "documentos/" + fac.ID)
	if !strings.Contains(p.body, `href="/console/emitir?desde=`+fac.ID+`"`) {
		t.Errorf("the factura's page offers no nota de crédito: %s", p.body)
	}
	p = b.get(Prefix + "emitir?desde=" + fac.ID)
	wantStatus(t, "the nota's form", p, http.StatusOK)
	folio := strconv.FormatInt(fac.Folio, 10)
	for _, want := range []string{`<option value="61" selected>`, `id="ref_folio" name="ref_folio" value="` + folio + `"`, `id="ref_tipo_doc" name="ref_tipo_doc" value="33"`,
		`id="rut" name="rut" value="76086428-5"`, `value="Cliente &amp; Cía"`, `id="giro" name="giro" value="Comercio"`, `id="comuna" name="comuna" value="Santiago"`, `id="nombre0" name="nombre0" value="Servicio"`, `<option value="1" selected>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the nota's form lacks %s: %s", want, p.body)
		}
	}
	nota := f.emitted(t, b, e.ID, url.Values{"tipo": {"61"}, "rut": {"76086428-5"}, "razon_social": {"Cliente & Cía"}, "giro": {"Comercio"},
		"direccion": {"Calle 1"}, "comuna": {"Santiago"}, "nombre0": {"Servicio"}, "cantidad0": {"1"}, "precio0": {"10000"},
		"ref_tipo_doc": {"33"}, "ref_folio": {folio}, "ref_fecha": {fac.FechaEmision}, "ref_codigo": {"1"}, "ref_razon": {"Anula factura"}})
	// 10.000 + 19% = 11.900, as the factura's.
	if nota.TipoDTE != 61 || nota.MontoTotal != 11900 || len(nota.Referencias) != 1 || nota.Referencias[0].FolioRef != fac.Folio ||
		nota.Referencias[0].CodigoRef == nil || *nota.Referencias[0].CodigoRef != 1 {
		t.Fatalf("the nota: %+v", nota)
	}
	// A nota without the referenced folio: refused beside the field.
	p = b.post(Prefix+"emitir", url.Values{"tipo": {"61"}, "rut": {"76086428-5"}, "razon_social": {"Cliente"}, "giro": {"Comercio"},
		"direccion": {"Calle 1"}, "comuna": {"Santiago"}, "nombre0": {"Servicio"}, "cantidad0": {"1"}, "precio0": {"10000"},
		"ref_tipo_doc": {"33"}, "ref_folio": {"x"}, "ref_fecha": {fac.FechaEmision}, "ref_codigo": {"1"}, "ref_razon": {"Anula"}, "clave": {newUUID()}})
	wantStatus(t, "a nota with a folio that is no number", p, http.StatusBadRequest)
	if !strings.Contains(p.body, `id="ref_folio-error"`) {
		t.Errorf("no error beside the folio: %s", p.body)
	}

	// Tenancy: B's document prefills nothing.
	wantStatus(t, "a nota from B's document", b.get(Prefix+"emitir?desde="+f.B.dte), http.StatusNotFound)
	wantStatus(t, "a nota from no document", b.get(Prefix+"emitir?desde=x"), http.StatusNotFound)
	// Read-only: no link, no form.
	ro := f.session(t, f.A.readKey)
	if p := ro.get(Prefix + "documentos/" + f.A.dte); strings.Contains(p.body, "emitir?desde=") {
		t.Error("a read-only session is offered a nota de crédito")
	}
	wantStatus(t, "the nota's form, read-only", ro.get(Prefix+"emitir?desde="+f.A.dte), http.StatusForbidden)
}
