package certificacion

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/dte"
)

// itemColumns are the item table's column titles (folded) the sets use.
var itemColumns = map[string]bool{
	"CANTIDAD": true, "PRECIO UNITARIO": true, "DESCUENTO ITEM": true, "RECARGO ITEM": true,
	"UNIDAD MEDIDA": true, "VALOR UNITARIO": true, "VALOR LINEA": true, "PRECIO UNITARIO CON IVA": true,
}

// exportKeys are the KEY: VALUE lines of the export sets (folded, without
// the colon and without the footnote markers: "FLETE (**)" is FLETE).
var exportKeys = map[string]bool{
	"REFERENCIA": true, "MONEDA DE LA OPERACION": true, "FORMA DE PAGO EXPORTACION": true,
	"MODALIDAD DE VENTA": true, "CLAUSULA DE VENTA DE EXPORTACION": true, "TOTAL CLAUSULA DE VENTA": true,
	"VIA DE TRANSPORTE": true, "PUERTO DE EMBARQUE": true, "PUERTO DE DESEMBARQUE": true,
	"UNIDAD DE MEDIDA DE TARA": true, "UNIDAD PESO BRUTO": true, "UNIDAD PESO NETO": true,
	"TIPO DE BULTO": true, "TOTAL BULTOS": true, "FLETE": true, "SEGURO": true,
	"PAIS RECEPTOR Y PAIS DESTINO": true, "NACIONALIDAD": true,
}

// sameAsInvoiceNote reports a free line that only repeats a rule the kit
// applies anyway: a returned item keeps the invoice's unit price.
func sameAsInvoiceNote(f string) bool {
	return strings.Contains(f, "PRECIO") && strings.Contains(f, "UNITARIO") && strings.Contains(f, "MISMO") && strings.Contains(f, "FACTURA")
}

// lineKind classifies a folded line inside a case block.
type lineKind int

const (
	lkOther lineKind = iota
	lkBlank
	lkEnd // the next case or set
	lkDocumento
	lkReferencia
	lkRazon
	lkMotivo
	lkTraslado
	lkItemHeader
	lkDescuentoGlobal
	lkExportKV
	lkLineRecargo
	lkLineDescuento
	lkComision
	lkObservacion
	lkSameAsInvoice
)

func (p *parser) classify(raw string) lineKind {
	f := fold(raw)
	first := ""
	if cols := fields(raw); len(cols) > 0 {
		first = fold(cols[0])
	}
	switch {
	case f == "" || reDashes.MatchString(f):
		return lkBlank // a blank line, or the separator before the next set
	case p.setStart(f):
		return lkEnd
	case p.set.Kind == SetBoleta && reRule.MatchString(f):
		return lkEnd // the rule that closes the boleta cases
	case reRule.MatchString(f):
		return lkBlank // the rules around a footnote after the last case
	case reSetHeader.MatchString(f), kw(f, boletaTitle):
		return lkEnd
	case first == "DOCUMENTO":
		return lkDocumento
	case first == "REFERENCIA":
		return lkReferencia
	case first == "RAZON REFERENCIA":
		return lkRazon
	case first == "MOTIVO:" || strings.HasPrefix(f, "MOTIVO:"):
		return lkMotivo
	case first == "TRASLADO POR:" || strings.HasPrefix(f, "TRASLADO POR:"):
		return lkTraslado
	case first == "ITEM" && p.isItemHeader(raw):
		return lkItemHeader
	case strings.HasPrefix(f, "DESCUENTO GLOBAL ITEMES AFECTOS"):
		return lkDescuentoGlobal
	case reLineRecargo.MatchString(f):
		return lkLineRecargo
	case reLineDesc.MatchString(f):
		return lkLineDescuento
	case reComision.MatchString(f):
		return lkComision
	case strings.HasPrefix(f, "OBSERVACION:"):
		return lkObservacion
	case sameAsInvoiceNote(f):
		return lkSameAsInvoice
	}
	if k, _, ok := strings.Cut(f, ":"); ok && exportKeys[exportKey(k)] {
		return lkExportKV
	}
	return lkOther
}

// exportKey returns a folded field name without its footnote markers
// ("FLETE (**)" and "FLETE(*)" are FLETE).
func exportKey(k string) string {
	return strings.TrimSpace(reMarker.ReplaceAllString(k, " "))
}

func (p *parser) isItemHeader(raw string) bool {
	cols := fields(raw)
	if len(cols) < 2 || fold(cols[0]) != "ITEM" {
		return false
	}
	for _, c := range cols[1:] {
		if !itemColumns[fold(c)] {
			return false
		}
	}
	return true
}

// value returns what follows the keyword column of a "KEY<sep>VALUE" line.
func value(raw string) string {
	cols := fields(raw)
	if len(cols) < 2 {
		// "MOTIVO: VENTA" with one space, or "KEY:VALUE".
		if _, v, ok := strings.Cut(raw, ":"); ok {
			return strings.TrimSpace(v)
		}
		return ""
	}
	return strings.TrimSpace(strings.Join(cols[1:], " "))
}

// caseBlock reads one case, from its "CASO" line to the next case or set.
func (p *parser) caseBlock() error {
	s := p.set
	start := p.i
	f := fold(p.lines[start])
	c := &Case{Line: start + 1}
	if s.Kind == SetBoleta {
		m := reBoletaCase.FindStringSubmatch(f)
		c.ID = m[1]
		c.N, _ = strconv.Atoi(m[1])
		c.Tipo = dte.BoletaElectronica
		c.Documento = "BOLETA ELECTRONICA"
	} else {
		m := reCase.FindStringSubmatch(f)
		c.ID = m[1] + "-" + m[2]
		c.N, _ = strconv.Atoi(m[2])
		atencion := s.Atencion
		if atencion == "" && len(s.Cases) > 0 {
			atencion, _, _ = strings.Cut(s.Cases[0].ID, "-")
		}
		if atencion != "" && m[1] != atencion {
			return p.errf(start, "case of atención %s inside the set of atención %s", m[1], atencion)
		}
	}
	if c.N <= 0 || c.N > maxCasesPerSet {
		return p.errf(start, "case number %d is out of range 1-%d", c.N, maxCasesPerSet)
	}
	p.kase = c.ID
	defer func() { p.kase = "" }()
	for _, o := range s.Cases {
		if o.ID == c.ID {
			return p.errf(start, "case %s appears twice (first at line %d)", c.ID, o.Line)
		}
	}
	p.i++
	for p.i < len(p.lines) && p.blank(p.i) {
		p.i++
	}
	// The rule under "CASO …" (optional: a re-typed file may lack it).
	if p.i < len(p.lines) && reRule.MatchString(fold(p.lines[p.i])) {
		p.i++
	}
	inItems := false
	var observaciones []int
	for p.i < len(p.lines) {
		i := p.i
		raw := p.lines[i]
		k := p.classify(raw)
		if k == lkEnd {
			break
		}
		if inItems && k == lkOther {
			if err := p.item(c, i); err != nil {
				return err
			}
			p.i++
			continue
		}
		if inItems && k == lkBlank && len(c.Items) == 0 {
			p.i++ // a blank line between the table's header and its items
			continue
		}
		inItems = false
		switch k {
		case lkBlank:
		case lkDocumento:
			if c.Documento != "" {
				return p.errf(i, "a second DOCUMENTO line in case %s", c.ID)
			}
			c.Documento = value(raw)
			t, ok := docTipo(fold(c.Documento))
			if !ok {
				return p.errf(i, "unknown document %q", c.Documento)
			}
			c.Tipo = t
		case lkReferencia:
			if c.Ref != nil {
				return p.errf(i, "a second REFERENCIA line in case %s", c.ID)
			}
			m := reRefCase.FindStringSubmatch(fold(value(raw)))
			if m == nil {
				return p.errf(i, "want REFERENCIA <document> CORRESPONDIENTE A CASO <atención>-<n>")
			}
			c.Ref = &CaseRef{Documento: m[1], CaseID: m[2], Line: i + 1}
		case lkRazon:
			if err := p.lostAccent(i, "the reason"); err != nil {
				return err
			}
			c.Razon = value(raw)
			rf := fold(c.Razon)
			switch {
			case strings.Contains(rf, "ANULA"):
				c.CodRef = 1
			case strings.Contains(rf, "CORRIGE"):
				c.CodRef = 2
			case strings.Contains(rf, "DEVOLUCION"), strings.Contains(rf, "MODIFICA MONTO"):
				c.CodRef = 3
			default:
				return p.errf(i, "reason %q is none of ANULA, CORRIGE (texto, giro), DEVOLUCION or MODIFICA MONTO", c.Razon)
			}
		case lkMotivo:
			c.Motivo = value(raw)
			t, ok := indTraslado(fold(c.Motivo))
			if !ok {
				return p.errf(i, "MOTIVO %q names no transfer kind (IndTraslado 1-9)", c.Motivo)
			}
			c.IndTraslado = t
		case lkTraslado:
			c.TrasladoPor = value(raw)
			switch fold(c.TrasladoPor) {
			case "CLIENTE":
				c.TipoDespacho = 1
			case "EMISOR DEL DOCUMENTO AL LOCAL DEL CLIENTE":
				c.TipoDespacho = 2
			case "EMISOR DEL DOCUMENTO A OTRAS INSTALACIONES":
				c.TipoDespacho = 3
			default:
				return p.errf(i, "TRASLADO POR %q names no dispatch kind (TipoDespacho 1-3)", c.TrasladoPor)
			}
		case lkItemHeader:
			if c.Columns != nil {
				return p.errf(i, "a second item table in case %s", c.ID)
			}
			for _, col := range fields(raw)[1:] {
				c.Columns = append(c.Columns, fold(col))
			}
			inItems = true
		case lkDescuentoGlobal:
			cols := fields(raw)
			m := rePct.FindStringSubmatch(fold(cols[len(cols)-1]))
			if len(cols) < 2 || m == nil {
				return p.errf(i, "want DESCUENTO GLOBAL ITEMES AFECTOS <n>%%")
			}
			c.DescuentoGlobalPct = dte.Decimal(strings.ReplaceAll(m[1], ",", "."))
		case lkExportKV:
			key, val, _ := strings.Cut(raw, ":")
			kv := KV{Key: exportKey(fold(key)), Value: strings.TrimSpace(val), Line: i + 1}
			if kv.Value == "" {
				return p.errf(i, "%s has no value", kv.Key)
			}
			if c.Export == nil {
				c.Export = &Export{}
			}
			if kv.Key == "REFERENCIA" {
				c.Export.Referencias = append(c.Export.Referencias, fold(kv.Value))
			} else {
				if c.Export.Get(kv.Key) != "" {
					return p.errf(i, "%s given twice", kv.Key)
				}
				c.Export.Fields = append(c.Export.Fields, kv)
			}
		case lkLineRecargo:
			m := reLineRecargo.FindStringSubmatch(fold(raw))
			if len(c.Items) == 0 {
				return p.errf(i, "a line surcharge without items")
			}
			for _, it := range c.Items {
				it.RecargoPct = dte.Decimal(m[1])
			}
			c.Notes = append(c.Notes, strings.TrimSpace(raw))
		case lkLineDescuento:
			m := reLineDesc.FindStringSubmatch(fold(raw))
			n, _ := strconv.Atoi(m[1])
			if n < 1 || n > len(c.Items) {
				return p.errf(i, "DESCUENTO LINEA # %d: the case has %d item(s)", n, len(c.Items))
			}
			c.Items[n-1].DescuentoPct = dte.Decimal(m[2])
			c.Notes = append(c.Notes, strings.TrimSpace(raw))
		case lkComision:
			m := reComision.FindStringSubmatch(fold(raw))
			if c.Export == nil {
				c.Export = &Export{}
			}
			c.Export.ComisionPct = dte.Decimal(m[1])
		case lkObservacion:
			if s.Kind != SetBoleta {
				if err := p.warn(i, "in case %s: an OBSERVACION outside the boleta set; left aside", c.ID); err != nil {
					return err
				}
				break
			}
			observaciones = append(observaciones, i)
		case lkSameAsInvoice:
			c.Notes = append(c.Notes, strings.TrimSpace(raw))
		default:
			if reFootnote.MatchString(fold(raw)) {
				s.Notes = append(s.Notes, strings.TrimSpace(raw)) // a footnote of the set
				break
			}
			if err := p.warn(i, "in case %s: a line the kit does not understand; left aside (read it against the set and check the document)", c.ID); err != nil {
				return err
			}
		}
		p.i++
	}
	for _, i := range observaciones {
		if err := p.observacion(c, i); err != nil {
			return err
		}
	}
	if c.Tipo == 0 {
		return p.errf(start, "case %s has no DOCUMENTO line", c.ID)
	}
	switch {
	case c.Tipo.IsNote() && c.Ref == nil:
		return p.errf(start, "case %s is a note (tipo %d) without a REFERENCIA", c.ID, c.Tipo)
	case c.Ref != nil && c.CodRef == 0:
		return p.errf(c.Ref.Line-1, "case %s refers to case %s without a RAZON REFERENCIA", c.ID, c.Ref.CaseID)
	case c.Tipo == 52 && c.IndTraslado == 0:
		return p.errf(start, "case %s is a guía without MOTIVO (the transfer kind)", c.ID)
	case !c.Tipo.IsNote() && len(c.Items) == 0:
		return p.errf(start, "case %s (tipo %d) has no items", c.ID, c.Tipo)
	case c.Export != nil && !c.Tipo.IsExport():
		return p.errf(start, "case %s carries export data but is tipo %d", c.ID, c.Tipo)
	}
	s.Cases = append(s.Cases, c)
	if len(s.Cases) > maxCasesPerSet {
		return p.errf(start, "more than %d cases in one set", maxCasesPerSet)
	}
	return nil
}

// indTraslado maps a guía's MOTIVO to IndTraslado (formato DTE: 1 venta,
// 2 ventas por efectuar, 3 consignación, 4 entrega gratuita, 5 traslado
// interno, 6 otros traslados no venta, 7 guía de devolución, 8 traslado
// para exportación, 9 venta para exportación).
func indTraslado(f string) (int, bool) {
	switch {
	case f == "VENTA":
		return 1, true
	case strings.Contains(f, "VENTA PARA EXPORTACION"):
		return 9, true
	case strings.Contains(f, "TRASLADO PARA EXPORTACION"):
		return 8, true
	case strings.Contains(f, "VENTAS POR EFECTUAR"):
		return 2, true
	case strings.Contains(f, "CONSIGNACION"):
		return 3, true
	case strings.Contains(f, "ENTREGA GRATUITA"):
		return 4, true
	case strings.Contains(f, "TRASLADO") && (strings.Contains(f, "BODEGA") || strings.Contains(f, "INTERNO")):
		return 5, true
	case strings.Contains(f, "NO VENTA"):
		return 6, true
	case strings.Contains(f, "DEVOLUCION"):
		return 7, true
	}
	return 0, false
}

// item reads one line of the case's item table.
func (p *parser) item(c *Case, i int) error {
	raw := p.lines[i]
	cols := fields(raw)
	if len(cols) != len(c.Columns)+1 {
		return p.errf(i, "an item line of case %s with %d column(s); the table has %d (ITEM %s)", c.ID, len(cols), len(c.Columns)+1, strings.Join(c.Columns, ", "))
	}
	if err := p.lostAccent(i, "the item name"); err != nil {
		return err
	}
	it := &Item{Nombre: strings.TrimLeft(cols[0], " "), Line: i + 1}
	for j, col := range c.Columns {
		v := strings.TrimSpace(cols[j+1])
		switch col {
		case "CANTIDAD", "PRECIO UNITARIO", "VALOR UNITARIO", "VALOR LINEA", "PRECIO UNITARIO CON IVA":
			v = strings.ReplaceAll(v, ",", ".")
			if !reNumber.MatchString(v) {
				return p.errf(i, "%s %q is not a number", col, v)
			}
			if col == "CANTIDAD" {
				it.Cantidad = dte.Decimal(v)
			} else {
				it.Precio = dte.Decimal(v)
			}
		case "DESCUENTO ITEM", "RECARGO ITEM":
			m := rePct.FindStringSubmatch(v)
			if m == nil {
				return p.errf(i, "%s %q is not a percentage", col, v)
			}
			if col == "DESCUENTO ITEM" {
				it.DescuentoPct = dte.Decimal(strings.ReplaceAll(m[1], ",", "."))
			} else {
				it.RecargoPct = dte.Decimal(strings.ReplaceAll(m[1], ",", "."))
			}
		case "UNIDAD MEDIDA":
			it.Unidad = v
		}
	}
	// A factura's item that the set names EXENTO is an exempt line (the
	// basic set's "ITEM 3 SERVICIO EXENTO").
	if c.Tipo != 0 && !c.Tipo.IsExempt() && !c.Tipo.IsBoleta() && strings.Contains(fold(it.Nombre), "EXENTO") {
		it.Exento = true
	}
	if len(c.Items) >= maxItemsPerCase {
		return p.errf(i, "more than %d items in case %s", maxItemsPerCase, c.ID)
	}
	c.Items = append(c.Items, it)
	return nil
}

// observacion applies a boleta case's OBSERVACION line, sentence by
// sentence ("El item 2 es un servicio exento", "Se debe informar en el XML
// Unidad de medida en Kg"); a sentence the kit does not know is a warning.
func (p *parser) observacion(c *Case, i int) error {
	raw := strings.TrimSpace(p.lines[i])
	if err := p.lostAccent(i, "the observation"); err != nil {
		return err
	}
	_, text, _ := strings.Cut(raw, ":")
	text = strings.Trim(strings.TrimSpace(text), `"`)
	c.Notes = append(c.Notes, raw)
	for _, sentence := range strings.Split(text, ".") {
		sentence = strings.TrimSpace(sentence)
		if sentence == "" {
			continue
		}
		f := fold(sentence)
		if m := reObsExento.FindStringSubmatch(f); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n < 1 || n > len(c.Items) {
				return p.errf(i, "OBSERVACION names item %d; case %s has %d item(s)", n, c.ID, len(c.Items))
			}
			c.Items[n-1].Exento = m[2] == "EXENTO"
			continue
		}
		if reObsUnidad.MatchString(f) {
			words := strings.Fields(sentence)
			unit := words[len(words)-1]
			for _, it := range c.Items {
				it.Unidad = unit
			}
			continue
		}
		// A sentence the kit does not know: the rest of the case is
		// generated, and the warning says what to check by hand.
		if err := p.warn(i, "in case %s: OBSERVACION %q is not one the kit applies (an item that is exempt or afecto, a unit of measure); check the boleta against it", c.ID, sentence); err != nil {
			return err
		}
	}
	return nil
}

// checkRefs checks that every note refers to an earlier case of its set,
// of the kind of document the reference names.
func (p *parser) checkRefs() error {
	var boletas map[string]*Case
	for _, s := range p.plan.Sets {
		byID := map[string]*Case{}
		if s.Kind == SetBoletaNotas {
			// The notes on boletas refer to the boleta set before them.
			byID = boletas
		}
		for _, c := range s.Cases {
			if c.Ref != nil {
				r := byID[c.Ref.CaseID]
				if r == nil {
					return &ParseError{Line: c.Ref.Line, Text: p.lines[c.Ref.Line-1],
						Reason: fmt.Sprintf("case %s refers to case %s, which is not an earlier case of %s", c.ID, c.Ref.CaseID, s.Name)}
				}
				if !refNames(c.Ref.Documento, r.Tipo) {
					return &ParseError{Line: c.Ref.Line, Text: p.lines[c.Ref.Line-1],
						Reason: fmt.Sprintf("the reference names a %s but case %s is tipo %d", c.Ref.Documento, r.ID, r.Tipo)}
				}
			}
			if byID != nil {
				byID[c.ID] = c
			}
		}
		if s.Kind == SetBoleta {
			boletas = byID
		}
	}
	return nil
}

// refNames reports whether a reference's document name fits the type of
// the case it names; export sets may write only "NOTA DE CREDITO".
func refNames(name string, t dte.TipoDTE) bool {
	if kw(name, "BOLETA ELECTRONICA") {
		return t == dte.BoletaElectronica
	}
	if got, ok := docTipo(name); ok {
		return got == t
	}
	switch {
	case kw(name, "NOTA DE CREDITO"):
		return t == 61 || t == 112
	case kw(name, "NOTA DE DEBITO"):
		return t == 56 || t == 111
	case kw(name, "FACTURA"):
		return t == 33 || t == 34 || t == 46 || t == 110
	}
	return false
}
