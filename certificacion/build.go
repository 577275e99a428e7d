package certificacion

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

// This file turns a case into an emission request. The rules, with their
// sources (sii-wave3-notes §6.3 unless noted):
//
//   - Every document's first reference is the set: TpoDocRef SET, FolioRef
//     the case id "<atención>-<k>" (the notes' recommendation; FolioRef is
//     a string of up to 18 characters in the schema, dte's FolioRefTexto),
//     FchRef the emission date, RazonRef "CASO <atención>-<k>", no CodRef.
//     On a boleta it is CodRef SET and RazonRef "CASO-<n>" (§6.4).
//   - A note's second reference is the document of the case it names: its
//     type, folio and date, CodRef from the reason (1 anula, 2 corrige, 3
//     devolución or modifica monto) and the reason's text.
//   - Lines: the items in the file's order with their names as given. A
//     note that annuls copies every line (and the global discounts and
//     surcharges) of the document it annuls; a text correction carries one
//     line naming the first item of that document, without amounts
//     (MntTotal 0); a return takes each named item at the original unit
//     price, unit, discount and tax code with the set's quantity; a
//     MODIFICA MONTO takes the new unit value for the original quantity.
//   - An item a factura names "… EXENTO" is an exempt line; a boleta item
//     an OBSERVACION calls exempt, too.
//   - A factura de compra (46) retains the whole IVA: every line carries
//     CodImpAdic 15 (the retention at 19 %) and the retention agent's
//     indicator Retenedor/IndAgente R, so MntTotal is the neto; its notes
//     keep both through the copied lines.
//   - Guías: IndTraslado from MOTIVO and TipoDespacho from TRASLADO POR; a
//     traslado interno (5) goes to the emisor itself.
//   - Exports: currency, payment form, sale modality and clause, transport
//     route, ports, units, package type and countries as customs codes
//     (customsIndex); flete and seguro in the Aduana block and, on the
//     factura, as two global surcharges in the currency; "COMISIONES EN EL
//     EXTRANJERO … N% DEL TOTAL DE LA CLAUSULA" as a global surcharge of N %
//     of TOTAL CLAUSULA DE VENTA rounded to 2 decimals; "%N RECARGO EN LA
//     LINEA" and "DESCUENTO LINEA # k: N%" on the lines; a case whose items
//     are VALOR LINEA is a service: IndServicio 4 (hotel) when the set gives
//     the guest's NACIONALIDAD, else 3; REFERENCIA lines as references of
//     codes 807 DUS, 809 AWB, 810 MIC, 812 RESOLUCION SNA. A note copies
//     the export data of its document; only the factura carries the
//     flete, seguro and commission surcharges unless the note annuls.
//   - Receptors: every factura, guía de venta and boleta gets its own from
//     the receptor pool ("utilice RUT distintos para las distintas
//     facturas", [SII-INSTSET] I.4.b); a note goes to the receptor of its
//     document (a note on a boleta, whose buyer is anonymous, to the next
//     of the pool); an export to the foreign receptor RUT 55555555-5.
//   - A note on a boleta (the pre-2020 set of 007-boletas.csv) turns the
//     boleta's prices with IVA into net amounts (netOfBoleta).

// refCodes maps the export sets' REFERENCIA names to reference types.
var refCodes = map[string]int{
	"DUS": 807, "AWB": 809, "MIC (MANIFIESTO INTERNACIONAL)": 810, "MIC": 810, "RESOLUCION SNA": 812,
}

// ExtranjeroRUT is the RUT the SII gives every foreign receptor.
const ExtranjeroRUT = "55555555-5"

// built is a case's request and what the notes that name it need.
type built struct {
	c   *Case
	req *dte.EmitirDTERequest
	out *dte.Emitted
}

// caseError names a case in an error.
func caseError(c *Case, format string, args ...any) error {
	return fmt.Errorf("certificacion: case %s (line %d): %s", c.ID, c.Line, fmt.Sprintf(format, args...))
}

// request builds the emission request of case c, dated g.fecha; docs
// holds the cases already emitted.
func (g *generator) request(c *Case, docs map[string]*built) (*dte.EmitirDTERequest, error) {
	req := &dte.EmitirDTERequest{TipoDTE: c.Tipo, FechaEmision: g.fecha}
	razon := "CASO " + c.ID
	if c.Tipo.IsBoleta() {
		req.Referencias = []dte.Referencia{{TipoDocRef: dte.RefCodigo(dte.RefCodigoSET), RazonRef: "CASO-" + c.ID}}
	} else {
		req.Referencias = []dte.Referencia{{TipoDocRef: dte.RefCodigo(dte.RefCodigoSET), FolioRefTexto: c.ID, FechaRef: g.fecha, RazonRef: razon}}
	}
	var ref *built
	if c.Ref != nil {
		ref = docs[c.Ref.CaseID]
		if ref == nil {
			return nil, caseError(c, "the case it refers to, %s, was not emitted", c.Ref.CaseID)
		}
		cod := c.CodRef
		req.Referencias = append(req.Referencias, dte.Referencia{TipoDocRef: dte.RefTipo(ref.out.Tipo), FolioRef: ref.out.Folio,
			FechaRef: ref.out.FechaEmision, CodigoRef: &cod, RazonRef: c.Razon})
		req.Receptor = ref.req.Receptor
		if ref.out.Tipo.IsBoleta() && !c.Tipo.IsBoleta() {
			// A boleta's buyer is anonymous (66666666-6), which only a
			// boleta may name: the note goes to a receptor of the pool,
			// the customer who returns the goods.
			req.Receptor = g.receptor(c)
		}
		req.ImpuestosRetenciones = ref.req.ImpuestosRetenciones
		if ref.req.ExportData != nil {
			x := *ref.req.ExportData
			req.ExportData = &x
			req.IndServicio = ref.req.IndServicio
		}
	} else {
		req.Receptor = g.receptor(c)
	}
	if err := g.lines(c, req, ref); err != nil {
		return nil, err
	}
	if c.DescuentoGlobalPct != "" {
		req.DescuentosGlobales = append(req.DescuentosGlobales, dte.DscRcgGlobal{TpoMov: "D", TpoValor: "%", ValorDR: c.DescuentoGlobalPct})
	}
	switch {
	case c.Tipo == 52:
		ind := c.IndTraslado
		req.IndTraslado = &ind
		if c.TipoDespacho != 0 {
			td := c.TipoDespacho
			req.TipoDespacho = &td
		}
		if ind == 5 {
			req.Receptor = g.self()
		}
	case c.Tipo.IsExport():
		if err := g.export(c, req, ref); err != nil {
			return nil, err
		}
	}
	return req, nil
}

// lines fills the request's detail.
func (g *generator) lines(c *Case, req *dte.EmitirDTERequest, ref *built) error {
	if ref != nil && len(c.Items) == 0 {
		switch c.CodRef {
		case 1: // annul: the document again, with its global movements
			req.Detalle = append([]dte.LineaDetalle(nil), ref.req.Detalle...)
			if err := netOfBoleta(c, req, ref); err != nil {
				return err
			}
			req.DescuentosGlobales = append([]dte.DscRcgGlobal(nil), ref.req.DescuentosGlobales...)
			return nil
		case 2: // text correction: one line without amounts
			req.Detalle = []dte.LineaDetalle{{Nombre: ref.req.Detalle[0].Nombre}}
			return nil
		}
		return caseError(c, "a %q note without items", c.Razon)
	}
	for _, it := range c.Items {
		l := dte.LineaDetalle{Nombre: it.Nombre, Cantidad: it.Cantidad, Unidad: it.Unidad, Precio: it.Precio,
			DescuentoPct: it.DescuentoPct, RecargoPct: it.RecargoPct}
		if it.Exento || c.Tipo == dte.FacturaNoAfectaOExenta {
			// A factura exenta's lines are exempt, and say so: the notes
			// that copy them stay exempt too.
			l.IndExe = intp(1)
		}
		switch {
		case hasColumn(c, "VALOR LINEA") && l.Cantidad == "":
			l.Cantidad = "1" // the line's value is one unit's price
		case ref == nil && l.Precio == "":
			l.Precio = "0" // a traslado's items carry quantities only: no value
		}
		if c.Tipo == 46 {
			// The whole IVA retained by the company, the agent that
			// retains it: CodImpAdic 15 and Retenedor/IndAgente R.
			l.CodImpAdic, l.Retenedor = intp(15), true
		}
		if ref != nil {
			orig := findLine(ref.req.Detalle, it.Nombre)
			if orig == nil {
				return caseError(c, "item %q (line %d) is not an item of case %s", it.Nombre, it.Line, ref.c.ID)
			}
			l.Nombre = orig.Nombre
			l.IndExe, l.CodImpAdic, l.Retenedor = orig.IndExe, orig.CodImpAdic, orig.Retenedor
			if l.Unidad == "" {
				l.Unidad = orig.Unidad
			}
			switch {
			case it.Cantidad != "" && it.Precio == "": // return: the original price
				l.Precio, l.DescuentoPct, l.RecargoPct = orig.Precio, orig.DescuentoPct, orig.RecargoPct
			case it.Cantidad == "" && it.Precio != "": // new value for the original quantity
				l.Cantidad = orig.Cantidad
			}
		}
		req.Detalle = append(req.Detalle, l)
	}
	return netOfBoleta(c, req, ref)
}

// netOfBoleta turns the lines a note copies from a boleta, whose prices
// include IVA, into lines of a note, whose prices do not: each taxable line
// becomes one unit at its net amount, round(cantidad × precio / 1.19) half
// up, with the quantity and the price with IVA in its description (dte's
// prices are whole pesos, so a net unit price such as 170 / 1.19 cannot be
// written, and dte has no MntBruto); exempt lines stay as they are. The
// note's total can differ by a peso from the boleta's: a boleta takes its
// IVA out of the gross total, a note adds round(neto × 19 %) to its neto.
func netOfBoleta(c *Case, req *dte.EmitirDTERequest, ref *built) error {
	if ref == nil || !ref.out.Tipo.IsBoleta() || c.Tipo.IsBoleta() {
		return nil
	}
	for i, l := range req.Detalle {
		if l.IndExe != nil {
			continue
		}
		if l.DescuentoPct != "" || l.RecargoPct != "" || l.MontoItem != "" {
			return caseError(c, "item %q of boleta %s carries a discount, surcharge or amount the kit does not carry to a note", l.Nombre, ref.c.ID)
		}
		qty, price := l.Cantidad, l.Precio
		if qty == "" {
			qty = "1"
		}
		if qty.Rat() == nil || price.Rat() == nil {
			return caseError(c, "item %q of boleta %s has no quantity or price to credit", l.Nombre, ref.c.ID)
		}
		gross := new(big.Rat).Mul(qty.Rat(), price.Rat())
		net := new(big.Rat).Mul(gross, big.NewRat(100, 119)) // IVA 19 %
		unit := ""
		if l.Unidad != "" {
			unit = " " + l.Unidad
		}
		req.Detalle[i] = dte.LineaDetalle{Nombre: l.Nombre, DscItem: fmt.Sprintf("%s%s x $%s IVA incluido", qty, unit, price),
			Cantidad: "1", Precio: dte.DecimalFromRat(net, 0)}
	}
	return nil
}

// findLine finds the original line of an item by its name (the set may
// add a trailing space: "HORAS PROGRAMADOR ").
func findLine(lines []dte.LineaDetalle, name string) *dte.LineaDetalle {
	for i := range lines {
		if strings.TrimSpace(lines[i].Nombre) == strings.TrimSpace(name) {
			return &lines[i]
		}
	}
	return nil
}

// export fills an export case's data.
func (g *generator) export(c *Case, req *dte.EmitirDTERequest, ref *built) error {
	e := c.Export
	if ref != nil {
		// A note keeps its document's export data; a return or an amount
		// change does not repeat the factura's surcharges.
		if c.CodRef != 1 {
			req.DescuentosGlobales = nil
		}
		if req.ExportData == nil {
			return caseError(c, "the document it refers to has no export data")
		}
		if e == nil {
			return nil
		}
	}
	if e == nil {
		return caseError(c, "an export case without MONEDA DE LA OPERACION and the other export data")
	}
	x := req.ExportData
	if x == nil {
		x = &dte.ExportData{}
		req.ExportData = x
	}
	bad := func(kv KV, what string) error {
		return caseError(c, "line %d: %s %q is not %s", kv.Line, kv.Key, kv.Value, what)
	}
	ix := customs()
	var flete, seguro dte.Decimal
	for _, kv := range e.Fields {
		v := kv.Value
		switch kv.Key {
		case "MONEDA DE LA OPERACION":
			x.TpoMoneda = fold(v)
		case "FORMA DE PAGO EXPORTACION":
			code, ok := lookup(ix.formasPago, v, nil)
			if !ok {
				return bad(kv, "an export payment form of the customs table")
			}
			x.FormaPagoExp = intp(code)
		case "MODALIDAD DE VENTA":
			code, ok := lookup(ix.modalidades, v, nil)
			if !ok {
				return bad(kv, "a sale modality of the customs table")
			}
			x.ModalidadVenta = intp(code)
		case "CLAUSULA DE VENTA DE EXPORTACION":
			if _, ok := dte.ClausulaVentaCodigo(v); !ok {
				return bad(kv, "a sale clause (FOB, CIF, CFR …)")
			}
			x.ClausulaVenta = strings.ToUpper(v)
		case "TOTAL CLAUSULA DE VENTA":
			d, err := dte.ParseDecimal(v)
			if err != nil {
				return bad(kv, "an amount")
			}
			x.TotalClausula = d
		case "VIA DE TRANSPORTE":
			code, ok := lookup(ix.vias, v, nil)
			if !ok {
				return bad(kv, "a transport route of the customs table")
			}
			x.ViaTransporte = intp(code)
		case "PUERTO DE EMBARQUE", "PUERTO DE DESEMBARQUE":
			prefer := chileanPort
			if kv.Key == "PUERTO DE DESEMBARQUE" {
				prefer = foreignPort
			}
			code, ok := lookup(ix.puertos, v, prefer)
			if !ok {
				return bad(kv, "one port of the customs table")
			}
			if kv.Key == "PUERTO DE EMBARQUE" {
				x.PuertoEmbarque = strconv.Itoa(code)
			} else {
				x.PuertoDesembarque = strconv.Itoa(code)
			}
		case "UNIDAD DE MEDIDA DE TARA", "UNIDAD PESO BRUTO", "UNIDAD PESO NETO":
			code, ok := lookup(ix.unidades, v, nil)
			if !ok {
				return bad(kv, "a unit of the customs table")
			}
			switch kv.Key {
			case "UNIDAD DE MEDIDA DE TARA":
				x.UnidadTara = intp(code)
			case "UNIDAD PESO BRUTO":
				x.UnidadPesoBruto = intp(code)
			default:
				x.UnidadPesoNeto = intp(code)
			}
		case "TIPO DE BULTO":
			code, ok := lookup(ix.bultos, v, nil)
			if !ok {
				return bad(kv, "a package type of the customs table")
			}
			x.TipoBulto = strconv.Itoa(code)
			// Marcas are required with the packages (HED-2-804, [CR]);
			// the set gives none.
			x.Marcas = "SIN MARCAS"
		case "TOTAL BULTOS":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return bad(kv, "a number of packages")
			}
			x.TotalBultos = &n
		case "FLETE", "SEGURO":
			d, err := dte.ParseDecimal(v)
			if err != nil {
				return bad(kv, "an amount")
			}
			if kv.Key == "FLETE" {
				x.MntFlete, flete = d, d
			} else {
				x.MntSeguro, seguro = d, d
			}
		case "PAIS RECEPTOR Y PAIS DESTINO", "NACIONALIDAD":
			code, ok := lookup(ix.paises, v, nil)
			if !ok {
				return bad(kv, "a country of the customs table")
			}
			if kv.Key == "NACIONALIDAD" {
				x.Nacionalidad = strconv.Itoa(code)
			} else {
				x.PaisRecep, x.PaisDest = strconv.Itoa(code), strconv.Itoa(code)
				if x.Nacionalidad == "" {
					x.Nacionalidad = strconv.Itoa(code)
				}
			}
		default:
			return bad(kv, "an export field the kit knows")
		}
	}
	if x.TpoMoneda == "" {
		return caseError(c, "an export case without MONEDA DE LA OPERACION")
	}
	for _, r := range e.Referencias {
		code, ok := refCodes[r]
		if !ok {
			return caseError(c, "REFERENCIA %q is none of DUS, AWB, MIC, RESOLUCION SNA", r)
		}
		req.Referencias = append(req.Referencias, dte.Referencia{TipoDocRef: dte.RefCodigo(strconv.Itoa(code)),
			FolioRef: 1, FechaRef: g.fecha, RazonRef: r})
	}
	if ref == nil && hasColumn(c, "VALOR LINEA") {
		svc := 3
		if e.Get("NACIONALIDAD") != "" {
			// A hotel's service to a foreign guest: IndServicio 4 and the
			// guest's passport as reference 813 (sii-wave3-notes §6.2,
			// "hotel case → IndServicio 4 plus reference 813"); the set
			// gives no number, so the kit writes a test one.
			svc = 4
			req.Referencias = append(req.Referencias, dte.Referencia{TipoDocRef: dte.RefCodigo("813"),
				FolioRefTexto: "PAS" + strings.ReplaceAll(c.ID, "-", ""), FechaRef: g.fecha, RazonRef: "PASAPORTE DEL HUESPED"})
		}
		req.IndServicio = &svc
	}
	if ref == nil && !hasColumn(c, "VALOR LINEA") {
		weights(c, x)
	}
	if ref == nil && c.Tipo == 110 {
		if e.ComisionPct != "" {
			if x.TotalClausula == "" {
				return caseError(c, "a commission on the TOTAL CLAUSULA DE VENTA, which the case does not give")
			}
			amt := new(big.Rat).Mul(e.ComisionPct.Rat(), x.TotalClausula.Rat())
			amt.Quo(amt, big.NewRat(100, 1))
			req.DescuentosGlobales = append(req.DescuentosGlobales, dte.DscRcgGlobal{TpoMov: "R", TpoValor: "$",
				ValorDR: dte.DecimalFromRat(amt, 2), GlosaDR: "COMISIONES EN EL EXTRANJERO"})
		}
		if flete != "" {
			req.DescuentosGlobales = append(req.DescuentosGlobales, dte.DscRcgGlobal{TpoMov: "R", TpoValor: "$", ValorDR: flete, GlosaDR: "FLETE"})
		}
		if seguro != "" {
			req.DescuentosGlobales = append(req.DescuentosGlobales, dte.DscRcgGlobal{TpoMov: "R", TpoValor: "$", ValorDR: seguro, GlosaDR: "SEGURO"})
		}
	}
	return nil
}

// weights fills the weights and tare of an export of goods: the set gives
// their units (UNIDAD PESO NETO, UNIDAD PESO BRUTO, UNIDAD DE MEDIDA DE
// TARA) but no values, and the SII wants them for goods ([CR] in
// sii-wave3-notes §6.2: "Tara/Peso are mandatory for goods"). The net and
// gross weights are the sum of the lines' quantities (the goods are sold
// by weight or volume: KN, LT); the tare is one unit per package (TOTAL
// BULTOS), or 1.
func weights(c *Case, x *dte.ExportData) {
	sum := new(big.Rat)
	for _, it := range c.Items {
		if it.Cantidad != "" {
			sum.Add(sum, it.Cantidad.Rat())
		}
	}
	if sum.Sign() == 0 {
		return
	}
	w := dte.DecimalFromRat(sum, 2)
	if x.UnidadPesoNeto != nil {
		x.PesoNeto = w
	}
	if x.UnidadPesoBruto != nil {
		x.PesoBruto = w
	}
	if x.UnidadTara != nil {
		tara := int64(1)
		if x.TotalBultos != nil {
			tara = *x.TotalBultos
		}
		x.Tara = &tara
	}
}

func hasColumn(c *Case, col string) bool {
	for _, x := range c.Columns {
		if x == col {
			return true
		}
	}
	return false
}

func intp(n int) *int { return &n }
