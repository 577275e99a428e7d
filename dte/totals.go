package dte

import (
	"fmt"
	"strconv"
	"strings"
)

// ComputeTotals computes every detail line's MontoItem, DescuentoMonto and
// RecargoMonto, the amount of every global discount or surcharge, and the
// document's Totales (plus OtraMoneda on exports) from a request, with the
// SII's rules (domain notes §2). It is pure and deterministic, and works in
// exact integer arithmetic with half-up rounding (half away from zero for
// negative amounts); no money ever passes through a float.
//
// On a request Validate accepts it always succeeds (Validate computes the
// same totals before it answers nil). On any other input it never panics:
// anything it cannot compute is reported as a *ValidationError with one FieldError
// naming the field, with one of Validate's detail codes (INVALID_FORMAT,
// INVALID_DECIMALS, INVALID_VALUE, OUT_OF_RANGE, NOT_ALLOWED, REQUIRED,
// DUPLICATE).
//
// The rules, including the choices made where the SII material is silent,
// are listed in the package documentation ("Totals rules").
func ComputeTotals(r *EmitirDTERequest) (*Totals, error) { return computeTotals(r, nil) }

// lineNums holds the numbers of one detail line as Validate read them, so
// the totals of a validated request start from the very values the rules
// were checked on.
type lineNums struct {
	qty, price, monto, dsc, rcg fxNum
	hasQty, hasPrice, hasMonto  bool
}

// computeTotals is ComputeTotals; pre, when not nil, holds the numbers of
// every line as Validate read them, and they are not parsed again.
func computeTotals(r *EmitirDTERequest, pre []lineNums) (*Totals, error) {
	if r == nil {
		return nil, totErr(totTop(""), CodeRequired, "the request is missing (nil)")
	}
	if !r.TipoDTE.Valid() {
		return nil, totErr(totTop("tipo_dte"), CodeInvalidValue, "document type %d is not one of the 12 supported types", int(r.TipoDTE))
	}
	c := &totCalc{r: r, tipo: r.TipoDTE}
	if len(pre) == len(r.Detalle) {
		c.pre = pre
	}
	if c.tipo.IsExport() {
		c.places = 4
	}
	out := &Totals{Detalle: make([]LineTotals, len(r.Detalle))}
	for i := range r.Detalle {
		if err := c.line(i, &r.Detalle[i], &out.Detalle[i]); err != nil {
			return nil, err
		}
	}
	c.afectoLines = c.afecto
	if len(r.DescuentosGlobales) > 0 {
		if !c.tipo.CarriesDescuentos() {
			return nil, totErr(totTop("descuentos_globales"), CodeNotAllowed, "a liquidación-factura (43) carries no global discounts or surcharges")
		}
		out.DscRcgGlobal = make([]GlobalTotals, len(r.DescuentosGlobales))
		for i := range r.DescuentosGlobales {
			if err := c.global(i, &r.DescuentosGlobales[i], &out.DscRcgGlobal[i]); err != nil {
				return nil, err
			}
		}
	}
	if err := c.totales(&out.Totales); err != nil {
		return nil, err
	}
	if c.tipo.IsExport() {
		om, err := c.otraMoneda()
		if err != nil {
			return nil, err
		}
		out.OtraMoneda = om
	}
	return out, nil
}

// The buckets a line or a global movement falls in.
const (
	totAfecto = 0 // taxable
	totExento = 1 // exempt (IndExe / IndExeDR 1)
	totNoFact = 2 // not billable (IndExe / IndExeDR 2)
)

// totIVARate is TasaIVA, 19 %.
const totIVARate = 19

// totCalc carries the running state of one ComputeTotals call.
type totCalc struct {
	r      *EmitirDTERequest
	pre    []lineNums // the lines' numbers as Validate read them, or nil
	tipo   TipoDTE
	places int // decimals of the document's amounts: 0 (CLP) or 4 (exports)

	afecto, exento, noFact   int64 // bucket values, in units of 10^-places
	hasAfecto, hasExe, hasNF bool  // whether a valued line or movement used the bucket
	afectoLines              int64 // the taxable bucket before global movements
	codes                    []totCodeBase
	neto, iva, adds, rets    int64
	ivaRet                   int64
	hasIVARet                bool
	comNeto, comExe, comIVA  int64
	firstIVARet              int // entry index, or −1−line for a line code
	exportTotal              int64
}

// totCodeBase accumulates the lines carrying one additional-tax code.
type totCodeBase struct {
	code int
	base int64
	line int // first line carrying the code, for error messages
}

// totField names a request field; its text is built only for an error.
type totField struct {
	list string // "detalle", "descuentos_globales", ... or "" for a plain name
	i    int
	name string
}

func (f totField) String() string {
	if f.list == "" {
		return f.name
	}
	s := f.list + "[" + strconv.Itoa(f.i) + "]"
	if f.name != "" {
		s += "." + f.name
	}
	return s
}

// totTop names a field outside any list.
func totTop(name string) totField { return totField{name: name} }

// totLF names a field of detail line i.
func totLF(i int, name string) totField { return totField{list: "detalle", i: i, name: name} }

// totErr returns a one-detail *ValidationError.
func totErr(field totField, code DetailCode, format string, args ...any) error {
	return &ValidationError{Details: []FieldError{{Field: field.String(), Code: code, Message: fmt.Sprintf(format, args...)}}}
}

// totNum parses a decimal field, reporting INVALID_FORMAT against field.
func totNum(d Decimal, field totField) (fxNum, error) {
	n, ok := fxParse(d)
	if !ok {
		return fxNum{}, totErr(field, CodeInvalidFormat, "%q is not a plain decimal number of at most 18 significant digits", string(d))
	}
	return n, nil
}

// lineNum returns a number of detail line i: the one Validate read when it
// ran, or d parsed now.
func (c *totCalc) lineNum(i int, name string, d Decimal, pick func(*lineNums) fxNum) (fxNum, error) {
	if c.pre != nil {
		return pick(&c.pre[i]), nil
	}
	return totNum(d, totLF(i, name))
}

// rangeErr reports an amount beyond what the SII can carry.
func (c *totCalc) rangeErr(field totField) error {
	return totErr(field, CodeOutOfRange, "the amount is out of range: it exceeds the 18 digits the SII allows, or its inputs carry more decimals than can be computed exactly")
}

func (c *totCalc) inRange(v int64) bool { return v <= fxMaxAmount && v >= -fxMaxAmount }

// line computes one detail line and adds it to its bucket.
func (c *totCalc) line(i int, l *LineaDetalle, out *LineTotals) error {
	out.NroLinDet = i + 1
	bucket := totAfecto
	if c.tipo.IsExempt() {
		bucket = totExento
	}
	if l.IndExe != nil {
		switch *l.IndExe {
		case 1:
			bucket = totExento
		case 2:
			if !c.tipo.CarriesNoFacturable() {
				return totErr(totLF(i, "ind_exe"), CodeNotAllowed, "a document of type %d has no not-billable amount (ind_exe 2)", int(c.tipo))
			}
			bucket = totNoFact
		default:
			return totErr(totLF(i, "ind_exe"), CodeInvalidValue, "ind_exe must be 1 (exempt), not %d", *l.IndExe)
		}
		out.IndExe = *l.IndExe
	}

	var gross int64
	valued := false
	amountField := "precio"
	switch {
	case l.MontoItem.IsSet():
		amountField = "monto_item"
		for _, f := range []struct {
			d    Decimal
			name string
		}{{l.DescuentoPct, "descuento_pct"}, {l.RecargoPct, "recargo_pct"}} {
			if f.d.IsSet() {
				return totErr(totLF(i, f.name), CodeNotAllowed, "monto_item is the line's final amount; give cantidad and precio to apply %s", f.name)
			}
		}
		n, err := c.lineNum(i, "monto_item", l.MontoItem, func(p *lineNums) fxNum { return p.monto })
		if err != nil {
			return err
		}
		v, ok := fxToPlaces(n, c.places)
		if !ok {
			return totErr(totLF(i, "monto_item"), CodeInvalidDecimals, "monto_item %s has more than %d decimals or is too large", string(l.MontoItem), c.places)
		}
		gross, valued = v, true
	case l.Precio.IsSet():
		price, err := c.lineNum(i, "precio", l.Precio, func(p *lineNums) fxNum { return p.price })
		if err != nil {
			return err
		}
		qty := fxNum{v: 1}
		if l.Cantidad.IsSet() {
			if qty, err = c.lineNum(i, "cantidad", l.Cantidad, func(p *lineNums) fxNum { return p.qty }); err != nil {
				return err
			}
		}
		v, ok := fxMulShift(qty.v, price.v, c.places-qty.scale-price.scale)
		if !ok || !c.inRange(v) {
			return c.rangeErr(totLF(i, "precio"))
		}
		gross, valued = v, true
	case l.Cantidad.IsSet():
		if _, err := c.lineNum(i, "cantidad", l.Cantidad, func(p *lineNums) fxNum { return p.qty }); err != nil {
			return err
		}
	}

	// Line discount and surcharge: whole units (MntImpType), kept in the
	// document's units for the sums.
	var dsc, rcg int64
	if l.DescuentoPct.IsSet() {
		whole, units, err := c.linePct(i, "descuento_pct", l.DescuentoPct, func(p *lineNums) fxNum { return p.dsc }, gross)
		if err != nil {
			return err
		}
		dsc = units
		if whole != 0 {
			out.DescuentoMonto = fxFormat(whole, 0)
		}
	}
	afterDsc, ok := fxSub(gross, dsc)
	if !ok {
		return c.rangeErr(totLF(i, "descuento_pct"))
	}
	if l.RecargoPct.IsSet() {
		whole, units, err := c.linePct(i, "recargo_pct", l.RecargoPct, func(p *lineNums) fxNum { return p.rcg }, afterDsc)
		if err != nil {
			return err
		}
		rcg = units
		if whole != 0 {
			out.RecargoMonto = fxFormat(whole, 0)
		}
	}
	net, ok := fxAdd(afterDsc, rcg)
	if !ok || !c.inRange(net) {
		return c.rangeErr(totLF(i, amountField))
	}
	if net < 0 && !c.tipo.AllowsNegativeAmounts() {
		return totErr(totLF(i, amountField), CodeOutOfRange, "the line comes to %s; only a liquidación-factura (43) may carry negative amounts", fxFormat(net, c.places))
	}
	out.MontoItem = fxFormat(net, c.places)

	if l.CodImpAdic != nil {
		field := totLF(i, "cod_imp_adic")
		if !c.tipo.CarriesImpuestos() {
			return totErr(field, CodeNotAllowed, "a document of type %d carries no additional taxes or retentions", int(c.tipo))
		}
		if bucket != totAfecto {
			return totErr(field, CodeNotAllowed, "an additional tax or retention applies only to a taxable line, not an exempt or not-billable one")
		}
		if tc, ok := lookupTaxCode(*l.CodImpAdic); !ok || tc.class == taxUnclassified {
			return totErr(field, CodeInvalidValue, "%d is not a known additional tax or retention code", *l.CodImpAdic)
		}
		found := false
		for k := range c.codes {
			if c.codes[k].code == *l.CodImpAdic {
				if c.codes[k].base, ok = fxAdd(c.codes[k].base, net); !ok {
					return c.rangeErr(field)
				}
				found = true
				break
			}
		}
		if !found {
			c.codes = append(c.codes, totCodeBase{code: *l.CodImpAdic, base: net, line: i})
		}
	}

	var sum *int64
	switch bucket {
	case totAfecto:
		sum = &c.afecto
		c.hasAfecto = c.hasAfecto || valued
	case totExento:
		sum = &c.exento
		c.hasExe = c.hasExe || valued
	default:
		sum = &c.noFact
		c.hasNF = c.hasNF || valued
	}
	if *sum, ok = fxAdd(*sum, net); !ok || !c.inRange(*sum) {
		return c.rangeErr(totLF(i, amountField))
	}
	return nil
}

// linePct returns round(base × pct / 100) for a line's discount or
// surcharge percentage, in whole units and in the document's units.
func (c *totCalc) linePct(i int, name string, pct Decimal, pick func(*lineNums) fxNum, base int64) (whole, units int64, err error) {
	field := totLF(i, name)
	if !c.tipo.CarriesDescuentos() {
		return 0, 0, totErr(field, CodeNotAllowed, "a liquidación-factura (43) line carries no discount or surcharge")
	}
	p, err := c.lineNum(i, name, pct, pick)
	if err != nil {
		return 0, 0, err
	}
	if p.v < 0 {
		return 0, 0, totErr(field, CodeInvalidValue, "%s must not be negative", name)
	}
	whole, ok := fxMulShift(base, p.v, -(c.places + p.scale + 2))
	if ok {
		units, ok = fxMulShift(whole, 1, c.places)
	}
	if !ok || !c.inRange(units) {
		return 0, 0, c.rangeErr(field)
	}
	return whole, units, nil
}

// validTpoMov reports whether s is the kind of a global movement: D
// (discount) or R (surcharge).
func validTpoMov(s string) bool { return s == "D" || s == "R" }

// validTpoValor reports whether s says how a global movement's valor_dr
// reads: % (a percentage of its bucket) or $ (an amount).
func validTpoValor(s string) bool { return s == "%" || s == "$" }

// global applies one global discount or surcharge to its bucket.
func (c *totCalc) global(i int, g *DscRcgGlobal, out *GlobalTotals) error {
	f := func(name string) totField { return totField{list: "descuentos_globales", i: i, name: name} }
	out.NroLinDR = i + 1
	if g.NroLinDR != nil {
		out.NroLinDR = *g.NroLinDR
	}
	out.TpoMov = g.TpoMov
	if !validTpoMov(g.TpoMov) {
		return totErr(f("tpo_mov"), CodeInvalidValue, "tpo_mov must be D (discount) or R (surcharge), not %q", g.TpoMov)
	}
	if !validTpoValor(g.TpoValor) {
		return totErr(f("tpo_valor"), CodeInvalidValue, "tpo_valor must be %% or $, not %q", g.TpoValor)
	}
	bucket := totAfecto
	if c.tipo.IsExempt() {
		bucket = totExento
	}
	if g.IndExeDR != nil {
		switch *g.IndExeDR {
		case 1:
			bucket = totExento
		case 2:
			if !c.tipo.CarriesNoFacturable() {
				return totErr(f("ind_exe_dr"), CodeNotAllowed, "a document of type %d has no not-billable amount (ind_exe_dr 2)", int(c.tipo))
			}
			bucket = totNoFact
		default:
			return totErr(f("ind_exe_dr"), CodeInvalidValue, "ind_exe_dr must be 1 (exempt) or 2 (not billable), not %d", *g.IndExeDR)
		}
	}
	if bucket == totAfecto && c.tipo.IsExempt() {
		return totErr(f("ind_exe_dr"), CodeInvalidValue, "a document of type %d has no taxable amount", int(c.tipo))
	}
	out.IndExeDR = bucket

	var sum *int64
	var has *bool
	name := ""
	switch bucket {
	case totAfecto:
		sum, has, name = &c.afecto, &c.hasAfecto, "taxable amount"
	case totExento:
		sum, has, name = &c.exento, &c.hasExe, "exempt amount"
	default:
		sum, has, name = &c.noFact, &c.hasNF, "not-billable amount"
	}
	if !*has && !(bucket == totNoFact && g.TpoValor == "$") {
		hint := ""
		if bucket == totAfecto {
			hint = "; set ind_exe_dr 1 to apply it to the exempt amount"
		}
		return totErr(f("ind_exe_dr"), CodeInvalidValue, "the %s it applies to has no valued line%s", name, hint)
	}
	v, err := totNum(g.ValorDR, f("valor_dr"))
	if err != nil {
		return err
	}
	if v.v < 0 {
		return totErr(f("valor_dr"), CodeInvalidValue, "valor_dr must not be negative; use tpo_mov to choose discount or surcharge")
	}
	var amt int64
	var ok bool
	if g.TpoValor == "%" {
		amt, ok = fxMulShift(*sum, v.v, -(v.scale + 2))
		if !ok {
			return c.rangeErr(f("valor_dr"))
		}
	} else if amt, ok = fxToPlaces(v, c.places); !ok {
		return totErr(f("valor_dr"), CodeInvalidDecimals, "a $ amount on this document may have at most %d decimals (got %s)", c.places, string(g.ValorDR))
	}
	if g.TpoMov == "D" {
		*sum, ok = fxSub(*sum, amt)
	} else {
		*sum, ok = fxAdd(*sum, amt)
	}
	if !ok || !c.inRange(*sum) {
		return c.rangeErr(f("valor_dr"))
	}
	if *sum < 0 && bucket != totNoFact {
		return totErr(f("valor_dr"), CodeOutOfRange, "the discount takes the %s below zero (%s)", name, fxFormat(*sum, c.places))
	}
	*has = true
	out.Monto = fxFormat(amt, c.places)
	return nil
}

// taxes computes ImptoReten from impuestos_retenciones and the lines' codes.
func (c *totCalc) taxes(t *Totales) error {
	entries := c.r.ImpuestosRetenciones
	if len(entries) == 0 && len(c.codes) == 0 {
		return nil
	}
	if !c.tipo.CarriesImpuestos() {
		return totErr(totTop("impuestos_retenciones"), CodeNotAllowed, "a document of type %d carries no additional taxes or retentions", int(c.tipo))
	}
	// Bases of line codes, prorated when global movements changed the
	// taxable bucket.
	for k := range c.codes {
		if c.afectoLines > 0 && c.afectoLines != c.neto {
			v, ok := fxMulDiv(c.codes[k].base, c.neto, uint64(c.afectoLines))
			if !ok {
				return c.rangeErr(totLF(c.codes[k].line, "cod_imp_adic"))
			}
			c.codes[k].base = v
		}
	}
	t.ImptoReten = make([]ImptoReten, 0, len(entries)+len(c.codes))
	for i := range entries {
		e := &entries[i]
		f := func(name string) totField { return totField{list: "impuestos_retenciones", i: i, name: name} }
		info, ok := lookupTaxCode(e.TipoImp)
		if !ok || info.class == taxUnclassified {
			return totErr(f("tipo_imp"), CodeInvalidValue, "%d is not a known additional tax or retention code", e.TipoImp)
		}
		for j := 0; j < i; j++ {
			if entries[j].TipoImp == e.TipoImp {
				return totErr(f("tipo_imp"), CodeDuplicate, "code %d is already given in impuestos_retenciones[%d]", e.TipoImp, j)
			}
		}
		base := c.neto
		for _, cb := range c.codes {
			if cb.code == e.TipoImp {
				base = cb.base
			}
		}
		var rate fxNum
		hasRate := false
		if e.TasaImp.IsSet() {
			r, err := totNum(e.TasaImp, f("tasa_imp"))
			if err != nil {
				return err
			}
			if r.v < 0 {
				return totErr(f("tasa_imp"), CodeInvalidValue, "tasa_imp must not be negative")
			}
			rate, hasRate = r, true
		} else if info.hasRate {
			rate, hasRate = info.rate, true
		}
		var amt int64
		switch {
		case e.MontoImp != nil:
			amt = *e.MontoImp
			if amt < 0 && !c.tipo.AllowsNegativeAmounts() {
				return totErr(f("monto_imp"), CodeInvalidValue, "monto_imp must not be negative")
			}
		case hasRate:
			if amt, ok = fxMulShift(base, rate.v, -(rate.scale + 2)); !ok {
				return c.rangeErr(f("tasa_imp"))
			}
		default:
			return totErr(f("tasa_imp"), CodeRequired, "code %d has no legal default rate here: give tasa_imp or monto_imp", e.TipoImp)
		}
		if !c.inRange(amt) {
			return c.rangeErr(f("monto_imp"))
		}
		if err := c.addTax(t, e.TipoImp, info, rate, hasRate, amt, f("monto_imp")); err != nil {
			return err
		}
		if info.class == taxIVARetention && !c.hasIVARet {
			c.firstIVARet = i
		}
		c.hasIVARet = c.hasIVARet || info.class == taxIVARetention
	}
	for _, cb := range c.codes {
		listed := false
		for i := range entries {
			listed = listed || entries[i].TipoImp == cb.code
		}
		if listed {
			continue
		}
		field := totLF(cb.line, "cod_imp_adic")
		info, _ := lookupTaxCode(cb.code)
		if !info.hasRate {
			return totErr(field, CodeRequired, "code %d has no legal default rate here: add it to impuestos_retenciones with tasa_imp or monto_imp", cb.code)
		}
		amt, ok := fxMulShift(cb.base, info.rate.v, -(info.rate.scale + 2))
		if !ok || !c.inRange(amt) {
			return c.rangeErr(field)
		}
		if err := c.addTax(t, cb.code, info, info.rate, true, amt, field); err != nil {
			return err
		}
		if info.class == taxIVARetention && !c.hasIVARet {
			c.firstIVARet = -1 - cb.line
		}
		c.hasIVARet = c.hasIVARet || info.class == taxIVARetention
	}
	return nil
}

// addTax appends one ImptoReten and adds it to the running sums.
func (c *totCalc) addTax(t *Totales, code int, info taxCode, rate fxNum, hasRate bool, amt int64, field totField) error {
	it := ImptoReten{TipoImp: code, MontoImp: fxFormat(amt, 0), Retencion: info.retention()}
	if hasRate {
		it.TasaImp = rate.fxString()
	}
	t.ImptoReten = append(t.ImptoReten, it)
	var ok bool
	if info.retention() {
		c.rets, ok = fxAdd(c.rets, amt)
		if ok && info.class == taxIVARetention {
			c.ivaRet, ok = fxAdd(c.ivaRet, amt)
		}
	} else {
		c.adds, ok = fxAdd(c.adds, amt)
	}
	if !ok || !c.inRange(c.rets) || !c.inRange(c.adds) {
		return c.rangeErr(field)
	}
	return nil
}

// comisiones sums a liquidación-factura's commissions.
func (c *totCalc) comisiones(t *Totales) error {
	if !c.tipo.CarriesComisiones() {
		if len(c.r.Comisiones) > 0 {
			return totErr(totTop("comisiones"), CodeNotAllowed, "only a liquidación-factura (43) carries commissions")
		}
		return nil
	}
	for i := range c.r.Comisiones {
		cm := &c.r.Comisiones[i]
		field := totField{list: "comisiones", i: i}
		iva, ok := int64(0), true
		if cm.ValComIVA != nil {
			iva = *cm.ValComIVA
		} else if iva, ok = fxMulDiv(cm.ValComNeto, totIVARate, 100); !ok {
			return c.rangeErr(totField{list: "comisiones", i: i, name: "val_com_neto"})
		}
		var ok1, ok2, ok3 bool
		c.comNeto, ok1 = fxAdd(c.comNeto, cm.ValComNeto)
		c.comExe, ok2 = fxAdd(c.comExe, cm.ValComExe)
		c.comIVA, ok3 = fxAdd(c.comIVA, iva)
		if !ok1 || !ok2 || !ok3 || !c.inRange(c.comNeto) || !c.inRange(c.comExe) || !c.inRange(c.comIVA) {
			return c.rangeErr(field)
		}
	}
	t.Comisiones = &Comisiones{
		ValComNeto: fxFormat(c.comNeto, 0),
		ValComExe:  fxFormat(c.comExe, 0),
		ValComIVA:  fxFormat(c.comIVA, 0),
	}
	return nil
}

// totales fills Totales from the buckets.
func (c *totCalc) totales(t *Totales) error {
	if c.tipo.IsExport() {
		return c.totalesExport(t)
	}
	var ok bool
	c.neto = c.afecto
	if c.tipo == BoletaElectronica {
		// Prices include IVA: neto by division, IVA by difference.
		if c.neto, ok = fxMulDiv(c.afecto, 100, 100+totIVARate); !ok {
			return c.rangeErr(totTop("detalle"))
		}
		c.iva = c.afecto - c.neto
	} else if c.iva, ok = fxMulDiv(c.neto, totIVARate, 100); !ok {
		return c.rangeErr(totTop("detalle"))
	}
	if err := c.taxes(t); err != nil {
		return err
	}
	if c.hasIVARet {
		field := totTop("impuestos_retenciones")
		if c.firstIVARet >= 0 && len(c.r.ImpuestosRetenciones) > 0 {
			field = totField{list: "impuestos_retenciones", i: c.firstIVARet, name: "monto_imp"}
		} else if c.firstIVARet < 0 {
			field = totLF(-1-c.firstIVARet, "cod_imp_adic")
		}
		switch {
		case c.iva >= 0 && c.ivaRet > c.iva:
			return totErr(field, CodeInvalidValue, "the IVA retained (%d) exceeds the document's IVA (%d)", c.ivaRet, c.iva)
		case c.ivaRet < c.iva:
			t.IVANoRet = fxFormat(c.iva-c.ivaRet, 0)
		}
	}
	if err := c.comisiones(t); err != nil {
		return err
	}

	total := c.neto
	steps := []int64{c.exento, c.iva, c.adds, -c.rets, -c.comNeto, -c.comExe, -c.comIVA}
	if c.tipo == BoletaElectronica {
		total, steps = c.afecto, []int64{c.exento}
	}
	for _, s := range steps {
		if total, ok = fxAdd(total, s); !ok || !c.inRange(total) {
			return c.rangeErr(totTop("detalle"))
		}
	}
	if total < 0 && !c.tipo.AllowsNegativeAmounts() {
		return totErr(totTop("impuestos_retenciones"), CodeOutOfRange, "the document's total comes to %d; only a liquidación-factura (43) may be negative", total)
	}

	if c.hasAfecto {
		t.MntNeto = fxFormat(c.neto, 0)
		if !c.tipo.IsBoleta() {
			t.TasaIVA = Decimal(strconv.Itoa(totIVARate))
		}
		if c.tipo != BoletaElectronica || c.iva != 0 {
			t.IVA = fxFormat(c.iva, 0)
		}
	}
	if c.hasExe {
		t.MntExe = fxFormat(c.exento, 0)
	}
	if c.hasNF {
		t.MontoNF = fxFormat(c.noFact, 0)
	}
	t.MntTotal = fxFormat(total, 0)
	return nil
}

// totalesExport fills the Totales of an export document.
func (c *totCalc) totalesExport(t *Totales) error {
	ed := c.r.ExportData
	if ed == nil || strings.TrimSpace(ed.TpoMoneda) == "" {
		return totErr(totTop("export_data.tpo_moneda"), CodeRequired, "an export document needs export_data.tpo_moneda (the SII currency name, e.g. \"DOLAR USA\")")
	}
	if len(c.r.ImpuestosRetenciones) > 0 {
		return totErr(totTop("impuestos_retenciones"), CodeNotAllowed, "an export document carries no additional taxes or retentions")
	}
	if len(c.r.Comisiones) > 0 {
		return totErr(totTop("comisiones"), CodeNotAllowed, "only a liquidación-factura (43) carries commissions")
	}
	t.TpoMoneda = ed.TpoMoneda
	t.MntExe = fxFormat(c.exento, c.places)
	total := c.exento
	if ed.FormaPagoExp != nil && *ed.FormaPagoExp == 21 {
		total = 0 // sin pago: nothing is owed
	}
	t.MntTotal = fxFormat(total, c.places)
	c.exportTotal = total
	return nil
}

// otraMoneda converts an export's totals to pesos with tpo_cambio.
func (c *totCalc) otraMoneda() (*OtraMoneda, error) {
	ed := c.r.ExportData
	if ed == nil || !ed.TpoCambio.IsSet() {
		return nil, nil
	}
	field := totTop("export_data.tpo_cambio")
	if strings.EqualFold(strings.Join(strings.Fields(ed.TpoMoneda), " "), "PESO CL") {
		return nil, totErr(field, CodeInvalidValue, "the document is already in PESO CL; tpo_cambio converts a foreign currency to pesos")
	}
	tc, err := totNum(ed.TpoCambio, field)
	if err != nil {
		return nil, err
	}
	if tc.v <= 0 {
		return nil, totErr(field, CodeInvalidValue, "tpo_cambio must be greater than zero")
	}
	conv := func(v int64) (Decimal, bool) {
		p, ok := fxMulShift(v, tc.v, -(c.places + tc.scale))
		return fxFormat(p, 0), ok && c.inRange(p)
	}
	om := &OtraMoneda{TpoMoneda: "PESO CL", TpoCambio: tc.fxString()}
	var ok bool
	if om.MntExeOtrMnda, ok = conv(c.exento); !ok {
		return nil, c.rangeErr(field)
	}
	if om.MntTotOtrMnda, ok = conv(c.exportTotal); !ok {
		return nil, c.rangeErr(field)
	}
	return om, nil
}
