package pdf417

import (
	"fmt"
	"math"
)

// Box is the space a symbol is to be printed in.
type Box struct {
	// WidthMM and HeightMM bound the printed symbol, quiet zones included.
	WidthMM, HeightMM float64
	// MinModuleMM is the narrowest module (X dimension) acceptable to the
	// printer and the scanners that will read the symbol.
	MinModuleMM float64
	// QuietZone is the light margin kept on each of the four sides, in
	// modules (negative counts as 0).
	QuietZone int
}

// Layout is a printing plan for one symbol.
type Layout struct {
	Columns  int     // data columns
	Rows     int     // rows
	ModuleMM float64 // module width (X dimension); rows are RowHeight·X high
	WidthMM  float64 // printed width, quiet zones included
	HeightMM float64 // printed height, quiet zones included
}

// widthModules returns the width of a symbol of cols data columns, quiet
// zones included, in modules.
func widthModules(cols, quiet int) int {
	return startModules + (cols+2)*charModules + stopModules + 2*quiet
}

// moduleFor returns the largest module that fits a symbol of cols × rows
// (row height rowHeight, quiet zones included) into boxW × boxH.
func moduleFor(cols, rows, rowHeight, quiet int, boxW, boxH float64) float64 {
	w := float64(widthModules(cols, quiet))
	h := float64(rows*rowHeight + 2*quiet)
	return math.Min(boxW/w, boxH/h)
}

// bestColumns returns the column count that gives the largest module when
// total codewords are fitted into the box, and that module. Ties go to fewer
// columns. It returns 0 columns when total exceeds the symbology's limits or
// the box is empty.
func bestColumns(total, rowHeight, quiet int, boxW, boxH float64) (int, float64) {
	bestC, bestX := 0, 0.0
	for c := MinColumns; c <= MaxColumns; c++ {
		r := rowsFor(total, c)
		if r == 0 {
			continue
		}
		if x := moduleFor(c, r, rowHeight, quiet, boxW, boxH); x > bestX {
			bestC, bestX = c, x
		}
	}
	return bestC, bestX
}

// PlanLayout chooses the column count and the module width for a payload of
// dataLen bytes encoded with opts (opts.Columns is ignored), so that the
// symbol with its quiet zones fits the box with the largest possible
// module. It fails with ErrDoesNotFit when that module would be narrower
// than box.MinModuleMM, with ErrTooMuchData when dataLen exceeds the
// symbol's capacity, and with ErrBadOptions for bad options or dimensions.
func PlanLayout(dataLen int, opts Options, box Box) (Layout, error) {
	level, err := opts.level()
	if err != nil {
		return Layout{}, err
	}
	rowHeight, err := opts.rowHeight()
	if err != nil {
		return Layout{}, err
	}
	if !(box.WidthMM > 0 && box.HeightMM > 0 && box.MinModuleMM >= 0) ||
		math.IsInf(box.WidthMM, 0) || math.IsInf(box.HeightMM, 0) {
		return Layout{}, fmt.Errorf("%w: box %g × %g mm with minimum module %g mm", ErrBadOptions, box.WidthMM, box.HeightMM, box.MinModuleMM)
	}
	if dataLen <= 0 {
		return Layout{}, ErrNoData
	}
	if dataLen > MaxDataBytes(level) {
		return Layout{}, fmt.Errorf("%w: %d bytes at EC level %d (at most %d)", ErrTooMuchData, dataLen, level, MaxDataBytes(level))
	}
	quiet := max(box.QuietZone, 0)
	total := 1 + byteCompactedLen(dataLen) + ecCount(level)
	c, x := bestColumns(total, rowHeight, quiet, box.WidthMM, box.HeightMM)
	r := rowsFor(total, c)
	if x < box.MinModuleMM {
		return Layout{}, fmt.Errorf("%w: %d bytes at EC level %d fit %g × %g mm only with a %.3f mm module (%d columns × %d rows), below the %.3f mm minimum",
			ErrDoesNotFit, dataLen, level, box.WidthMM, box.HeightMM, x, c, r, box.MinModuleMM)
	}
	w := float64(widthModules(c, quiet)) * x
	h := float64(r*rowHeight+2*quiet) * x
	return Layout{Columns: c, Rows: r, ModuleMM: x, WidthMM: w, HeightMM: h}, nil
}
