package pdf417_test

import (
	"testing"

	bpdf417 "github.com/boombuler/barcode/pdf417"

	"github.com/dtekit/dtekit/pdf/pdf417"
)

// BenchmarkEncode800 encodes an 800-byte TED-like payload with the default
// options (EC level 5, columns chosen for the letter box).
func BenchmarkEncode800(b *testing.B) {
	data := tedLike(800, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pdf417.Encode(data, pdf417.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode800Bars adds the vector rectangles a PDF renderer asks for.
func BenchmarkEncode800Bars(b *testing.B) {
	data := tedLike(800, 1)
	b.ReportAllocs()
	for b.Loop() {
		s, err := pdf417.Encode(data, pdf417.Options{})
		if err != nil {
			b.Fatal(err)
		}
		_ = s.Bars()
	}
}

// BenchmarkBoombulerEncode800 is the baseline: boombuler/barcode v1.1.0 on
// the same payload at security level 5.
func BenchmarkBoombulerEncode800(b *testing.B) {
	data := string(tedLike(800, 1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bpdf417.Encode(data, 5); err != nil {
			b.Fatal(err)
		}
	}
}
