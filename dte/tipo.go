package dte

import (
	"fmt"

	"github.com/dtekit/dtekit/internal/chile"
)

// TipoDTE is an SII electronic document type code (contract §2.1).
type TipoDTE int

// The twelve document types dtekit emits.
const (
	FacturaElectronica                TipoDTE = 33
	FacturaNoAfectaOExenta            TipoDTE = 34
	BoletaElectronica                 TipoDTE = 39
	BoletaExentaElectronica           TipoDTE = 41
	LiquidacionFacturaElectronica     TipoDTE = 43
	FacturaCompraElectronica          TipoDTE = 46
	GuiaDespachoElectronica           TipoDTE = 52
	NotaDebitoElectronica             TipoDTE = 56
	NotaCreditoElectronica            TipoDTE = 61
	FacturaExportacionElectronica     TipoDTE = 110
	NotaDebitoExportacionElectronica  TipoDTE = 111
	NotaCreditoExportacionElectronica TipoDTE = 112
)

// Tipos returns the twelve supported types in ascending order (a new slice
// on each call, so callers may keep or change it).
func Tipos() []TipoDTE { return []TipoDTE{33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112} }

var tipoNames = map[TipoDTE]string{
	33:  "FACTURA ELECTRÓNICA",
	34:  "FACTURA NO AFECTA O EXENTA ELECTRÓNICA",
	39:  "BOLETA ELECTRÓNICA",
	41:  "BOLETA NO AFECTA O EXENTA ELECTRÓNICA",
	43:  "LIQUIDACIÓN FACTURA ELECTRÓNICA",
	46:  "FACTURA DE COMPRA ELECTRÓNICA",
	52:  "GUÍA DE DESPACHO ELECTRÓNICA",
	56:  "NOTA DE DÉBITO ELECTRÓNICA",
	61:  "NOTA DE CRÉDITO ELECTRÓNICA",
	110: "FACTURA DE EXPORTACIÓN ELECTRÓNICA",
	111: "NOTA DE DÉBITO DE EXPORTACIÓN ELECTRÓNICA",
	112: "NOTA DE CRÉDITO DE EXPORTACIÓN ELECTRÓNICA",
}

// Valid reports whether t is one of the twelve supported types.
func (t TipoDTE) Valid() bool { _, ok := tipoNames[t]; return ok }

// Name returns the SII's printed name of the type, such as
// "FACTURA ELECTRÓNICA", or "TIPO n" for an unsupported code.
func (t TipoDTE) Name() string {
	if n, ok := tipoNames[t]; ok {
		return n
	}
	return fmt.Sprintf("TIPO %d", int(t))
}

// String returns the numeric code, as the SII writes it.
func (t TipoDTE) String() string { return fmt.Sprint(int(t)) }

// IsBoleta reports whether t is a boleta (39, 41), which follows the
// EnvioBOLETA schema, prices gross of IVA and may omit the receptor.
func (t TipoDTE) IsBoleta() bool { return t == 39 || t == 41 }

// IsExempt reports whether t is exempt by nature: every line is exempt and
// an omitted ind_exe_dr means 1 (34, 41 and the export types).
func (t TipoDTE) IsExempt() bool { return t == 34 || t == 41 || t.IsExport() }

// IsExport reports whether t is an export document (110, 111, 112).
func (t TipoDTE) IsExport() bool { return t == 110 || t == 111 || t == 112 }

// IsNote reports whether t is a debit or credit note (56, 61, 111, 112).
func (t TipoDTE) IsNote() bool { return t == 56 || t == 61 || t == 111 || t == 112 }

// NeedsReferences reports whether a document of type t must carry at least
// one reference (the notes 56, 61, 111, 112).
func (t TipoDTE) NeedsReferences() bool { return t.IsNote() }

// The per-type allowances below are the one statement of which fields and
// amounts each document type carries. Validate and ComputeTotals both ask
// them, so they cannot disagree.

// CarriesImpuestos reports whether documents of type t carry additional
// taxes and retentions (impuestos_retenciones, a line's cod_imp_adic; the
// schema's ImptoReten and CodImpAdic): 33, 43, 46, 52, 56 and 61.
func (t TipoDTE) CarriesImpuestos() bool {
	switch t {
	case 33, 43, 46, 52, 56, 61:
		return true
	}
	return false
}

// RetainsIVAInFull reports whether t may carry code 15, the IVA retained in
// full by the buyer: the factura de compra 46 and the notes 56, 61 that
// adjust one.
func (t TipoDTE) RetainsIVAInFull() bool { return t == 46 || t == 56 || t == 61 }

// CarriesDescuentos reports whether t carries discounts and surcharges, on
// its lines (descuento_pct, recargo_pct) or global (descuentos_globales):
// every type but the liquidación-factura 43, whose schema has no place for
// them.
func (t TipoDTE) CarriesDescuentos() bool { return t.Valid() && t != 43 }

// CarriesComisiones reports whether t carries commissions: only the
// liquidación-factura 43.
func (t TipoDTE) CarriesComisiones() bool { return t == 43 }

// CarriesNoFacturable reports whether t has a not-billable amount (a line's
// ind_exe 2, a global movement's ind_exe_dr 2, Totales/MontoNF): every type
// but the exports and the liquidación-factura 43.
func (t TipoDTE) CarriesNoFacturable() bool { return t.Valid() && !t.IsExport() && t != 43 }

// AllowsNegativeAmounts reports whether t's amounts may be negative: only
// the liquidación-factura 43, whose commissions may exceed what it settles.
func (t TipoDTE) AllowsNegativeAmounts() bool { return t == 43 }

// CarriesIndTraslado reports whether t carries ind_traslado (IndTraslado,
// the kind of goods movement): only the guía de despacho 52, where it is
// required.
func (t TipoDTE) CarriesIndTraslado() bool { return t == 52 }

// CarriesTipoDespacho reports whether t carries tipo_despacho
// (TipoDespacho): every type but the boletas 39, 41 and the
// liquidación-factura 43, whose schemas have no such element.
func (t TipoDTE) CarriesTipoDespacho() bool { return t.Valid() && !t.IsBoleta() && t != 43 }

// CarriesTransporte reports whether the type's schema has the Transporte
// block (Patente, RUTTrans, Chofer, DirDest, CmnaDest, CiudadDest): every
// type but the boletas 39, 41 and the liquidación-factura 43.
func (t TipoDTE) CarriesTransporte() bool { return t.Valid() && !t.IsBoleta() && t != 43 }

// SupportsTransfer reports whether a document of the type may be the one
// that accompanies goods on the road, so that Res. Ex. SII 154/2025 asks
// it for the transport data from 2026-05-01: the guía de despacho 52,
// always, and the facturas 33, 34 and 46 when they, not a guía, go with
// the goods (see docs/guias-transporte.md).
func (t TipoDTE) SupportsTransfer() bool { return t == 52 || t == 33 || t == 34 || t == 46 }

// IndServicioRange returns the ind_servicio values t's schema accepts:
// 1–4 on boletas, 3–5 on the export documents, 1–3 on the others.
func (t TipoDTE) IndServicioRange() (lo, hi int) {
	switch {
	case t.IsBoleta():
		return 1, 4
	case t.IsExport():
		return 3, 5
	}
	return 1, 3
}

// Transferable reports whether a document of type t can be ceded through
// the SII's registry of credit transfers (an AEC's DocumentoDTECedido
// carries 33, 34, 43 or 46; the guía 52 has a cedible printed copy but is
// ceded with its factura, not on its own).
func (t TipoDTE) Transferable() bool {
	switch t {
	case 33, 34, 43, 46:
		return true
	}
	return false
}

// HasCedible reports whether t has a transferable (cedible) printed copy
// under Ley 19.983: 33, 34, 43, 46, and the guía 52 ("cedible con su factura").
func (t TipoDTE) HasCedible() bool {
	switch t {
	case 33, 34, 43, 46, 52:
		return true
	}
	return false
}

// CAFExpires reports whether a CAF for t is usable only for six months from
// its authorization date (33, 43, 46, 56, 61).
func (t TipoDTE) CAFExpires() bool { return chile.CAFExpires(int(t)) }

// Estado is a DTE lifecycle state (contract §3).
type Estado string

// The eight states of contract §3, serialized exactly as written.
const (
	EstadoBorrador   Estado = "borrador"
	EstadoGenerado   Estado = "generado"
	EstadoFirmado    Estado = "firmado"
	EstadoEnviando   Estado = "enviando"
	EstadoProcesando Estado = "procesando"
	EstadoAceptado   Estado = "aceptado"
	EstadoRechazado  Estado = "rechazado"
	EstadoConReparos Estado = "con_reparos"
)

// Estados returns the eight states in lifecycle order (a new slice on each
// call).
func Estados() []Estado {
	return []Estado{EstadoBorrador, EstadoGenerado, EstadoFirmado, EstadoEnviando,
		EstadoProcesando, EstadoAceptado, EstadoRechazado, EstadoConReparos}
}

// Valid reports whether e is one of the eight contract states.
func (e Estado) Valid() bool {
	switch e {
	case EstadoBorrador, EstadoGenerado, EstadoFirmado, EstadoEnviando,
		EstadoProcesando, EstadoAceptado, EstadoRechazado, EstadoConReparos:
		return true
	}
	return false
}

// Final reports whether e is a state the SII will not change any more.
func (e Estado) Final() bool {
	return e == EstadoAceptado || e == EstadoRechazado || e == EstadoConReparos
}
