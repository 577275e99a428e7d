//go:build unix

package dte_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// benchFacturas emits n ten-line facturas with consecutive folios.
func benchFacturas(b *testing.B, n int) []*dte.Emitted {
	b.Helper()
	c := creds(b)
	em := &dte.Emitter{Emisor: c.Emisor, Cert: c.Cert, Folios: &cycleFolios{c: c.CAFs[33]}}
	span := int(c.CAFs[33].Hasta - c.CAFs[33].Desde + 1)
	if n > span {
		b.Skipf("the test CAF holds %d folios, fewer than %d", span, n)
	}
	out := make([]*dte.Emitted, n)
	for i := range out {
		e, err := em.Emit(context.Background(), benchRequest())
		if err != nil {
			b.Fatal(err)
		}
		out[i] = e
	}
	return out
}

// BenchmarkBuildEnvio packs 1, 100 and 1,000 signed ten-line facturas into a
// signed EnvioDTE. The rsa sub-benchmark is the baseline measured in the
// same run: one bare RSA-2048 PKCS#1 v1.5 signature with the same key. Each
// size also reports envio/rsa (the envelope's time in units of that
// signature, both measured in process CPU time in alternating rounds, so
// that other programs on a busy machine do not skew the ratio), floor/rsa
// (the same for the least any envelope costs: one SHA-1 over the SetDTE's
// canonical bytes and one signature) and B/doc, the bytes allocated per
// packed document. The docs=N sub-benchmarks pack the documents' bytes
// (BuildEnvio, which scans each); emitted=N packs the same documents as
// Emit returned them (BuildEnvioEmitted, which pastes them on their seal).
func BenchmarkBuildEnvio(b *testing.B) {
	c := creds(b)
	digest := sha1.Sum([]byte("dtekit benchmark baseline"))
	rsaSign := func() {
		if _, err := rsa.SignPKCS1v15(nil, c.Cert.Key.(*rsa.PrivateKey), crypto.SHA1, digest[:]); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("rsa", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rsaSign()
		}
	})
	opts := dte.EnvioOptions{Emisor: c.Emisor, At: time.Date(2026, 3, 2, 14, 5, 9, 0, dte.SantiagoLocation())}
	for _, n := range []int{1, 100, 1000} {
		emitted := benchFacturas(b, n)
		docs := make([][]byte, n)
		for i, e := range emitted {
			docs[i] = e.XML
		}
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			benchEnvio(b, n, rsaSign, func() ([]byte, error) { return dte.BuildEnvio(opts, c.Cert, docs...) })
		})
		b.Run(fmt.Sprintf("emitted=%d", n), func(b *testing.B) {
			benchEnvio(b, n, rsaSign, func() ([]byte, error) { return dte.BuildEnvioEmitted(opts, c.Cert, emitted...) })
		})
	}
}

// benchEnvio measures build, which packs n documents, against rsaSign
// (see BenchmarkBuildEnvio for the metrics).
func benchEnvio(b *testing.B, n int, rsaSign func(), build func() ([]byte, error)) {
	env, err := build()
	if err != nil {
		b.Fatal(err)
	}
	// The floor: one SHA-1 over the SetDTE's canonical bytes
	// (rendered once, outside the timing) and one signature.
	canon, err := signer.Canonicalize(env, dte.DefaultSetID)
	if err != nil {
		b.Fatal(err)
	}
	var envTime, rsaTime, floorTime time.Duration
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := cpuTime(b)
		if _, err := build(); err != nil {
			b.Fatal(err)
		}
		envTime += cpuTime(b) - start
		b.StopTimer()
		start = cpuTime(b)
		for j := 0; j < 4; j++ {
			rsaSign()
		}
		rsaTime += (cpuTime(b) - start) / 4
		start = cpuTime(b)
		sha1.Sum(canon)
		rsaSign()
		floorTime += cpuTime(b) - start
		b.StartTimer()
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(envTime)/float64(rsaTime), "envio/rsa")
	b.ReportMetric(float64(floorTime)/float64(rsaTime), "floor/rsa")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*n), "B/doc")
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
