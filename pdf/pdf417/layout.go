package pdf417

import (
	"fmt"
	"math"
)

// Printing the TED stamp.
//
// The SII asks for a stamp of at least about 2 × 5 cm and at most 4 × 9 cm,
// legible at 200 dpi, with a quiet zone of at least 2 modules and rows at
// least 3 modules high. A module (the X dimension) of two printer dots at
// 200 dpi, 0.254 mm, is the usual floor for reliable reading; narrower
// modules are printed as one or two dots at random and decode poorly.
//
// At EC level 5, row height 3 and X = 0.254 mm, a TED of B bytes takes
// 2 + 5·⌊B/6⌋ + B mod 6 + 64 codewords. On letter paper (box 90 × 40 mm)
// every TED up to about 900 bytes fits at 0.254 mm or more: 800 bytes choose
// 16 columns × 46 rows, 87.6 × 36.1 mm. On 80 mm thermal paper the printable
// width is about 72 mm, which allows at most 12 columns at 0.254 mm; an
// 800-byte TED then needs 62 rows, 70.4 × 48.3 mm, and a 900-byte TED 68
// rows, 52.8 mm high. Keeping the module at two dots matters more for a
// thermal printer than keeping under 40 mm of height on continuous paper, so
// the roll box allows up to 60 mm of height (RollMaxHeightMM).

// Layout constants for the SII stamp.
const (
	// QuietZoneModules is the quiet zone kept on each of the four sides, in
	// modules.
	QuietZoneModules = 2
	// MinModuleMM is the smallest module width accepted for 200 dpi
	// printing: two dots of 0.127 mm.
	MinModuleMM = 0.254
	// LetterMaxWidthMM and LetterMaxHeightMM bound the stamp, quiet zones
	// included, on letter paper (the SII's 4 × 9 cm maximum).
	LetterMaxWidthMM  = 90.0
	LetterMaxHeightMM = 40.0
	// RollMaxWidthMM and RollMaxHeightMM bound the stamp, quiet zones
	// included, on 80 mm thermal paper (about 72 mm printable). The height
	// exceeds the SII's 4 cm so that TEDs of 700–1000 bytes still print with
	// 0.254 mm modules (see the notes at the top of layout.go).
	RollMaxWidthMM  = 72.0
	RollMaxHeightMM = 60.0
)

// Layout is a printing plan for one symbol.
type Layout struct {
	Columns  int     // data columns
	Rows     int     // rows
	ModuleMM float64 // module width (X dimension); rows are RowHeight·X high
	WidthMM  float64 // printed width, quiet zones included
	HeightMM float64 // printed height, quiet zones included
}

// moduleFor returns the largest module that fits a symbol of cols × rows
// (row height rowHeight, quiet zones included) into the box.
func moduleFor(cols, rows, rowHeight int, boxW, boxH float64) float64 {
	w := float64(startModules + (cols+2)*charModules + stopModules + 2*QuietZoneModules)
	h := float64(rows*rowHeight + 2*QuietZoneModules)
	return math.Min(boxW/w, boxH/h)
}

// bestColumns returns the column count that gives the largest module when
// total codewords are fitted into the box, and that module. Ties go to fewer
// columns. It returns 0 columns when total exceeds the symbology's limits or
// the box is empty.
func bestColumns(total, rowHeight int, boxW, boxH float64) (int, float64) {
	bestC, bestX := 0, 0.0
	for c := MinColumns; c <= MaxColumns; c++ {
		r := rowsFor(total, c)
		if r == 0 {
			continue
		}
		if x := moduleFor(c, r, rowHeight, boxW, boxH); x > bestX {
			bestC, bestX = c, x
		}
	}
	return bestC, bestX
}

// PlanLayout chooses the column count and the module width for a payload of
// dataLen bytes encoded with opts (opts.Columns is ignored), so that the
// symbol with its quiet zones fits maxWidthMM × maxHeightMM with the largest
// possible module. It fails with ErrDoesNotFit when that module would be
// smaller than minModuleMM, with ErrTooMuchData when dataLen exceeds the
// symbol's capacity, and with ErrBadOptions for bad options or dimensions.
func PlanLayout(dataLen int, opts Options, maxWidthMM, maxHeightMM, minModuleMM float64) (Layout, error) {
	level, err := opts.level()
	if err != nil {
		return Layout{}, err
	}
	rowHeight, err := opts.rowHeight()
	if err != nil {
		return Layout{}, err
	}
	if !(maxWidthMM > 0 && maxHeightMM > 0 && minModuleMM >= 0) ||
		math.IsInf(maxWidthMM, 0) || math.IsInf(maxHeightMM, 0) {
		return Layout{}, fmt.Errorf("%w: box %g × %g mm with minimum module %g mm", ErrBadOptions, maxWidthMM, maxHeightMM, minModuleMM)
	}
	if dataLen <= 0 {
		return Layout{}, ErrNoData
	}
	if dataLen > MaxDataBytes(level) {
		return Layout{}, fmt.Errorf("%w: %d bytes at EC level %d (at most %d)", ErrTooMuchData, dataLen, level, MaxDataBytes(level))
	}
	total := 1 + byteCompactedLen(dataLen) + ecCount(level)
	c, x := bestColumns(total, rowHeight, maxWidthMM, maxHeightMM)
	r := rowsFor(total, c)
	if x < minModuleMM {
		return Layout{}, fmt.Errorf("%w: %d bytes at EC level %d fit %g × %g mm only with a %.3f mm module (%d columns × %d rows), below the %.3f mm minimum",
			ErrDoesNotFit, dataLen, level, maxWidthMM, maxHeightMM, x, c, r, minModuleMM)
	}
	w := float64(startModules+(c+2)*charModules+stopModules+2*QuietZoneModules) * x
	h := float64(r*rowHeight+2*QuietZoneModules) * x
	return Layout{Columns: c, Rows: r, ModuleMM: x, WidthMM: w, HeightMM: h}, nil
}

// ChooseLayout is PlanLayout with the SII settings (EC level 5, rows 3
// modules high, quiet zone of 2 modules): it returns the column count to pass
// in Options.Columns and the module width in millimetres. Typical calls are
// ChooseLayout(n, LetterMaxWidthMM, LetterMaxHeightMM, MinModuleMM) and
// ChooseLayout(n, RollMaxWidthMM, RollMaxHeightMM, MinModuleMM).
func ChooseLayout(dataLen int, maxWidthMM, maxHeightMM, minModuleMM float64) (columns int, moduleMM float64, err error) {
	l, err := PlanLayout(dataLen, Options{}, maxWidthMM, maxHeightMM, minModuleMM)
	if err != nil {
		return 0, 0, err
	}
	return l.Columns, l.ModuleMM, nil
}
