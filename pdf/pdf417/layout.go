package pdf417

import (
	"errors"
	"fmt"
	"math"
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
// RollLayout lets the height grow to 60 mm (RollMaxHeightMM) when 40 mm is
// not enough. LetterLayout prints the rare longer TEDs (901–1,034 bytes) in
// 90 × 40 mm with a module down to LetterFallbackMinModuleMM (0.2 mm: letter
// pages come from laser or ink-jet printers of 300 dpi or more, where that
// is still over two dots).

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
	// exceeds the SII's 4 cm so that TEDs of 656–1,029 bytes still print with
	// 0.254 mm modules (see the notes at the top of layout.go).
	RollMaxWidthMM  = 72.0
	RollMaxHeightMM = 60.0
	// RollPreferredHeightMM is the height RollLayout tries first.
	RollPreferredHeightMM = 40.0
	// LetterFallbackMinModuleMM is the smallest module LetterLayout accepts
	// when a TED does not fit 90 × 40 mm at MinModuleMM.
	LetterFallbackMinModuleMM = 0.2
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
// in Options.Columns and the module width in millimetres, e.g.
// ChooseLayout(n, LetterMaxWidthMM, LetterMaxHeightMM, MinModuleMM).
// LetterLayout and RollLayout apply the package's policy for the two papers.
func ChooseLayout(dataLen int, maxWidthMM, maxHeightMM, minModuleMM float64) (columns int, moduleMM float64, err error) {
	l, err := PlanLayout(dataLen, Options{}, maxWidthMM, maxHeightMM, minModuleMM)
	if err != nil {
		return 0, 0, err
	}
	return l.Columns, l.ModuleMM, nil
}

// LetterLayout plans the stamp for letter paper: the largest module in
// LetterMaxWidthMM × LetterMaxHeightMM at EC level 5, at least MinModuleMM,
// or at least LetterFallbackMinModuleMM for TEDs too long for that.
func LetterLayout(dataLen int) (Layout, error) {
	l, err := PlanLayout(dataLen, Options{}, LetterMaxWidthMM, LetterMaxHeightMM, MinModuleMM)
	if errors.Is(err, ErrDoesNotFit) {
		return PlanLayout(dataLen, Options{}, LetterMaxWidthMM, LetterMaxHeightMM, LetterFallbackMinModuleMM)
	}
	return l, err
}

// RollLayout plans the stamp for 80 mm thermal paper: the largest module of
// at least MinModuleMM in RollMaxWidthMM × RollPreferredHeightMM, or, when
// the TED is too long for that, in RollMaxWidthMM × RollMaxHeightMM.
func RollLayout(dataLen int) (Layout, error) {
	l, err := PlanLayout(dataLen, Options{}, RollMaxWidthMM, RollPreferredHeightMM, MinModuleMM)
	if errors.Is(err, ErrDoesNotFit) {
		return PlanLayout(dataLen, Options{}, RollMaxWidthMM, RollMaxHeightMM, MinModuleMM)
	}
	return l, err
}
