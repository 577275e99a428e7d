package dte

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // Chile's date must be right on machines without a zone database
	"unicode/utf8"
)

// Validate checks the request against the contract (§2.3, §8) and the limits
// of the SII's schemas, using today's date in Chile for the date rules. It
// returns nil or a *ValidationError listing every problem at once; see
// ValidateAt for the rules.
func (r *EmitirDTERequest) Validate() error { return ValidateAt(r, time.Now()) }

// ValidateAt is Validate with the current instant given: its calendar date in
// America/Santiago is "today" for the date rules. A zero today turns the
// "not in the future" checks off (dates are still checked for format and the
// SII's 2000–2050 range).
//
// The result is nil or a *ValidationError whose Details hold one FieldError
// per problem, in the order of the request's fields, with at most one detail
// per field (the first rule it breaks). Field paths use the JSON names, dots
// and indexes: "receptor.rut", "detalle[2].cantidad",
// "export_data.tpo_moneda". Codes are DetailCode constants. It never
// panics, whatever the request holds.
//
// Beyond the contract's own rules, the decisions taken where the contract
// is silent are listed in the package documentation ("Validation rules").
// When every field rule holds, ValidateAt also computes the totals and
// reports what the arithmetic refuses, so a nil result guarantees that
// ComputeTotals succeeds on r.
//
// ValidateAt applies the rules of an issuer in producción; ValidateFor
// takes the environment and also returns the warnings.
func ValidateAt(r *EmitirDTERequest, today time.Time) error {
	_, _, err := validateTotals(r, today, AmbienteProduccion)
	return err
}

// ValidateFor is ValidateAt for an issuer in the given environment
// (AmbienteProduccion or AmbienteCertificacion; any other value, ""
// included, gets producción's rules), and returns, beside the error, the
// warnings: problems the gate reports without refusing the document, in
// the same shape as the error's details (field, code, message, action).
// Warnings come only with a nil error.
//
// The environment matters for one rule only, the transport data of Res.
// Ex. SII 154/2025 (see docs/guias-transporte.md): from 2026-05-01 a guía
// de despacho (52) without it is refused in producción and warned about
// in certificación, where no goods move; a factura (33, 34, 46) that
// carries transporte or tipo_despacho is warned about in both, since only
// its issuer knows whether it, or a guía, goes with the goods.
func ValidateFor(r *EmitirDTERequest, today time.Time, ambiente string) ([]FieldError, error) {
	if ambiente == rulesFinishing {
		ambiente = AmbienteProduccion
	}
	_, warnings, err := validateTotals(r, today, ambiente)
	return warnings, err
}

// validateTotals is ValidateFor, and returns the request's totals when it
// is valid: what ComputeTotals returns for it, computed once.
func validateTotals(r *EmitirDTERequest, today time.Time, ambiente string) (*Totals, []FieldError, error) {
	if r == nil {
		return nil, nil, &ValidationError{Details: []FieldError{{
			Field: "request", Code: CodeRequired, Message: "the emission request is missing",
		}}}
	}
	v := &validator{tipo: r.TipoDTE, tipoOK: r.TipoDTE.Valid(), certificacion: ambiente == AmbienteCertificacion,
		finishing: ambiente == rulesFinishing}
	if !today.IsZero() {
		v.today = chileDate(today)
		v.hasToday = true
	}
	v.textOnlyLines = allowsTextOnlyLines(r)

	v.checkTipoDTE()
	v.checkFechaEmision(r.FechaEmision)
	v.checkReceptor(&r.Receptor)
	v.checkDetalle(r.Detalle)
	v.checkComisiones(r.Comisiones)
	v.checkImpuestos(r.ImpuestosRetenciones)
	v.checkReferencias(r.Referencias)
	v.checkIndTraslado(r.IndTraslado)
	v.checkTipoDespacho(r.TipoDespacho)
	v.checkIndServicio(r.IndServicio)
	v.checkDescuentos(r.DescuentosGlobales)
	v.checkExportData(r.ExportData)
	v.checkTransporte(r)
	v.checkMetadata(r.Metadata)

	if len(v.errs) > 0 {
		return nil, nil, &ValidationError{Details: v.errs}
	}
	// The field rules hold: compute the amounts with the numbers just read.
	// Whatever the arithmetic refuses (a discount on an empty bucket or
	// beyond it, more IVA retained than there is, ...) is a problem of the
	// request too, so Validate()==nil guarantees that ComputeTotals
	// succeeds. computeTotals reports one *ValidationError.
	tot, err := computeTotals(r, v.lines)
	if err != nil {
		return nil, nil, err
	}
	return tot, v.warns, nil
}

// Limits of a request's metadata, the client's own data kept with the
// document and returned with it (Stripe's, but for values of any JSON
// type measured as JSON): at most 50 members, each named by 1 to 40
// characters, each value at most 500 bytes of JSON. A document's metadata
// is so at most 37,201 bytes of JSON (names of characters JSON escapes in
// 6 bytes), whatever a list of documents holds.
const (
	MaxMetadataKeys  = 50
	MaxMetadataKey   = 40
	MaxMetadataValue = 500
)

// checkMetadata applies the metadata limits.
func (v *validator) checkMetadata(m map[string]any) {
	if len(m) > MaxMetadataKeys {
		v.add("metadata", CodeTooMany, fmt.Sprintf("metadata has %d members; at most %d are kept", len(m), MaxMetadataKeys),
			"keep the metadata to the keys you need to find the document again")
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch n := utf8.RuneCountInString(k); {
		case n == 0:
			v.add("metadata", CodeInvalidValue, "a metadata member has an empty name", "name every member")
			continue
		case n > MaxMetadataKey:
			v.add("metadata", CodeTooLong, fmt.Sprintf("the metadata member %.20q… has a name of %d characters; at most %d", k, n, MaxMetadataKey),
				"shorten the name")
			continue
		}
		b, err := json.Marshal(m[k])
		if err != nil || len(b) > MaxMetadataValue {
			v.add("metadata."+k, CodeTooLong, fmt.Sprintf("metadata.%s takes %d bytes of JSON; at most %d", k, len(b), MaxMetadataValue),
				"keep large data in your own system and put its reference here")
		}
	}
}

// allowsTextOnlyLines reports whether r's lines may omit cantidad and
// precio (and carry no monto_item other than 0), which then come to
// MontoItem 0 and leave the total at 0 when no line is valued:
//
//   - a note (56, 61, 111, 112) with a reference of codigo_ref 2, which
//     corrects the text of the referenced document;
//   - a debit or credit note (56, 61) with a reference of codigo_ref 1 to a
//     note 56 or 61: it voids that note, which may itself have been a text
//     correction without amounts. The SII's basic certification set has
//     such a case: a debit note voiding a credit note that only corrected
//     a text, with a named line and a total of 0.
//
// A note that voids a factura must carry that factura's lines with their
// amounts, since dtekit cannot read the voided document.
func allowsTextOnlyLines(r *EmitirDTERequest) bool {
	if !r.TipoDTE.IsNote() {
		return false
	}
	for _, ref := range r.Referencias {
		if ref.CodigoRef == nil {
			continue
		}
		switch *ref.CodigoRef {
		case 2:
			return true
		case 1:
			voidsNote := ref.TipoDocRef.Tipo == NotaDebitoElectronica || ref.TipoDocRef.Tipo == NotaCreditoElectronica
			if voidsNote && (r.TipoDTE == NotaDebitoElectronica || r.TipoDTE == NotaCreditoElectronica) {
				return true
			}
		}
	}
	return false
}

// AsValidationError returns the *ValidationError inside err, if any.
func AsValidationError(err error) (*ValidationError, bool) {
	var ve *ValidationError
	ok := errors.As(err, &ve)
	return ve, ok
}

// Schema limits the contract doesn't state (DTE_v10.xsd, EnvioBOLETA_v11.xsd).
const (
	maxLineas           = 60   // Detalle maxOccurs
	maxLineasBoleta     = 1000 // boleta Detalle maxOccurs
	maxReferencias      = 40   // Referencia maxOccurs
	maxDscRcgGlobal     = 20   // DscRcgGlobal maxOccurs
	maxComisiones       = 20   // Comisiones maxOccurs
	maxImptoReten       = 20   // ImptoReten maxOccurs
	maxRznSocRecep      = MaxRazonSocialReceptor
	maxGiroRecep        = MaxGiroReceptor
	maxDirRecep         = MaxDireccionReceptor
	maxCmnaRecep        = MaxComunaReceptor
	maxCiudadRecep      = MaxCiudadReceptor
	maxGlosaComision    = 60  // Comisiones/Glosa
	maxGlosaDR          = 45  // DscRcgGlobal/GlosaDR
	maxTpoDocRef        = 3   // TpoDocRef, TpoDocLiq
	maxFolioRefTexto    = 18  // FolioRef (FolioRType, a string)
	maxUnmdItem         = 4   // UnmdItem
	maxNacionalidad     = 3   // Extranjero/Nacionalidad
	maxNumID            = 20  // Extranjero/NumId
	maxMarcas           = 255 // Aduana/Marcas
	maxPatente          = 8   // Transporte/Patente
	maxNombreChofer     = 30  // Transporte/Chofer/NombreChofer
	maxDirDest          = 70  // Transporte/DirDest
	maxCmnaDest         = 20  // Transporte/CmnaDest (ComunaType)
	maxCiudadDest       = 20  // Transporte/CiudadDest (CiudadType)
	maxNombreContrato   = 200 // contract §8: nombre
	maxRazonRefContrato = 200 // contract §8: razon_ref
	maxAmount18         = "999999999999999999"
	maxExportAmount     = "99999999999999.9999"
)

// validator accumulates the problems of one request.
type validator struct {
	errs          []FieldError
	tipo          TipoDTE
	tipoOK        bool
	today         civilDate
	hasToday      bool
	emision       civilDate // the effective issue date, when known
	hasEmision    bool
	textOnlyLines bool       // lines may omit cantidad and precio (allowsTextOnlyLines)
	lines         []lineNums // the numbers of each detail line, for computeTotals
	certificacion bool       // the issuer is in certificación (ValidateFor)
	finishing     bool       // the folio is taken already (Emitter.Finishing)
	warns         []FieldError
}

func (v *validator) add(field string, code DetailCode, msg, action string) {
	v.errs = append(v.errs, FieldError{Field: field, Code: code, Message: msg, Action: action})
}

// tooMany reports a list with more than max entries, the SII's limit.
func (v *validator) tooMany(field string, n, max int, action string) {
	v.add(field, CodeTooMany, fmt.Sprintf("%s has %d entries; the SII accepts at most %d", field, n, max), action)
}

// is reports whether the request's type is known and one of ts.
func (v *validator) is(ts ...TipoDTE) bool {
	if !v.tipoOK {
		return false
	}
	for _, t := range ts {
		if v.tipo == t {
			return true
		}
	}
	return false
}

// export reports whether amounts follow the export rules (decimals allowed).
// An unknown type gets the lenient rules: its type error is reported once.
func (v *validator) export() bool { return !v.tipoOK || v.tipo.IsExport() }

// notAllowed reports a field that the request's type doesn't accept.
func (v *validator) notAllowed(field, allowedOn string) {
	v.add(field, CodeNotAllowed,
		fmt.Sprintf("%s is not allowed on tipo_dte %d; it applies to %s", field, int(v.tipo), allowedOn),
		"remove the field or change tipo_dte")
}

func (v *validator) checkTipoDTE() {
	switch {
	case v.tipo == 0:
		v.add("tipo_dte", CodeRequired, "tipo_dte is required",
			"send one of 33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112")
	case !v.tipoOK:
		v.add("tipo_dte", CodeInvalidValue, fmt.Sprintf("tipo_dte %d is not a supported document type", int(v.tipo)),
			"send one of 33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112")
	}
}

func (v *validator) checkFechaEmision(s string) {
	if s == "" {
		if v.hasToday {
			v.emision, v.hasEmision = v.today, true
		}
		return
	}
	d, ok := v.date("fecha_emision", s)
	if !ok {
		return
	}
	if v.hasToday && d.after(v.today) {
		v.add("fecha_emision", CodeOutOfRange,
			fmt.Sprintf("fecha_emision %s is later than today in Chile (%s)", d, v.today),
			"use today's date or an earlier one, or omit the field to use today's")
		return
	}
	v.emision, v.hasEmision = d, true
}

func (v *validator) checkReceptor(rc *Receptor) {
	if p := CheckRUT("receptor.rut", rc.Rut, true); p != nil {
		v.errs = append(v.errs, *p)
	} else if rut, err := ParseRUT(rc.Rut); err == nil && rut == RUTSinReceptor() && v.tipoOK && !v.tipo.IsBoleta() {
		v.add("receptor.rut", CodeNotAllowed,
			"the anonymous RUT 66666666-6 is only allowed on boletas (39, 41)",
			"send the receptor's real RUT")
	}
	v.text("receptor.razon_social", rc.RazonSocial, maxRznSocRecep, textRequired)
	req43 := textOptional
	if v.is(LiquidacionFacturaElectronica) {
		req43 = textRequired
	}
	v.text("receptor.giro", rc.Giro, maxGiroRecep, req43)
	v.text("receptor.direccion", rc.Direccion, maxDirRecep, req43)
	v.text("receptor.comuna", rc.Comuna, maxCmnaRecep, req43)
	v.text("receptor.ciudad", rc.Ciudad, maxCiudadRecep, textOptional)
}

// amountLimit is the largest magnitude of a line amount or total, in units
// of 10^-amountPlaces: 18 digits (14.4 on exports).
const amountLimit = fxMaxAmount

// amountPlaces is the number of decimals of the document's amounts: 4 on
// exports, 0 on CLP documents. An unknown type gets the lenient export
// rules: its type error is reported once.
func (v *validator) amountPlaces() int {
	if v.export() {
		return 4
	}
	return 0
}

func (v *validator) checkDetalle(lines []LineaDetalle) {
	limit := maxLineas
	if v.tipoOK && v.tipo.IsBoleta() {
		limit = maxLineasBoleta
	}
	listOK := true
	switch {
	case len(lines) == 0:
		v.add("detalle", CodeRequired, "detalle needs at least one line", "add the document's items")
		listOK = false
	case len(lines) > limit:
		v.add("detalle", CodeTooMany,
			fmt.Sprintf("detalle has %d lines; the SII accepts at most %d on tipo_dte %d", len(lines), limit, int(v.tipo)),
			"split the items over several documents")
		listOK = false
	}
	v.lines = make([]lineNums, len(lines))
	// Every line's amount is within amountLimit, so the running sum of
	// magnitudes cannot overflow before it passes the limit once.
	var sum int64
	sumOK := true
	for i := range lines {
		amt, ok := v.checkLinea("detalle["+strconv.Itoa(i)+"]", &lines[i], &v.lines[i])
		if !ok {
			sumOK = false
			continue
		}
		if sum <= amountLimit {
			sum += int64(fxAbs(amt))
		}
	}
	if listOK && sumOK && sum > amountLimit {
		v.add("detalle", CodeOutOfRange,
			"the lines add up to more than the SII's amounts can hold (18 digits)",
			"split the items over several documents")
	}
}

// checkLinea validates one line, stores its numbers in n for the totals,
// and returns its amount in units of 10^-amountPlaces (monto_item, or
// cantidad × precio rounded like the SII does; 0 for a line without them).
func (v *validator) checkLinea(p string, l *LineaDetalle, n *lineNums) (int64, bool) {
	ok := true
	fail := func(b bool) {
		if !b {
			ok = false
		}
	}
	// tipo_doc_liq
	switch {
	case v.is(LiquidacionFacturaElectronica):
		v.text(p+".tipo_doc_liq", l.TipoDocLiq, maxTpoDocRef, textRequired)
	case l.TipoDocLiq != "" && v.tipoOK:
		v.notAllowed(p+".tipo_doc_liq", "liquidación-factura 43")
	default:
		v.textAt(p, ".tipo_doc_liq", l.TipoDocLiq, maxTpoDocRef, textOptional)
	}
	// ind_exe
	if l.IndExe != nil && *l.IndExe != 1 {
		v.add(p+".ind_exe", CodeInvalidValue, fmt.Sprintf("%s.ind_exe is %d; the only value is 1 (exempt line)", p, *l.IndExe),
			"send 1 for an exempt line or omit the field")
	}
	// cod_imp_adic
	if l.CodImpAdic != nil {
		c := *l.CodImpAdic
		switch {
		case !v.taxCode(p+".cod_imp_adic", c):
		case v.tipoOK && !v.tipo.CarriesImpuestos():
			v.notAllowed(p+".cod_imp_adic", "33, 43, 46, 52, 56 and 61")
		case c == 15 && v.tipoOK && !v.tipo.RetainsIVAInFull():
			v.notAllowed(p+".cod_imp_adic", "factura de compra 46 and its notes 56, 61 (code 15, IVA retained in full)")
		case l.IndExe != nil && *l.IndExe == 1:
			v.add(p+".cod_imp_adic", CodeNotAllowed, p+".cod_imp_adic is not allowed on an exempt line (ind_exe 1)",
				"remove cod_imp_adic or ind_exe")
		}
	}
	// nombre, dsc_item
	v.textAt(p, ".nombre", l.Nombre, maxNombreContrato, textRequired)
	if v.textAt(p, ".dsc_item", l.DscItem, maxDscItem, textMultiline) && l.itemDscLen() > maxDscItem {
		v.add(p+".dsc_item", CodeTooLong,
			fmt.Sprintf("%s.nombre is longer than %d characters, so the XML's description (DscItem) carries the whole nombre followed by dsc_item; together they have %d characters and DscItem holds %d",
				p, maxNmbItem, l.itemDscLen(), maxDscItem),
			fmt.Sprintf("shorten nombre to %d characters or shorten dsc_item", maxNmbItem))
	}

	textOnly := v.textOnlyLines && !l.Cantidad.IsSet() && !l.Precio.IsSet() &&
		(!l.MontoItem.IsSet() || isZero(l.MontoItem))
	exp := v.export()
	places := v.amountPlaces()

	// cantidad
	switch {
	case l.Cantidad.IsSet():
		n.qty, n.hasQty = v.numberAt(p, ".cantidad", l.Cantidad, numRule{places: 6, intDigits: 12, min: "0.000001"})
		fail(n.hasQty)
	case !textOnly:
		v.add(p+".cantidad", CodeRequired, p+".cantidad is required",
			"send the quantity; only notes that correct a text, or void a note, may omit cantidad and precio")
		ok = false
	}
	// unidad
	v.textAt(p, ".unidad", l.Unidad, maxUnmdItem, textOptional)
	// precio
	var amount int64
	switch {
	case l.Precio.IsSet():
		rule := numRule{places: 0, intDigits: 12, min: "0", placesHint: "precio is an integer amount of CLP"}
		if exp {
			rule = numRule{places: 6, intDigits: 12, min: "0"}
		}
		n.price, n.hasPrice = v.numberAt(p, ".precio", l.Precio, rule)
		fail(n.hasPrice)
		if n.hasPrice && n.hasQty && !l.MontoItem.IsSet() {
			a, fits := lineAmount(n.qty, n.price, places)
			if !fits || fxAbs(a) > amountLimit {
				v.add(p+".precio", CodeOutOfRange,
					fmt.Sprintf("%s: cantidad × precio exceeds the SII's largest amount (18 digits)", p),
					"check cantidad and precio")
				ok = false
			}
			amount = a
		}
	case !textOnly:
		v.add(p+".precio", CodeRequired, p+".precio is required",
			"send the unit price (0 for an item without value); only notes that correct a text, or void a note, may omit it")
		ok = false
	}
	// monto_item
	if l.MontoItem.IsSet() {
		rule := numRule{places: 0, intDigits: 18, min: "0", placesHint: "monto_item is an integer amount of CLP"}
		if exp {
			rule = numRule{places: 4, intDigits: 14, min: "0"}
		}
		if !v.tipoOK || v.tipo.AllowsNegativeAmounts() {
			rule.min = "" // MontoItem of a liquidación may be negative
		}
		n.monto, n.hasMonto = v.numberAt(p, ".monto_item", l.MontoItem, rule)
		fail(n.hasMonto)
		if n.hasMonto {
			amount, _ = fxToPlaces(n.monto, places) // rule.places ≤ places: exact
		}
	}
	// descuento_pct, recargo_pct
	for _, f := range []struct {
		suffix string // ".descuento_pct"
		d      Decimal
		val    *fxNum
	}{{".descuento_pct", l.DescuentoPct, &n.dsc}, {".recargo_pct", l.RecargoPct, &n.rcg}} {
		if !f.d.IsSet() {
			continue
		}
		if v.tipoOK && !v.tipo.CarriesDescuentos() {
			v.notAllowed(p+f.suffix, "every type but liquidación-factura 43")
			continue
		}
		var good bool
		*f.val, good = v.numberAt(p, f.suffix, f.d, numRule{places: 2, intDigits: 3, min: "0", max: "100"})
		fail(good)
	}
	return amount, ok
}

// lineAmount returns cantidad × precio rounded half away from zero to the
// given places (0 for pesos, 4 on exports), and false when the product does
// not fit in an int64 (far beyond the SII's 18 digits).
func lineAmount(qty, price fxNum, places int) (int64, bool) {
	return fxMulShift(qty.v, price.v, places-qty.scale-price.scale)
}

func (v *validator) checkComisiones(cs []ComisionDTE) {
	if len(cs) == 0 {
		return
	}
	if v.tipoOK && !v.tipo.CarriesComisiones() {
		v.notAllowed("comisiones", "liquidación-factura 43")
		return
	}
	if len(cs) > maxComisiones {
		v.tooMany("comisiones", len(cs), maxComisiones, "merge commissions of the same kind")
	}
	for i, c := range cs {
		p := fmt.Sprintf("comisiones[%d]", i)
		switch c.TipoMovim {
		case "":
			v.add(p+".tipo_movim", CodeRequired, p+".tipo_movim is required", `send "C" (commission) or "O" (other movement)`)
		case "C", "O":
		default:
			v.add(p+".tipo_movim", CodeInvalidValue, fmt.Sprintf("%s.tipo_movim %s is not C or O", p, quote(c.TipoMovim)),
				`send "C" (commission) or "O" (other movement)`)
		}
		v.text(p+".glosa", c.Glosa, maxGlosaComision, textRequired)
		if c.TasaComision.IsSet() {
			v.number(p+".tasa_comision", c.TasaComision, numRule{places: 2, intDigits: 3, min: "0", minExclusive: true, max: "100"})
		}
		v.int64Range(p+".val_com_neto", c.ValComNeto, true)
		v.int64Range(p+".val_com_exe", c.ValComExe, true)
		if c.ValComIVA != nil {
			v.int64Range(p+".val_com_iva", *c.ValComIVA, true)
		}
	}
}

// int64Range checks that an integer amount fits the SII's 18 digits (and is
// not negative unless negative is allowed).
func (v *validator) int64Range(field string, n int64, negative bool) {
	const max = 999_999_999_999_999_999
	switch {
	case n < 0 && !negative:
		v.add(field, CodeOutOfRange, fmt.Sprintf("%s must not be negative (got %d)", field, n), "send a positive amount")
	case n > max || n < -max:
		v.add(field, CodeOutOfRange, fmt.Sprintf("%s %d has more than the SII's 18 digits", field, n), "check the amount")
	}
}

func (v *validator) checkImpuestos(is []ImpuestoRetencion) {
	if len(is) == 0 {
		return
	}
	if v.tipoOK && !v.tipo.CarriesImpuestos() {
		v.notAllowed("impuestos_retenciones", "33, 43, 46, 52, 56 and 61")
		return
	}
	if len(is) > maxImptoReten {
		v.tooMany("impuestos_retenciones", len(is), maxImptoReten, "merge the entries of the same tax code")
	}
	seen := make(map[int]int)
	for i, t := range is {
		p := fmt.Sprintf("impuestos_retenciones[%d]", i)
		switch {
		case t.TipoImp == 0:
			v.add(p+".tipo_imp", CodeRequired, p+".tipo_imp is required", "send the SII tax code, e.g. 15")
		case !v.taxCode(p+".tipo_imp", t.TipoImp):
		case t.TipoImp == 15 && v.tipoOK && !v.tipo.RetainsIVAInFull():
			v.notAllowed(p+".tipo_imp", "factura de compra 46 and its notes 56, 61 (code 15, IVA retained in full)")
		default:
			if j, dup := seen[t.TipoImp]; dup {
				v.add(p+".tipo_imp", CodeDuplicate,
					fmt.Sprintf("%s.tipo_imp %d repeats impuestos_retenciones[%d]", p, t.TipoImp, j),
					"send each tax code once")
			} else {
				seen[t.TipoImp] = i
			}
		}
		if t.TasaImp.IsSet() {
			v.number(p+".tasa_imp", t.TasaImp, numRule{places: 2, intDigits: 3, min: "0", minExclusive: true, max: "100"})
		}
		if t.MontoImp != nil {
			m := *t.MontoImp
			if m <= 0 && v.tipoOK && !v.tipo.AllowsNegativeAmounts() {
				v.add(p+".monto_imp", CodeOutOfRange,
					fmt.Sprintf("%s.monto_imp must be greater than 0 (got %d)", p, m),
					"omit monto_imp to compute it from tasa_imp")
			} else {
				v.int64Range(p+".monto_imp", m, true)
			}
		}
		if !t.TasaImp.IsSet() && t.MontoImp == nil && t.TipoImp != 15 {
			v.add(p+".tasa_imp", CodeRequired, p+" needs tasa_imp or monto_imp",
				"send the tax rate in tasa_imp or the amount in monto_imp")
		}
	}
}

func (v *validator) checkReferencias(refs []Referencia) {
	switch {
	case len(refs) == 0 && v.tipoOK && v.tipo.NeedsReferences():
		v.add("referencias", CodeRequired,
			fmt.Sprintf("tipo_dte %d needs at least one reference to the document it modifies", int(v.tipo)),
			"add a reference with tipo_doc_ref, folio_ref, fecha_ref, codigo_ref and razon_ref")
	case len(refs) > maxReferencias:
		v.tooMany("referencias", len(refs), maxReferencias, "keep the references the document needs")
	}
	for i, ref := range refs {
		p := fmt.Sprintf("referencias[%d]", i)
		// tipo_doc_ref
		switch {
		case ref.TipoDocRef.IsZero():
			v.add(p+".tipo_doc_ref", CodeRequired, p+".tipo_doc_ref is required",
				`send the referenced document's type (e.g. 33) or a code such as "SET"`)
		case ref.TipoDocRef.Codigo != "":
			v.text(p+".tipo_doc_ref", ref.TipoDocRef.Codigo, maxTpoDocRef, textRequired)
		case ref.TipoDocRef.Tipo < 1 || ref.TipoDocRef.Tipo > 999:
			v.add(p+".tipo_doc_ref", CodeOutOfRange,
				fmt.Sprintf("%s.tipo_doc_ref %d is not an SII document type code (1–999)", p, int(ref.TipoDocRef.Tipo)),
				"send the referenced document's SII type code")
		}
		// folio_ref
		free := ref.TipoDocRef.Codigo != ""
		switch {
		case ref.FolioRefTexto != "" && (!free || ref.FolioRef != 0):
			v.add(p+".folio_ref", CodeInvalidValue,
				fmt.Sprintf("%s has a text folio %q with a document type or a numeric folio_ref", p, ref.FolioRefTexto),
				`a text folio is only for a free-code reference such as "SET", without folio_ref`)
		case ref.FolioRefTexto != "":
			v.text(p+".folio_ref", ref.FolioRefTexto, maxFolioRefTexto, textRequired)
		case ref.FolioRef == 0 && !free:
			v.add(p+".folio_ref", CodeRequired, p+".folio_ref is required", "send the referenced document's folio")
		case ref.FolioRef < 0:
			v.add(p+".folio_ref", CodeOutOfRange, fmt.Sprintf("%s.folio_ref must be positive (got %d)", p, ref.FolioRef),
				"send the referenced document's folio")
		case ref.FolioRef > 999_999_999_999_999_999:
			v.add(p+".folio_ref", CodeOutOfRange, fmt.Sprintf("%s.folio_ref has more than the SII's 18 digits", p),
				"send the referenced document's folio")
		}
		// fecha_ref
		if ref.FechaRef == "" && v.tipoOK && v.tipo.IsBoleta() && ref.TipoDocRef.Codigo == RefCodigoSET {
			// A boleta's test-set reference carries no date (docReferencias).
		} else if ref.FechaRef == "" {
			v.add(p+".fecha_ref", CodeRequired, p+".fecha_ref is required", "send the referenced document's date as YYYY-MM-DD")
		} else if d, ok := v.date(p+".fecha_ref", ref.FechaRef); ok && v.hasEmision && d.after(v.emision) {
			v.add(p+".fecha_ref", CodeOutOfRange,
				fmt.Sprintf("%s.fecha_ref %s is later than the document's issue date %s", p, d, v.emision),
				"a document can only reference one issued on or before its own date")
		}
		// codigo_ref
		if ref.CodigoRef != nil {
			c := *ref.CodigoRef
			switch {
			case c < 1 || c > 3:
				v.add(p+".codigo_ref", CodeInvalidValue,
					fmt.Sprintf("%s.codigo_ref %d is not 1 (void), 2 (text correction) or 3 (amount correction)", p, c),
					"send 1, 2 or 3")
			case v.tipoOK && !v.tipo.IsNote():
				v.notAllowed(p+".codigo_ref", "the notes 56, 61, 111, 112")
			}
		}
		// razon_ref
		v.text(p+".razon_ref", ref.RazonRef, maxRazonRefContrato, textRequired)
	}
}

func (v *validator) checkIndTraslado(n *int) {
	isGuia := v.tipoOK && v.tipo.CarriesIndTraslado()
	switch {
	case n == nil:
		if isGuia {
			v.add("ind_traslado", CodeRequired, "a guía de despacho (52) needs ind_traslado",
				"send 1 (sale), 2 (sale to be made), 3 (consignment), 4 (free delivery), 5 (internal transfer), 6 (other non-sale transfer), 7 (return guide), 8 (transfer for export) or 9 (sale for export)")
		}
	case v.tipoOK && !isGuia:
		v.notAllowed("ind_traslado", "guía de despacho 52")
	case *n < 1 || *n > 9:
		v.add("ind_traslado", CodeInvalidValue, fmt.Sprintf("ind_traslado %d is not 1–9", *n), "send a value from 1 to 9")
	}
}

func (v *validator) checkTipoDespacho(n *int) {
	switch {
	case n == nil:
	case v.tipoOK && !v.tipo.CarriesTipoDespacho():
		v.notAllowed("tipo_despacho", "33, 34, 46, 52, 56, 61, 110, 111, 112")
	case *n < 1 || *n > 3:
		v.add("tipo_despacho", CodeInvalidValue, fmt.Sprintf("tipo_despacho %d is not 1–3", *n),
			"send 1 (by the buyer), 2 (by the issuer to the buyer's premises) or 3 (by the issuer to other premises)")
	}
}

// TransporteDesde is the first day on which Res. Ex. SII 154/2025 asks a
// document that accompanies goods for their transport data: the vehicle's
// plate, the carrier's RUT, the driver's RUT and name and the destination's
// address, comuna and city (the kind of transfer, ind_traslado, a guía
// always needs). A document dated earlier keeps the rule before it: the
// data are optional.
const TransporteDesde = "2026-05-01"

var transporteDesde = civilDate{2026, 5, 1}

// rulesFinishing is the rules name Prepare gives validateTotals for an
// Emitter that is Finishing; it is not an environment a caller can pass
// to ValidateFor by mistake (ValidateFor gives any unknown name
// producción's rules).
const rulesFinishing = "\x00finishing"

// checkTransporte checks the transporte block against the schema (which
// types carry it, lengths, RUTs, a driver with both RUT and name) and
// what Res. Ex. SII 154/2025 asks from TransporteDesde (transporteRule):
// each transport datum the document lacks is a REQUIRED problem named by
// its field, a refusal or a warning as the rule says. Problems come in
// the order of the block's fields, one per field.
func (v *validator) checkTransporte(r *EmitirDTERequest) {
	t := r.Transporte
	if t != nil && v.tipoOK && !v.tipo.CarriesTransporte() {
		v.notAllowed("transporte", "33, 34, 46, 52, 56, 61, 110, 111, 112 (the SII's schema has no Transporte on boletas and the liquidación-factura)")
		return
	}
	active, refuse, why := v.transporteRule(r)
	missing := func(field, what, send string) {
		if !active {
			return
		}
		fe := FieldError{Field: field, Code: CodeRequired, Message: fmt.Sprintf("%s (%s) is missing: %s", field, what, why), Action: send}
		if refuse {
			v.errs = append(v.errs, fe)
		} else {
			v.warns = append(v.warns, fe)
		}
	}
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	if t == nil {
		missing("transporte", "the vehicle, carrier, driver and destination of the goods",
			"send transporte with patente, rut_transportista, chofer {rut, nombre}, direccion_destino, comuna_destino and ciudad_destino")
		return
	}
	const p = "transporte."
	if v.text(p+"patente", t.Patente, maxPatente, textOptional) && blank(t.Patente) {
		missing(p+"patente", "the plate of the vehicle that moves the goods", `send the vehicle's plate, e.g. "KXRT45"`)
	}
	if e := CheckRUT(p+"rut_transportista", t.RutTransportista, false); e != nil {
		v.errs = append(v.errs, *e)
	} else if blank(t.RutTransportista) {
		missing(p+"rut_transportista", "the carrier's RUT", "send the RUT of whoever moves the goods (the emisor's own when it moves them itself)")
	}
	if c := t.Chofer; c != nil {
		if e := CheckRUT(p+"chofer.rut", c.Rut, true); e != nil {
			v.errs = append(v.errs, *e)
		}
		v.text(p+"chofer.nombre", c.Nombre, maxNombreChofer, textRequired)
	} else {
		missing(p+"chofer", "the driver's RUT and name", "send chofer with rut and nombre")
	}
	if v.text(p+"direccion_destino", t.DireccionDestino, maxDirDest, textOptional) && blank(t.DireccionDestino) {
		missing(p+"direccion_destino", "the address the goods go to", "send the destination's street address")
	}
	if v.text(p+"comuna_destino", t.ComunaDestino, maxCmnaDest, textOptional) && blank(t.ComunaDestino) {
		missing(p+"comuna_destino", "the comuna the goods go to", "send the destination's comuna")
	}
	if v.text(p+"ciudad_destino", t.CiudadDestino, maxCiudadDest, textOptional) && blank(t.CiudadDestino) {
		missing(p+"ciudad_destino", "the city the goods go to", "send the destination's city")
	}
}

// transporteRule says whether Res. Ex. SII 154/2025 asks this document for
// its transport data (active), whether a missing datum refuses it or is a
// warning (refuse), and why, for the messages. It applies to a document
// dated on or after TransporteDesde, or whose date is unknown (ValidateAt
// with a zero today and no fecha_emision); earlier documents keep the
// rule before it (transporte optional). On a guía de despacho (52) a
// missing datum refuses the document in producción and is a warning in
// certificación, where no goods move. On a factura (33, 34, 46) that says
// goods move with it (transporte or tipo_despacho given) it is a warning:
// dtekit cannot tell whether the factura or a guía accompanies them.
func (v *validator) transporteRule(r *EmitirDTERequest) (active, refuse bool, why string) {
	if !v.tipoOK || !v.tipo.SupportsTransfer() {
		return false, false, ""
	}
	switch {
	case v.hasEmision && transporteDesde.after(v.emision):
		return false, false, "" // the rule before the resolution
	case !v.hasEmision && r.FechaEmision != "":
		return false, false, "" // the date is refused already
	}
	guia := v.tipo == GuiaDespachoElectronica
	switch {
	case guia && v.finishing:
		return true, false, "a guía de despacho dated from " + TransporteDesde + " carries it (Res. Ex. SII 154/2025); this one is finished without it because its folio was taken before the rule was checked"
	case guia && !v.certificacion:
		return true, true, "a guía de despacho dated from " + TransporteDesde + " carries it (Res. Ex. SII 154/2025)"
	case guia:
		return true, false, "a guía de despacho dated from " + TransporteDesde + " carries it (Res. Ex. SII 154/2025); in certificación the document is accepted without it, in producción it is refused"
	case r.Transporte == nil && r.TipoDespacho == nil:
		return false, false, "" // nothing says goods move with this factura
	}
	return true, false, "a factura dated from " + TransporteDesde + " that accompanies the goods carries it (Res. Ex. SII 154/2025); leave it out only when a guía de despacho goes with them"
}

func (v *validator) checkIndServicio(n *int) {
	if n == nil {
		return
	}
	lo, hi := 1, 6 // an unknown type: its type error is reported once
	if v.tipoOK {
		lo, hi = v.tipo.IndServicioRange()
	}
	if *n < lo || *n > hi {
		v.add("ind_servicio", CodeInvalidValue,
			fmt.Sprintf("ind_servicio %d is not accepted on tipo_dte %d (the SII's schema allows %d–%d)", *n, int(v.tipo), lo, hi),
			fmt.Sprintf("send a value from %d to %d or omit the field", lo, hi))
	}
}

func (v *validator) checkDescuentos(ds []DscRcgGlobal) {
	if len(ds) == 0 {
		return
	}
	if v.tipoOK && !v.tipo.CarriesDescuentos() {
		v.notAllowed("descuentos_globales", "every type but liquidación-factura 43")
		return
	}
	if len(ds) > maxDscRcgGlobal {
		v.tooMany("descuentos_globales", len(ds), maxDscRcgGlobal, "merge discounts or surcharges")
	}
	seen := make(map[int]int)
	for i, d := range ds {
		p := fmt.Sprintf("descuentos_globales[%d]", i)
		// An omitted nro_lin_dr is the entry's position (1-based), as the
		// XML writes it; explicit and implicit numbers must not collide.
		n, implicit := i+1, d.NroLinDR == nil
		if !implicit {
			n = *d.NroLinDR
		}
		if !implicit && (n < 1 || n > 99) {
			v.add(p+".nro_lin_dr", CodeOutOfRange, fmt.Sprintf("%s.nro_lin_dr %d is not 1–99", p, n),
				"number the discounts from 1, or omit nro_lin_dr")
		} else if j, dup := seen[n]; dup {
			what := fmt.Sprintf("%s.nro_lin_dr %d", p, n)
			if implicit {
				what = fmt.Sprintf("%s, numbered %d by its position,", p, n)
			}
			v.add(p+".nro_lin_dr", CodeDuplicate, fmt.Sprintf("%s repeats the number of descuentos_globales[%d]", what, j),
				"give each discount its own number, or omit nro_lin_dr in all of them")
		} else {
			seen[n] = i
		}
		switch {
		case d.TpoMov == "":
			v.add(p+".tpo_mov", CodeRequired, p+".tpo_mov is required", `send "D" (discount) or "R" (surcharge)`)
		case validTpoMov(d.TpoMov):
		default:
			v.add(p+".tpo_mov", CodeInvalidValue, fmt.Sprintf("%s.tpo_mov %s is not D or R", p, quote(d.TpoMov)),
				`send "D" (discount) or "R" (surcharge)`)
		}
		validTpo := false
		switch {
		case d.TpoValor == "":
			v.add(p+".tpo_valor", CodeRequired, p+".tpo_valor is required", `send "%" (percentage) or "$" (amount)`)
		case validTpoValor(d.TpoValor):
			validTpo = true
		default:
			v.add(p+".tpo_valor", CodeInvalidValue, fmt.Sprintf("%s.tpo_valor %s is not %% or $", p, quote(d.TpoValor)),
				`send "%" (percentage) or "$" (amount)`)
		}
		if !d.ValorDR.IsSet() {
			v.add(p+".valor_dr", CodeRequired, p+".valor_dr is required", "send the percentage or the amount")
		} else {
			rule := numRule{places: 2, intDigits: 16, min: "0", minExclusive: true}
			switch {
			case validTpo && d.TpoValor == "%":
				rule.intDigits, rule.max = 3, "100"
			case validTpo && !v.export():
				rule.places, rule.placesHint = 0, "an amount ($) on a CLP document is an integer"
			}
			v.number(p+".valor_dr", d.ValorDR, rule)
		}
		v.text(p+".glosa_dr", d.GlosaDR, maxGlosaDR, textOptional)
		if d.IndExeDR != nil && *d.IndExeDR != 1 && *d.IndExeDR != 2 {
			v.add(p+".ind_exe_dr", CodeInvalidValue, fmt.Sprintf("%s.ind_exe_dr %d is not 1 or 2", p, *d.IndExeDR),
				"send 1 (applies to exempt amounts), 2 (to non-billable amounts) or omit it (taxable amounts)")
		}
	}
}

func (v *validator) checkExportData(e *ExportData) {
	isExport := v.tipoOK && v.tipo.IsExport()
	switch {
	case e == nil:
		if isExport {
			v.add("export_data", CodeRequired, fmt.Sprintf("tipo_dte %d needs export_data", int(v.tipo)),
				`send export_data with at least tpo_moneda, e.g. "DOLAR USA"`)
		}
		return
	case v.tipoOK && !isExport:
		v.notAllowed("export_data", "the export documents 110, 111, 112")
		return
	}
	const p = "export_data."
	switch {
	case e.TpoMoneda == "":
		v.add(p+"tpo_moneda", CodeRequired, "export_data.tpo_moneda is required", `send the SII currency name, e.g. "DOLAR USA"`)
	case !monedaValid(e.TpoMoneda):
		v.add(p+"tpo_moneda", CodeInvalidValue,
			fmt.Sprintf("export_data.tpo_moneda %s is not one of the SII's currency names", quote(e.TpoMoneda)),
			`use the SII's name in capitals, e.g. "DOLAR USA", "EURO", "PESO CL"`)
	}
	if e.TpoCambio.IsSet() {
		v.number(p+"tpo_cambio", e.TpoCambio, numRule{places: 4, intDigits: 6, min: "0", minExclusive: true})
	}
	if e.MntExport.IsSet() {
		v.number(p+"mnt_export", e.MntExport, numRule{places: 4, intDigits: 14, min: "0"})
	}
	v.text(p+"nacionalidad", e.Nacionalidad, maxNacionalidad, textOptional)
	v.text(p+"num_id", e.NumID, maxNumID, textOptional)
	if e.TipoDocID != nil {
		v.add(p+"tipo_doc_id", CodeNotAllowed, "export_data.tipo_doc_id must not be used on export documents (110, 111, 112)",
			"remove tipo_doc_id")
	}
	v.smallCode(p+"forma_pago_exp", e.FormaPagoExp)
	v.smallCode(p+"modalidad_venta", e.ModalidadVenta)
	if e.ClausulaVenta != "" {
		if _, ok := ClausulaVentaCodigo(e.ClausulaVenta); !ok {
			v.add(p+"clausula_venta", CodeInvalidValue,
				fmt.Sprintf("export_data.clausula_venta %s is not a sale clause code (1–99) nor a known label", quote(e.ClausulaVenta)),
				"send the customs code or one of CIF, CFR, EXW, FAS, FOB, S/CL, DDP, FCA, CPT, CIP, DAT, DAP")
		}
	}
	if e.TotalClausula.IsSet() {
		v.number(p+"total_clausula", e.TotalClausula, numRule{places: 2, intDigits: 16, min: "0", minExclusive: true})
	}
	v.smallCode(p+"via_transporte", e.ViaTransporte)
	v.numericCode(p+"puerto_embarque", e.PuertoEmbarque, 4)
	v.numericCode(p+"puerto_desembarque", e.PuertoDesembarque, 4)
	if e.Tara != nil && (*e.Tara < 1 || *e.Tara > 9_999_999) {
		v.add(p+"tara", CodeOutOfRange, fmt.Sprintf("export_data.tara %d is not 1–9999999", *e.Tara), "send the tare as a whole number of units")
	}
	v.smallCode(p+"unidad_tara", e.UnidadTara)
	if e.PesoBruto.IsSet() {
		v.number(p+"peso_bruto", e.PesoBruto, numRule{places: 2, intDigits: 8, min: "0"})
	}
	v.smallCode(p+"unidad_peso_bruto", e.UnidadPesoBruto)
	if e.PesoNeto.IsSet() {
		v.number(p+"peso_neto", e.PesoNeto, numRule{places: 2, intDigits: 8, min: "0"})
	}
	v.smallCode(p+"unidad_peso_neto", e.UnidadPesoNeto)
	v.numericCode(p+"tipo_bulto", e.TipoBulto, 3)
	if e.TotalBultos != nil && (*e.TotalBultos < 1 || *e.TotalBultos > 999_999_999_999_999_999) {
		v.add(p+"total_bultos", CodeOutOfRange, fmt.Sprintf("export_data.total_bultos %d must be at least 1", *e.TotalBultos),
			"send the number of packages or omit the field")
	}
	v.text(p+"marcas", e.Marcas, maxMarcas, textOptional)
	if e.MntFlete.IsSet() {
		v.number(p+"mnt_flete", e.MntFlete, numRule{places: 4, intDigits: 14, min: "0", minExclusive: true})
	}
	if e.MntSeguro.IsSet() {
		v.number(p+"mnt_seguro", e.MntSeguro, numRule{places: 4, intDigits: 14, min: "0", minExclusive: true})
	}
	v.numericCode(p+"pais_recep", e.PaisRecep, 3)
	v.numericCode(p+"pais_dest", e.PaisDest, 3)
}

// smallCode checks an optional two-digit positive code of the customs tables.
func (v *validator) smallCode(field string, n *int) {
	if n != nil && (*n < 1 || *n > 99) {
		v.add(field, CodeOutOfRange, fmt.Sprintf("%s %d is not a code from 1 to 99", field, *n),
			"send the code of the customs table, or omit the field")
	}
}

// numericCode checks an optional text that must be a positive numeric code of
// at most digits digits (the schema's Aduana elements are integers).
func (v *validator) numericCode(field, s string, digits int) {
	if s == "" {
		return
	}
	t := strings.TrimLeft(s, "0")
	if !allDigits(s) || t == "" || len(t) > digits {
		v.add(field, CodeInvalidFormat,
			fmt.Sprintf("%s %s is not a numeric customs code of at most %d digits", field, quote(s), digits),
			"send the numeric code of the customs (Aduana) table, e.g. 225 for the United States as a country")
	}
}

// Text rules.
type textMode int

const (
	textOptional  textMode = iota // may be empty
	textRequired                  // must hold a non-blank value
	textMultiline                 // optional; may hold line feeds and tabs
)

// text checks one text field: presence, ISO-8859-1, control characters and
// length in characters. It reports whether the field passed.
func (v *validator) text(field, s string, max int, mode textMode) bool {
	if strings.TrimSpace(s) == "" {
		if mode == textRequired {
			v.add(field, CodeRequired, field+" is required", "send a non-blank value")
			return false
		}
		if s == "" {
			return true
		}
	}
	n := 0
	for i, r := range s {
		n++
		switch {
		case r == utf8.RuneError && isBadUTF8(s[i:]):
			v.add(field, CodeNotLatin1, fmt.Sprintf("%s holds bytes that are not valid UTF-8", field),
				"send the text in UTF-8")
			return false
		case r > 0xFF:
			v.add(field, CodeNotLatin1,
				fmt.Sprintf("%s holds %q (U+%04X), which ISO-8859-1 (the SII's encoding) cannot represent", field, r, r),
				"replace the character with one of ISO-8859-1 (Latin letters with accents, ñ, °, ... are fine)")
			return false
		case r == '\r':
			v.add(field, CodeInvalidCharacter, fmt.Sprintf("%s holds a carriage return", field),
				`use "\n" alone for line breaks (only in dsc_item)`)
			return false
		case (r == '\n' || r == '\t') && mode == textMultiline:
		case r < 0x20 || (r >= 0x7F && r <= 0x9F):
			v.add(field, CodeInvalidCharacter, fmt.Sprintf("%s holds the control character U+%04X", field, r),
				"remove control characters (line feeds and tabs are allowed only in dsc_item)")
			return false
		}
	}
	if n > max {
		v.add(field, CodeTooLong, fmt.Sprintf("%s has %d characters; at most %d fit", field, n, max),
			fmt.Sprintf("shorten it to %d characters", max))
		return false
	}
	return true
}

// CheckText checks one text field by the rules of a request's texts,
// the ones the SII's documents need: valid UTF-8 of ISO-8859-1 characters
// only, no control character (line feeds and tabs only when multiline),
// at most max characters, and not blank when required. It returns the
// problem, named by field, or nil. Services apply it to the texts they
// keep for documents (a catalog's clientes and productos, the issuing
// company) so that bad text is refused before it is stored.
func CheckText(field, s string, max int, required, multiline bool) *FieldError {
	mode := textOptional
	switch {
	case required:
		mode = textRequired
	case multiline:
		mode = textMultiline
	}
	var v validator
	if v.text(field, s, max, mode) {
		return nil
	}
	return &v.errs[0]
}

// textAt is text for the field p+suffix; the name is only built when
// there is a problem to report.
func (v *validator) textAt(p, suffix, s string, max int, mode textMode) bool {
	if plainTextOK(s, max, mode) {
		return true
	}
	return v.text(p+suffix, s, max, mode)
}

// plainTextOK reports, without allocating, that text would accept s
// silently: s is empty and optional, or holds at most max characters, all
// printable Latin-1 (line feeds and tabs too in multiline mode), at least
// one of them not a space. A false answer only means "let text decide".
func plainTextOK(s string, max int, mode textMode) bool {
	n, blank := 0, true
	for i := 0; i < len(s); n++ {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c > ' ' && c < 0x7F:
				blank = false
			case c == ' ', (c == '\n' || c == '\t') && mode == textMultiline:
			default:
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r > 0xA0 && r <= 0xFF:
			blank = false
		case r != 0xA0: // U+00A0 is a space; invalid UTF-8 decodes to U+FFFD
			return false
		}
		i += size
	}
	if blank {
		return s == "" && mode != textRequired
	}
	return n <= max
}

// isBadUTF8 reports whether s starts with an invalid UTF-8 sequence (as
// opposed to a literal U+FFFD, which is valid UTF-8 but not Latin-1 either).
func isBadUTF8(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size <= 1
}

// numRule bounds a decimal field.
type numRule struct {
	places       int    // most significant decimal places
	intDigits    int    // most integer digits (leading zeros don't count)
	min, max     string // bounds as decimal text; "" for none
	minExclusive bool   // min itself is out of range
	placesHint   string // explains an integer rule in messages
}

// number checks a set Decimal against rule and returns its value when valid.
func (v *validator) number(field string, d Decimal, rule numRule) (fxNum, bool) {
	return v.numberAt(field, "", d, rule)
}

// numberAt is number for the field p+suffix; the name is only built when
// there is a problem to report. The value it returns is the one
// ComputeTotals computes with.
func (v *validator) numberAt(p, suffix string, d Decimal, rule numRule) (fxNum, bool) {
	x, ok := d.parse()
	if !ok {
		field := p + suffix
		v.add(field, CodeInvalidFormat, fmt.Sprintf("%s %s is not a plain decimal number", field, quote(string(d))),
			"write digits with an optional sign and a decimal point; no exponent, spaces or thousands separators")
		return fxNum{}, false
	}
	if x.places > rule.places {
		field := p + suffix
		msg := fmt.Sprintf("%s %s has %d decimal places; at most %d are allowed", field, quote(string(d)), x.places, rule.places)
		if rule.places == 0 {
			msg = fmt.Sprintf("%s %s must be an integer", field, quote(string(d)))
			if rule.placesHint != "" {
				msg += " (" + rule.placesHint + ")"
			}
		}
		action := fmt.Sprintf("round it to %d decimal places", rule.places)
		if rule.places == 0 {
			action = "round it to a whole number"
		}
		v.add(field, CodeInvalidDecimals, msg, action)
		return fxNum{}, false
	}
	if x.intDigits > rule.intDigits || !x.fits {
		field := p + suffix
		v.add(field, CodeOutOfRange,
			fmt.Sprintf("%s %s has more than %d integer digits", field, quote(string(d)), rule.intDigits),
			"check the value")
		return fxNum{}, false
	}
	if rule.min != "" {
		c := fxCompare(x.fx, ruleBound(rule.min))
		if c < 0 || (c == 0 && rule.minExclusive) {
			field := p + suffix
			word := "at least"
			if rule.minExclusive {
				word = "greater than"
			}
			v.add(field, CodeOutOfRange, fmt.Sprintf("%s must be %s %s (got %s)", field, word, rule.min, quote(string(d))),
				"check the value")
			return fxNum{}, false
		}
	}
	if rule.max != "" && fxCompare(x.fx, ruleBound(rule.max)) > 0 {
		field := p + suffix
		v.add(field, CodeOutOfRange, fmt.Sprintf("%s must be at most %s (got %s)", field, rule.max, quote(string(d))),
			"check the value")
		return fxNum{}, false
	}
	return x.fx, true
}

// isZero reports whether d is a well-formed zero ("0", "-0.00").
func isZero(d Decimal) bool {
	p, ok := d.parse()
	return ok && p.fits && p.fx.v == 0
}

// ruleBound is the value of a numRule bound, a decimal constant.
func ruleBound(s string) fxNum {
	n, _ := fxParse(Decimal(s))
	return n
}

// quote returns s quoted for a message, shortened when long.
func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) > max {
		s = firstRunes(s, max) + "…"
	}
	return strconv.Quote(s)
}

// CheckRUT checks a RUT given in field: blank (REQUIRED when required,
// else no problem), not a RUT (INVALID_FORMAT), or a check digit that does
// not match (INVALID_RUT). It returns the problem, named by field, with a
// message and action for a person, or nil. Services apply it to every RUT
// they read so that each is refused the same way.
func CheckRUT(field, s string, required bool) *FieldError {
	if strings.TrimSpace(s) == "" {
		if !required {
			return nil
		}
		return &FieldError{Field: field, Code: CodeRequired, Message: field + " is required",
			Action: "send the RUT with its check digit, e.g. 76086428-5"}
	}
	_, err := ParseRUT(s)
	if err == nil {
		return nil
	}
	var re *RUTError
	if errors.As(err, &re) && re.BadCheckDigit {
		return &FieldError{Field: field, Code: CodeInvalidRUT, Message: field + ": " + re.Reason,
			Action: "check the RUT's digits; the check digit is computed with módulo 11"}
	}
	return &FieldError{Field: field, Code: CodeInvalidFormat,
		Message: fmt.Sprintf("%s %s is not a RUT: %s", field, quote(s), reasonOf(err)),
		Action:  "write the RUT as digits, a hyphen and the check digit (0-9 or K), e.g. 76086428-5"}
}

// reasonOf returns the reason of a RUT error without its prefix.
func reasonOf(err error) string {
	var re *RUTError
	if errors.As(err, &re) {
		return re.Reason
	}
	return err.Error()
}

// taxCode checks an additional tax or retention code against the one table
// of codes (lookupTaxCode) and reports whether dtekit can compute it.
func (v *validator) taxCode(field string, c int) bool {
	t, ok := lookupTaxCode(c)
	switch {
	case !ok:
		v.add(field, CodeInvalidValue, fmt.Sprintf("%s %d is not an SII additional tax or retention code", field, c),
			"use a code of the SII's table of additional taxes (e.g. 15, 17, 24, 27)")
		return false
	case t.class == taxUnclassified:
		v.add(field, CodeInvalidValue,
			fmt.Sprintf("%s %d is in the SII's table, but dtekit does not know whether it adds to the total or is withheld from it, so it cannot compute the document", field, c),
			"use another code, or report the case so the code can be classified")
		return false
	}
	return true
}

// monedaValid reports whether s is a currency name of the SII's TipMonType.
func monedaValid(s string) bool {
	switch s {
	case "BOLIVAR", "BOLIVIANO", "CHELIN", "CORONA DIN", "CORONA NOR", "CORONA SC",
		"CRUZEIRO REAL", "DIRHAM", "DOLAR AUST", "DOLAR CAN", "DOLAR HK", "DOLAR NZ",
		"DOLAR SIN", "DOLAR TAI", "DOLAR USA", "DRACMA", "ESCUDO", "EURO", "FLORIN",
		"FRANCO BEL", "FRANCO FR", "FRANCO SZ", "GUARANI", "LIBRA EST", "LIRA",
		"MARCO AL", "MARCO FIN", "NUEVO SOL", "OTRAS MONEDAS", "PESETA", "PESO",
		"PESO CL", "PESO COL", "PESO MEX", "PESO URUG", "RAND", "RENMINBI", "RUPIA",
		"SUCRE", "YEN":
		return true
	}
	return false
}

// Dates.

// civilDate is a calendar date.
type civilDate struct{ y, m, d int }

func (c civilDate) String() string { return fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d) }

func (c civilDate) after(o civilDate) bool {
	if c.y != o.y {
		return c.y > o.y
	}
	if c.m != o.m {
		return c.m > o.m
	}
	return c.d > o.d
}

// chileDate returns the calendar date of t in America/Santiago.
func chileDate(t time.Time) civilDate {
	y, m, d := t.In(santiago()).Date()
	return civilDate{y, int(m), d}
}

// date checks a YYYY-MM-DD date within the SII's FechaType range.
func (v *validator) date(field, s string) (civilDate, bool) {
	t, err := time.Parse("2006-01-02", s)
	if len(s) != 10 || err != nil {
		v.add(field, CodeInvalidFormat, fmt.Sprintf("%s %s is not a real date written YYYY-MM-DD", field, quote(s)),
			"write the date as YYYY-MM-DD, e.g. 2025-03-31")
		return civilDate{}, false
	}
	c := civilDate{t.Year(), int(t.Month()), t.Day()}
	if c.after(civilDate{2050, 12, 31}) || (civilDate{2000, 1, 1}).after(c) {
		v.add(field, CodeOutOfRange, fmt.Sprintf("%s %s is outside the SII's range 2000-01-01 to 2050-12-31", field, s),
			"check the year")
		return civilDate{}, false
	}
	return c, true
}
