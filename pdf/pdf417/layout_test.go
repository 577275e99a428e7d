package pdf417

import (
	"errors"
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestChooseLayoutHandComputed checks layouts worked out by hand. A symbol
// of C columns and R rows with quiet zones is 17(C+4)+1+4 modules wide and
// 3R+4 high; the module is min(box width / width, box height / height).
func TestChooseLayoutHandComputed(t *testing.T) {
	// 800 bytes at level 5: 1 + (1 + 5·133 + 2) + 64 = 733 codewords.
	// Letter 90 × 40: C=14 → R=53, 40/163 = 0.2454; C=15 → R=49,
	// min(90/328, 40/151) = 40/151 = 0.2649; C=16 → R=46, min(90/345 =
	// 0.2609, 40/142) = 0.2609. Best: 15 columns, 40/151 mm.
	c, x, err := ChooseLayout(800, LetterMaxWidthMM, LetterMaxHeightMM, MinModuleMM)
	if err != nil || c != 15 || !near(x, 40.0/151) {
		t.Errorf("ChooseLayout(800, letter) = %d, %g, %v; want 15, %g", c, x, err, 40.0/151)
	}
	// Roll 72 × 60: C=10 → R=74, 60/226 = 0.2655; C=11 → R=67,
	// min(72/260, 60/205) = 72/260 = 0.2769; C=12 → R=62, 72/277 = 0.2599.
	c, x, err = ChooseLayout(800, RollMaxWidthMM, RollMaxHeightMM, MinModuleMM)
	if err != nil || c != 11 || !near(x, 72.0/260) {
		t.Errorf("ChooseLayout(800, roll) = %d, %g, %v; want 11, %g", c, x, err, 72.0/260)
	}
	// 550 bytes: 1 + (1 + 5·91 + 4) + 64 = 525 codewords. Roll at 40 mm:
	// C=10 → R=53, 40/163 = 0.2454; C=11 → R=48, min(72/260, 40/148) =
	// 40/148 = 0.2703; C=12 → R=44, 72/277 = 0.2599.
	l, err := RollLayout(550)
	if err != nil || l.Columns != 11 || l.Rows != 48 || !near(l.ModuleMM, 40.0/148) || !near(l.HeightMM, 40) {
		t.Errorf("RollLayout(550) = %+v, %v; want 11 columns, 48 rows, module %g, 40 mm high", l, err, 40.0/148)
	}
	// 800 bytes do not fit 72 × 40 at 0.254 (best C=14, R=53: 40/163),
	// so RollLayout takes the 60 mm box.
	if l, err := RollLayout(800); err != nil || l.Columns != 11 || !near(l.ModuleMM, 72.0/260) {
		t.Errorf("RollLayout(800) = %+v, %v; want 11 columns, module %g", l, err, 72.0/260)
	}
	// 1034 bytes: exactly 928 codewords, which only 16 × 58 or 29 × 32 hold;
	// 16 columns need 345 modules, 72/345 = 0.209 mm < 0.254.
	if _, _, err := ChooseLayout(1034, RollMaxWidthMM, RollMaxHeightMM, MinModuleMM); !errors.Is(err, ErrDoesNotFit) {
		t.Errorf("ChooseLayout(1034, roll): err = %v, want ErrDoesNotFit", err)
	}
	// On letter: 16 × 58 → min(90/345, 40/178) = 40/178 = 0.2247, accepted
	// by the 0.2 mm fallback.
	if l, err := LetterLayout(1034); err != nil || l.Columns != 16 || !near(l.ModuleMM, 40.0/178) {
		t.Errorf("LetterLayout(1034) = %+v, %v; want 16 columns, module %g", l, err, 40.0/178)
	}
}

// TestChooseLayoutErrors checks the error kinds.
func TestChooseLayoutErrors(t *testing.T) {
	tests := []struct {
		n        int
		w, h, mm float64
		want     error
	}{
		{0, 90, 40, 0.254, ErrNoData},
		{1035, 90, 40, 0.254, ErrTooMuchData},
		{500, 0, 40, 0.254, ErrBadOptions},
		{500, 90, -1, 0.254, ErrBadOptions},
		{500, math.NaN(), 40, 0.254, ErrBadOptions},
		{500, math.Inf(1), 40, 0.254, ErrBadOptions},
		{500, 90, 40, math.NaN(), ErrBadOptions},
		{500, 20, 10, 0.254, ErrDoesNotFit},
	}
	for _, tc := range tests {
		if _, _, err := ChooseLayout(tc.n, tc.w, tc.h, tc.mm); !errors.Is(err, tc.want) {
			t.Errorf("ChooseLayout(%d, %g, %g, %g): err = %v, want %v", tc.n, tc.w, tc.h, tc.mm, err, tc.want)
		}
	}
}

// TestLayoutsFitTheirBoxes checks, for payloads across the whole range,
// that the plans respect their boxes and minimum modules, that no other
// column count gives a larger module, and that Encode with the chosen
// columns gives the planned rows.
func TestLayoutsFitTheirBoxes(t *testing.T) {
	for n := 1; n <= MaxDataBytes(5); n += 11 {
		for _, box := range []struct {
			name string
			plan func(int) (Layout, error)
			w, h float64
			min  float64
		}{
			{"letter", LetterLayout, LetterMaxWidthMM, LetterMaxHeightMM, LetterFallbackMinModuleMM},
			{"roll", RollLayout, RollMaxWidthMM, RollMaxHeightMM, MinModuleMM},
		} {
			l, err := box.plan(n)
			if err != nil {
				if box.name == "roll" && n > 1029 && errors.Is(err, ErrDoesNotFit) {
					continue
				}
				t.Fatalf("%s %d bytes: %v", box.name, n, err)
			}
			if l.WidthMM > box.w+1e-9 || l.HeightMM > box.h+1e-9 || l.ModuleMM < box.min {
				t.Errorf("%s %d bytes: %+v exceeds %g × %g mm or module < %g", box.name, n, l, box.w, box.h, box.min)
			}
			if w := float64(17*(l.Columns+4)+1+4) * l.ModuleMM; !near(w, l.WidthMM) {
				t.Errorf("%s %d bytes: width %g, want %g", box.name, n, l.WidthMM, w)
			}
			s, err := Encode(make([]byte, n), Options{Columns: l.Columns})
			if err != nil || s.Rows() != l.Rows {
				t.Fatalf("%s %d bytes: Encode with %d columns: %v (rows %d, planned %d)", box.name, n, l.Columns, err, s.Rows(), l.Rows)
			}
			if h := float64(3*l.Rows+4) * l.ModuleMM; !near(h, l.HeightMM) {
				t.Errorf("%s %d bytes: height %g, want %g", box.name, n, l.HeightMM, h)
			}
		}
	}
}
