package pdf

import (
	"math"
	"strings"

	"github.com/go-pdf/fpdf"

	"github.com/dtekit/dtekit/dte"
)

// Letter page geometry, in millimetres.
const (
	cartaW      = 215.9
	cartaH      = 279.4
	cartaLeft   = 15.0
	cartaRight  = cartaW - 15.0
	cartaWidth  = cartaRight - cartaLeft
	cartaTop    = 12.0
	cartaBottom = cartaH - 16.0 // lowest content
	cartaFooter = cartaH - 12.0 // page number line
	// contH is the room kept under a table for the "continúa" line.
	contH = 6.0
	// cartaStampX is the stamp's left edge (quiet zone included): 2 cm
	// plus a bit, on the stamp grid, so the bars start at least 2 cm from
	// the paper's left edge as the SII requires.
	cartaStampX = 80 * gridMM // 20.32 mm
	// totalsW is the width of the totals box at the bottom right.
	totalsW = 72.0
)

// col is a table column.
type col struct {
	title string
	w     float64
	align int
}

// carta lays the document out on letter pages.
func (r *renderer) carta() {
	r.f.AliasNbPages("{nb}")
	y := r.cartaPage()
	y = r.cartaReceptor(y)
	y = r.cartaDetalle(y)
	if rows := globalRows(r.doc, r.cur); len(rows) > 0 {
		y = r.cartaTable(y, "Descuentos y recargos globales", []col{
			{"Tipo", 20, alignLeft}, {"Glosa", 0, alignLeft}, {"Aplica sobre", 50, alignLeft}, {"Monto", 40, alignRight},
		}, rows)
	}
	if rows := comisionRows(r.doc, r.cur); len(rows) > 0 {
		y = r.cartaTable(y, "Comisiones y otros cargos", []col{
			{"Tipo", 20, alignLeft}, {"Glosa", 0, alignLeft}, {"Tasa", 16, alignRight},
			{"Neto", 28, alignRight}, {"Exento", 28, alignRight}, {"IVA", 26, alignRight},
		}, rows)
	}
	if rows := refRows(r.doc); len(rows) > 0 {
		cols := []col{{"Documento", 52, alignLeft}, {"Folio", 24, alignRight}, {"Fecha", 22, alignCenter},
			{"Motivo", 28, alignLeft}, {"Razón", 0, alignLeft}}
		if !hasCodRef(r.doc) {
			// No reference says why: leave the "Motivo" column out.
			cols = append(cols[:3], cols[4])
			for i, row := range rows {
				rows[i] = append(row[:3], row[4])
			}
		}
		y = r.cartaTable(y, "Referencias", cols, rows)
	}
	if kvs := transporteLines(r.doc); len(kvs) > 0 {
		y = r.cartaPairs(y, "Datos de transporte", kvs)
	}
	if kvs := exportLines(r.doc, r.cur); len(kvs) > 0 {
		y = r.cartaPairs(y, "Datos de exportación", kvs)
	}
	r.cartaFinal(y)
	r.cartaFooter()
}

// cartaPage starts a page: the footer of the previous one, then the
// header; it returns the y below the header.
func (r *renderer) cartaPage() float64 {
	if r.f.PageNo() > 0 {
		r.cartaFooter()
	}
	r.f.AddPageFormat("P", fpdf.SizeType{Wd: cartaW, Ht: cartaH})
	r.pageH = cartaH
	r.style, r.size = "", 0 // fonts are re-selected on each page
	r.setFont("", 9)
	y := r.cartaHeader()
	if r.f.PageNo() > 1 {
		r.setFont("I", 8)
		r.drawText(cartaLeft, y, cartaWidth, encode("continuación de la página anterior"), alignLeft)
		y += r.lineH() + 1
	}
	return y
}

// cartaFooter prints the page number.
func (r *renderer) cartaFooter() {
	r.setFont("", 7.5)
	r.color(90, 90, 90)
	r.drawText(cartaLeft, cartaFooter, cartaWidth,
		encode(r.doc.Tipo.Name()+" N° "+fmtIntPlain(r.doc.Folio)+" — página "+itoa(r.f.PageNo())+" de {nb}"), alignCenter)
	r.color(0, 0, 0)
}

// cartaBreak ends the page with a "continúa" line and starts the next one.
func (r *renderer) cartaBreak(y float64) float64 {
	r.setFont("I", 8)
	r.drawText(cartaLeft, y+1, cartaWidth, encode("continúa en la página siguiente…"), alignRight)
	return r.cartaPage()
}

// cartaHeader draws the issuer block and the red box; it returns the y
// below them.
func (r *renderer) cartaHeader() float64 {
	d := r.doc
	// Red box.
	const bw = 74.0
	bx := cartaRight - bw
	r.setFont("B", 12)
	lh := r.lineH()
	name := r.wrap(encode(d.Tipo.Name()), bw-6)
	lines := make([]text, 0, len(name)+2)
	lines = append(lines, encode("R.U.T.: "+fmtRUT(d.Emisor.Rut)))
	lines = append(lines, name...)
	lines = append(lines, encode("N° "+fmtIntPlain(d.Folio)))
	bh := 3.5 + float64(len(lines))*lh + 3.5
	r.color(200, 0, 0)
	if r.draw {
		r.f.SetLineWidth(0.6)
	}
	r.rect(bx, cartaTop, bw, bh, "D")
	r.drawLines(bx+3, cartaTop+3.5, bw-6, lines, alignCenter)
	r.setFont("B", 9)
	yOff := r.drawLines(bx, cartaTop+bh+1.2, bw, r.wrap(encode(oficina(r.opts.OficinaSII)), bw), alignCenter)
	r.color(0, 0, 0)
	if r.draw {
		r.f.SetLineWidth(0.2)
	}

	// Issuer, right of the logo when there is one.
	x := cartaLeft
	logoBottom := cartaTop
	if r.logo != nil {
		lw, lh := r.logo.fit(logoMaxW, logoMaxH)
		r.drawLogo(cartaLeft, cartaTop, lw, lh)
		x += lw + 3
		logoBottom += lh
	}
	w := bx - x - 6
	y := cartaTop
	r.setFont("B", 12)
	y = r.para(x, y, w, encode(d.Emisor.RazonSocial), alignLeft)
	giro, dir := emisorLines(d.Emisor)
	r.setFont("", 8.5)
	if giro != "" {
		y = r.drawLines(x, y+0.5, w, limit(r.wrap(encode(giro), w), 3), alignLeft)
	}
	if dir != "" {
		y = r.para(x, y, w, encode(dir), alignLeft)
	}
	return math.Max(math.Max(y, yOff), logoBottom) + 3
}

// limit keeps the first n lines, marking the cut.
func limit(lines []text, n int) []text {
	if len(lines) <= n {
		return lines
	}
	lines = lines[:n:n]
	lines[n-1] += "..."
	return lines
}

// cartaReceptor draws the receptor box; it returns the y below it.
func (r *renderer) cartaReceptor(y float64) float64 {
	left, right := receptorLeft(r.doc), receptorRight(r.doc)
	const pad = 2.0
	const size = 8.5
	const rw = 66.0
	lw := cartaWidth - rw - 3*pad
	column := func(x, w, labelW float64, kvs []kv) float64 {
		yy := y + pad
		for _, p := range kvs {
			yy = r.labelValue(x, yy, w, labelW, p.k, p.v, size)
		}
		return yy
	}
	yl := column(cartaLeft+pad, lw, 20, left)
	yr := column(cartaLeft+lw+2*pad, rw, 25, right)
	bottom := math.Max(yl, yr) + pad
	r.color(120, 120, 120)
	r.rect(cartaLeft, y, cartaWidth, bottom-y, "D")
	r.color(0, 0, 0)
	return bottom + 3
}

// detailCols returns the detail table's columns for the document.
func (r *renderer) detailCols() []col {
	hasLiq, hasAdj := false, false
	for _, l := range r.doc.Detalle {
		hasLiq = hasLiq || l.TipoDocLiq != ""
		hasAdj = hasAdj || len(lineAdjust(l)) > 0
	}
	var cols []col
	if hasLiq {
		cols = append(cols, col{"Doc.", 11, alignCenter})
	}
	cols = append(cols, col{"Cantidad", 19, alignRight}, col{"Unidad", 13, alignCenter}, col{"Descripción", 0, alignLeft},
		col{"Precio unit.", 25, alignRight})
	if hasAdj {
		cols = append(cols, col{"Dscto./Recargo", 28, alignRight})
	}
	cols = append(cols, col{"Valor", 27, alignRight})
	return flex(cols, cartaWidth)
}

// flex gives the remaining width to the column of width 0.
func flex(cols []col, total float64) []col {
	used := 0.0
	for _, c := range cols {
		used += c.w
	}
	for i := range cols {
		if cols[i].w == 0 {
			cols[i].w = total - used
		}
	}
	return cols
}

// tableHeader draws a table's column titles; it returns the y below.
func (r *renderer) tableHeader(y float64, cols []col) float64 {
	const h = 5.5
	if r.draw {
		r.f.SetFillColor(228, 228, 228)
	}
	r.rect(cartaLeft, y, cartaWidth, h, "F")
	r.setFont("B", 7.5)
	x := cartaLeft
	for _, c := range cols {
		r.drawText(x+1, y+(h-r.lineH())/2, c.w-2, encode(c.title), c.align)
		x += c.w
	}
	return y + h
}

// measure returns the height fn would take from y without drawing it.
func (r *renderer) measure(y float64, fn func(y float64) float64) float64 {
	saved := r.draw
	r.draw = false
	h := fn(y) - y
	r.draw = saved
	return h
}

// detailRow draws one detail line; it returns the y below it.
func (r *renderer) detailRow(y float64, cols []col, l dte.DocLine) float64 {
	const pad = 1.0
	cells := make([]string, 0, len(cols))
	for _, c := range cols {
		switch c.title {
		case "Doc.":
			cells = append(cells, oneLine(l.TipoDocLiq))
		case "Cantidad":
			cells = append(cells, fmtNumber(l.Cantidad))
		case "Unidad":
			cells = append(cells, oneLine(l.Unidad))
		case "Descripción":
			cells = append(cells, "")
		case "Precio unit.":
			cells = append(cells, fmtNumber(l.Precio))
		case "Dscto./Recargo":
			cells = append(cells, strings.Join(lineAdjust(l), "\n"))
		case "Valor":
			cells = append(cells, fmtNumber(l.MontoItem))
		}
	}
	bottom := y
	x := cartaLeft
	for i, c := range cols {
		yy := y + pad
		if c.title == "Descripción" {
			r.setFont("", 8)
			yy = r.para(x+1, yy, c.w-2, encode(lineName(r.doc, l)), alignLeft)
			if _, desc := itemTexts(l); desc != "" {
				r.setFont("", 7)
				r.color(70, 70, 70)
				yy = r.para(x+1, yy, c.w-2, encodeML(desc), alignLeft)
				r.color(0, 0, 0)
			}
		} else {
			// Numbers print on one line each, shrunk if need be, never
			// wrapped.
			r.setFont("", 8)
			for _, l := range strings.Split(cells[i], "\n") {
				r.drawText(x+1, yy, c.w-2, encode(l), c.align)
				yy += r.lineH()
			}
		}
		bottom = math.Max(bottom, yy)
		x += c.w
	}
	bottom += pad
	r.color(200, 200, 200)
	r.hline(cartaLeft, cartaRight, bottom)
	r.color(0, 0, 0)
	return bottom
}

// cartaDetalle draws the detail table over as many pages as it needs.
func (r *renderer) cartaDetalle(y float64) float64 {
	cols := r.detailCols()
	y = r.tableHeader(y, cols)
	for _, l := range r.doc.Detalle {
		h := r.measure(y, func(y float64) float64 { return r.detailRow(y, cols, l) })
		if y+h > cartaBottom-contH {
			y = r.cartaBreak(y)
			y = r.tableHeader(y, cols)
		}
		y = r.detailRow(y, cols, l)
	}
	return y + 4
}

// cartaTable draws a titled table of text rows, continuing on the next
// page when needed; it returns the y below it.
func (r *renderer) cartaTable(y float64, title string, cols []col, rows [][]string) float64 {
	cols = flex(cols, cartaWidth)
	row := func(y float64, cells []string) float64 {
		r.setFont("", 7.5)
		bottom := y
		x := cartaLeft
		for i, c := range cols {
			switch {
			case i >= len(cells):
			case c.align == alignLeft:
				bottom = math.Max(bottom, r.para(x+1, y+0.8, c.w-2, encode(cells[i]), c.align))
			default: // numbers and dates: one line, shrunk if need be
				r.drawText(x+1, y+0.8, c.w-2, encode(cells[i]), c.align)
				bottom = math.Max(bottom, y+0.8+r.lineH())
			}
			x += c.w
		}
		bottom += 0.8
		r.color(200, 200, 200)
		r.hline(cartaLeft, cartaRight, bottom)
		r.color(0, 0, 0)
		return bottom
	}
	titleH := 5.0
	first := r.measure(y, func(y float64) float64 { return row(y, rows[0]) })
	if y+titleH+5.5+first > cartaBottom-contH {
		y = r.cartaBreak(y)
	}
	r.setFont("B", 8.5)
	r.drawText(cartaLeft, y, cartaWidth, encode(title), alignLeft)
	y = r.tableHeader(y+titleH, cols)
	for _, cells := range rows {
		h := r.measure(y, func(y float64) float64 { return row(y, cells) })
		if y+h > cartaBottom-contH {
			y = r.cartaBreak(y)
			y = r.tableHeader(y, cols)
		}
		y = row(y, cells)
	}
	return y + 4
}

// cartaPairs draws a titled block of label/value pairs in two columns: the
// transport data, the export data.
func (r *renderer) cartaPairs(y float64, title string, kvs []kv) float64 {
	const size = 7.5
	half := (len(kvs) + 1) / 2
	cw := cartaWidth/2 - 2
	block := func(y float64) float64 {
		r.setFont("B", 8.5)
		r.drawText(cartaLeft, y, cartaWidth, encode(title), alignLeft)
		y += 5
		r.color(200, 200, 200)
		r.hline(cartaLeft, cartaRight, y)
		r.color(0, 0, 0)
		yl, yr := y+1, y+1
		for i, p := range kvs {
			if i < half {
				yl = r.labelValue(cartaLeft, yl, cw, 33, p.k, p.v, size)
			} else {
				yr = r.labelValue(cartaLeft+cw+4, yr, cw, 33, p.k, p.v, size)
			}
		}
		return math.Max(yl, yr) + 4
	}
	if y+r.measure(y, block) > cartaBottom-contH {
		y = r.cartaBreak(y)
	}
	return block(y)
}

// cartaFinal draws the last block at the bottom of the last page: the
// acuse de recibo on cedible copies, then the stamp (left) beside the
// totals (right).
func (r *renderer) cartaFinal(y float64) {
	right := func(y float64) float64 { return r.totalsBox(cartaRight-totalsW, y, totalsW) }
	acuse := func(y float64) float64 {
		if !r.opts.Cedible {
			return y
		}
		return r.acuseBox(cartaLeft, y, cartaWidth, true)
	}
	acuseH := r.measure(0, acuse)
	rowH := math.Max(r.stampBlockH(), r.measure(0, right)) + 1
	if acuseH > 0 {
		acuseH += 3
	}
	h := acuseH + rowH
	if y+h > cartaBottom {
		// The closing block sits at the foot of a new page; where that
		// page's content would start does not matter.
		r.cartaBreak(y)
	}
	top := cartaBottom - h
	acuse(top)
	sy := snap(top + acuseH)
	r.drawStampBlock(cartaStampX, sy)
	right(top + acuseH)
}

// totalsBox draws the totals in a box of width w at (x, y), with the
// cedible mark under it on cedible copies; it returns the y below.
func (r *renderer) totalsBox(x, y, w float64) float64 {
	lines := totalLines(r.doc, r.cur)
	const pad = 2.0
	yy := y + pad
	for _, tl := range lines {
		if tl.bold {
			r.setFont("B", 10)
		} else {
			r.setFont("", 8.5)
		}
		lw := r.width(encode(tl.label)) + 2
		r.drawText(x+pad, yy, w-2*pad, encode(tl.label), alignLeft)
		r.drawText(x+pad+lw, yy, w-2*pad-lw, encode(tl.amount), alignRight)
		yy += r.lineH() + 0.6
	}
	yy += pad - 0.6
	r.color(120, 120, 120)
	r.rect(x, y, w, yy-y, "D")
	r.color(0, 0, 0)
	if r.opts.Cedible {
		r.setFont("B", 14)
		yy = r.para(x, yy+2, w, encode(cedibleMark(r.doc.Tipo)), alignCenter)
	}
	return yy
}

// acuseBox draws the acuse de recibo box (Ley 19.983) at (x, y), width w;
// wide lays the fields out two per row (letter), else one per row.
func (r *renderer) acuseBox(x, y, w float64, wide bool) float64 {
	const pad = 2.0
	yy := y + pad
	r.setFont("B", 8)
	r.drawText(x+pad, yy, w-2*pad, encode("ACUSE DE RECIBO"), alignLeft)
	yy += r.lineH() + 1
	field := func(fx, fy, fw float64, label string) {
		r.setFont("", 8)
		r.drawText(fx, fy+1.5, fw, encode(label), alignLeft)
		lw := r.width(encode(label)) + 1.5
		r.hline(fx+lw, fx+fw-2, fy+1.5+r.lineH())
	}
	const fh = 7.0
	inner := w - 2*pad
	if wide {
		field(x+pad, yy, inner*0.5, "Nombre:")
		field(x+pad+inner*0.5, yy, inner*0.25, "R.U.T.:")
		field(x+pad+inner*0.75, yy, inner*0.25, "Fecha:")
		yy += fh
		field(x+pad, yy, inner*0.5, "Recinto:")
		field(x+pad+inner*0.5, yy, inner*0.5, "Firma:")
		yy += fh
	} else {
		for _, l := range []string{"Nombre:", "R.U.T.:", "Fecha:", "Recinto:", "Firma:"} {
			field(x+pad, yy, inner, l)
			yy += fh
		}
	}
	r.setFont("", 6.5)
	yy = r.para(x+pad, yy+1.5, inner, encode(ley19983), alignLeft)
	yy += pad
	r.color(120, 120, 120)
	r.rect(x, y, w, yy-y, "D")
	r.color(0, 0, 0)
	return yy
}

// hasCodRef reports whether any reference carries a CodRef.
func hasCodRef(d *dte.Document) bool {
	for _, ref := range d.Referencias {
		if ref.CodigoRef != nil {
			return true
		}
	}
	return false
}
