package pdf

import (
	"strconv"
	"strings"

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

// clausulaName names a sale clause code (Aduana/CodClauVenta), the reverse
// of dte.ClausulaVentaCodigo.
func clausulaName(code string) string {
	names := map[string]string{"1": "CIF", "2": "CFR", "3": "EXW", "4": "FAS", "5": "FOB", "6": "S/CL",
		"7": "DDP", "8": "FCA", "9": "CPT", "10": "CIP", "17": "DAT", "18": "DAP"}
	code = oneLine(code)
	if n, ok := names[code]; ok {
		return n + " (" + code + ")"
	}
	return code
}

// viaName names a transport route code (Aduana/CodViaTransp).
func viaName(c int) string {
	switch c {
	case 1:
		return "Marítima, fluvial y lacustre"
	case 4:
		return "Aérea"
	case 5:
		return "Postal"
	case 6:
		return "Ferroviaria"
	case 7:
		return "Carretera o terrestre"
	case 8:
		return "Oleoductos, gasoductos"
	case 9:
		return "Tendido eléctrico"
	case 10:
		return "Otra"
	}
	return "Código " + strconv.Itoa(c)
}

// modalidadName names a sale modality code (Aduana/CodModVenta).
func modalidadName(c int) string {
	switch c {
	case 1:
		return "A firme"
	case 2:
		return "Bajo condición"
	case 3:
		return "En consignación libre"
	case 4:
		return "En consignación con un mínimo a firme"
	case 9:
		return "Sin pago"
	}
	return "Código " + strconv.Itoa(c)
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
