package pdf417

import (
	"errors"
	"testing"
)

// inversePatterns maps a pattern back to its codeword, per cluster.
func inversePatterns() [3]map[uint32]int {
	var inv [3]map[uint32]int
	for ci := range inv {
		inv[ci] = make(map[uint32]int, numCodewords)
		for v, p := range patterns()[ci] {
			inv[ci][p] = v
		}
	}
	return inv
}

// unByteCompact reverses byte compaction of cw (latch first).
func unByteCompact(cw []int) ([]byte, bool) {
	if len(cw) == 0 || (cw[0] != cwByteLatch && cw[0] != cwByteLatchSix) {
		return nil, false
	}
	var out []byte
	rest := cw[1:]
	full := len(rest) / 5
	if cw[0] == cwByteLatch {
		// With 901 the last group is never complete: trailing bytes are 1–5
		// codewords, so the full groups are those followed by something.
		full = (len(rest) - 1) / 5
	}
	for g := range full {
		var v uint64
		for _, d := range rest[5*g : 5*g+5] {
			if d >= 900 {
				return nil, false
			}
			v = v*900 + uint64(d)
		}
		if v >= 1<<48 {
			return nil, false
		}
		for k := 5; k >= 0; k-- {
			out = append(out, byte(v>>(8*k)))
		}
	}
	for _, d := range rest[5*full:] {
		if d > 255 {
			return nil, false
		}
		out = append(out, byte(d))
	}
	return out, true
}

// checkInvariants verifies the structure of a symbol encoded from data:
// geometry, limits, length descriptor, padding, check codewords, the start,
// indicator, data and stop patterns of every row, the recovered data, and
// Bars against Module.
func checkInvariants(t *testing.T, s *Symbol, data []byte, inv [3]map[uint32]int) {
	t.Helper()
	r, c, k := s.Rows(), s.Columns(), ecCount(s.ECLevel())
	if r < MinRows || r > MaxRows || c < MinColumns || c > MaxColumns || r*c > MaxTotal {
		t.Fatalf("%d rows × %d columns out of limits", r, c)
	}
	if s.Width() != 17*(c+4)+1 || s.Height() != r*s.RowHeight() {
		t.Fatalf("size %d×%d for %d×%d, row height %d", s.Width(), s.Height(), r, c, s.RowHeight())
	}
	cw := s.Codewords()
	if len(cw) != r*c || cw[0] != r*c-k {
		t.Fatalf("%d codewords, descriptor %d; want %d, %d", len(cw), cw[0], r*c, r*c-k)
	}
	n := cw[0]
	used := 1 + byteCompactedLen(len(data))
	for i, v := range cw {
		if v < 0 || v >= numCodewords || (i >= used && i < n && v != cwPad) {
			t.Fatalf("codeword %d = %d (data ends at %d, padding to %d)", i, v, used, n)
		}
	}
	got, ok := unByteCompact(cw[1:used])
	if !ok || string(got) != string(data) {
		t.Fatalf("byte compaction does not give the data back")
	}
	// The codeword polynomial vanishes at 3^i, i = 1..k (sampled for speed;
	// TestECCodewordsVanishAtRoots checks every root).
	root := 1
	for i := 1; i <= k; i++ {
		root = root * gfPrimitive % gfPrime
		if (i <= 4 || i == k || i%17 == 0) && evalPoly(cw, root) != 0 {
			t.Fatalf("codeword polynomial is not zero at 3^%d", i)
		}
	}
	var start, stop []bool
	start = make([]bool, startModules)
	putWidths(start, 0, startWidths[:])
	stop = make([]bool, stopModules)
	putWidths(stop, 0, stopWidths[:])
	for row := range r {
		line := s.modules[row*s.width : (row+1)*s.width]
		if string(boolBytes(line[:startModules])) != string(boolBytes(start)) ||
			string(boolBytes(line[s.width-stopModules:])) != string(boolBytes(stop)) {
			t.Fatalf("row %d: start or stop pattern wrong", row)
		}
		wl, wr := s.rowIndicators(row)
		x := startModules
		read := func() int {
			v, ok := inv[row%3][readPattern(line, x)]
			if !ok {
				t.Fatalf("row %d, module %d: pattern not in cluster %d", row, x, 3*(row%3))
			}
			x += charModules
			return v
		}
		if v := read(); v != wl {
			t.Fatalf("row %d: left indicator %d, want %d", row, v, wl)
		}
		for col := range c {
			if v := read(); v != cw[row*c+col] {
				t.Fatalf("row %d column %d: codeword %d drawn as %d", row, col, cw[row*c+col], v)
			}
		}
		if v := read(); v != wr {
			t.Fatalf("row %d: right indicator %d, want %d", row, v, wr)
		}
	}
	checkBars(t, s)
}

func boolBytes(b []bool) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		if v {
			out[i] = 1
		}
	}
	return out
}

// FuzzEncode: Encode never panics; on success the symbol satisfies every
// structural invariant; on failure the error is one of the package's kinds,
// and valid options with data within capacity never fail.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("<TED version=\"1.0\"><DD><RE>1-9</RE></DD></TED>"), 0, 0, 0)
	f.Add([]byte{0xff, 0x80, 0}, -1, 1, 3)
	f.Add(make([]byte, 1034), 5, 16, 3)
	f.Add(make([]byte, 600), 8, 30, 7)
	f.Add([]byte("abcdef"), 9, 31, 2)
	inv := inversePatterns()
	f.Fuzz(func(t *testing.T, data []byte, level, cols, rowHeight int) {
		s, err := Encode(data, Options{ECLevel: level, Columns: cols, RowHeight: rowHeight})
		if err != nil {
			if !errors.Is(err, ErrNoData) && !errors.Is(err, ErrTooMuchData) && !errors.Is(err, ErrBadOptions) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			lvl, lerr := Options{ECLevel: level}.level()
			_, herr := Options{RowHeight: rowHeight}.rowHeight()
			if lerr == nil && herr == nil && cols == 0 && len(data) > 0 && len(data) <= MaxDataBytes(lvl) {
				t.Fatalf("valid input rejected: %v", err)
			}
			return
		}
		if s.Content() != string(data) {
			t.Fatalf("Content differs from the data")
		}
		checkInvariants(t, s, data, inv)
	})
}
