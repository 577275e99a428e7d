package dte_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
)

// A request is read strictly: a misspelt field is an error, not a field
// silently ignored.
func ExampleDecodeRequest() {
	body := `{"tipo_dte": 33, "detalle": [{"nombre": "Resma", "cantidad": 1, "precio": 100, "descuento_pc": 5}]}`
	_, err := dte.DecodeRequest(strings.NewReader(body))
	if ve, ok := dte.AsValidationError(err); ok {
		for _, d := range ve.Details {
			fmt.Println(d.Field, d.Code)
		}
	}
	// Output:
	// detalle[0].descuento_pc UNKNOWN_FIELD
}

// Validate reports every problem at once, each with its field and a stable
// code.
func ExampleEmitirDTERequest_Validate() {
	body := `{
	  "tipo_dte": 33,
	  "fecha_emision": "2025-05-14",
	  "receptor": {"rut": "76086428-4", "razon_social": "Comercial Andes Ltda."},
	  "detalle": [{"nombre": "Resma carta", "cantidad": 0, "precio": 2990}]
	}`
	req, err := dte.DecodeRequest(strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	ve, _ := dte.AsValidationError(req.Validate())
	for _, d := range ve.Details {
		fmt.Println(d.Field, d.Code)
	}
	// Output:
	// receptor.rut INVALID_RUT
	// detalle[0].cantidad OUT_OF_RANGE
}

// ComputeTotals applies the SII's rules. Worked by hand: line 1 is
// 2.5 × 1990 = 4975, less 10 % (497.5, rounded half up to 498) = 4477;
// line 2 is exempt, 3000. The global 5 % discount applies to the taxable
// 4477: 223.85 → 224, so MntNeto = 4253, IVA = 19 % of 4253 = 808.07 → 808,
// and MntTotal = 4253 + 3000 + 808 = 8061.
func ExampleComputeTotals() {
	one := 1
	req := &dte.EmitirDTERequest{
		TipoDTE:  dte.FacturaElectronica,
		Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Andes Ltda."},
		Detalle: []dte.LineaDetalle{
			{Nombre: "Resma carta", Cantidad: "2.5", Precio: "1990", DescuentoPct: "10"},
			{Nombre: "Curso de capacitación", Cantidad: "1", Precio: "3000", IndExe: &one},
		},
		DescuentosGlobales: []dte.DscRcgGlobal{{TpoMov: "D", TpoValor: "%", ValorDR: "5"}},
	}
	tot, err := dte.ComputeTotals(req)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range tot.Detalle {
		fmt.Printf("line %d: MontoItem %s (discount %q)\n", l.NroLinDet, l.MontoItem, l.DescuentoMonto)
	}
	fmt.Println("global discount:", tot.DscRcgGlobal[0].Monto)
	t := tot.Totales
	fmt.Println("MntNeto", t.MntNeto, "MntExe", t.MntExe, "IVA", t.IVA, "MntTotal", t.MntTotal)
	// Output:
	// line 1: MontoItem 4477 (discount "498")
	// line 2: MontoItem 3000 (discount "")
	// global discount: 224
	// MntNeto 4253 MntExe 3000 IVA 808 MntTotal 8061
}

// Emit a factura, pack it in an envelope for the SII and verify the
// envelope: signatures, stamp and totals. The credentials here come from
// dte/dtetest (a stand-in SII authority and a test certificate); in
// production the CAFs come from the SII, the certificate from signer.Load
// and the trusted keys are caf.SIIKeys().
func ExampleEmitter_Emit() {
	creds, err := dtetest.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	em, err := creds.Emitter(nil)
	if err != nil {
		log.Fatal(err)
	}
	req := &dte.EmitirDTERequest{
		TipoDTE:  dte.FacturaElectronica,
		Receptor: dte.Receptor{Rut: "76086428-5", RazonSocial: "Comercial Andes Ltda.", Giro: "Comercio"},
		Detalle:  []dte.LineaDetalle{{Nombre: "Resma carta", Cantidad: "2", Precio: "1000"}},
	}
	out, err := em.Emit(context.Background(), req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tipo", out.Tipo, "folio", out.Folio, "MntTotal", out.MontoTotal)

	env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: em.Emisor}, em.Cert, out.XML)
	if err != nil {
		log.Fatal(err)
	}
	rep, err := dte.Verify(env, creds.Keys)
	if err != nil {
		log.Fatal(err)
	}
	d := rep.Documents[0]
	fmt.Println(rep.Kind, "folio", d.Folio, "signature", d.Signature.OK, "stamp", d.TED.OK, "totals", d.Totals.OK)
	// Output:
	// tipo 33 folio 1 MntTotal 2380
	// EnvioDTE folio 1 signature true stamp true totals true
}
