package dte_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha1"
	"encoding/json"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/dte/dtetest"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/ted"
)

// BenchmarkEmitStages times the stages of BenchmarkEmit's 10-line factura
// one by one and reports each as x/rsa: its time per operation over that of
// the bare RSA-2048 signature (Go's, or OpenSSL's with the tag openssl),
// measured in the same sub-benchmark (one RSA
// signature after every batch of 32 operations, outside the timer), so the
// share of each stage in BenchmarkEmit's emit/rsa reads directly.
//
//   - decode: dte.DecodeRequest of the request's JSON (strict decoding)
//   - validate: dte.ValidateAt
//   - totals: dte.ComputeTotals
//   - ted: ted.Build with the CAF's 512-bit key
//   - sign: signer.SignEnveloped on the unsigned document, RSA included
//     (so its x/rsa is 1 plus the XML-DSig work)
//   - canonicalize: signer.Canonicalize of the signed element, the full
//     parse that SignEnveloped avoids for a document in canonical form
func BenchmarkEmitStages(b *testing.B) {
	c := creds(b)
	now := time.Now()
	em := &dte.Emitter{Emisor: c.Emisor, Cert: c.Cert, Folios: &cycleFolios{c: c.CAFs[33]}, Now: func() time.Time { return now }}
	req := benchRequest()
	out, err := em.Emit(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	s := bytes.Index(out.XML, []byte("<Signature "))
	e := bytes.Index(out.XML, []byte("</Signature>"))
	if s < 0 || e < s {
		b.Fatal("no Signature in the emitted document")
	}
	unsigned := append(append([]byte{}, out.XML[:s]...), out.XML[e+len("</Signature>"):]...)
	digest := sha1.Sum([]byte("dtekit benchmark baseline"))
	key := smallrsa.Signer(c.Cert.Key) // OpenSSL's with the tag openssl
	dd := ted.DD{RE: dtetest.EmisorRUT, TD: 33, F: out.Folio, FE: out.FechaEmision, RR: "77777777-7",
		RSR: "Pérez & Hijos Ltda.", MNT: string(out.MontoTotal), IT1: "Artículo Ñandú n° 1", CAF: c.CAFs[33], TSTED: now}

	stage := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			const batch = 32
			var fTime, rsaTime time.Duration
			fOps, rsaOps := 0, 0
			b.ReportAllocs()
			for i := 0; i < b.N; {
				start := time.Now()
				n := 0
				for ; n < batch && i < b.N; n, i = n+1, i+1 {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
				fTime += time.Since(start)
				fOps += n
				b.StopTimer()
				start = time.Now()
				if _, err := key.Sign(nil, digest[:], crypto.SHA1); err != nil {
					b.Fatal(err)
				}
				rsaTime += time.Since(start)
				rsaOps++
				b.StartTimer()
			}
			if fOps > 0 && rsaTime > 0 {
				b.ReportMetric((float64(fTime)/float64(fOps))/(float64(rsaTime)/float64(rsaOps)), "x/rsa")
			}
		})
	}
	body, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	stage("decode", func() error { _, err := dte.DecodeRequest(bytes.NewReader(body)); return err })
	stage("validate", func() error { return dte.ValidateAt(req, now) })
	stage("totals", func() error { _, err := dte.ComputeTotals(req); return err })
	stage("ted", func() error { _, err := ted.Build(dd, c.CAFs[33].PrivateKey); return err })
	stage("sign", func() error { _, err := c.Cert.SignEnveloped(unsigned, out.ID); return err })
	stage("canonicalize", func() error { _, err := signer.Canonicalize(unsigned, out.ID); return err })
}
