package pdf417

import (
	"slices"
	"sync"
)

// Symbol characters.
//
// ISO/IEC 15438 represents each codeword value 0–928 by a pattern of four
// bars and four spaces, 17 modules wide, no element wider than 6 modules, the
// first element a bar. Patterns fall into nine "clusters" by
//
//	K = (b1 − b2 + b3 − b4) mod 9
//
// (b1..b4 the bar widths), and PDF417 uses clusters 0, 3 and 6 (row r uses
// cluster 3·(r mod 3)). Decoders identify a pattern by its edge-to-edge
// widths t_i = e_i + e_{i+1} (e1..e8 the element widths), which are immune to
// uniform ink spread.
//
// The standard tabulates the 3 × 929 patterns. Most of that table follows
// from rules, which this file applies instead of storing 2,787 patterns:
//
//  1. Candidates: every width sequence e1..e8 with 1 ≤ e_i ≤ 6, Σe_i = 17 and
//     the cluster's K.
//  2. Candidates with the same (t2, t3, t4, t5, t6) in one cluster also share
//     t1 and t7, so an edge-to-edge decoder cannot tell them apart: the table
//     uses at most one pattern of each such group.
//  3. The table lists the patterns it uses in increasing lexicographic order
//     of (t2, t3, t4, t5, t6); codeword value v is the v-th of them.
//
// What no rule here captures is which groups the standard leaves out and, in
// groups of two or three candidates, which candidate it takes. That choice is
// recorded in the selection strings below, one digit per group in the order
// of rule 3: '0' = group unused, 'n' = the n-th candidate of the group when
// the group's candidates are ordered by increasing e2 (the first space).
//
// Provenance: the selection digits are a transcription of the standard's
// published symbol character table (ISO/IEC 15438), taken from the copy of
// that table in github.com/boombuler/barcode v1.1.0 (MIT licence, already a
// dependency of this module) and reduced to one digit per group by the rules
// above; no code was taken from it. The tests check the result structurally
// (929 distinct patterns per cluster, every pattern in its cluster, the
// ordering rule) and, independently, by decoding with ZXing symbols that
// carry every value 0–899 in every cluster.
const (
	selection0 = "" +
		"1111111101001101001111111101000000111111110000111100010111111111" +
		"0111110101111111111100011111110011110111111111110101011111111101" +
		"0111110101111111111111011111111101010111111111110101010001010101" +
		"0100000111111111110100001111111101010011111101011101111111111111" +
		"1100111122111112211101000011112211111201000011121111001111111111" +
		"1111110111112212111221110201111221111201011121110111111111111111" +
		"1122111112111100111211111101011111111111111221111211010101010001" +
		"0101010201010100000000000001111101111101010111111111010111110111" +
		"1111111111110111122121111212010011112111112100111211011111111111" +
		"1101111211111121110101111221122111111211010001112112111101011111" +
		"0111111111111121111121111111221221112121010111212111010111111111" +
		"1211111111121121111111010101010101020101010101010000000000000000" +
		"0100110111111101111111111111111111011111011112111111211101011121" +
		"1111011111111111111101221111211111012112211121210101112121110111" +
		"1111111111111111111211211111111112112112111111001111111111111111" +
		"1111112121111111112112111101010101010101010101010100000000010011" +
		"0101010101011111001111111101121101111111111111110101110111111111" +
		"0121122121110111111101110111111111121111111112112111011111011111" +
		"1111111111110000000000000000000000000000000000000000000000000000" +
		"0000000000000000000000000000000000000000000000000000000000000000" +
		"000000000000000000000000000000000000"
	selection3 = "" +
		"1111111111111111111111111111111111111111111111111111110111111110" +
		"1111111111111111111111111111111111111111111111111110111111111111" +
		"1111111111111111111111111111111111111111111111111111111111111111" +
		"1111111111111110111111001111111111111111111111111111111111111111" +
		"1111111011111111111111111101111121111121111111221111211111112211" +
		"1121111111221111211011121111111111111111211111111121111111112111" +
		"1111112111111111111111111111111112111111111111121111111111111111" +
		"1111111111111110011111111111111111111111111111111111111111111111" +
		"1111112111111111211111111121111111112111111111111111111111111111" +
		"1111112111111111212111111121211111112121111111111111111111111111" +
		"1111111111111111111111111111111111111111111111111111111111111111" +
		"1111112111111211111121111112111111111111111111111111111111111111" +
		"1111111111111111111111111111111111111111111110111111111111111111" +
		"1111111111111111111111111111111111111111111111111111111111001111" +
		"11001111111111111111111111111111111111011111111111000000"
	selection6 = "" +
		"1111111111100111111111110111111111111111111111111110111111111110" +
		"1111111111111111111111111111111111111111111111111111111111111110" +
		"1111111111111111110111111111111111111111111111111111111111111111" +
		"2211112111111111211111111111111111111111111111111111211111111111" +
		"1111111111111111111121111111111111111111111111111111111111111111" +
		"1111111111111111111211111111111111111111111111111111111112211112" +
		"1111112121111111111111111111111211111111111111111111111121111111" +
		"1111111111111111111111101111111111111111112111111111111111111112" +
		"1121111111111111111111111111112211112111111212111111111111111111" +
		"1111121111111111111111111111112111111111111111111111100111111111" +
		"1111111111111111112111111111111111111111211111111111111111111111" +
		"1122111121111112121111111111111111121111111111111111111211111111" +
		"1111000111111111111111111111111111111111111111111111111121111111" +
		"1111111112111111212111111111111111111111111111111111111111111111" +
		"11111111111111111111111111111111111111111111110000000000"
)

// Start and stop patterns as element widths (bar first). The stop pattern is
// 18 modules wide: it ends with a one-module bar.
var (
	startWidths = [8]int{8, 1, 1, 1, 1, 1, 1, 3}
	stopWidths  = [9]int{7, 1, 1, 3, 1, 1, 1, 2, 1}
)

const (
	numCodewords = 929 // codeword values 0..928
	charModules  = 17  // width of a symbol character
	startModules = 17
	stopModules  = 18
	maxElement   = 6 // widest bar or space in a symbol character, modules
)

// patternTable maps [cluster index 0..2][codeword value] to the 17-module
// pattern, most significant of the low 17 bits = leftmost module, 1 = dark.
type patternTable [3][numCodewords]uint32

// patterns builds the table once; it is read-only afterwards.
var patterns = sync.OnceValue(buildPatterns)

// candidate is one width sequence e1..e8 of a symbol character.
type candidate [8]int8

// edgeKey returns (t2, t3, t4, t5, t6), the edge-to-edge widths that order
// the standard's table.
func (c candidate) edgeKey() [5]int8 {
	return [5]int8{c[1] + c[2], c[2] + c[3], c[3] + c[4], c[4] + c[5], c[5] + c[6]}
}

// cluster returns (b1 − b2 + b3 − b4) mod 9.
func (c candidate) cluster() int {
	return ((int(c[0])-int(c[2])+int(c[4])-int(c[6]))%9 + 9) % 9
}

// bits renders the widths as a 17-bit module pattern.
func (c candidate) bits() uint32 {
	var v uint32
	for i, w := range c {
		for range w {
			v <<= 1
			if i%2 == 0 {
				v |= 1
			}
		}
	}
	return v
}

// candidates returns every valid width sequence of the given cluster, sorted
// by edgeKey and then by e2.
func candidates(cluster int) []candidate {
	var out []candidate
	var c candidate
	var walk func(i, left int)
	walk = func(i, left int) {
		if i == 7 {
			if left >= 1 && left <= maxElement {
				c[7] = int8(left)
				if c.cluster() == cluster {
					out = append(out, c)
				}
			}
			return
		}
		for w := 1; w <= maxElement && w <= left-(7-i); w++ {
			c[i] = int8(w)
			walk(i+1, left-w)
		}
	}
	walk(0, charModules)
	slices.SortFunc(out, func(a, b candidate) int {
		ka, kb := a.edgeKey(), b.edgeKey()
		if d := slices.Compare(ka[:], kb[:]); d != 0 {
			return d
		}
		return int(a[1]) - int(b[1])
	})
	return out
}

// buildPatterns applies the rules and selection strings described above.
// The selection strings are constants of this package, so an inconsistency
// is a programming error, not bad input; the tests exercise this function.
func buildPatterns() *patternTable {
	t := new(patternTable)
	for ci, sel := range [3]string{selection0, selection3, selection6} {
		cands := candidates(3 * ci)
		n, g := 0, 0
		for start := 0; start < len(cands); g++ {
			end := start + 1
			for end < len(cands) && cands[end].edgeKey() == cands[start].edgeKey() {
				end++
			}
			if g >= len(sel) {
				panic("pdf417: selection string shorter than the candidate groups")
			}
			if d := int(sel[g] - '0'); d > 0 {
				if d > end-start || n >= numCodewords {
					panic("pdf417: selection string inconsistent with the candidate groups")
				}
				t[ci][n] = cands[start+d-1].bits()
				n++
			}
			start = end
		}
		if n != numCodewords || g != len(sel) {
			panic("pdf417: selection string does not yield 929 patterns")
		}
	}
	return t
}
