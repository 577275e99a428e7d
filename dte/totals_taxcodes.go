package dte

// This file is the one table of the additional tax and retention codes: the
// SII's ImpAdicDTEType (SiiTypes_v10.xsd) and how each code moves a
// document's total. Validate accepts exactly the codes ComputeTotals can
// compute.

// taxClass says how an additional tax or retention code moves MntTotal.
type taxClass uint8

const (
	// taxUnclassified: the schema lists the code, but the SII material
	// dtekit follows does not say whether it adds to the total or is
	// withheld from it (54, 55). Such a code is refused.
	taxUnclassified taxClass = iota
	// taxAddition: added to MntTotal.
	taxAddition
	// taxRetention: withheld, subtracted from MntTotal (53, a retained
	// income tax).
	taxRetention
	// taxIVARetention: a retention of the IVA: withheld, and counted toward
	// IVANoRet.
	taxIVARetention
)

// taxCode describes one code of ImpAdicDTEType.
type taxCode struct {
	class taxClass
	// rate is the legal default rate in percent, when hasRate; other codes
	// need tasa_imp or monto_imp.
	rate    fxNum
	hasRate bool
}

// retention reports whether the code's amount is withheld from MntTotal.
func (t taxCode) retention() bool { return t.class == taxRetention || t.class == taxIVARetention }

// lookupTaxCode returns what dtekit knows of code c, and false when c is not
// a code of the SII's ImpAdicDTEType.
func lookupTaxCode(c int) (taxCode, bool) {
	rate := func(v int64, scale int) taxCode {
		return taxCode{class: taxAddition, rate: fxNum{v: v, scale: scale}, hasRate: true}
	}
	switch c {
	case 15: // IVA retained in full
		return taxCode{class: taxIVARetention, rate: fxNum{v: totIVARate}, hasRate: true}, true
	case 16, 30, 31, 32, 33, 34, 36, 37, 38, 39, 40, 41, 46, 47, 48, 49,
		301, 321, 331, 341, 361, 371, 481:
		return taxCode{class: taxIVARetention}, true
	case 53:
		return taxCode{class: taxRetention}, true
	case 17, 18:
		return rate(5, 0), true
	case 19:
		return rate(12, 0), true
	case 23, 44:
		return rate(15, 0), true
	case 24:
		return rate(315, 1), true
	case 25, 26:
		return rate(205, 1), true
	case 27:
		return rate(10, 0), true
	case 45:
		return rate(50, 0), true
	case 271:
		return rate(18, 0), true
	case 14, 28, 35, 50, 51, 52:
		return taxCode{class: taxAddition}, true
	case 54, 55:
		return taxCode{class: taxUnclassified}, true
	}
	return taxCode{}, false
}

// TaxKind tells how an additional tax or retention code (the TipoImp of
// ImptoReten) moves a document's MntTotal, as ComputeTotals applies it.
type TaxKind uint8

// The kinds of tax code.
const (
	// TaxUnknown is a code outside the SII's ImpAdicDTEType, or one whose
	// effect the SII material dtekit follows does not state (54, 55).
	TaxUnknown TaxKind = iota
	// TaxAdded is an additional tax, added to the total.
	TaxAdded
	// TaxWithheld is withheld from the total without being IVA (53, a
	// retained income tax).
	TaxWithheld
	// TaxIVAWithheld is a retention of IVA, withheld from the total: in
	// full (15) or in part (the other codes of the kind).
	TaxIVAWithheld
)

// TaxCodeKind returns the kind of an additional tax or retention code, from
// the same table ComputeTotals and Validate use.
func TaxCodeKind(code int) TaxKind {
	tc, ok := lookupTaxCode(code)
	if !ok {
		return TaxUnknown
	}
	switch tc.class {
	case taxAddition:
		return TaxAdded
	case taxRetention:
		return TaxWithheld
	case taxIVARetention:
		return TaxIVAWithheld
	}
	return TaxUnknown
}
