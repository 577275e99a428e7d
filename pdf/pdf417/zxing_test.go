package pdf417_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/boombuler/barcode"

	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/pdf/pdf417"
)

// pxPerModule is the rendering scale for ZXing: 3 pixels per module.
const pxPerModule = 3

// quietZone is the light margin, in modules, around the test images: the
// 2 modules the SII asks for around the stamp.
const quietZone = 2

// decodeCase is one symbol to decode with ZXing.
type decodeCase struct {
	name  string
	data  []byte
	opts  pdf417.Options
	level string // expected "EC Level" report
}

// checkDecodes encodes every case, renders them to PNG with a quiet zone of
// 2 modules, decodes them all in one ZXingReader run and compares the bytes
// and the reported EC level.
func checkDecodes(t *testing.T, cases []decodeCase) {
	t.Helper()
	dir := t.TempDir()
	files := make([]string, len(cases))
	for i, c := range cases {
		s, err := pdf417.Encode(c.data, c.opts)
		if err != nil {
			t.Fatalf("%s: Encode(%d bytes, %+v): %v", c.name, len(c.data), c.opts, err)
		}
		files[i] = writePNG(t, dir, fmt.Sprintf("%03d.png", i), s.Image(pxPerModule, quietZone))
	}
	res := oracle.ZXingPDF417(t, files...)
	for i, c := range cases {
		r := res[files[i]]
		switch {
		case r.Symbols == 0:
			t.Errorf("%s: ZXingReader found no PDF417 symbol (error %q)", c.name, r.Error)
		case string(r.Bytes) != string(c.data):
			t.Errorf("%s: ZXingReader decoded %d bytes that differ from the %d encoded", c.name, len(r.Bytes), len(c.data))
		case r.ECLevel != c.level:
			t.Errorf("%s: ZXingReader reports EC level %q, want %q", c.name, r.ECLevel, c.level)
		}
	}
}

// TestZXingDecodesStampSizes: TED-like payloads (with ISO-8859-1 letters
// ≥ 0x80) of 50 to 1000 bytes in steps of 50, plus 1034 (the largest payload
// at EC level 5), encoded with the default options, decode byte for byte
// with EC level 5.
func TestZXingDecodesStampSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("rasterizes or runs the oracles on many documents; skipped under -short")
	}
	t.Parallel()
	var cases []decodeCase
	for n := 50; n <= 1000; n += 50 {
		cases = append(cases, decodeCase{name: fmt.Sprintf("%d bytes", n), data: tedLike(n, n), level: "5"})
	}
	for _, n := range []int{pdf417.MaxDataBytes(5), 551, 553, 555, 899, 901} { // 901 and 924 latches, every remainder
		cases = append(cases, decodeCase{name: fmt.Sprintf("%d bytes", n), data: tedLike(n, n), level: "5"})
	}
	checkDecodes(t, cases)
}

// TestBeyondLevel5Capacity: 1050 and 1100 bytes exceed what one symbol
// holds at EC level 5 (928 codewords, so at most 1034 bytes); Encode says so,
// and the same payloads decode at level 2, the highest level that holds
// 1100 bytes.
func TestBeyondLevel5Capacity(t *testing.T) {
	t.Parallel()
	if got := pdf417.MaxDataBytes(5); got != 1034 {
		// 1034 = 6·172 + 2: 1 descriptor + 1 latch + 5·172 + 2 + 64 checks = 928.
		t.Errorf("MaxDataBytes(5) = %d, want 1034", got)
	}
	var cases []decodeCase
	for _, n := range []int{1035, 1050, 1100} {
		data := tedLike(n, n)
		if _, err := pdf417.Encode(data, pdf417.Options{}); !errors.Is(err, pdf417.ErrTooMuchData) {
			t.Errorf("Encode(%d bytes) at level 5: err = %v, want ErrTooMuchData", n, err)
		}
		cases = append(cases, decodeCase{name: fmt.Sprintf("%d bytes level 2", n), data: data, opts: pdf417.Options{ECLevel: 2}, level: "2"})
	}
	if _, err := pdf417.Encode(tedLike(1100, 1), pdf417.Options{ECLevel: 3}); !errors.Is(err, pdf417.ErrTooMuchData) {
		t.Errorf("Encode(1100 bytes) at level 3: err = %v, want ErrTooMuchData", err)
	}
	checkDecodes(t, cases)
}

// TestZXingAllByteValues: payloads holding all 256 byte values, in several
// orders and with every length remainder mod 6 (latch 924 or 901, zero to
// five trailing bytes), decode byte for byte.
func TestZXingAllByteValues(t *testing.T) {
	t.Parallel()
	var cases []decodeCase
	for extra := range 6 {
		for _, order := range []string{"ascending", "descending", "stride-37"} {
			data := make([]byte, 0, 256+extra)
			for i := range 256 {
				switch order {
				case "ascending":
					data = append(data, byte(i))
				case "descending":
					data = append(data, byte(255-i))
				default:
					data = append(data, byte(i*37+11))
				}
			}
			for i := range extra {
				data = append(data, byte(0xff-i))
			}
			cases = append(cases, decodeCase{name: fmt.Sprintf("256+%d %s", extra, order), data: data, level: "5"})
		}
	}
	// Short payloads, one per trailing-byte count, high bytes only.
	for n := 1; n <= 12; n++ {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(0x80 + 11*i)
		}
		cases = append(cases, decodeCase{name: fmt.Sprintf("%d high bytes", n), data: data, level: "5"})
	}
	checkDecodes(t, cases)
}

// TestZXingColumnsAndLevels: every column count that holds a 200-byte TED
// at level 5, every EC level for a 300-byte payload, and taller rows.
func TestZXingColumnsAndLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("rasterizes or runs the oracles on many documents; skipped under -short")
	}
	t.Parallel()
	var cases []decodeCase
	data := tedLike(200, 7)
	for c := pdf417.MinColumns; c <= pdf417.MaxColumns; c++ {
		opts := pdf417.Options{Columns: c}
		if _, err := pdf417.Encode(data, opts); err != nil {
			// 200 bytes at level 5 are 235 codewords: 1 and 2 columns would
			// need more than 90 rows.
			if c > 2 || !errors.Is(err, pdf417.ErrBadOptions) {
				t.Errorf("Encode(200 bytes, %d columns): %v", c, err)
			}
			continue
		}
		cases = append(cases, decodeCase{name: fmt.Sprintf("%d columns", c), data: data, opts: opts, level: "5"})
	}
	for lvl := range 9 {
		opts := pdf417.Options{ECLevel: lvl}
		if lvl == 0 {
			opts.ECLevel = pdf417.ECLevelZero
		}
		cases = append(cases, decodeCase{name: fmt.Sprintf("level %d", lvl), data: tedLike(300, lvl), opts: opts, level: fmt.Sprint(lvl)})
	}
	for _, h := range []int{4, 5, 8} {
		cases = append(cases, decodeCase{name: fmt.Sprintf("row height %d", h), data: tedLike(400, h), opts: pdf417.Options{RowHeight: h}, level: "5"})
	}
	checkDecodes(t, cases)
}

// TestZXingThroughBarcodeScale renders through boombuler's barcode.Scale
// and the QuietZone wrapper, the path a renderer using the barcode.Barcode
// interface takes.
func TestZXingThroughBarcodeScale(t *testing.T) {
	t.Parallel()
	data := tedLike(650, 3)
	s, err := pdf417.Encode(data, pdf417.Options{})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	q := s.QuietZone(quietZone)
	b := q.Bounds()
	sc, err := barcode.Scale(q, b.Dx()*4, b.Dy()*4)
	if err != nil {
		t.Fatalf("barcode.Scale: %v", err)
	}
	if q.Metadata().CodeKind != barcode.TypePDF || q.Content() != string(data) {
		t.Errorf("QuietZone barcode: metadata %+v, content of %d bytes", q.Metadata(), len(q.Content()))
	}
	p := writePNG(t, t.TempDir(), "scaled.png", sc)
	r := oracle.ZXingPDF417(t, p)[p]
	if r.Symbols == 0 || string(r.Bytes) != string(data) || r.ECLevel != "5" {
		t.Errorf("scaled symbol: found %v, bytes equal %v, EC level %q", r.Symbols > 0, string(r.Bytes) == string(data), r.ECLevel)
	}
}

// TestZXingEveryDataCodewordPattern checks the pattern table itself: for
// each cluster and every codeword value 0–899, some symbol carries that
// value at least twice in rows of that cluster. The symbols use EC level 0
// (two check codewords, so a decoder corrects at most one error): a wrong
// pattern would make at least two errors and the symbol would not decode to
// the same bytes. Values are placed through byte compaction: a six-byte group
// whose base-900 digits are (0, a, b, c, d) carries a, b, c, d.
func TestZXingEveryDataCodewordPattern(t *testing.T) {
	t.Parallel()
	const (
		cols   = 28
		groups = 184 // 1 + 1 + 5·184 + 2 = 924 = 28 × 33, no padding
	)
	// need[cl] lists the values still to place twice in cluster cl.
	var need [3][]int
	for cl := range need {
		for v := range 900 {
			need[cl] = append(need[cl], v)
		}
	}
	var cases []decodeCase
	for sym := 0; len(need[0])+len(need[1])+len(need[2]) > 0; sym++ {
		// Free slots of the symbol by cluster: codeword index i sits in row
		// i / cols; group g takes indices 2+5g .. 6+5g, the first one 0.
		var slots [3][]int
		for g := range groups {
			for j := 1; j < 5; j++ {
				i := 2 + 5*g + j
				cl := (i / cols) % 3
				slots[cl] = append(slots[cl], i)
			}
		}
		cw := make([]int, 2+5*groups)
		for cl := range slots {
			s := slots[cl]
			for len(s) >= 2 && len(need[cl]) > 0 {
				v := need[cl][0]
				need[cl] = need[cl][1:]
				cw[s[0]], cw[s[1]] = v, v
				s = s[2:]
			}
			for _, i := range s {
				cw[i] = (i * 31) % 900
			}
		}
		data := make([]byte, 0, 6*groups)
		for g := range groups {
			var v uint64
			for _, d := range cw[2+5*g : 7+5*g] {
				v = v*900 + uint64(d)
			}
			for k := 5; k >= 0; k-- {
				data = append(data, byte(v>>(8*k)))
			}
		}
		opts := pdf417.Options{ECLevel: pdf417.ECLevelZero, Columns: cols}
		s, err := pdf417.Encode(data, opts)
		if err != nil {
			t.Fatalf("symbol %d: Encode: %v", sym, err)
		}
		got := s.Codewords()
		if s.Rows() != 33 || len(got) != 924 || got[1] != 924 {
			t.Fatalf("symbol %d: layout %d×%d, %d codewords, latch %d; the test's placement assumes 33×28, 924, 924", sym, s.Rows(), s.Columns(), len(got), got[1])
		}
		for i := 2; i < len(cw); i++ {
			if got[i] != cw[i] {
				t.Fatalf("symbol %d: codeword %d is %d, placed %d", sym, i, got[i], cw[i])
			}
		}
		cases = append(cases, decodeCase{name: fmt.Sprintf("pattern symbol %d", sym), data: data, opts: opts, level: "0"})
	}
	t.Logf("%d symbols cover every value 0–899 twice per cluster", len(cases))
	checkDecodes(t, cases)
}
