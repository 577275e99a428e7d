//go:build openssl && cgo && unix

package osslrsa

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

// BenchmarkSign is the binding's bare signature (SHA-1 digest, PKCS#1
// v1.5), for the certificate's 2048-bit key and a CAF's 512-bit e=3 key;
// compare with `openssl speed rsa2048 rsa512`, which reports CPU time as
// cpu-µs/op does.
func BenchmarkSign(b *testing.B) {
	dir := b.TempDir()
	for _, tc := range []struct{ bits, e string }{{"2048", "65537"}, {"512", "3"}} {
		b.Run(tc.bits, func(b *testing.B) {
			name := filepath.Join(dir, tc.bits+".pem")
			oracle.Run(b, "openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:"+tc.bits, "-pkeyopt", "rsa_keygen_pubexp:"+tc.e, "-out", name)
			data, err := os.ReadFile(name)
			if err != nil {
				b.Fatal(err)
			}
			block, _ := pem.Decode(data)
			priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				b.Fatal(err)
			}
			k, err := New(priv.(*rsa.PrivateKey))
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
