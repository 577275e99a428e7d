package pdf417

import "testing"

// widthsOf splits a 17-bit pattern into element widths, dark first.
func widthsOf(p uint32) []int {
	var w []int
	prev, run := uint32(2), 0
	for i := charModules - 1; i >= 0; i-- {
		b := p >> i & 1
		if b != prev && run > 0 {
			w = append(w, run)
			run = 0
		}
		prev = b
		run++
	}
	return append(w, run)
}

// TestPatternTableStructure checks the rules of ISO/IEC 15438 on every
// pattern: 929 per cluster, four bars and four spaces over 17 modules, bar
// first, no element wider than 6, the cluster number (b1 − b2 + b3 − b4)
// mod 9 of its cluster, no pattern used twice, and the table ordered by the
// edge-to-edge widths.
func TestPatternTableStructure(t *testing.T) {
	tab := patterns()
	seen := map[uint32]string{}
	for ci := range 3 {
		var prev [5]int
		for v := range numCodewords {
			p := tab[ci][v]
			w := widthsOf(p)
			if p>>(charModules-1) != 1 || len(w) != 8 {
				t.Fatalf("cluster %d value %d: pattern %017b has widths %v, want 8 elements starting with a bar", 3*ci, v, p, w)
			}
			sum := 0
			for _, x := range w {
				sum += x
				if x > maxElement {
					t.Errorf("cluster %d value %d: element %d wider than %d", 3*ci, v, x, maxElement)
				}
			}
			if sum != charModules {
				t.Errorf("cluster %d value %d: %d modules", 3*ci, v, sum)
			}
			if k := ((w[0]-w[2]+w[4]-w[6])%9 + 9) % 9; k != 3*ci {
				t.Errorf("cluster %d value %d: widths %v give cluster %d", 3*ci, v, w, k)
			}
			if other, dup := seen[p]; dup {
				t.Errorf("cluster %d value %d: pattern already used by %s", 3*ci, v, other)
			}
			seen[p] = "another codeword"
			key := [5]int{w[1] + w[2], w[2] + w[3], w[3] + w[4], w[4] + w[5], w[5] + w[6]}
			if v > 0 && !lessKey(prev, key) {
				t.Errorf("cluster %d value %d: edge widths %v not after %v", 3*ci, v, key, prev)
			}
			prev = key
		}
	}
}

func lessKey(a, b [5]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// TestStartStopWidths checks the start and stop patterns against the
// standard's width notation: start 81111113 (17 modules), stop 711311121
// (18 modules).
func TestStartStopWidths(t *testing.T) {
	digits := func(w []int) string {
		b := make([]byte, len(w))
		for i, x := range w {
			b[i] = byte('0' + x)
		}
		return string(b)
	}
	if got := digits(startWidths[:]); got != "81111113" {
		t.Errorf("start pattern %s, want 81111113", got)
	}
	if got := digits(stopWidths[:]); got != "711311121" {
		t.Errorf("stop pattern %s, want 711311121", got)
	}
}
