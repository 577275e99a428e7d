// Package pdf417 encodes PDF417 symbols (ISO/IEC 15438): the whole payload
// in byte compaction, a chosen error-correction level (5 by default, the
// level the SII requires for the Timbre Electrónico), and a column count
// given or chosen by PlanLayout so the printed symbol fits a box.
//
// The package exists because github.com/boombuler/barcode v1.1.0 writes a
// wrong left row indicator for cluster-0 rows ((rows−3)/3 instead of the
// standard's (rows−1)/3): ZXing finds none of its symbols whose row count is
// not a multiple of 3 (15 of 19 TED-sized samples in
// TestBoombulerV110Evidence). It also cannot be told how many columns to use.
// A *Symbol still implements boombuler's barcode.Barcode interface, so it can
// be scaled and written with that library's helpers.
//
// The encoder is written from the standard's description: byte compaction
// (latch 901, or 924 when the length is a multiple of 6; six bytes to five
// base-900 codewords; remaining bytes one per codeword), the symbol length
// descriptor, padding with codeword 900, Reed–Solomon check codewords over
// GF(929) with the generator computed from the field, start and stop
// patterns, and the left and right row indicators. The three codeword
// clusters are generated from the standard's construction rules plus a
// compact record of which patterns the standard's table picks (patterns.go).
package pdf417

import (
	"errors"
	"fmt"
	"image"
	"image/color"

	"github.com/boombuler/barcode"
)

// Limits of the symbology.
const (
	MinColumns = 1   // fewest data columns in a symbol
	MaxColumns = 30  // most data columns in a symbol
	MinRows    = 3   // fewest rows in a symbol
	MaxRows    = 90  // most rows in a symbol
	MaxTotal   = 928 // most codewords (data, padding and checks) in a symbol

	// DefaultECLevel is the error-correction level the SII requires for the
	// TED stamp, and the one Encode uses when Options.ECLevel is 0.
	DefaultECLevel = 5
	// ECLevelZero requests error-correction level 0 (two check codewords);
	// it exists because the zero value of Options.ECLevel means "default".
	ECLevelZero = -1
	// DefaultRowHeight is the row height, in modules, used when
	// Options.RowHeight is 0; 3 is the standard's and the SII's minimum.
	DefaultRowHeight = 3
	// MinRowHeight is the smallest row height Encode accepts, in modules.
	MinRowHeight = 3
	// MaxRowHeight is the largest row height Encode accepts, in modules.
	MaxRowHeight = 100
)

// Codewords with a fixed meaning in byte compaction.
const (
	cwPad          = 900 // padding (a latch to text compaction)
	cwByteLatch    = 901 // byte compaction, any length
	cwByteLatchSix = 924 // byte compaction, length a multiple of 6
)

// Errors returned by Encode and the layout functions; test with errors.Is.
var (
	// ErrNoData means the payload was empty.
	ErrNoData = errors.New("pdf417: no data to encode")
	// ErrTooMuchData means the payload does not fit in one symbol at the
	// requested error-correction level.
	ErrTooMuchData = errors.New("pdf417: data too long for one symbol")
	// ErrBadOptions means an option is out of range or the requested column
	// count cannot hold the data.
	ErrBadOptions = errors.New("pdf417: invalid options")
	// ErrDoesNotFit means no column count fits the box at the minimum module
	// size.
	ErrDoesNotFit = errors.New("pdf417: symbol does not fit the box")
)

// Options controls Encode. The zero value gives EC level 5, rows 3 modules
// high and an automatic column count.
type Options struct {
	// ECLevel is the error-correction level: 1–8 select that level, 0 selects
	// DefaultECLevel (5) and ECLevelZero selects level 0. Level s adds
	// 2^(s+1) check codewords.
	ECLevel int
	// Columns is the number of data columns, 1–30; 0 chooses the count that
	// gives the largest module when the symbol, with a quiet zone of 2
	// modules, is fitted into a landscape box of aspect 9:4 (PlanLayout
	// chooses for a real box).
	Columns int
	// RowHeight is the height of a row in modules, 3–100; 0 means 3.
	RowHeight int
}

// level returns the effective error-correction level 0..8.
func (o Options) level() (int, error) {
	switch {
	case o.ECLevel == 0:
		return DefaultECLevel, nil
	case o.ECLevel == ECLevelZero:
		return 0, nil
	case o.ECLevel >= 1 && o.ECLevel <= 8:
		return o.ECLevel, nil
	}
	return 0, fmt.Errorf("%w: ECLevel %d is not 0–8 or ECLevelZero", ErrBadOptions, o.ECLevel)
}

// rowHeight returns the effective row height in modules.
func (o Options) rowHeight() (int, error) {
	switch {
	case o.RowHeight == 0:
		return DefaultRowHeight, nil
	case o.RowHeight >= MinRowHeight && o.RowHeight <= MaxRowHeight:
		return o.RowHeight, nil
	}
	return 0, fmt.Errorf("%w: RowHeight %d modules is not %d–%d", ErrBadOptions, o.RowHeight, MinRowHeight, MaxRowHeight)
}

// byteCompactedLen returns how many codewords byte compaction of n bytes
// takes, the latch included.
func byteCompactedLen(n int) int { return 1 + 5*(n/6) + n%6 }

// byteCompact encodes data in byte compaction mode, latch included: 924 when
// the length is a multiple of 6, else 901; each group of six bytes, read as a
// big-endian 48-bit number, becomes five base-900 digits, most significant
// first; the bytes after the last full group take one codeword each.
func byteCompact(dst []int, data []byte) []int {
	if len(data)%6 == 0 {
		dst = append(dst, cwByteLatchSix)
	} else {
		dst = append(dst, cwByteLatch)
	}
	i := 0
	for ; i+6 <= len(data); i += 6 {
		var v uint64
		for _, b := range data[i : i+6] {
			v = v<<8 | uint64(b)
		}
		var d [5]int
		for j := 4; j >= 0; j-- {
			d[j] = int(v % 900)
			v /= 900
		}
		dst = append(dst, d[:]...)
	}
	for _, b := range data[i:] {
		dst = append(dst, int(b))
	}
	return dst
}

// MaxDataBytes returns the longest payload, in bytes, that one symbol holds
// in byte compaction at error-correction level 0–8 (1,034 at level 5). It
// returns 0 for a level outside 0–8.
func MaxDataBytes(level int) int {
	if level < 0 || level > 8 {
		return 0
	}
	room := MaxTotal - ecCount(level) - 1 // minus the length descriptor
	// byteCompactedLen is non-decreasing in n, so walk up to the limit.
	n := 0
	for byteCompactedLen(n+1) <= room {
		n++
	}
	return n
}

// rowsFor returns the row count for total codewords in cols columns, or 0
// when they do not fit the symbology's limits.
func rowsFor(total, cols int) int {
	if cols < MinColumns || cols > MaxColumns {
		return 0
	}
	rows := max((total+cols-1)/cols, MinRows)
	if rows > MaxRows || rows*cols > MaxTotal {
		return 0
	}
	return rows
}

// A *Symbol is a barcode.Barcode.
var _ barcode.Barcode = (*Symbol)(nil)

// Symbol is an encoded PDF417 symbol: a grid of modules, dark or light, of
// Width() × Height() modules, without quiet zone. It implements
// barcode.Barcode (one image pixel per module, no quiet zone); QuietZone and
// Image give versions with a quiet zone, Bars gives rectangles for vector
// output.
type Symbol struct {
	content   string
	rows      int
	cols      int
	level     int
	rowHeight int
	width     int
	codewords []int  // rows×cols codewords, row by row
	modules   []bool // rows×width modules, one line per row, true = dark
}

// Encode encodes data (bytes taken as they are: for a TED, its ISO-8859-1
// serialization) in byte compaction with the given options. It fails with
// ErrNoData for empty data, ErrTooMuchData when data exceeds
// MaxDataBytes(level), and ErrBadOptions for out-of-range options or a
// column count that cannot hold the data.
func Encode(data []byte, opts Options) (*Symbol, error) {
	level, err := opts.level()
	if err != nil {
		return nil, err
	}
	rowHeight, err := opts.rowHeight()
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, ErrNoData
	}
	k := ecCount(level)
	total := 1 + byteCompactedLen(len(data)) + k
	if total > MaxTotal {
		return nil, fmt.Errorf("%w: %d bytes need %d codewords at EC level %d, the limit is %d (at most %d bytes)",
			ErrTooMuchData, len(data), total, level, MaxTotal, MaxDataBytes(level))
	}
	cols := opts.Columns
	if cols == 0 {
		cols, _ = bestColumns(total, rowHeight, 2, 9, 4)
	}
	if cols < MinColumns || cols > MaxColumns {
		return nil, fmt.Errorf("%w: Columns %d is not %d–%d", ErrBadOptions, cols, MinColumns, MaxColumns)
	}
	rows := rowsFor(total, cols)
	if rows == 0 {
		return nil, fmt.Errorf("%w: %d codewords (%d bytes at EC level %d) do not fit in %d columns (at most %d rows, %d codewords)",
			ErrBadOptions, total, len(data), level, cols, MaxRows, MaxTotal)
	}

	n := rows*cols - k // length descriptor + data + padding
	cw := make([]int, 1, rows*cols)
	cw[0] = n
	cw = byteCompact(cw, data)
	for len(cw) < n {
		cw = append(cw, cwPad)
	}
	cw = append(cw, ecCodewords(cw, k)...)

	s := &Symbol{
		content:   string(data),
		rows:      rows,
		cols:      cols,
		level:     level,
		rowHeight: rowHeight,
		width:     startModules + (cols+2)*charModules + stopModules,
		codewords: cw,
	}
	s.modules = make([]bool, rows*s.width)
	tab := patterns()
	for r := range rows {
		line := s.modules[r*s.width : (r+1)*s.width]
		x := putWidths(line, 0, startWidths[:])
		left, right := s.rowIndicators(r)
		ci := r % 3
		x = putPattern(line, x, tab[ci][left])
		for _, c := range cw[r*cols : (r+1)*cols] {
			x = putPattern(line, x, tab[ci][c])
		}
		x = putPattern(line, x, tab[ci][right])
		putWidths(line, x, stopWidths[:])
	}
	return s, nil
}

// rowIndicators returns the left and right row indicator codewords of row r
// (0-based), per ISO/IEC 15438: with x = 30·(r div 3), R rows, C columns and
// level s,
//
//	cluster 0: left x + (R−1) div 3,        right x + C−1
//	cluster 3: left x + 3s + (R−1) mod 3,   right x + (R−1) div 3
//	cluster 6: left x + C−1,                right x + 3s + (R−1) mod 3
func (s *Symbol) rowIndicators(r int) (left, right int) {
	x := 30 * (r / 3)
	rowInfo := (s.rows - 1) / 3
	levelInfo := 3*s.level + (s.rows-1)%3
	colInfo := s.cols - 1
	switch r % 3 {
	case 0:
		return x + rowInfo, x + colInfo
	case 1:
		return x + levelInfo, x + rowInfo
	default:
		return x + colInfo, x + levelInfo
	}
}

// putWidths writes alternating dark and light elements of the given widths,
// dark first, from x; it returns the next x.
func putWidths(line []bool, x int, widths []int) int {
	for i, w := range widths {
		for range w {
			line[x] = i%2 == 0
			x++
		}
	}
	return x
}

// putPattern writes a 17-module pattern from x; it returns the next x.
func putPattern(line []bool, x int, p uint32) int {
	for i := charModules - 1; i >= 0; i-- {
		line[x] = p>>i&1 == 1
		x++
	}
	return x
}

// Rows returns the number of rows.
func (s *Symbol) Rows() int { return s.rows }

// Columns returns the number of data columns (row indicators excluded).
func (s *Symbol) Columns() int { return s.cols }

// ECLevel returns the error-correction level, 0–8.
func (s *Symbol) ECLevel() int { return s.level }

// RowHeight returns the height of a row in modules.
func (s *Symbol) RowHeight() int { return s.rowHeight }

// Width returns the symbol's width in modules, quiet zone excluded:
// 17·(Columns+4) + 1.
func (s *Symbol) Width() int { return s.width }

// Height returns the symbol's height in modules, quiet zone excluded:
// Rows·RowHeight.
func (s *Symbol) Height() int { return s.rows * s.rowHeight }

// Codewords returns a copy of the symbol's codewords row by row: the length
// descriptor, the data, the padding and the check codewords (row indicators
// excluded).
func (s *Symbol) Codewords() []int { return append([]int(nil), s.codewords...) }

// Module reports whether the module at column x, line y (0-based, top-left
// origin, quiet zone excluded) is dark. Positions outside the symbol are
// light.
func (s *Symbol) Module(x, y int) bool {
	if x < 0 || x >= s.width || y < 0 || y >= s.Height() {
		return false
	}
	return s.modules[(y/s.rowHeight)*s.width+x]
}

// Metadata implements barcode.Barcode.
func (s *Symbol) Metadata() barcode.Metadata {
	return barcode.Metadata{CodeKind: barcode.TypePDF, Dimensions: 2}
}

// Content implements barcode.Barcode: the encoded bytes as a string.
func (s *Symbol) Content() string { return s.content }

// ColorModel implements image.Image.
func (s *Symbol) ColorModel() color.Model { return color.GrayModel }

// Bounds implements image.Image: one pixel per module, no quiet zone.
func (s *Symbol) Bounds() image.Rectangle { return image.Rect(0, 0, s.width, s.Height()) }

// At implements image.Image: black for dark modules, white otherwise.
func (s *Symbol) At(x, y int) color.Color {
	if s.Module(x, y) {
		return color.Gray{Y: 0}
	}
	return color.Gray{Y: 255}
}
