//go:build openssl && cgo && unix

package osslrsa

import (
	"crypto"
	"crypto/sha1"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSign is the binding's bare signature (SHA-1 digest, PKCS#1
// v1.5), for the certificate's 2048-bit key and a CAF's 512-bit e=3 key;
// compare with `openssl speed rsa2048 rsa512`, which reports CPU time as
// cpu-µs/op does.
func BenchmarkSign(b *testing.B) {
	dir := b.TempDir()
	for _, tc := range []struct{ bits, e string }{{"2048", "65537"}, {"512", "3"}} {
		b.Run(tc.bits, func(b *testing.B) {
			priv, _ := opensslKey(b, dir, tc.bits, tc.e)
			k, err := New(priv)
			if err != nil {
				b.Fatal(err)
			}
			digest := sha1.Sum([]byte("dtekit benchmark baseline"))
			b.ReportAllocs()
			cpu := cpuTime(b)
			for b.Loop() {
				if _, err := k.Sign(nil, digest[:], crypto.SHA1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
