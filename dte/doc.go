// Package dte builds, checks and reads Chilean electronic tax documents
// (documentos tributarios electrónicos) of the twelve types dtekit emits:
// facturas, boletas, the liquidación-factura, guías de despacho, notes and
// export documents.
//
// A request is the JSON object of the REST contract (§2.3), EmitirDTERequest.
// DecodeRequest reads it strictly (unknown fields and wrong JSON types are
// errors, never silently dropped); Validate checks it; ComputeTotals computes
// every amount with the SII's rules; an Emitter turns it into a signed DTE:
//
//	validate → totals → XML → folio → CAF checks → TED → signature
//
// BuildEnvio packs signed DTEs into the envelope sent to the SII, and Verify
// checks a DTE or envelope: every signature, every stamp (TED) and every
// total, recomputed from the lines.
//
// Problems with a request are *ValidationError values listing every
// problem at once, each a FieldError with the field's dot path (the
// `details` of the contract's VALIDATION_ERROR, §7). Detail codes are stable (DetailCodes lists them). Money is never a
// float: Decimal keeps a number as its text, and the package computes in
// exact 18-digit fixed point with the SII's half-up rounding.
//
// # Validation rules
//
// Validate (ValidateAt, with the current instant given) checks a request
// against the contract (§2.3, §8) and the limits of the SII's schemas, and
// reports every problem at once: one FieldError per field, the first rule it
// breaks, with a dot path ("detalle[2].cantidad") and a DetailCode. Beyond the
// contract's own rules (enumerations, lengths, quantity ≥ 0.000001,
// percentages 0–100, references on notes, tipo_doc_liq on 43, ...), these
// decisions apply where the contract is silent.
//
// Types and fields:
//   - tipo_dte must be one of the 12 types; when it isn't, the type-dependent
//     rules are skipped.
//   - detalle needs at least one line; at most 60 (1000 on boletas 39/41).
//   - comisiones: only on 43 (at most 20).
//   - impuestos_retenciones: on 33, 43, 46, 52, 56, 61 (at most 20, tipo_imp
//     unique, a code of the SII's ImpAdicDTEType other than 54 and 55, which
//     the totals cannot classify); code 15 (IVA retained in
//     full) only on 46 and its notes 56, 61; each entry needs tasa_imp or
//     monto_imp except code 15, whose amount is the whole IVA.
//   - detalle[].cod_imp_adic: the same types and codes, and not on an exempt
//     line (ind_exe 1).
//   - referencias: at most 40, at least one on 56, 61, 111, 112; codigo_ref
//     (1–3) only on those notes.
//   - ind_traslado (1–9): required on 52, not allowed elsewhere.
//   - tipo_despacho (1–3): not on boletas 39/41 nor on 43 (their schemas
//     have no such element).
//   - ind_servicio: the values each schema accepts: 1–3 on 33, 34, 43, 46,
//     52, 56, 61; 1–4 on boletas; 3–5 on 110–112.
//   - descuentos_globales (at most 20) and the line's descuento_pct /
//     recargo_pct: not on 43, whose schema has no such elements.
//   - export_data: required on 110–112 and not allowed elsewhere;
//     tipo_doc_id is never allowed (the contract forbids it on 110–112, the
//     only types that carry export_data).
//   - receptor: razon_social 100 characters, giro 40, direccion 70, comuna
//     20, ciudad 20 (the schema's RznSocRecep, GiroRecep, DirRecep,
//     CmnaRecep, CiudadRecep); giro, direccion and comuna are required on 43,
//     as its schema demands. The anonymous RUT 66666666-6 is accepted only on
//     boletas.
//   - tipo_doc_liq: required on every line of 43, not allowed elsewhere.
//
// Lines and amounts:
//   - cantidad and precio are required, except on the lines of a note that
//     corrects a text (56, 61, 111, 112 with a reference of codigo_ref 2)
//     or voids a note (56, 61 with a reference of codigo_ref 1 to a 56 or
//     61) that carry neither and no monto_item other than 0.
//   - cantidad: 0.000001 up to 12 integer digits and 6 decimals (QtyItem).
//   - precio: ≥ 0 (0 for lines without value, such as internal transfers on
//     52), up to 12 integer digits; an integer on CLP documents, up to 6
//     decimals on exports (PrcItem).
//   - monto_item: up to 18 digits; ≥ 0 except on 43, whose MontoItem may be
//     negative; an integer except on exports (up to 4 decimals).
//   - a line's cantidad × precio, and the sum of the lines, must fit the
//     SII's 18-digit amounts.
//   - descuento_pct, recargo_pct: 0–100 with up to 2 decimals.
//   - nombre up to 200 characters (carried as LineaDetalle.ItemName
//     explains); dsc_item up to 1000, also after ItemName joins a long nombre
//     to it.
//   - valor_dr > 0 with up to 2 decimals; at most 100 for %, an integer for $
//     on CLP documents; nro_lin_dr 1–99 and unique (an omitted one counts as
//     the entry's 1-based position); glosa_dr 45 characters.
//   - comisiones: glosa 60 characters; tasa_comision over 0 and at most 100;
//     amounts within 18 digits (they may be negative on 43).
//   - references: folio_ref > 0 and at most 18 digits (0 is accepted for
//     free-code references such as "SET"); a numeric tipo_doc_ref is 1–999, a
//     text one at most 3 characters; razon_ref up to 200 characters (carried
//     as Referencia.RazonRefXML explains). On a boleta, a reference of code
//     "SET" (the SII's test set) needs no fecha_ref and is written CodRef SET
//     with its RazonRef only, as the boleta schema has it.
//
// Dates: fecha_emision and fecha_ref are real YYYY-MM-DD dates between
// 2000-01-01 and 2050-12-31 (the SII's FechaType); fecha_emision may not be
// later than today in Chile, and fecha_ref not later than the issue date.
// Whether an official exchange rate was published for the date of an export
// with tpo_cambio cannot be checked offline and is not.
//
// Text: every text must be representable in ISO-8859-1 (NOT_LATIN1) and free
// of control characters (INVALID_CHARACTER), except line feeds and tabs in
// dsc_item. Lengths count characters, not bytes. metadata is not checked.
//
// Export data: tpo_moneda is one of the SII's currency names (TipMonType,
// e.g. "DOLAR USA"); tpo_cambio > 0 with up to 4 decimals and 6 integer
// digits; mnt_flete, mnt_seguro > 0 and mnt_export ≥ 0 with up to 4 decimals;
// total_clausula > 0 with 2 decimals; peso_bruto, peso_neto ≥ 0 with 2
// decimals and 8 integer digits; clausula_venta as ClausulaVentaCodigo reads
// it; puerto_embarque, puerto_desembarque (4 digits), pais_recep, pais_dest
// and tipo_bulto (3 digits) are the numeric codes of the customs tables the
// schema's Aduana element carries; nacionalidad at most 3 characters, num_id
// 20, marcas 255; the integer codes 1–99; tara 1–9999999; total_bultos ≥ 1.
//
// Transport (Res. Ex. SII 154/2025, docs/guias-transporte.md): transporte
// is allowed where the schema has Transporte (33, 34, 46, 52, 56, 61,
// 110–112); patente at most 8 characters, chofer.nombre 30,
// direccion_destino 70, comuna_destino and ciudad_destino 20;
// rut_transportista and chofer.rut are RUTs; a chofer needs both rut and
// nombre. On a document dated from TransporteDesde (2026-05-01), a guía
// (52) needs every field: a missing one is refused (REQUIRED, named by
// its field) in producción and is a warning in certificación; a factura
// (33, 34, 46) that carries transporte or tipo_despacho gets warnings
// instead. ValidateFor returns the warnings; ValidateAt applies
// producción's rules and drops them.
//
// Amounts: when every rule above holds, Validate computes the totals (see
// "Totals rules") from the numbers it has just read and reports whatever the
// arithmetic refuses, against the field at fault: a global movement on a
// bucket without a valued line or taking it below zero, a line discount
// beside an explicit monto_item, a tax code without a default rate and
// without tasa_imp or monto_imp, more IVA retained than the document
// carries, a total that would be negative. So Validate()==nil guarantees
// that ComputeTotals succeeds on the same request; a property test over
// generated requests holds the package to it.
//
// # Totals rules
//
// ComputeTotals applies these rules, including the choices made where the
// SII material is silent:
//
//   - Amounts are CLP integers, except on exports (110–112), whose line
//     amounts and totals carry up to 4 decimals in the document's currency.
//   - Line: gross = round(cantidad × precio) (cantidad defaults to 1 when only
//     precio is given); DescuentoMonto = round(gross × descuento_pct / 100);
//     RecargoMonto = round((gross − DescuentoMonto) × recargo_pct / 100); and
//     MontoItem = gross − DescuentoMonto + RecargoMonto, i.e. MontoItem is net
//     of the line's discount and surcharge, as DTE_v10.xsd documents it ("Monto
//     por Linea de Detalle") and as the SII recomputes it. DescuentoMonto and
//     RecargoMonto are whole numbers even on exports, because the schema types
//     them as positive integers (MntImpType); a zero amount is omitted.
//     An explicit monto_item is the final MontoItem, kept as given; combining
//     it with a line discount or surcharge is rejected (NOT_ALLOWED). A line with
//     neither precio nor monto_item (a text correction, an unvalued guía line)
//     has MontoItem 0 and does not make its bucket appear in Totales.
//   - Buckets: taxable (afecto); exempt (ind_exe 1, and every line of the
//     exempt types 34, 41, 110, 111, 112 whatever ind_exe says); not billable
//     (ind_exe 2 — beyond the contract, which allows only 1, but the SDK
//     accepts it — and global movements with ind_exe_dr 2). The not-billable
//     bucket goes to MontoNF and never into MntTotal; a % movement on an empty
//     not-billable bucket is rejected, a $ one sets MontoNF on its own.
//   - Global discounts/surcharges apply in request order, each % one to the
//     bucket's running value; D subtracts, R adds. An omitted ind_exe_dr means
//     the exempt bucket on exempt and export documents and the taxable bucket
//     (the gross total on boleta 39) otherwise. A movement whose bucket has no
//     valued line is rejected (INVALID_VALUE) rather than silently worth zero. A
//     bucket may not go negative. The liquidación-factura 43 carries no
//     discounts or surcharges at all (its schema has no place for them).
//   - IVA = round(MntNeto × 19 / 100), once, on the total. Boleta 39 prices
//     include IVA: MntNeto = round(gross_afecto / 1.19), IVA = gross_afecto −
//     MntNeto. Boletas' Totales have no TasaIVA element, so it is left empty
//     there; boleta 39 omits a zero IVA (positive integer in the schema).
//   - Additional taxes and retentions (ImptoReten), on 33, 43, 46, 52, 56, 61
//     only (the other schemas have no ImptoReten). Retentions, subtracted from
//     MntTotal: 15, 16, 30–34, 36–41, 46–49, 53, 301, 321, 331, 341, 361, 371,
//     481 (all IVA retentions except 53, a retained income tax). Additions,
//     added to MntTotal: 14, 17–19, 23–28, 35, 44, 45, 50–52, 271. Codes 54 and
//     55 are rejected (unclassified). The base of a code carried by lines
//     (cod_imp_adic) is the sum of those lines' MontoItem, prorated by
//     MntNeto / (sum of taxable lines) when global movements changed the
//     taxable bucket; a code given only in impuestos_retenciones is based on
//     MntNeto. monto_imp, when given, wins over the rate; otherwise the rate is
//     tasa_imp or the legal default of 15 (19, i.e. the whole IVA), 17 and 18
//     (5), 19 (12), 23 and 44 (15), 24 (31.5), 25 and 26 (20.5), 27 (10),
//     45 (50), 271 (18); other codes need tasa_imp or monto_imp. A partial IVA
//     retention leaves IVANoRet = IVA − retained; retaining more than the IVA
//     is rejected. MntTotal = MntNeto + MntExe + IVA + additions − retentions,
//     so the factura de compra 46 with code 15 totals MntNeto + MntExe.
//   - Liquidación-factura 43: Totales/Comisiones always present, with the sums
//     of ValComNeto, ValComExe and ValComIVA (each ValComIVA, when absent, is
//     round(ValComNeto × 0.19)); tipo_movim C and O are summed with the sign
//     their values carry. MntTotal = MntNeto + MntExe + IVA (± ImptoReten) −
//     (ValComNeto + ValComExe + ValComIVA). Negative amounts are allowed only in
//     43.
//   - Exports 110–112: TpoMoneda from export_data.tpo_moneda (required), all
//     lines exempt, MntExe and MntTotal with up to 4 decimals, MntTotal 0 when
//     forma_pago_exp is 21 (sin pago). With export_data.tpo_cambio the
//     OtraMoneda block is "PESO CL" with TpoCambio, MntExeOtrMnda and
//     MntTotOtrMnda = round(amount × TpoCambio) as whole pesos; tpo_cambio on a
//     PESO CL document is rejected (the other currency would be unknown).
//   - Notes: a text correction (codigo_ref 2) whose lines carry no amounts
//     comes to MntTotal 0 with no other amount. A voiding note (codigo_ref 1)
//     must carry the referenced document's lines, since dtekit cannot read
//     that document; the totals are computed from what the note carries.
//     One exception, a case of the SII's basic certification set: a debit
//     or credit note (56, 61) that voids a note 56 or 61 may carry lines
//     with a name and no cantidad, precio or monto_item (the voided note may
//     itself have only corrected a text), and then comes to MntTotal 0.
//   - Guía 52 is computed the same way whatever ind_traslado says: amounts of
//     a transfer that is not a sale are informative, but the SII still checks
//     that they add up.
//   - Totales elements: MntNeto/TasaIVA/IVA appear when a taxable line carries
//     an amount, MntExe when an exempt one does (always on exports), MontoNF
//     when the not-billable bucket is used, MntTotal always.
package dte
