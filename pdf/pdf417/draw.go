package pdf417

import (
	"image"
	"image/color"

	"github.com/boombuler/barcode"
)

// Rect is a dark rectangle of a symbol, in modules, origin at the top-left
// corner of the symbol (quiet zone excluded), y growing downwards.
type Rect struct {
	X, Y, W, H int
}

// Bars returns the dark modules as rectangles for vector output: horizontal
// runs of dark modules in each row, each run extended downwards over the
// following rows while they have a run at exactly the same place (so the
// start and stop bars, among others, come out as single tall rectangles).
// Filling every rectangle reproduces Module exactly; rectangles do not
// overlap. They are ordered by top edge, then left edge.
func (s *Symbol) Bars() []Rect {
	type run struct{ x, w, rect int }
	// At most 4 bars per symbol character, 4 in the start and 5 in the stop
	// pattern per row; merging only lowers the count.
	out := make([]Rect, 0, s.rows*(4*(s.cols+2)+9))
	// prev and cur hold the runs of the previous and current row, left to
	// right, with the index in out of the rectangle each belongs to.
	var prev, cur []run
	for r := range s.rows {
		line := s.modules[r*s.width : (r+1)*s.width]
		cur = cur[:0]
		p := 0
		for x := 0; x < len(line); {
			if !line[x] {
				x++
				continue
			}
			start := x
			for x < len(line) && line[x] {
				x++
			}
			w := x - start
			for p < len(prev) && prev[p].x < start {
				p++
			}
			if p < len(prev) && prev[p].x == start && prev[p].w == w {
				out[prev[p].rect].H += s.rowHeight
				cur = append(cur, run{start, w, prev[p].rect})
				continue
			}
			out = append(out, Rect{X: start, Y: r * s.rowHeight, W: w, H: s.rowHeight})
			cur = append(cur, run{start, w, len(out) - 1})
		}
		prev, cur = cur, prev
	}
	return out
}

// QuietZone returns the symbol as a barcode.Barcode with a light margin of
// the given number of modules on every side (negative counts as 0), one pixel
// per module; scale it with barcode.Scale.
func (s *Symbol) QuietZone(modules int) barcode.Barcode {
	return &quietSymbol{Symbol: s, q: max(modules, 0)}
}

// quietSymbol is a Symbol seen with a quiet zone.
type quietSymbol struct {
	*Symbol
	q int
}

// Bounds implements image.Image.
func (qs *quietSymbol) Bounds() image.Rectangle {
	return image.Rect(0, 0, qs.width+2*qs.q, qs.Height()+2*qs.q)
}

// At implements image.Image.
func (qs *quietSymbol) At(x, y int) color.Color { return qs.Symbol.At(x-qs.q, y-qs.q) }

// Image renders the symbol as a grayscale image with each module px × px
// pixels (px < 1 counts as 1) and a quiet zone of quiet modules (negative
// counts as 0) on every side.
func (s *Symbol) Image(px, quiet int) *image.Gray {
	px = max(px, 1)
	quiet = max(quiet, 0)
	img := image.NewGray(image.Rect(0, 0, (s.width+2*quiet)*px, (s.Height()+2*quiet)*px))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	for _, b := range s.Bars() {
		for y := (b.Y + quiet) * px; y < (b.Y+b.H+quiet)*px; y++ {
			row := img.Pix[y*img.Stride:]
			for x := (b.X + quiet) * px; x < (b.X+b.W+quiet)*px; x++ {
				row[x] = 0
			}
		}
	}
	return img
}
