package pdf

import (
	"math/big"
	"strings"
	"unicode/utf8"

	"github.com/dtekit/dtekit/aduana"
	"github.com/dtekit/dtekit/dte"
)

// Content shared by both formats: the lines of each section as label/value
// pairs or table cells, in UTF-8, before layout.

// kv is a label and its value.
type kv struct{ k, v string }

// emisorLines returns the issuer's giro and address lines.
func emisorLines(e dte.Emisor) (giro, dir string) {
	giro = oneLine(e.Giro)
	parts := make([]string, 0, 3)
	for _, s := range []string{e.Direccion, e.Comuna, e.Ciudad} {
		if s = oneLine(s); s != "" && !containsFold(parts, s) {
			parts = append(parts, s)
		}
	}
	return giro, strings.Join(parts, ", ")
}

// containsFold reports whether list holds s, ignoring case.
func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// receptorLeft and receptorRight are the receptor box's two columns.
func receptorLeft(d *dte.Document) []kv {
	rc := d.Receptor
	out := []kv{{"Señor(es):", oneLine(rc.RazonSocial)}}
	if s := oneLine(rc.Giro); s != "" {
		out = append(out, kv{"Giro:", s})
	}
	if s := oneLine(rc.Direccion); s != "" {
		out = append(out, kv{"Dirección:", s})
	}
	if s := oneLine(rc.Comuna); s != "" {
		out = append(out, kv{"Comuna:", s})
	}
	if s := oneLine(rc.Ciudad); s != "" {
		out = append(out, kv{"Ciudad:", s})
	}
	return out
}

func receptorRight(d *dte.Document) []kv {
	out := []kv{{"R.U.T.:", fmtRUT(d.Receptor.Rut)}, {"Fecha emisión:", fmtFecha(d.FechaEmision)}}
	if x := d.Export; x != nil {
		if s := oneLine(x.Nacionalidad); s != "" {
			out = append(out, kv{"Nacionalidad:", customsName(s, aduana.Pais)})
		}
		if s := oneLine(x.NumID); s != "" {
			out = append(out, kv{"Id. extranjero:", s})
		}
	}
	if d.IndTraslado != nil {
		out = append(out, kv{"Traslado:", trasladoName(*d.IndTraslado)})
	}
	if d.TipoDespacho != nil {
		out = append(out, kv{"Despacho:", despachoName(*d.TipoDespacho)})
	}
	return out
}

// exportLines lists an export document's customs and currency data.
func exportLines(d *dte.Document, cur string) []kv {
	x := d.Export
	if x == nil {
		return nil
	}
	var out []kv
	add := func(k, v string) {
		if v = oneLine(v); v != "" {
			out = append(out, kv{k, v})
		}
	}
	add("Moneda:", x.TpoMoneda)
	if x.TpoCambio.IsSet() {
		add("Tipo de cambio:", fmtNumber(x.TpoCambio))
	}
	if x.FormaPagoExp != nil {
		add("Forma de pago:", formaPagoName(*x.FormaPagoExp))
	}
	if x.ModalidadVenta != nil {
		add("Modalidad de venta:", customsNamed(*x.ModalidadVenta, aduana.ModalidadVenta))
	}
	add("Cláusula de venta:", customsName(x.ClausulaVenta, aduana.ClausulaVenta))
	if x.TotalClausula.IsSet() {
		add("Total cláusula:", fmtMoney(x.TotalClausula, cur))
	}
	if x.ViaTransporte != nil {
		add("Vía de transporte:", customsNamed(*x.ViaTransporte, aduana.ViaTransporte))
	}
	add("Puerto de embarque:", customsName(x.PuertoEmbarque, aduana.Puerto))
	add("Puerto de desembarque:", customsName(x.PuertoDesembarque, aduana.Puerto))
	add("País receptor:", customsName(x.PaisRecep, aduana.Pais))
	add("País de destino:", customsName(x.PaisDest, aduana.Pais))
	if x.TotalBultos != nil {
		add("Total bultos:", fmtInt(*x.TotalBultos))
	}
	add("Tipo de bulto:", customsName(x.TipoBulto, bultoName))
	add("Marcas:", x.Marcas)
	if x.PesoBruto.IsSet() {
		add("Peso bruto:", fmtNumber(x.PesoBruto)+unidadName(x.UnidadPesoBruto))
	}
	if x.PesoNeto.IsSet() {
		add("Peso neto:", fmtNumber(x.PesoNeto)+unidadName(x.UnidadPesoNeto))
	}
	if x.Tara != nil {
		add("Tara:", fmtInt(*x.Tara)+unidadName(x.UnidadTara))
	}
	if x.MntFlete.IsSet() {
		add("Flete:", fmtMoney(x.MntFlete, cur))
	}
	if x.MntSeguro.IsSet() {
		add("Seguro:", fmtMoney(x.MntSeguro, cur))
	}
	return out
}

// transporteLines lists the transport of the goods (Encabezado/Transporte):
// vehicle, carrier, driver and destination, as Res. Ex. SII 154/2025 asks
// them to be shown on the document that goes with the goods.
func transporteLines(d *dte.Document) []kv {
	t := d.Transporte
	if t == nil {
		return nil
	}
	var out []kv
	add := func(k, v string) {
		if v = oneLine(v); v != "" {
			out = append(out, kv{k, v})
		}
	}
	add("Patente:", t.Patente)
	if t.RutTransportista != "" {
		add("RUT transportista:", fmtRUT(t.RutTransportista))
	}
	if c := t.Chofer; c != nil {
		add("Chofer:", c.Nombre)
		if c.Rut != "" {
			add("RUT chofer:", fmtRUT(c.Rut))
		}
	}
	add("Dirección destino:", t.DireccionDestino)
	add("Comuna destino:", t.ComunaDestino)
	add("Ciudad destino:", t.CiudadDestino)
	return out
}

// totalLines lists the totals box, the total last; bold marks the total.
type totalLine struct {
	label, amount string
	bold          bool
}

func totalLines(d *dte.Document, cur string) []totalLine {
	t := d.Totales
	var out []totalLine
	add := func(label string, v dte.Decimal) {
		if v.IsSet() {
			out = append(out, totalLine{label: label, amount: fmtMoney(v, cur)})
		}
	}
	add("Monto neto", t.MntNeto)
	add("Monto exento", t.MntExe)
	if t.IVA.IsSet() {
		l := "IVA"
		if t.TasaIVA.IsSet() {
			l += " " + fmtPct(t.TasaIVA)
		}
		add(l, t.IVA)
	}
	for _, im := range t.ImptoReten {
		l := impuestoName(im.TipoImp)
		if im.TasaImp.IsSet() {
			l += " " + fmtPct(im.TasaImp)
		}
		add(l, im.MontoImp)
	}
	add("IVA no retenido", t.IVANoRet)
	if c := t.Comisiones; c != nil {
		add("Comisiones neto", c.ValComNeto)
		add("Comisiones exento", c.ValComExe)
		add("IVA comisiones", c.ValComIVA)
	}
	add("Monto no facturable", t.MontoNF)
	total := t.MntTotal
	if !total.IsSet() {
		total = "0"
	}
	out = append(out, totalLine{label: "TOTAL", amount: fmtMoney(total, cur), bold: true})
	if om := d.OtraMoneda; om != nil && om.MntTotOtrMnda.IsSet() {
		sym := currencySymbol(om.TpoMoneda)
		name := oneLine(om.TpoMoneda)
		if name == "" {
			name = "otra moneda"
		}
		out = append(out, totalLine{label: "Total en " + name, amount: fmtMoney(om.MntTotOtrMnda, sym)})
		if om.TpoCambio.IsSet() {
			out = append(out, totalLine{label: "Tipo de cambio", amount: fmtNumber(om.TpoCambio)})
		}
	}
	return out
}

// globalRows are the global discounts and surcharges: kind, glosa, the
// subtotal they apply to ("sobre afecto $ 120.000": the sum of the lines of
// that kind) and the amount they come to, signed, with the percentage when
// they are one ("-$ 12.000 (10%)"). The amounts are the SII's computation
// (dte.ComputeTotals over the document); if the document's totals cannot
// be computed, a percentage is printed alone.
func globalRows(d *dte.Document, cur string) [][]string {
	var out [][]string
	var amounts []dte.GlobalTotals
	if len(d.DescuentosGlobales) > 0 {
		if tot, err := dte.ComputeTotals(d.Request()); err == nil && len(tot.DscRcgGlobal) == len(d.DescuentosGlobales) {
			amounts = tot.DscRcgGlobal
		}
	}
	for i, g := range d.DescuentosGlobales {
		kind, sign := "Descuento", "-"
		if strings.EqualFold(strings.TrimSpace(g.TpoMov), "R") {
			kind, sign = "Recargo", "+"
		}
		bucketKind := 0
		if g.IndExeDR != nil {
			bucketKind = *g.IndExeDR
		}
		bucket := "sobre afecto"
		if bucketKind != 0 {
			bucket = "sobre " + exeName(bucketKind)
		}
		if base, ok := bucketSubtotal(d, bucketKind); ok {
			bucket += " " + fmtMoney(base, cur)
		}
		isPct := strings.TrimSpace(g.TpoValor) == "%"
		var val string
		switch {
		case amounts != nil:
			val = sign + fmtMoney(amounts[i].Monto, cur)
			if isPct {
				val += " (" + fmtPct(g.ValorDR) + ")"
			}
		case isPct:
			val = sign + fmtPct(g.ValorDR)
		default:
			val = sign + fmtMoney(g.ValorDR, cur)
		}
		out = append(out, []string{kind, oneLine(g.GlosaDR), bucket, val})
	}
	return out
}

// bucketSubtotal sums the amounts (MontoItem) of the lines of one kind:
// 0 taxable, 1 exempt, 2 not billable. ok is false when an amount is not a
// number.
func bucketSubtotal(d *dte.Document, kind int) (dte.Decimal, bool) {
	sum, places := new(big.Rat), 0
	for _, l := range d.Detalle {
		if l.IndExe != kind {
			continue
		}
		r := l.MontoItem.Rat()
		if r == nil {
			return "", false
		}
		sum.Add(sum, r)
		places = max(places, l.MontoItem.Places())
	}
	return dte.DecimalFromRat(sum, places), true
}

// refRows are the references: type, folio, date, code and reason.
func refRows(d *dte.Document) [][]string {
	var out [][]string
	for _, r := range d.Referencias {
		folio := r.FolioRefTexto
		if r.FolioRef != 0 {
			folio = fmtIntPlain(r.FolioRef)
		}
		out = append(out, []string{refTipoName(r.TipoDocRef), folio, fmtFechaCorta(r.FechaRef), codRefName(r.CodigoRef), oneLine(r.RazonRef)})
	}
	return out
}

// comisionRows are a liquidación-factura's commissions: kind, glosa, rate,
// net, exempt and IVA.
func comisionRows(d *dte.Document, cur string) [][]string {
	var out [][]string
	for _, c := range d.Comisiones {
		kind := "Otros"
		if strings.EqualFold(strings.TrimSpace(c.TipoMovim), "C") {
			kind = "Comisión"
		}
		tasa := ""
		if c.TasaComision.IsSet() {
			tasa = fmtPct(c.TasaComision)
		}
		iva := ""
		if c.ValComIVA != nil {
			iva = fmtMoney(dte.DecimalFromInt(*c.ValComIVA), cur)
		}
		out = append(out, []string{kind, oneLine(c.Glosa), tasa,
			fmtMoney(dte.DecimalFromInt(c.ValComNeto), cur), fmtMoney(dte.DecimalFromInt(c.ValComExe), cur), iva})
	}
	return out
}

// nmbItemLen is the length of the SII's NmbItem, in characters.
const nmbItemLen = 80

// itemTexts returns a line's name and description as printed. The XML
// carries at most 80 characters of a name in NmbItem; a longer name is cut
// there and written whole as the first line of DscItem (see
// dte.LineaDetalle.ItemName). Printing both would show the name twice, so
// such a line prints the whole name, wrapped at word boundaries, and the
// rest of DscItem as its description.
func itemTexts(l dte.DocLine) (name, desc string) {
	name, desc = l.Nombre, l.Descripcion
	first, rest, _ := strings.Cut(desc, "\n")
	// The XML reader may trim a space the cut left at NmbItem's end, so
	// the test is on DscItem's first line: longer than NmbItem holds and
	// starting with the name.
	if name != "" && utf8.RuneCountInString(first) > nmbItemLen && strings.HasPrefix(first, name) {
		return first, rest
	}
	return name, desc
}

// lineName is a detail line's name with its exemption mark on documents
// that mix taxable and exempt lines.
func lineName(d *dte.Document, l dte.DocLine) string {
	name, _ := itemTexts(l)
	n := oneLine(name)
	if !d.Tipo.IsExempt() && (l.IndExe == 1 || l.IndExe == 2) {
		n += " (" + exeName(l.IndExe) + ")"
	}
	return n
}

// lineAdjust is a line's discount and surcharge as printed amounts:
// "-1.298 (10%)", "+500".
func lineAdjust(l dte.DocLine) []string {
	var out []string
	if l.DescuentoMonto.IsSet() && l.DescuentoMonto.Sign() != 0 {
		s := "-" + fmtNumber(l.DescuentoMonto)
		if l.DescuentoPct.IsSet() {
			s += " (" + fmtPct(l.DescuentoPct) + ")"
		}
		out = append(out, s)
	}
	if l.RecargoMonto.IsSet() && l.RecargoMonto.Sign() != 0 {
		s := "+" + fmtNumber(l.RecargoMonto)
		if l.RecargoPct.IsSet() {
			s += " (" + fmtPct(l.RecargoPct) + ")"
		}
		out = append(out, s)
	}
	return out
}

// ley19983 is the legal text of the acuse de recibo (Ley 19.983, art. 4 b
// and 5 c).
const ley19983 = "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, " +
	"y la letra c) del Art. 5° de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) prestado(s) ha(n) sido recibido(s)."

// cedibleMark is the mark printed on the cedible copy.
func cedibleMark(t dte.TipoDTE) string {
	if t == dte.GuiaDespachoElectronica {
		return "CEDIBLE CON SU FACTURA"
	}
	return "CEDIBLE"
}
