package pdf

import (
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/dtekit/dtekit/dte"
)

// ptPerMM converts millimetres to PDF points.
const ptPerMM = 72 / 25.4

// ptToMM is the height in millimetres of one point of font size.
const ptToMM = 25.4 / 72

// renderer holds the state of one rendering.
type renderer struct {
	f    *fpdf.Fpdf
	doc  *dte.Document
	opts Options
	// draw is false while a layout is only being measured (80 mm paper).
	draw bool
	// pageH is the current page's height in millimetres.
	pageH float64
	// cur is the symbol printed before amounts.
	cur string
	// resol is the resolution line under the stamp.
	resol string
	// stamp is the planned PDF417 symbol.
	stamp *stamp
	// logo is the checked Options.Logo (nil when none).
	logo *logo
	// font state, to avoid redundant SetFont calls
	style string
	size  float64
	// raw is scratch space for raw content-stream operators.
	raw []byte
}

func newRenderer(doc *dte.Document, opts Options) (*renderer, error) {
	resol, err := opts.Resolucion.Text()
	if err != nil {
		return nil, err
	}
	st, err := planStamp(doc.TED, opts.Format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", docLabel(doc), err)
	}
	lg, err := checkLogo(opts.Logo)
	if err != nil {
		return nil, err
	}
	f := fpdf.NewCustom(&fpdf.InitType{UnitStr: "mm", Size: fpdf.SizeType{Wd: 215.9, Ht: 279.4}})
	f.SetAutoPageBreak(false, 0)
	f.SetMargins(0, 0, 0)
	f.SetCellMargin(0)
	f.SetCompression(true)
	f.SetCatalogSort(true) // fonts in a fixed order: deterministic output
	f.SetCreator("dtekit", false)
	f.SetProducer("dtekit", false)
	f.SetTitle(doc.Tipo.Name()+" N° "+fmtIntPlain(doc.Folio), true)
	f.SetSubject(oneLine(doc.Emisor.RazonSocial), true)
	when := docTime(doc)
	f.SetCreationDate(when)
	f.SetModificationDate(when)
	cur := "$"
	if doc.Tipo.IsExport() {
		cur = currencySymbol(doc.Totales.TpoMoneda)
	}
	r := &renderer{f: f, doc: doc, opts: opts, draw: true, cur: cur, resol: resol, stamp: st, logo: lg}
	r.setFont("", 9)
	return r, nil
}

// docTime is the date written in the PDF's metadata: the signature's
// timestamp, else the issue date, else the Unix epoch, so that the output
// depends on the document only.
func docTime(doc *dte.Document) time.Time {
	for _, s := range []string{doc.TmstFirma, doc.FechaEmision} {
		s = strings.TrimSpace(s)
		for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t
			}
		}
	}
	return time.Unix(0, 0).UTC()
}

// setFont selects Helvetica in a style ("", "B", "I", "BI") and size (pt).
func (r *renderer) setFont(style string, size float64) {
	if style == r.style && size == r.size {
		return
	}
	r.style, r.size = style, size
	r.f.SetFont("Helvetica", style, size)
}

// lineH is the line height, in mm, for the current font size.
func (r *renderer) lineH() float64 { return r.size * ptToMM * 1.22 }

// width is the printed width of t in the current font, in mm.
func (r *renderer) width(t text) float64 { return r.f.GetStringWidth(string(t)) }

// Alignments for drawText.
const (
	alignLeft = iota
	alignRight
	alignCenter
)

// drawText prints one line of t in the box [x, x+w] with its top at y
// (line height lineH), aligned as asked. Text wider than the box is
// clipped to it character by character, so it never runs into a
// neighbouring column.
func (r *renderer) drawText(x, y, w float64, t text, align int) {
	if t == "" || !r.draw {
		return
	}
	base := y + r.lineH()/2 + r.size*ptToMM*0.35
	tw := r.width(t)
	if tw > w+0.01 && w > 0 {
		// Shrink the type down to half before cutting anything: amounts
		// must print whole.
		if small := r.size * w / tw; small >= r.size*0.5 {
			r.f.SetFontSize(small)
			r.f.Text(alignX(x, w, r.width(t), align), base, string(t))
			r.f.SetFontSize(r.size)
			return
		}
		t = r.fit(t, w)
		tw = r.width(t)
	}
	r.f.Text(alignX(x, w, tw, align), base, string(t))
}

// alignX returns where text of width tw starts in the box [x, x+w].
func alignX(x, w, tw float64, align int) float64 {
	switch align {
	case alignRight:
		return x + w - tw
	case alignCenter:
		return x + (w-tw)/2
	}
	return x
}

// fit cuts t to fit w, ending it with "..." when something was cut.
func (r *renderer) fit(t text, w float64) text {
	n := r.prefixFitting(string(t), w-r.width("..."))
	return text(strings.TrimRight(string(t[:n]), " ")) + "..."
}

// prefixFitting returns the length of the longest prefix of s (one byte
// per character in Windows-1252) no wider than w, in linear time.
func (r *renderer) prefixFitting(s string, w float64) int {
	total := 0.0
	for i := 0; i < len(s); i++ {
		total += r.width(text(s[i : i+1]))
		if total > w+1e-9 {
			return i
		}
	}
	return len(s)
}

// wrap splits t into lines no wider than w in the current font: at line
// feeds, then between words; a word wider than w is cut.
func (r *renderer) wrap(t text, w float64) []text {
	var out []text
	for _, para := range strings.Split(string(t), "\n") {
		words := strings.Fields(para)
		if len(words) == 0 {
			if len(out) > 0 {
				out = append(out, "")
			}
			continue
		}
		line := ""
		for _, word := range words {
			for len(word) > 1 {
				// Break an over-long word: flush the line, then cut.
				n := r.prefixFitting(word, w)
				if n == len(word) {
					break
				}
				if line != "" {
					out = append(out, text(line))
					line = ""
				}
				n = max(n, 1)
				out = append(out, text(word[:n]))
				word = word[n:]
			}
			if line == "" {
				line = word
				continue
			}
			if cand := line + " " + word; r.width(text(cand)) <= w {
				line = cand
				continue
			}
			out = append(out, text(line))
			line = word
		}
		if line != "" {
			out = append(out, text(line))
		}
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// drawLines prints lines from top y, one per lineH, and returns the y
// below the last.
func (r *renderer) drawLines(x, y, w float64, lines []text, align int) float64 {
	lh := r.lineH()
	for _, l := range lines {
		r.drawText(x, y, w, l, align)
		y += lh
	}
	return y
}

// para wraps and prints t; it returns the y below it.
func (r *renderer) para(x, y, w float64, t text, align int) float64 {
	return r.drawLines(x, y, w, r.wrap(t, w), align)
}

// rect strokes (style "D"), fills ("F") or both ("FD") a rectangle.
func (r *renderer) rect(x, y, w, h float64, style string) {
	if r.draw {
		r.f.Rect(x, y, w, h, style)
	}
}

// hline draws a horizontal line.
func (r *renderer) hline(x1, x2, y float64) {
	if r.draw {
		r.f.Line(x1, y, x2, y)
	}
}

// color sets the text, stroke and fill colours: gray levels 0–255 for
// text and stroke, fill for the fill.
func (r *renderer) color(tr, tg, tb int) {
	if r.draw {
		r.f.SetTextColor(tr, tg, tb)
		r.f.SetDrawColor(tr, tg, tb)
	}
}

// labelValue prints "label value" on one line at x, the label in bold, the
// value wrapped to the remaining width; it returns the y below.
func (r *renderer) labelValue(x, y, w, labelW float64, label, value string, size float64) float64 {
	r.setFont("B", size)
	r.drawText(x, y, labelW, encode(label), alignLeft)
	r.setFont("", size)
	lines := r.wrap(encode(value), w-labelW)
	if len(lines) == 0 {
		return y + r.lineH()
	}
	return r.drawLines(x+labelW, y, w-labelW, lines, alignLeft)
}
