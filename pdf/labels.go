package pdf

import (
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/aduana"
	"github.com/dtekit/dtekit/dte"
)

// Names printed for the SII's codes. Codes without a name here are printed
// as numbers.

// refTipoName names a referenced document type: the twelve DTEs by their
// printed name, the usual paper documents and the SII's codes for other
// references (801 orden de compra, ...), and a free code ("SET", "HES") as
// written.
func refTipoName(r dte.TipoDocRef) string {
	if r.Codigo != "" {
		return oneLine(r.Codigo)
	}
	t := r.Tipo
	if t.Valid() {
		return titleName(t)
	}
	switch t {
	case 0:
		return ""
	case 30:
		return "Factura"
	case 32:
		return "Factura no afecta o exenta"
	case 35:
		return "Boleta"
	case 38:
		return "Boleta exenta"
	case 40:
		return "Liquidación factura"
	case 45:
		return "Factura de compra"
	case 50:
		return "Guía de despacho"
	case 55:
		return "Nota de débito"
	case 60:
		return "Nota de crédito"
	case 801:
		return "Orden de compra"
	case 802:
		return "Nota de pedido"
	case 803:
		return "Contrato"
	case 804:
		return "Resolución"
	case 805:
		return "Proceso ChileCompra"
	case 806:
		return "Ficha ChileCompra"
	case 807:
		return "DUS"
	case 808:
		return "B/L (conocimiento de embarque)"
	case 809:
		return "AWB (guía aérea)"
	case 810:
		return "MIC/DTA"
	case 811:
		return "Carta de porte"
	}
	return "Documento tipo " + strconv.Itoa(int(t))
}

// titleName returns a DTE type's name in sentence case with the accents
// the upper-case name carries: "Factura electrónica".
func titleName(t dte.TipoDTE) string {
	n := []rune(strings.ToLower(t.Name()))
	if len(n) > 0 {
		n[0] = []rune(strings.ToUpper(string(n[0])))[0]
	}
	return string(n)
}

// codRefName names a reference's CodRef.
func codRefName(c *int) string {
	if c == nil {
		return ""
	}
	switch *c {
	case 1:
		return "Anula documento"
	case 2:
		return "Corrige texto"
	case 3:
		return "Corrige montos"
	}
	return "Código " + strconv.Itoa(*c)
}

// trasladoName names a guía's IndTraslado.
func trasladoName(c int) string {
	switch c {
	case 1:
		return "Operación constituye venta"
	case 2:
		return "Ventas por efectuar"
	case 3:
		return "Consignaciones"
	case 4:
		return "Entrega gratuita"
	case 5:
		return "Traslado interno"
	case 6:
		return "Otros traslados no venta"
	case 7:
		return "Guía de devolución"
	case 8:
		return "Traslado para exportación (no venta)"
	case 9:
		return "Venta para exportación"
	}
	return "Código " + strconv.Itoa(c)
}

// despachoName names a guía's TipoDespacho.
func despachoName(c int) string {
	switch c {
	case 1:
		return "Por cuenta del receptor"
	case 2:
		return "Por cuenta del emisor a instalaciones del cliente"
	case 3:
		return "Por cuenta del emisor a otras instalaciones"
	}
	return "Código " + strconv.Itoa(c)
}

// Customs codes (export documents) are named from the customs tables of
// package aduana, followed by the code: "SAN ANTONIO (906)". A code the
// tables lack is printed as its number, "código 999 (no listado)", never
// as a guess.

// customsName names a customs code written as text (a port, a country, a
// package type, a sale clause). Text that is not a number, such as a
// port's free identification (IdAdicPtoEmb), is printed as written.
func customsName(s string, lookup func(int) (string, bool)) string {
	s = oneLine(s)
	if !allDigits(s) || len(s) > 9 {
		return s
	}
	n, _ := strconv.Atoi(s)
	return customsNamed(n, lookup)
}

// customsNamed names a customs code: its name and the code, or the code
// alone with a note when the table does not list it.
func customsNamed(n int, lookup func(int) (string, bool)) string {
	if name, ok := lookup(n); ok {
		return name + " (" + itoa(n) + ")"
	}
	return unlisted(n)
}

// unlisted prints a customs code the tables do not list.
func unlisted(n int) string { return "código " + itoa(n) + " (no listado)" }

// formaPagoName names an export payment form (IdDoc/FmaPagExp) by its
// description, with its short name and code: "COBRANZA HASTA 1 AÑO (COB1,
// código 1)".
func formaPagoName(n int) string {
	sigla, desc, ok := aduana.FormaPagoExportacion(n)
	if !ok {
		return unlisted(n)
	}
	return desc + " (" + sigla + ", código " + itoa(n) + ")"
}

// bultoName names a package type (TipoBultos/CodTpoBultos) by its long
// name: "PALLETS, TABLEROS (80)".
func bultoName(n int) (string, bool) {
	_, name, ok := aduana.TipoBulto(n)
	return name, ok
}

// unidadName prints a unit of measure after a quantity: " KN (KILOGRAMO
// NETO)", " PAR" when the short name is the name, " (unidad código 77, no
// listada)" for a code the table lacks, and nothing without a code.
func unidadName(c *int) string {
	if c == nil {
		return ""
	}
	sigla, name, ok := aduana.UnidadMedida(*c)
	switch {
	case !ok:
		return " (unidad código " + itoa(*c) + ", no listada)"
	case sigla == name:
		return " " + sigla
	}
	return " " + sigla + " (" + name + ")"
}

// impuestoName names an additional tax or retention code (TipoImp).
func impuestoName(c int) string {
	switch c {
	case 15:
		return "IVA retenido total"
	case 24:
		return "Imp. licores, piscos, destilados"
	case 25:
		return "Imp. vinos"
	case 26:
		return "Imp. cervezas y bebidas alcohólicas"
	case 27:
		return "Imp. bebidas analcohólicas"
	case 271:
		return "Imp. bebidas azucaradas"
	}
	return "Impuesto código " + strconv.Itoa(c)
}

// exeName names an exemption indicator of a line or global discount.
func exeName(c int) string {
	switch c {
	case 0:
		return "afecto"
	case 1:
		return "exento"
	case 2:
		return "no facturable"
	}
	return "indicador " + strconv.Itoa(c)
}
