package pdf

import (
	"math"
	"strings"

	"github.com/go-pdf/fpdf"
)

// 80 mm roll geometry, in millimetres.
const (
	rollW     = 80.0
	rollLeft  = 4.0
	rollWidth = rollW - 2*rollLeft // 72 mm printable
	rollTop   = 5.0
	rollFoot  = 6.0 // blank paper after the last line
)

// roll lays the document out on one page of 80 mm paper whose height
// follows the content: a measuring pass first, then the drawing pass.
func (r *renderer) roll() {
	r.draw = false
	end := r.rollBody(rollTop)
	h := math.Ceil((end+rollFoot)/gridMM) * gridMM
	r.draw = true
	r.f.AddPageFormat("P", fpdf.SizeType{Wd: rollW, Ht: h})
	r.pageH = h
	r.style, r.size = "", 0
	r.rollBody(rollTop)
}

// rollBody draws (or measures) the whole document from y; it returns the
// y below the last line.
func (r *renderer) rollBody(y float64) float64 {
	d := r.doc
	x, w := rollLeft, rollWidth

	// Logo, then issuer.
	if r.logo != nil {
		lw, lh := r.logo.fit(w, rollLogoMaxH)
		r.drawLogo(x+(w-lw)/2, y, lw, lh)
		y += lh + 1.5
	}
	r.setFont("B", 10)
	y = r.para(x, y, w, encode(d.Emisor.RazonSocial), alignCenter)
	giro, dir := emisorLines(d.Emisor)
	r.setFont("", 7.5)
	if giro != "" {
		y = r.drawLines(x, y, w, limit(r.wrap(encode(giro), w), 3), alignCenter)
	}
	if dir != "" {
		y = r.para(x, y, w, encode(dir), alignCenter)
	}

	// The R.U.T. box (black: thermal printers have one colour).
	y += 2
	const bw = 64.0
	bx := x + (w-bw)/2
	r.setFont("B", 10)
	lines := []text{encode("R.U.T.: " + fmtRUT(d.Emisor.Rut))}
	lines = append(lines, r.wrap(encode(d.Tipo.Name()), bw-4)...)
	lines = append(lines, encode("N° "+fmtIntPlain(d.Folio)))
	bh := 2.5 + float64(len(lines))*r.lineH() + 2.5
	if r.draw {
		r.f.SetLineWidth(0.5)
	}
	r.rect(bx, y, bw, bh, "D")
	if r.draw {
		r.f.SetLineWidth(0.2)
	}
	r.drawLines(bx+2, y+2.5, bw-4, lines, alignCenter)
	y += bh + 1
	r.setFont("B", 8)
	y = r.para(x, y, w, encode(oficina(r.opts.OficinaSII)), alignCenter)

	// Date and receptor.
	y += 2
	const size, lw = 7.5, 21.0
	y = r.labelValue(x, y, w, lw, "Fecha emisión:", fmtFecha(d.FechaEmision), size)
	rc := d.Receptor
	if rc.Rut != "" || rc.RazonSocial != "" {
		y = r.labelValue(x, y, w, lw, "Señor(es):", oneLine(rc.RazonSocial), size)
		y = r.labelValue(x, y, w, lw, "R.U.T.:", fmtRUT(rc.Rut), size)
		for _, p := range receptorLeft(d)[1:] {
			y = r.labelValue(x, y, w, lw, p.k, p.v, size)
		}
	}
	y = r.rule(y + 1.5)

	// Detail.
	r.setFont("B", 7.5)
	r.drawText(x, y, w, encode("Descripción"), alignLeft)
	r.drawText(x, y, w, encode("Valor"), alignRight)
	y = r.rule(y + r.lineH() + 0.5)
	for _, l := range d.Detalle {
		r.setFont("", 7.5)
		y = r.para(x, y, w, encode(lineName(d, l)), alignLeft)
		if _, desc := itemTexts(l); desc != "" {
			r.setFont("", 6.5)
			y = r.para(x+2, y, w-2, encodeML(desc), alignLeft)
		}
		r.setFont("", 7.5)
		var q []string
		if l.Cantidad.IsSet() {
			q = append(q, fmtNumber(l.Cantidad))
		}
		if u := oneLine(l.Unidad); u != "" {
			q = append(q, u)
		}
		if l.Precio.IsSet() {
			q = append(q, "x "+fmtNumber(l.Precio))
		}
		amount := encode(fmtNumber(l.MontoItem))
		aw := r.width(amount) + 2
		r.drawText(x+2, y, w-2-aw, encode(strings.Join(q, " ")), alignLeft)
		r.drawText(x, y, w, amount, alignRight)
		y += r.lineH()
		for _, a := range lineAdjust(l) {
			label := "Descuento"
			if strings.HasPrefix(a, "+") {
				label = "Recargo"
			}
			r.drawText(x+2, y, w-2, encode(label+" "+a), alignLeft)
			y += r.lineH()
		}
		y += 0.6
	}
	y = r.rule(y + 0.5)

	// Global discounts, commissions and references.
	if rows := globalRows(d, r.cur); len(rows) > 0 {
		r.setFont("", 7.5)
		for _, g := range rows {
			label := g[0] + " " + g[2]
			if g[1] != "" {
				label = g[1] + " (" + strings.ToLower(g[0]) + " " + g[2] + ")"
			}
			vw := r.width(encode(g[3])) + 2
			y2 := r.para(x, y, w-vw, encode(label), alignLeft)
			r.drawText(x, y, w, encode(g[3]), alignRight)
			y = y2
		}
		y = r.rule(y + 0.5)
	}
	if rows := refRows(d); len(rows) > 0 {
		r.setFont("B", 7.5)
		r.drawText(x, y, w, encode("Referencias"), alignLeft)
		y += r.lineH()
		r.setFont("", 7)
		for _, ref := range rows {
			s := ref[0]
			if ref[1] != "" {
				s += " N° " + ref[1]
			}
			if ref[2] != "" {
				s += " del " + ref[2]
			}
			if ref[3] != "" {
				s += ", " + ref[3]
			}
			if ref[4] != "" {
				s += ": " + ref[4]
			}
			y = r.para(x, y, w, encode(s), alignLeft)
		}
		y = r.rule(y + 0.5)
	}

	// Totals.
	for _, tl := range totalLines(d, r.cur) {
		if tl.bold {
			r.setFont("B", 10)
		} else {
			r.setFont("", 8)
		}
		r.drawText(x, y, w, encode(tl.label), alignLeft)
		lw := r.width(encode(tl.label)) + 2
		r.drawText(x+lw, y, w-lw, encode(tl.amount), alignRight)
		y += r.lineH() + 0.4
	}

	// Cedible copy.
	if r.opts.Cedible {
		y = r.acuseBox(x, y+2, w, false)
		r.setFont("B", 12)
		y = r.para(x, y+1.5, w, encode(cedibleMark(d.Tipo)), alignCenter)
	}

	// Stamp.
	y += 3
	sx := math.Floor((rollW-r.stamp.w)/2/gridMM) * gridMM
	return r.drawStampBlock(sx, snap(y))
}

// rule draws a thin line across the roll at y; it returns y plus a gap.
func (r *renderer) rule(y float64) float64 {
	r.color(140, 140, 140)
	r.hline(rollLeft, rollLeft+rollWidth, y)
	r.color(0, 0, 0)
	return y + 1
}
