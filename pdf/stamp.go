package pdf

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/dtekit/dtekit/pdf/pdf417"
)

// Printing the TED stamp.
//
// The SII asks for a stamp of at least about 2 × 5 cm and at most 4 × 9 cm,
// legible at 200 dpi, with a quiet zone of at least 2 modules and rows at
// least 3 modules high. A module (the X dimension) of two printer dots at
// 200 dpi, 0.254 mm, is the usual floor for reliable reading; narrower
// modules come out as one or two dots at random and decode poorly.
//
// At EC level 5 a TED of B bytes takes 2 + 5·⌊B/6⌋ + B mod 6 + 64
// codewords. The layouts below keep rows 3 modules high and 2 modules of
// quiet zone on every side, and choose the column count that gives the
// largest module in the box. Capacity at a 0.254 mm module:
//
//	box 90 × 40 mm (letter)       up to 900 bytes; 800 bytes → 15 × 49, X = 0.265 mm
//	box 72 × 40 mm (80 mm roll)   up to 655 bytes; 550 bytes → 11 × 48, X = 0.270 mm
//	box 72 × 60 mm (80 mm roll)   up to 1,029 bytes; 800 bytes → 11 × 67, X = 0.277 mm
//
// Real TEDs are 550–900 bytes, so on 80 mm paper many do not fit 4 cm of
// height at two dots per module. Keeping the module at two dots matters more
// to a thermal printer than keeping under 4 cm on continuous paper, so
// rollLayout lets the height grow to 60 mm when 40 mm is not enough.
// letterLayout prints the rare longer TEDs (901–1,034 bytes) in 90 × 40 mm
// with a module down to 0.2 mm (letter pages come from laser or ink-jet
// printers of 300 dpi or more, where that is still over two dots).
//
// The module the layout proposes is then rounded down to a whole number of
// printer dots — 1/300 inch on letter paper, 1/200 inch on 80 mm paper — as
// long as that keeps it at or above stampMinModuleMM, and the stamp's corner
// is put on a 0.01-inch grid. Every bar edge then falls on a dot boundary of
// a 300 dpi (letter) or 200 dpi (thermal) device, so bars print and
// rasterize without half-covered dots. The quiet zone is painted white.

// The SII's stamp boxes.
const (
	// stampQuietZone is the quiet zone on each side, in modules.
	stampQuietZone = 2
	// stampMinModuleMM is two dots of a 200 dpi printer.
	stampMinModuleMM = 0.254
	// letterFallbackMinModuleMM is the smallest module accepted on letter
	// paper for TEDs too long for stampMinModuleMM.
	letterFallbackMinModuleMM = 0.2
)

var (
	// letterBox is the SII's 4 × 9 cm maximum.
	letterBox = pdf417.Box{WidthMM: 90, HeightMM: 40, MinModuleMM: stampMinModuleMM, QuietZone: stampQuietZone}
	// rollBox is 80 mm thermal paper (about 72 mm printable) at the SII's
	// 4 cm height; rollTallBox lets long TEDs grow to 6 cm.
	rollBox     = pdf417.Box{WidthMM: 72, HeightMM: 40, MinModuleMM: stampMinModuleMM, QuietZone: stampQuietZone}
	rollTallBox = pdf417.Box{WidthMM: 72, HeightMM: 60, MinModuleMM: stampMinModuleMM, QuietZone: stampQuietZone}
)

// letterLayout plans the stamp for letter paper: the largest module in
// letterBox, at least stampMinModuleMM, or at least
// letterFallbackMinModuleMM for TEDs too long for that.
func letterLayout(dataLen int) (pdf417.Layout, error) {
	l, err := pdf417.PlanLayout(dataLen, pdf417.Options{}, letterBox)
	if errors.Is(err, pdf417.ErrDoesNotFit) {
		fallback := letterBox
		fallback.MinModuleMM = letterFallbackMinModuleMM
		return pdf417.PlanLayout(dataLen, pdf417.Options{}, fallback)
	}
	return l, err
}

// rollLayout plans the stamp for 80 mm thermal paper: the largest module of
// at least stampMinModuleMM in rollBox or, when the TED is too long for
// that, in rollTallBox.
func rollLayout(dataLen int) (pdf417.Layout, error) {
	l, err := pdf417.PlanLayout(dataLen, pdf417.Options{}, rollBox)
	if errors.Is(err, pdf417.ErrDoesNotFit) {
		return pdf417.PlanLayout(dataLen, pdf417.Options{}, rollTallBox)
	}
	return l, err
}

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
		lay, err = rollLayout(len(docTED))
		dot = dot200
	} else {
		lay, err = letterLayout(len(docTED))
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
	if s := math.Floor(m/dot+1e-9) * dot; s >= stampMinModuleMM-1e-9 {
		m = s
	}
	q := float64(2 * stampQuietZone)
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
	q := float64(stampQuietZone)
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
	verifique := "www.sii.cl"
	if r.doc.Tipo.IsBoleta() && r.opts.URLBoletas != "" {
		verifique = r.opts.URLBoletas
	}
	return [3]string{"Timbre Electrónico SII", r.resol, "Verifique documento: " + verifique}
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
