package pdf

import (
	"strings"

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
			out = append(out, kv{"Nacionalidad:", "Código " + s})
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
		add("Forma de pago:", "Código "+itoa(*x.FormaPagoExp))
	}
	if x.ModalidadVenta != nil {
		add("Modalidad de venta:", modalidadName(*x.ModalidadVenta))
	}
	if x.ClausulaVenta != "" {
		add("Cláusula de venta:", clausulaName(x.ClausulaVenta))
	}
	if x.TotalClausula.IsSet() {
		add("Total cláusula:", fmtMoney(x.TotalClausula, cur))
	}
	if x.ViaTransporte != nil {
		add("Vía de transporte:", viaName(*x.ViaTransporte))
	}
	add("Puerto de embarque:", x.PuertoEmbarque)
	add("Puerto de desembarque:", x.PuertoDesembarque)
	if x.PaisRecep != "" {
		add("País receptor:", "Código "+x.PaisRecep)
	}
	if x.PaisDest != "" {
		add("País de destino:", "Código "+x.PaisDest)
	}
	if x.TotalBultos != nil {
		add("Total bultos:", fmtInt(*x.TotalBultos))
	}
	if x.TipoBulto != "" {
		add("Tipo de bulto:", "Código "+x.TipoBulto)
	}
	add("Marcas:", x.Marcas)
	if x.PesoBruto.IsSet() {
		add("Peso bruto:", fmtNumber(x.PesoBruto)+unidadPeso(x.UnidadPesoBruto))
	}
	if x.PesoNeto.IsSet() {
		add("Peso neto:", fmtNumber(x.PesoNeto)+unidadPeso(x.UnidadPesoNeto))
	}
	if x.Tara != nil {
		add("Tara:", fmtInt(*x.Tara)+unidadPeso(x.UnidadTara))
	}
	if x.MntFlete.IsSet() {
		add("Flete:", fmtMoney(x.MntFlete, cur))
	}
	if x.MntSeguro.IsSet() {
		add("Seguro:", fmtMoney(x.MntSeguro, cur))
	}
	return out
}

// unidadPeso prints a customs unit code after a weight.
func unidadPeso(c *int) string {
	if c == nil {
		return ""
	}
	if *c == 6 {
		return " kg"
	}
	return " (unidad " + itoa(*c) + ")"
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

// globalRows are the global discounts and surcharges: kind, glosa, bucket
// and value.
func globalRows(d *dte.Document, cur string) [][]string {
	var out [][]string
	for _, g := range d.DescuentosGlobales {
		kind := "Descuento"
		if strings.EqualFold(strings.TrimSpace(g.TpoMov), "R") {
			kind = "Recargo"
		}
		bucket := "sobre afecto"
		if g.IndExeDR != nil {
			bucket = "sobre " + exeName(*g.IndExeDR)
		}
		var val string
		if strings.TrimSpace(g.TpoValor) == "%" {
			val = fmtPct(g.ValorDR)
		} else {
			val = fmtMoney(g.ValorDR, cur)
		}
		out = append(out, []string{kind, oneLine(g.GlosaDR), bucket, val})
	}
	return out
}

// refRows are the references: type, folio, date, code and reason.
func refRows(d *dte.Document) [][]string {
	var out [][]string
	for _, r := range d.Referencias {
		folio := ""
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

// lineName is a detail line's name with its exemption mark on documents
// that mix taxable and exempt lines.
func lineName(d *dte.Document, l dte.DocLine) string {
	n := oneLine(l.Nombre)
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
