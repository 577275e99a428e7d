package dte

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The transport rules of Res. Ex. SII 154/2025 (docs/guias-transporte.md),
// with every expectation written by hand: which field, which code, refused
// or warned, from which date.

// afterRes154 is 2026-05-04 10:00 in Santiago (UTC−4 in May): the rule is in
// force.
var afterRes154 = time.Date(2026, 5, 4, 14, 0, 0, 0, time.UTC)

// fullTransporte is a transporte with every field the resolution asks for.
func fullTransporte() *Transporte {
	return &Transporte{
		Patente:          "KXRT45",
		RutTransportista: "77123456-9",
		Chofer:           &Chofer{Rut: "16789012-1", Nombre: "Juan Ñancucheo Pérez"},
		DireccionDestino: "Obra Los Canelos, Camino a Penco 1480",
		ComunaDestino:    "Penco",
		CiudadDestino:    "Penco",
	}
}

// transporteGuia is a valid guía de venta dated fecha ("" for today) with
// the given transporte.
func transporteGuia(fecha string, t *Transporte) *EmitirDTERequest {
	return &EmitirDTERequest{
		TipoDTE:      GuiaDespachoElectronica,
		FechaEmision: fecha,
		Receptor:     Receptor{Rut: "76354771-K", RazonSocial: "Ferretería O'Brien Ltda."},
		Detalle:      []LineaDetalle{{Nombre: "Cemento, saco 25 kg", Cantidad: "120", Precio: "4290"}},
		IndTraslado:  ip(1),
		TipoDespacho: ip(2),
		Transporte:   t,
	}
}

// fieldsCodes reduces details to "field CODE" pairs, the part a client
// switches on.
func fieldsCodes(ds []FieldError) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Field+" "+string(d.Code))
	}
	return out
}

func detailsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	ve, ok := AsValidationError(err)
	if !ok {
		t.Fatalf("not a *ValidationError: %v", err)
	}
	return fieldsCodes(ve.Details)
}

func TestTransporteGuiaRefusals(t *testing.T) {
	t.Parallel()
	without := func(f func(*Transporte)) *Transporte { tr := fullTransporte(); f(tr); return tr }
	cases := []struct {
		name string
		tr   *Transporte
		want []string
	}{
		{"complete", fullTransporte(), nil},
		{"no block", nil, []string{"transporte REQUIRED"}},
		{"empty block", &Transporte{}, []string{
			"transporte.patente REQUIRED", "transporte.rut_transportista REQUIRED", "transporte.chofer REQUIRED",
			"transporte.direccion_destino REQUIRED", "transporte.comuna_destino REQUIRED", "transporte.ciudad_destino REQUIRED"}},
		{"no patente", without(func(t *Transporte) { t.Patente = "" }), []string{"transporte.patente REQUIRED"}},
		{"blank patente", without(func(t *Transporte) { t.Patente = "  " }), []string{"transporte.patente REQUIRED"}},
		{"no carrier", without(func(t *Transporte) { t.RutTransportista = "" }), []string{"transporte.rut_transportista REQUIRED"}},
		{"no driver", without(func(t *Transporte) { t.Chofer = nil }), []string{"transporte.chofer REQUIRED"}},
		{"driver without RUT", without(func(t *Transporte) { t.Chofer.Rut = "" }), []string{"transporte.chofer.rut REQUIRED"}},
		{"driver without name", without(func(t *Transporte) { t.Chofer.Nombre = "" }), []string{"transporte.chofer.nombre REQUIRED"}},
		{"plate and driver's RUT, in field order", without(func(t *Transporte) { t.Patente, t.Chofer.Rut = "", "" }),
			[]string{"transporte.patente REQUIRED", "transporte.chofer.rut REQUIRED"}},
		{"no address", without(func(t *Transporte) { t.DireccionDestino = "" }), []string{"transporte.direccion_destino REQUIRED"}},
		{"no comuna", without(func(t *Transporte) { t.ComunaDestino = "" }), []string{"transporte.comuna_destino REQUIRED"}},
		{"no city", without(func(t *Transporte) { t.CiudadDestino = "" }), []string{"transporte.ciudad_destino REQUIRED"}},
		// Schema limits and RUTs, reported once (not again as missing).
		{"patente of 9", without(func(t *Transporte) { t.Patente = "ABCD-1234" }), []string{"transporte.patente TOO_LONG"}},
		{"carrier's check digit", without(func(t *Transporte) { t.RutTransportista = "77123456-0" }), []string{"transporte.rut_transportista INVALID_RUT"}},
		{"carrier not a RUT", without(func(t *Transporte) { t.RutTransportista = "Transportes Bío-Bío" }), []string{"transporte.rut_transportista INVALID_FORMAT"}},
		{"driver's check digit", without(func(t *Transporte) { t.Chofer.Rut = "16789012-K" }), []string{"transporte.chofer.rut INVALID_RUT"}},
		{"driver's name of 31", without(func(t *Transporte) { t.Chofer.Nombre = strings.Repeat("ñ", 31) }), []string{"transporte.chofer.nombre TOO_LONG"}},
		{"address of 71", without(func(t *Transporte) { t.DireccionDestino = strings.Repeat("a", 71) }), []string{"transporte.direccion_destino TOO_LONG"}},
		{"comuna of 21", without(func(t *Transporte) { t.ComunaDestino = strings.Repeat("a", 21) }), []string{"transporte.comuna_destino TOO_LONG"}},
		{"city of 21", without(func(t *Transporte) { t.CiudadDestino = strings.Repeat("a", 21) }), []string{"transporte.ciudad_destino TOO_LONG"}},
		{"emoji in the city", without(func(t *Transporte) { t.CiudadDestino = "Penco 🚚" }), []string{"transporte.ciudad_destino NOT_LATIN1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warnings, err := ValidateFor(transporteGuia("", c.tr), afterRes154, AmbienteProduccion)
			if d := cmp.Diff(c.want, detailsOf(t, err)); d != "" {
				t.Errorf("producción (-want +got):\n%s", d)
			}
			if warnings != nil {
				t.Errorf("warnings beside the refusal: %v", warnings)
			}
			// ValidateAt is producción's gate.
			if d := cmp.Diff(c.want, detailsOf(t, ValidateAt(transporteGuia("", c.tr), afterRes154))); d != "" {
				t.Errorf("ValidateAt (-want +got):\n%s", d)
			}
		})
	}
}

// TestTransporteMessages checks that a refusal says the field, the
// resolution and the date, and what to send.
func TestTransporteMessages(t *testing.T) {
	t.Parallel()
	tr := fullTransporte()
	tr.Chofer = nil
	err := ValidateAt(transporteGuia("", tr), afterRes154)
	ve, ok := AsValidationError(err)
	if !ok || len(ve.Details) != 1 {
		t.Fatalf("want one detail, got %v", err)
	}
	d := ve.Details[0]
	for _, want := range []string{"transporte.chofer", "Res. Ex. SII 154/2025", "2026-05-01"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("message %q lacks %q", d.Message, want)
		}
	}
	if d.Action != "send chofer with rut and nombre" {
		t.Errorf("action = %q", d.Action)
	}
}

// TestTransporteDates: a document dated before 2026-05-01 keeps the old
// rule (transporte optional), by fecha_emision or by today's date in
// Chile when it is omitted.
func TestTransporteDates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		fecha string
		today time.Time
		want  []string
	}{
		{"dated 2026-04-30", "2026-04-30", afterRes154, nil},
		{"dated 2026-05-01", "2026-05-01", afterRes154, []string{"transporte REQUIRED"}},
		{"dated 2025-12-31", "2025-12-31", afterRes154, nil},
		// 2026-05-01 03:30 UTC is 23:30 of April 30 in Santiago (UTC−4).
		{"today April 30 in Chile", "", time.Date(2026, 5, 1, 3, 30, 0, 0, time.UTC), nil},
		// 04:30 UTC is 00:30 of May 1 in Santiago.
		{"today May 1 in Chile", "", time.Date(2026, 5, 1, 4, 30, 0, 0, time.UTC), []string{"transporte REQUIRED"}},
		// No date known at all (zero today, no fecha_emision): the rule in force.
		{"no date known", "", time.Time{}, []string{"transporte REQUIRED"}},
		// A refused date is reported once, not guessed at.
		{"bad date", "2026-13-01", afterRes154, []string{"fecha_emision INVALID_FORMAT"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateAt(transporteGuia(c.fecha, nil), c.today)
			if d := cmp.Diff(c.want, detailsOf(t, err)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestTransporteCertificacion: in certificación a guía without transport
// data is emitted, and each missing field is a warning.
func TestTransporteCertificacion(t *testing.T) {
	t.Parallel()
	tr := fullTransporte()
	tr.Patente, tr.CiudadDestino = "", ""
	warnings, err := ValidateFor(transporteGuia("", tr), afterRes154, AmbienteCertificacion)
	if err != nil {
		t.Fatalf("certificación refused: %v", err)
	}
	want := []string{"transporte.patente REQUIRED", "transporte.ciudad_destino REQUIRED"}
	if d := cmp.Diff(want, fieldsCodes(warnings)); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if !strings.Contains(warnings[0].Message, "in producción it is refused") {
		t.Errorf("the warning does not say producción refuses it: %q", warnings[0].Message)
	}
	// The schema's rules still refuse in certificación.
	tr.Chofer.Rut = "16789012-K"
	_, err = ValidateFor(transporteGuia("", tr), afterRes154, AmbienteCertificacion)
	if d := cmp.Diff([]string{"transporte.chofer.rut INVALID_RUT"}, detailsOf(t, err)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Before the date, no warning either.
	warnings, err = ValidateFor(transporteGuia("2026-04-30", nil), afterRes154, AmbienteCertificacion)
	if err != nil || warnings != nil {
		t.Errorf("before 2026-05-01: warnings %v, err %v", warnings, err)
	}
}

// TestTransporteOtherTypes: facturas that go with the goods get warnings,
// never refusals; notes and exports may carry the block; boletas and the
// liquidación-factura may not (the schema has no Transporte there).
func TestTransporteOtherTypes(t *testing.T) {
	t.Parallel()
	factura := func(tipo TipoDTE, despacho *int, tr *Transporte) *EmitirDTERequest {
		return &EmitirDTERequest{TipoDTE: tipo, Receptor: Receptor{Rut: "76086428-5", RazonSocial: "Comercial Ñandú Ltda."},
			Detalle: []LineaDetalle{{Nombre: "Aceite 1 L", Cantidad: "12", Precio: "6490"}}, TipoDespacho: despacho, Transporte: tr}
	}
	partial := fullTransporte()
	partial.Chofer, partial.ComunaDestino = nil, ""
	cases := []struct {
		name     string
		req      *EmitirDTERequest
		ambiente string
		errs     []string
		warns    []string
	}{
		{"factura of services", factura(33, nil, nil), AmbienteProduccion, nil, nil},
		{"factura with tipo_despacho", factura(33, ip(2), nil), AmbienteProduccion, nil, []string{"transporte REQUIRED"}},
		{"factura exenta with a partial block", factura(34, nil, partial), AmbienteProduccion, nil,
			[]string{"transporte.chofer REQUIRED", "transporte.comuna_destino REQUIRED"}},
		{"factura de compra, complete", factura(46, ip(1), fullTransporte()), AmbienteProduccion, nil, nil},
		{"factura with tipo_despacho in certificación", factura(33, ip(1), nil), AmbienteCertificacion, nil, []string{"transporte REQUIRED"}},
		{"factura before the date", func() *EmitirDTERequest { r := factura(33, ip(2), nil); r.FechaEmision = "2026-04-30"; return r }(),
			AmbienteProduccion, nil, nil},
		{"credit note with a partial block", func() *EmitirDTERequest {
			r := factura(61, nil, partial)
			r.Referencias = []Referencia{{TipoDocRef: RefTipo(33), FolioRef: 10, FechaRef: "2026-05-02", CodigoRef: ip(3), RazonRef: "Devolución"}}
			return r
		}(), AmbienteProduccion, nil, nil},
		{"boleta", func() *EmitirDTERequest { r := factura(39, nil, fullTransporte()); return r }(), AmbienteProduccion,
			[]string{"transporte NOT_ALLOWED"}, nil},
		{"liquidación-factura", func() *EmitirDTERequest {
			r := factura(43, nil, fullTransporte())
			r.Receptor.Giro, r.Receptor.Direccion, r.Receptor.Comuna = "Vinos", "Camino 8", "Talca"
			r.Detalle[0].TipoDocLiq = "33"
			return r
		}(), AmbienteProduccion, []string{"transporte NOT_ALLOWED"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warnings, err := ValidateFor(c.req, afterRes154, c.ambiente)
			if d := cmp.Diff(c.errs, detailsOf(t, err)); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.warns, fieldsCodes(warnings), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
		})
	}
}

// TestTransportePrepare: Prepare applies the Emisor's environment, and its
// warnings reach Prepared.
func TestTransportePrepare(t *testing.T) {
	t.Parallel()
	em := Emitter{Emisor: Emisor{Rut: "76192083-9", RazonSocial: "Comercial Ñuñoa Ltda.", Giro: "Comercio",
		Direccion: "Irarrázaval 2401", Comuna: "Ñuñoa", Ciudad: "Santiago", Acteco: []int{471000},
		Ambiente: AmbienteProduccion}}
	if _, err := em.Prepare(transporteGuia("", nil), afterRes154); err == nil {
		t.Error("producción prepared a guía without transporte")
	}
	em.Emisor.Ambiente = AmbienteCertificacion
	p, err := em.Prepare(transporteGuia("", nil), afterRes154)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"transporte REQUIRED"}, fieldsCodes(p.Warnings)); d != "" {
		t.Errorf("Prepared.Warnings (-want +got):\n%s", d)
	}
	em.Emisor.Ambiente = AmbienteProduccion
	p, err = em.Prepare(transporteGuia("", fullTransporte()), afterRes154)
	if err != nil || p.Warnings != nil {
		t.Fatalf("a complete guía: warnings %v, err %v", p.Warnings, err)
	}
}

// TestTransporteFinishing: an Emitter that finishes an emission whose folio
// was taken already (a service's recovery) does not refuse a producción
// guía for want of transport data, so the folio ends in a document; the
// warning says why. The schema's rules still hold.
func TestTransporteFinishing(t *testing.T) {
	t.Parallel()
	em := Emitter{Finishing: true, Emisor: Emisor{Rut: "76192083-9", RazonSocial: "Comercial Ñuñoa Ltda.", Giro: "Comercio",
		Direccion: "Irarrázaval 2401", Comuna: "Ñuñoa", Ciudad: "Santiago", Acteco: []int{471000},
		Ambiente: AmbienteProduccion}}
	p, err := em.Prepare(transporteGuia("", nil), afterRes154)
	if err != nil {
		t.Fatalf("a finishing producción Emitter refused: %v", err)
	}
	if d := cmp.Diff([]string{"transporte REQUIRED"}, fieldsCodes(p.Warnings)); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if !strings.Contains(p.Warnings[0].Message, "folio was taken") {
		t.Errorf("the warning does not say why: %q", p.Warnings[0].Message)
	}
	tr := fullTransporte()
	tr.RutTransportista = "77123456-0"
	if _, err := em.Prepare(transporteGuia("", tr), afterRes154); err == nil {
		t.Error("a finishing Emitter accepted a wrong RUT")
	}
	// The name Prepare uses internally is producción's for ValidateFor.
	if _, err := ValidateFor(transporteGuia("", nil), afterRes154, rulesFinishing); err == nil {
		t.Error("ValidateFor with the internal rules name did not refuse")
	}
}
