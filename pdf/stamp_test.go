package pdf

import (
	"errors"
	"math"
	"testing"

	"github.com/dtekit/dtekit/pdf/pdf417"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestStampLayoutsHandComputed checks the SII layouts against plans worked
// out by hand. A symbol of C columns and R rows with quiet zones of 2 is
// 17(C+4)+1+4 modules wide and 3R+4 high; the module is min(box width /
// width, box height / height).
func TestStampLayoutsHandComputed(t *testing.T) {
	// 800 bytes at level 5: 1 + (1 + 5·133 + 2) + 64 = 733 codewords.
	// Letter 90 × 40: C=14 → R=53, 40/163 = 0.2454; C=15 → R=49,
	// min(90/328, 40/151) = 40/151 = 0.2649; C=16 → R=46, min(90/345 =
	// 0.2609, 40/142) = 0.2609. Best: 15 columns, 40/151 mm.
	if l, err := letterLayout(800); err != nil || l.Columns != 15 || !near(l.ModuleMM, 40.0/151) {
		t.Errorf("letterLayout(800) = %+v, %v; want 15 columns, module %g", l, err, 40.0/151)
	}
	// 550 bytes: 1 + (1 + 5·91 + 4) + 64 = 525 codewords. Roll at 40 mm:
	// C=10 → R=53, 40/163 = 0.2454; C=11 → R=48, min(72/260, 40/148) =
	// 40/148 = 0.2703; C=12 → R=44, 72/277 = 0.2599.
	if l, err := rollLayout(550); err != nil || l.Columns != 11 || l.Rows != 48 || !near(l.ModuleMM, 40.0/148) || !near(l.HeightMM, 40) {
		t.Errorf("rollLayout(550) = %+v, %v; want 11 columns, 48 rows, module %g, 40 mm high", l, err, 40.0/148)
	}
	// 800 bytes do not fit 72 × 40 at 0.254 (best C=14, R=53: 40/163), so
	// rollLayout takes the 60 mm box: C=11 → R=67, min(72/260, 60/205) =
	// 72/260 = 0.2769.
	if l, err := rollLayout(800); err != nil || l.Columns != 11 || !near(l.ModuleMM, 72.0/260) {
		t.Errorf("rollLayout(800) = %+v, %v; want 11 columns, module %g", l, err, 72.0/260)
	}
	// 1034 bytes: exactly 928 codewords, which only 16 × 58 or 29 × 32 hold.
	// On letter 16 × 58 → min(90/345, 40/178) = 40/178 = 0.2247, accepted
	// by the 0.2 mm fallback; on the roll 72/345 = 0.209 mm < 0.254.
	if l, err := letterLayout(1034); err != nil || l.Columns != 16 || !near(l.ModuleMM, 40.0/178) {
		t.Errorf("letterLayout(1034) = %+v, %v; want 16 columns, module %g", l, err, 40.0/178)
	}
	if _, err := rollLayout(1034); !errors.Is(err, pdf417.ErrDoesNotFit) {
		t.Errorf("rollLayout(1034): err = %v, want ErrDoesNotFit", err)
	}
}

// TestStampLayoutsFitTheirBoxes checks, for payloads across the whole
// range, that the plans respect the SII's boxes and minimum modules.
func TestStampLayoutsFitTheirBoxes(t *testing.T) {
	for n := 1; n <= pdf417.MaxDataBytes(5); n += 11 {
		for _, box := range []struct {
			name string
			plan func(int) (pdf417.Layout, error)
			w, h float64
			min  float64
		}{
			{"letter", letterLayout, 90, 40, letterFallbackMinModuleMM},
			{"roll", rollLayout, 72, 60, stampMinModuleMM},
		} {
			l, err := box.plan(n)
			if err != nil {
				if box.name == "roll" && n > 1029 && errors.Is(err, pdf417.ErrDoesNotFit) {
					continue
				}
				t.Fatalf("%s %d bytes: %v", box.name, n, err)
			}
			if l.WidthMM > box.w+1e-9 || l.HeightMM > box.h+1e-9 || l.ModuleMM < box.min {
				t.Errorf("%s %d bytes: %+v exceeds %g × %g mm or module < %g", box.name, n, l, box.w, box.h, box.min)
			}
		}
	}
}
