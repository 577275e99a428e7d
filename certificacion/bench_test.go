package certificacion_test

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"path/filepath"
	"testing"
	"time"

	"github.com/dtekit/dtekit/certificacion"
)

// BenchmarkGenerar times "generar" for the SII's full basic set (8 cases)
// and factura exenta set (8 cases): parse, emit and sign every document,
// sign the envelope, print every sample and write the folder, beside one
// bare RSA-2048 signature with the same key in the same run (rsa); and a
// whole set file ("full": basic and guía sets, boletas, the three libros
// and the RCOF). The goal: a full set in under 2 s.
func BenchmarkGenerar(b *testing.B) {
	c := creds(b)
	digest := sha1.Sum([]byte("dtekit benchmark baseline"))
	b.Run("rsa", func(b *testing.B) {
		for b.Loop() {
			if _, err := rsa.SignPKCS1v15(nil, c.Cert.Key, crypto.SHA1, digest[:]); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{"001-basico.txt", "004-factura_exenta.txt", "full"} {
		var data []byte
		if name == "full" {
			data = fullSetFile(b, fullSetFiles...)
		} else {
			data = setFile(b, name)
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			n := 0
			for b.Loop() {
				plan, err := certificacion.Parse(data)
				if err != nil {
					b.Fatal(err)
				}
				res, err := certificacion.Generate(context.Background(), plan, certificacion.Config{
					Emisor: c.Emisor, Cert: c.Cert, CAFs: allCAFs(c), TrustedKeys: c.Keys, Now: func() time.Time { return testAt }})
				if err != nil {
					b.Fatal(err)
				}
				n++
				if _, err := certificacion.WriteDir(filepath.Join(dir, string(rune('a'+n%26))+time.Now().Format("150405.000000000")), res, c.Emisor); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
