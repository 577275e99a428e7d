package pdf417

// Reed–Solomon error correction over GF(929), the prime field PDF417 uses.
// For level s the symbol carries k = 2^(s+1) check codewords, and the whole
// codeword sequence (length descriptor, data, padding, checks), read as the
// coefficients of a polynomial with the first codeword as the highest power,
// is a multiple of the generator
//
//	g(x) = (x − 3)(x − 3²)···(x − 3^k)   (mod 929),
//
// 3 being a primitive element of GF(929).

import (
	"math/bits"
	"sync"
)

const (
	gfPrime     = 929
	gfPrimitive = 3
)

// ecCount returns the number of check codewords for level 0..8.
func ecCount(level int) int { return 2 << level }

// generatorPoly returns the coefficients of the monic generator of degree k,
// lowest power first: g(x) = x^k + c[k−1]·x^(k−1) + … + c[0]. The leading 1
// is not stored.
func generatorPoly(k int) []int {
	// p holds the product so far, lowest power first, including the leading 1.
	p := make([]int, 1, k+1)
	p[0] = 1
	root := 1
	for range k {
		root = root * gfPrimitive % gfPrime
		neg := gfPrime - root // −root mod 929 (root is never 0)
		// p(x)·(x − root): shift up one power, add neg·p.
		p = append(p, 0)
		for j := len(p) - 1; j >= 0; j-- {
			v := neg * p[j] % gfPrime
			if j > 0 {
				v += p[j-1]
			}
			p[j] = v % gfPrime
		}
	}
	return p[:k]
}

// negGenerator returns the generator coefficients of degree k negated and
// highest power first: neg[j] = −g[k−1−j], so the division below is one
// multiply-add and one reduction per coefficient.
func negGenerator(k int) []int {
	g := generatorPoly(k)
	neg := make([]int, k)
	for j := range neg {
		neg[j] = (gfPrime - g[k-1-j]) % gfPrime
	}
	return neg
}

// negGenerators holds negGenerator for the nine levels, computed once and
// read-only afterwards.
var negGenerators = sync.OnceValue(func() [9][]int {
	var t [9][]int
	for level := range t {
		t[level] = negGenerator(ecCount(level))
	}
	return t
})

// ecCodewords returns the k check codewords for data, highest power first,
// so that data followed by the result is a multiple of the generator.
func ecCodewords(data []int, k int) []int {
	var neg []int
	if level := bits.TrailingZeros(uint(k)) - 1; level >= 0 && level <= 8 && ecCount(level) == k {
		neg = negGenerators()[level]
	} else {
		neg = negGenerator(k)
	}
	// r[j] is the coefficient of x^(k−1−j) in data·x^k mod g.
	r := make([]int, k)
	for _, d := range data {
		f := (d + r[0]) % gfPrime
		for j := 0; j < k-1; j++ {
			r[j] = (r[j+1] + f*neg[j]) % gfPrime
		}
		r[k-1] = f * neg[k-1] % gfPrime
	}
	for j := range r {
		r[j] = (gfPrime - r[j]) % gfPrime
	}
	return r
}
