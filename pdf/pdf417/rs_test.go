package pdf417

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGeneratorPolyHandComputed compares the generator coefficients with
// values worked out by hand from g(x) = Π (x − 3^i) mod 929.
func TestGeneratorPolyHandComputed(t *testing.T) {
	// Level 0: (x − 3)(x − 9) = x² − 12x + 27 → 27, −12 ≡ 917.
	if got, want := generatorPoly(2), []int{27, 917}; !slices.Equal(got, want) {
		t.Errorf("generatorPoly(2) = %v, want %v", got, want)
	}
	// Level 1: roots 3, 9, 27, 81. Elementary symmetric sums: e1 = 120,
	// e2 = 3510, e3 = 29160, e4 = 59049. g = x⁴ − e1x³ + e2x² − e3x + e4:
	// e4 mod 929 = 59049 − 63·929 = 522; −e3 ≡ −(29160 − 31·929) = −361 ≡ 568;
	// e2 ≡ 3510 − 3·929 = 723; −e1 ≡ 809.
	if got, want := generatorPoly(4), []int{522, 568, 723, 809}; !slices.Equal(got, want) {
		t.Errorf("generatorPoly(4) = %v, want %v", got, want)
	}
}

// evalPoly evaluates the codeword polynomial (first codeword = highest
// power) at x over GF(929) by Horner's rule.
func evalPoly(cw []int, x int) int {
	v := 0
	for _, c := range cw {
		v = (v*x + c) % gfPrime
	}
	return v
}

// TestECCodewordsVanishAtRoots checks the defining property of the check
// codewords at every level, independently of the division: the complete
// codeword polynomial is zero at 3¹ … 3^k. It also checks that a single
// changed codeword breaks the property (so the check can fail).
func TestECCodewordsVanishAtRoots(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for level := range 9 {
		k := ecCount(level)
		for _, n := range []int{1, 7, 100, MaxTotal - k} {
			data := make([]int, n)
			for i := range data {
				data[i] = rng.IntN(gfPrime)
			}
			cw := append(slices.Clone(data), ecCodewords(data, k)...)
			if len(cw) != n+k {
				t.Fatalf("level %d: %d check codewords, want %d", level, len(cw)-n, k)
			}
			root := 1
			for i := 1; i <= k; i++ {
				root = root * gfPrimitive % gfPrime
				if v := evalPoly(cw, root); v != 0 {
					t.Fatalf("level %d, %d data codewords: C(3^%d) = %d, want 0", level, n, i, v)
				}
			}
			cw[n/2] = (cw[n/2] + 1) % gfPrime
			if evalPoly(cw, gfPrimitive) == 0 {
				t.Errorf("level %d: a changed codeword still gives C(3) = 0", level)
			}
		}
	}
}
