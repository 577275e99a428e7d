//go:build unix

package dte_test

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
)

// verifyBenchInputs builds genuine inputs of about 10 KB (one 25-line
// factura), 1 MB and 10 MB (envelopes of such facturas), and the two
// hostile ones of issue 9 at 1 MB and 4 MB.
func verifyBenchInputs(b *testing.B) (*dtetest.Creds, []struct {
	name string
	data []byte
}) {
	c, err := dtetest.NewWith(dtetest.Options{Hasta: 2000})
	if err != nil {
		b.Fatal(err)
	}
	em, err := c.Emitter(nil)
	if err != nil {
		b.Fatal(err)
	}
	req := benchRequest()
	for i := 10; i < 25; i++ {
		req.Detalle = append(req.Detalle, req.Detalle[i%10])
	}
	emit := func() []byte {
		out, err := em.Emit(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		return out.XML
	}
	one := emit()
	var docs [][]byte
	envelope := func(size int) []byte {
		for len(docs)*len(one) < size {
			docs = append(docs, emit())
		}
		n := size / len(one)
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor}, c.Cert, docs[:n]...)
		if err != nil {
			b.Fatal(err)
		}
		return env
	}
	sig := one[bytes.LastIndex(one, []byte("<Signature ")):]
	sig = sig[:bytes.Index(sig, []byte("</Signature>"))+len("</Signature>")]
	k := bytes.LastIndex(one, []byte("</Documento>"))
	junk := append(append(append([]byte{}, one[:k]...), bytes.Repeat(sig, (1<<20)/len(sig))...), one[k:]...)
	k = bytes.Index(one, []byte("<TmstFirma>"))
	empty := append(append(append([]byte{}, one[:k]...), bytes.Repeat([]byte("<a/>"), 1<<20)...), one[k:]...)
	return c, []struct {
		name string
		data []byte
	}{
		{"genuine-10KB", one},
		{"genuine-1MB", envelope(1 << 20)},
		{"genuine-10MB", envelope(10 << 20)},
		{"junk-signatures-1MB", junk},
		{"empty-elements-4MB", empty},
	}
}

// BenchmarkVerify verifies genuine documents of 10 KB, 1 MB and 10 MB, and
// the hostile inputs, reporting per MB of input: cpu-ns/MB (process CPU
// time, so that other programs on a busy machine do not count), B/MB
// allocated, and peak-B/MB, the highest heap above the starting one seen
// during one extra, untimed verification run with the collector set to
// keep garbage under a tenth of the live heap (GOGC=10), so that it
// measures the live memory. Linear cost shows as flat per-MB figures
// across sizes.
func BenchmarkVerify(b *testing.B) {
	c, inputs := verifyBenchInputs(b)
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			mb := float64(len(in.data)) / (1 << 20)
			genuine := strings.HasPrefix(in.name, "genuine")
			verify := func() {
				rep, err := dte.Verify(in.data, c.Keys)
				if genuine != (err == nil && rep.OK()) {
					b.Fatalf("%s: %v", in.name, err)
				}
			}
			peak, _ := peakHeap(b, func() error { verify(); return nil })
			var before, after runtime.MemStats
			b.ReportAllocs()
			b.ResetTimer()
			runtime.ReadMemStats(&before)
			start := cpuTime(b)
			for i := 0; i < b.N; i++ {
				verify()
			}
			used := cpuTime(b) - start
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N)/mb, "cpu-ns/MB")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/mb, "B/MB")
			b.ReportMetric(float64(peak)/mb, "peak-B/MB")
		})
	}
}
