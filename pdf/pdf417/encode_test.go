package pdf417

import (
	"errors"
	"slices"
	"testing"
)

// TestByteCompactHandExamples checks byte compaction against values worked
// out by hand.
func TestByteCompactHandExamples(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want []int
	}{
		// A full group: 924, then base-900 digits of the 48-bit number.
		{"one", []byte{0, 0, 0, 0, 0, 1}, []int{924, 0, 0, 0, 0, 1}},
		{"900", []byte{0, 0, 0, 0, 0x03, 0x84}, []int{924, 0, 0, 0, 1, 0}}, // 0x384 = 900
		// 2^48 − 1 = 429·900⁴ + 11·900³ + 71·900² + 222·900 + 855
		// (429·656100000000 = 281466900000000; + 8019000000 + 57510000
		// + 199800 + 855 = 281474976710655).
		{"max", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, []int{924, 429, 11, 71, 222, 855}},
		// Not a multiple of 6: 901, full groups as above, the rest as is.
		{"seven", []byte{0, 0, 0, 0, 0, 1, 0xf1}, []int{901, 0, 0, 0, 0, 1, 0xf1}},
		{"three", []byte{'a', 0x80, 0xff}, []int{901, 'a', 0x80, 0xff}},
	}
	for _, tc := range tests {
		if got := byteCompact(nil, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: byteCompact(% x) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
		if got := byteCompactedLen(len(tc.in)); got != len(tc.want) {
			t.Errorf("%s: byteCompactedLen(%d) = %d, want %d", tc.name, len(tc.in), got, len(tc.want))
		}
	}
}

// TestRowIndicatorsStandard checks the row indicators against the formulas
// of ISO/IEC 15438, worked out by hand, and that the symbol really draws
// them after the start pattern and before the stop pattern.
func TestRowIndicatorsStandard(t *testing.T) {
	// 40 bytes at level 1 (4 checks): 1 descriptor + 1 latch + 5·6 + 4 = 36,
	// + 4 = 40 codewords; 6 columns → 7 rows (42, two pad codewords).
	data := make([]byte, 40)
	for i := range data {
		data[i] = byte(i)
	}
	s, err := Encode(data, Options{ECLevel: 1, Columns: 6})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if s.Rows() != 7 {
		t.Fatalf("rows = %d, the hand values below assume 7", s.Rows())
	}
	// 7 rows, level 1, 6 columns: (R−1) div 3 = 2, 3s + (R−1) mod 3 = 3 + 0 = 3,
	// C−1 = 5; x = 30·(r div 3).
	want := [][2]int{
		{2, 5}, {3, 2}, {5, 3}, // rows 0–2: clusters 0, 3, 6
		{32, 35}, {33, 32}, {35, 33}, // rows 3–5
		{62, 65}, // row 6
	}
	tab := patterns()
	for r, w := range want {
		l, rr := s.rowIndicators(r)
		if l != w[0] || rr != w[1] {
			t.Errorf("row %d: indicators %d, %d; want %d, %d", r, l, rr, w[0], w[1])
		}
		line := s.modules[r*s.width : (r+1)*s.width]
		if got := readPattern(line, startModules); got != tab[r%3][w[0]] {
			t.Errorf("row %d: left indicator drawn as %017b, want codeword %d of cluster %d", r, got, w[0], 3*(r%3))
		}
		if got := readPattern(line, s.width-stopModules-charModules); got != tab[r%3][w[1]] {
			t.Errorf("row %d: right indicator drawn as %017b, want codeword %d of cluster %d", r, got, w[1], 3*(r%3))
		}
	}
	// The cluster-0 left indicator with 10 rows: (10−1) div 3 = 3, where
	// boombuler v1.1.0 computes (10−3) div 3 = 2.
	s10 := &Symbol{rows: 10, cols: 5, level: 5}
	if l, _ := s10.rowIndicators(3); l != 33 {
		t.Errorf("10 rows, row 3: left indicator %d, want 30 + 3 = 33", l)
	}
	if _, r := s10.rowIndicators(4); r != 33 {
		t.Errorf("10 rows, row 4: right indicator %d, want 30 + 3 = 33", r)
	}
	if l, _ := s10.rowIndicators(4); l != 45 {
		t.Errorf("10 rows, row 4: left indicator %d, want 30 + 15 + 0 = 45", l)
	}
}

// readPattern reads 17 modules from x as a pattern.
func readPattern(line []bool, x int) uint32 {
	var p uint32
	for _, m := range line[x : x+charModules] {
		p <<= 1
		if m {
			p |= 1
		}
	}
	return p
}

// TestEncodeErrors checks the error for each kind of bad input.
func TestEncodeErrors(t *testing.T) {
	ok := []byte("<TED/>")
	tests := []struct {
		name string
		data []byte
		opts Options
		want error
	}{
		{"empty", nil, Options{}, ErrNoData},
		{"level 9", ok, Options{ECLevel: 9}, ErrBadOptions},
		{"level -2", ok, Options{ECLevel: -2}, ErrBadOptions},
		{"columns 31", ok, Options{Columns: 31}, ErrBadOptions},
		{"columns -1", ok, Options{Columns: -1}, ErrBadOptions},
		{"row height 2", ok, Options{RowHeight: 2}, ErrBadOptions},
		{"row height 101", ok, Options{RowHeight: 101}, ErrBadOptions},
		{"too long", make([]byte, 1035), Options{}, ErrTooMuchData},
		{"one column too many rows", make([]byte, 100), Options{Columns: 1}, ErrBadOptions},
		{"30 columns over 928", make([]byte, 1034), Options{Columns: 30}, ErrBadOptions}, // 928 → 31 rows × 30 = 930
	}
	for _, tc := range tests {
		s, err := Encode(tc.data, tc.opts)
		if !errors.Is(err, tc.want) || s != nil {
			t.Errorf("%s: Encode = %v, %v; want nil, %v", tc.name, s, err, tc.want)
		}
	}
	if _, err := Encode(make([]byte, 1034), Options{}); err != nil {
		t.Errorf("1034 bytes at level 5: %v", err)
	}
	// MaxDataBytes is exact at every level: one byte more does not fit.
	for lvl := range 9 {
		opt := Options{ECLevel: lvl}
		if lvl == 0 {
			opt.ECLevel = ECLevelZero
		}
		m := MaxDataBytes(lvl)
		if _, err := Encode(make([]byte, m), opt); err != nil {
			t.Errorf("level %d: MaxDataBytes = %d does not encode: %v", lvl, m, err)
		}
		if _, err := Encode(make([]byte, m+1), opt); !errors.Is(err, ErrTooMuchData) {
			t.Errorf("level %d: %d bytes: err = %v, want ErrTooMuchData", lvl, m+1, err)
		}
	}
	if MaxDataBytes(-1) != 0 || MaxDataBytes(9) != 0 {
		t.Error("MaxDataBytes accepts a level outside 0–8")
	}
}

// TestSymbolGeometry checks sizes, the length descriptor and padding on an
// example worked out by hand: 100 bytes at level 5 in 8 columns are
// 1 + 1 + 5·16 + 4 = 86 data codewords + 64 checks = 150 → 19 rows of 8 =
// 152, two pad codewords, descriptor 152 − 64 = 88.
func TestSymbolGeometry(t *testing.T) {
	s, err := Encode(make([]byte, 100), Options{Columns: 8, RowHeight: 4})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	cw := s.Codewords()
	if s.Rows() != 19 || s.Columns() != 8 || s.ECLevel() != 5 || s.RowHeight() != 4 {
		t.Errorf("got %d rows, %d columns, level %d, row height %d; want 19, 8, 5, 4", s.Rows(), s.Columns(), s.ECLevel(), s.RowHeight())
	}
	if s.Width() != 17*12+1 || s.Height() != 19*4 {
		t.Errorf("size %d×%d modules, want %d×%d", s.Width(), s.Height(), 17*12+1, 19*4)
	}
	if len(cw) != 152 || cw[0] != 88 || cw[1] != 901 || cw[86] != 900 || cw[87] != 900 || cw[85] == 900 {
		t.Errorf("codewords: len %d, descriptor %d, latch %d, [85..87] = %v", len(cw), cw[0], cw[1], cw[85:88])
	}
	if b := s.Bounds(); b.Dx() != s.Width() || b.Dy() != s.Height() {
		t.Errorf("Bounds %v", b)
	}
	if s.Module(-1, 0) || s.Module(0, -1) || s.Module(s.Width(), 0) || s.Module(0, s.Height()) {
		t.Error("Module is dark outside the symbol")
	}
	if !s.Module(0, 0) || !s.Module(7, s.Height()-1) || s.Module(8, 0) {
		t.Error("start pattern 8-module bar then space not where expected")
	}
	q := s.QuietZone(2)
	if b := q.Bounds(); b.Dx() != s.Width()+4 || b.Dy() != s.Height()+4 {
		t.Errorf("QuietZone(2) bounds %v", b)
	}
	if q.At(0, 0) != s.At(-1, -1) || q.At(2, 2) != s.At(0, 0) {
		t.Error("QuietZone At is not the symbol shifted by 2")
	}
}

// checkBars verifies that Bars paints exactly the dark modules, without
// overlaps. Rectangles must cover whole rows, so the check works per row.
func checkBars(t testing.TB, s *Symbol) {
	t.Helper()
	h := s.RowHeight()
	paint := make([]int, s.Width()*s.Rows())
	for _, b := range s.Bars() {
		if b.W <= 0 || b.H <= 0 || b.X < 0 || b.Y < 0 || b.X+b.W > s.Width() || b.Y+b.H > s.Height() ||
			b.Y%h != 0 || b.H%h != 0 {
			t.Fatalf("Bars: rectangle %+v outside %d×%d or not on row boundaries", b, s.Width(), s.Height())
		}
		for r := b.Y / h; r < (b.Y+b.H)/h; r++ {
			for x := b.X; x < b.X+b.W; x++ {
				paint[r*s.Width()+x]++
			}
		}
	}
	for r := range s.Rows() {
		for x := range s.Width() {
			n := paint[r*s.Width()+x]
			// Every line of the row must agree with the painted value.
			for _, y := range []int{r * h, r*h + h - 1} {
				if n > 1 || (n == 1) != s.Module(x, y) {
					t.Fatalf("Bars: module (%d,%d) painted %d times, dark = %v", x, y, n, s.Module(x, y))
				}
			}
		}
	}
}

// TestBarsMatchModules checks Bars against Module and that it merges runs:
// the start pattern's 8-module bar is one rectangle of full height.
func TestBarsMatchModules(t *testing.T) {
	s, err := Encode(make([]byte, 700), Options{})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	checkBars(t, s)
	bars := s.Bars()
	if bars[0] != (Rect{X: 0, Y: 0, W: 8, H: s.Height()}) {
		t.Errorf("first rectangle %+v, want the start bar 8×%d", bars[0], s.Height())
	}
	runs := 0
	for r := range s.Rows() {
		line := s.modules[r*s.width : (r+1)*s.width]
		for x, m := range line {
			if m && (x == 0 || !line[x-1]) {
				runs++
			}
		}
	}
	if len(bars) >= runs {
		t.Errorf("Bars gave %d rectangles for %d runs: nothing merged", len(bars), runs)
	}
	t.Logf("700 bytes: %d runs merged into %d rectangles", runs, len(bars))
}
