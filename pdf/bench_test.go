package pdf_test

import (
	"testing"

	"github.com/dtekit/dtekit/pdf"
)

// BenchmarkRender10Lines renders an emitted 10-line factura on letter paper
// and on 80 mm paper; besides ns/op and allocs/op it reports the size of
// each PDF (goal: ≤ 5 ms and ≤ 100 KB per document).
func BenchmarkRender10Lines(b *testing.B) {
	s := manyLines(b, 10)
	for _, f := range []pdf.Format{pdf.Carta, pdf.Termica80} {
		b.Run(f.String(), func(b *testing.B) {
			opts := pdf.Options{Format: f, Resolucion: testResolucion}
			var size int
			b.ReportAllocs()
			for b.Loop() {
				out, err := pdf.RenderBytes(s.doc, opts)
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/pdf")
		})
	}
}
