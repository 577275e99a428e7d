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
	c, x, err := plan(800, 90, 40, 0.254)
	if err != nil || c != 15 || !near(x, 40.0/151) {
		t.Errorf("PlanLayout(800, 90 × 40) = %d, %g, %v; want 15, %g", c, x, err, 40.0/151)
	}
	// Roll 72 × 60: C=10 → R=74, 60/226 = 0.2655; C=11 → R=67,
	// min(72/260, 60/205) = 72/260 = 0.2769; C=12 → R=62, 72/277 = 0.2599.
	c, x, err = plan(800, 72, 60, 0.254)
	if err != nil || c != 11 || !near(x, 72.0/260) {
		t.Errorf("PlanLayout(800, 72 × 60) = %d, %g, %v; want 11, %g", c, x, err, 72.0/260)
	}
	// 550 bytes: 1 + (1 + 5·91 + 4) + 64 = 525 codewords. Roll at 40 mm:
	// C=10 → R=53, 40/163 = 0.2454; C=11 → R=48, min(72/260, 40/148) =
	// 40/148 = 0.2703; C=12 → R=44, 72/277 = 0.2599.
	l, err := PlanLayout(550, Options{}, Box{WidthMM: 72, HeightMM: 40, MinModuleMM: 0.254, QuietZone: 2})
	if err != nil || l.Columns != 11 || l.Rows != 48 || !near(l.ModuleMM, 40.0/148) || !near(l.HeightMM, 40) {
		t.Errorf("PlanLayout(550, 72 × 40) = %+v, %v; want 11 columns, 48 rows, module %g, 40 mm high", l, err, 40.0/148)
	}
	// 800 bytes do not fit 72 × 40 at 0.254 (best C=14, R=53: 40/163).
	if _, _, err := plan(800, 72, 40, 0.254); !errors.Is(err, ErrDoesNotFit) {
		t.Errorf("PlanLayout(800, 72 × 40): err = %v, want ErrDoesNotFit", err)
	}
	// Without a quiet zone the symbol is 4 modules narrower and shorter:
	// C=11, R=67 → min(72/256, 60/201) = 72/256.
	if l, err := PlanLayout(800, Options{}, Box{WidthMM: 72, HeightMM: 60, MinModuleMM: 0.254}); err != nil || l.Columns != 11 || !near(l.ModuleMM, 72.0/256) {
		t.Errorf("PlanLayout(800, 72 × 60, no quiet zone) = %+v, %v; want 11 columns, module %g", l, err, 72.0/256)
	}
	// 1034 bytes: exactly 928 codewords, which only 16 × 58 or 29 × 32 hold;
	// 16 columns need 345 modules, 72/345 = 0.209 mm < 0.254.
	if _, _, err := plan(1034, 72, 60, 0.254); !errors.Is(err, ErrDoesNotFit) {
		t.Errorf("PlanLayout(1034, 72 × 60): err = %v, want ErrDoesNotFit", err)
	}
	// In 90 × 40: 16 × 58 → min(90/345, 40/178) = 40/178 = 0.2247, which a
	// 0.2 mm minimum accepts.
	if c, x, err := plan(1034, 90, 40, 0.2); err != nil || c != 16 || !near(x, 40.0/178) {
		t.Errorf("PlanLayout(1034, 90 × 40) = %d, %g, %v; want 16 columns, module %g", c, x, err, 40.0/178)
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
		if _, _, err := plan(tc.n, tc.w, tc.h, tc.mm); !errors.Is(err, tc.want) {
			t.Errorf("PlanLayout(%d, %g, %g, %g): err = %v, want %v", tc.n, tc.w, tc.h, tc.mm, err, tc.want)
		}
	}
}

// TestLayoutsFitTheirBoxes checks, for payloads across the whole range,
// that plans respect their boxes and minimum modules, and that Encode with
// the chosen columns gives the planned rows.
func TestLayoutsFitTheirBoxes(t *testing.T) {
	for n := 1; n <= MaxDataBytes(5); n += 11 {
		for _, box := range []Box{
			{WidthMM: 90, HeightMM: 40, MinModuleMM: 0.2, QuietZone: 2},
			{WidthMM: 72, HeightMM: 60, MinModuleMM: 0.2, QuietZone: 2},
			{WidthMM: 50, HeightMM: 50, MinModuleMM: 0.1, QuietZone: 0},
		} {
			l, err := PlanLayout(n, Options{}, box)
			if err != nil {
				t.Fatalf("%+v %d bytes: %v", box, n, err)
			}
			if l.WidthMM > box.WidthMM+1e-9 || l.HeightMM > box.HeightMM+1e-9 || l.ModuleMM < box.MinModuleMM {
				t.Errorf("%+v %d bytes: %+v exceeds the box or module < minimum", box, n, l)
			}
			q := 2 * box.QuietZone
			if w := float64(17*(l.Columns+4)+1+q) * l.ModuleMM; !near(w, l.WidthMM) {
				t.Errorf("%+v %d bytes: width %g, want %g", box, n, l.WidthMM, w)
			}
			s, err := Encode(make([]byte, n), Options{Columns: l.Columns})
			if err != nil || s.Rows() != l.Rows {
				t.Fatalf("%+v %d bytes: Encode with %d columns: %v (rows %d, planned %d)", box, n, l.Columns, err, s.Rows(), l.Rows)
			}
			if h := float64(3*l.Rows+q) * l.ModuleMM; !near(h, l.HeightMM) {
				t.Errorf("%+v %d bytes: height %g, want %g", box, n, l.HeightMM, h)
			}
		}
	}
}

// plan is PlanLayout with the default options and a quiet zone of 2
// modules, returning the columns and module.
func plan(n int, w, h, minModule float64) (int, float64, error) {
	l, err := PlanLayout(n, Options{}, Box{WidthMM: w, HeightMM: h, MinModuleMM: minModule, QuietZone: 2})
	return l.Columns, l.ModuleMM, err
}
