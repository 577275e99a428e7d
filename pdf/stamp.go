package pdf

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dtekit/dtekit/pdf/pdf417"
)

// The stamp's geometry.
//
// The symbol's columns come from pdf417.LetterLayout (90 × 40 mm box) or
// pdf417.RollLayout (72 × 40 mm, up to 60 mm for long TEDs). The module it
// proposes is then rounded down to a whole number of printer dots — 1/300
// inch on letter paper, 1/200 inch on 80 mm paper — as long as that keeps
// it at or above pdf417.MinModuleMM, and the stamp's corner is put on a
// 0.01-inch grid. Every bar edge then falls on a dot boundary of a 300 dpi
// (letter) or 200 dpi (thermal) device, so bars print and rasterize without
// half-covered dots. The quiet zone of pdf417.QuietZoneModules is painted
// white.

// Dot sizes in millimetres.
const (
	dot300 = 25.4 / 300
	dot200 = 25.4 / 200
	// gridMM is the grid the stamp's corner is placed on (0.01 inch), a
	// whole number of dots at 200, 300 and 600 dpi.
	gridMM = 0.254
)

// stamp is a planned TED symbol.
type stamp struct {
	sym    *pdf417.Symbol
	module float64 // mm
	w, h   float64 // printed size with quiet zones, mm
}

// planStamp encodes the document's TED for the paper format.
func planStamp(docTED []byte, f Format) (*stamp, error) {
	var (
		lay pdf417.Layout
		err error
		dot float64
	)
	if f == Termica80 {
		lay, err = pdf417.RollLayout(len(docTED))
		dot = dot200
	} else {
		lay, err = pdf417.LetterLayout(len(docTED))
		dot = dot300
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the TED of %d bytes does not fit a printable PDF417 stamp: %v", ErrDocument, len(docTED), err)
	}
	sym, err := pdf417.Encode(docTED, pdf417.Options{Columns: lay.Columns})
	if err != nil {
		return nil, fmt.Errorf("%w: encoding the TED of %d bytes as PDF417: %v", ErrDocument, len(docTED), err)
	}
	m := lay.ModuleMM
	if s := math.Floor(m/dot+1e-9) * dot; s >= pdf417.MinModuleMM-1e-9 {
		m = s
	}
	q := float64(2 * pdf417.QuietZoneModules)
	return &stamp{
		sym:    sym,
		module: m,
		w:      (float64(sym.Width()) + q) * m,
		h:      (float64(sym.Height()) + q) * m,
	}, nil
}

// snap rounds a position up to the stamp grid.
func snap(v float64) float64 { return math.Ceil(v/gridMM-1e-9) * gridMM }

// drawStamp paints the symbol with its top-left quiet-zone corner at (x, y)
// (both on the grid): a white rectangle for the quiet zone, then every bar
// as a rectangle, all in one path filled once.
func (r *renderer) drawStamp(x, y float64) {
	if !r.draw {
		return
	}
	st := r.stamp
	m := st.module
	k := ptPerMM
	hPt := r.pageH * k
	bars := st.sym.Bars()
	b := r.raw[:0]
	if need := 128 + 16*len(bars); cap(b) < need {
		b = make([]byte, 0, need)
	}
	num := func(v float64) { b = appendCenti(b, int64(math.Round(v*100))) }
	// Quiet zone and background.
	b = append(b, "q 1 g "...)
	num(x * k)
	b = append(b, ' ')
	num(hPt - (y+st.h)*k)
	b = append(b, ' ')
	num(st.w * k)
	b = append(b, ' ')
	num(st.h * k)
	b = append(b, " re f 0 g\n"...)
	// The bars are written in module units under a matrix that scales
	// by the module, flips y and moves the origin to the symbol's top-left
	// corner: small integers, a short stream.
	q := float64(pdf417.QuietZoneModules)
	mk := m * k
	b = strconv.AppendFloat(b, mk, 'f', 5, 64)
	b = append(b, " 0 0 "...)
	b = strconv.AppendFloat(b, -mk, 'f', 5, 64)
	b = append(b, ' ')
	num((x + q*m) * k)
	b = append(b, ' ')
	num(hPt - (y+q*m)*k)
	b = append(b, " cm\n"...)
	for _, bar := range bars {
		b = strconv.AppendInt(b, int64(bar.X), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(bar.Y), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(bar.W), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(bar.H), 10)
		b = append(b, " re\n"...)
	}
	b = append(b, "f Q"...)
	r.raw = b
	r.f.RawWriteStr(string(b))
}

// stampTexts are the three lines printed under the stamp.
func (r *renderer) stampTexts() [3]string {
	return [3]string{"Timbre Electrónico SII", r.resol, "Verifique documento: www.sii.cl"}
}

// drawStampBlock prints the stamp at (x, y) and its three texts centred
// under it; it returns the y below the texts.
func (r *renderer) drawStampBlock(x, y float64) float64 {
	r.drawStamp(x, y)
	st := r.stamp
	y += st.h + 0.8
	t := r.stampTexts()
	r.setFont("B", 8)
	r.drawText(x, y, st.w, encode(t[0]), alignCenter)
	y += r.lineH()
	r.setFont("", 8)
	r.drawText(x, y, st.w, encode(t[1]), alignCenter)
	y += r.lineH()
	r.drawText(x, y, st.w, encode(t[2]), alignCenter)
	return y + r.lineH()
}

// stampBlockH is the height drawStampBlock takes.
func (r *renderer) stampBlockH() float64 {
	return r.stamp.h + 0.8 + 3*8*ptToMM*1.22
}

// appendCenti writes v/100 with at most two decimals and no trailing
// zeros: 7200 → "72", 1234 → "12.34", 50 → "0.5", -5 → "-0.05".
func appendCenti(b []byte, v int64) []byte {
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/100, 10)
	switch f := v % 100; {
	case f == 0:
	case f%10 == 0:
		b = append(b, '.', byte('0'+f/10))
	default:
		b = append(b, '.', byte('0'+f/10), byte('0'+f%10))
	}
	return b
}
