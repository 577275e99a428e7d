package signer

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"testing"
)

// benchDoc is a DTE-sized document of about ten lines.
func benchDoc(b *testing.B) []byte { return dteDoc(b, "T33F1", "1") }

// BenchmarkSignEnveloped measures a complete DTE signature: parse,
// canonicalize, digest, SignedInfo, one RSA-2048 operation, splice.
func BenchmarkSignEnveloped(b *testing.B) {
	c := testCert(b)
	doc := benchDoc(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.SignEnveloped(doc, "T33F1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRSA2048PKCS1v15 is the floor: a bare SHA-1 + RSA-2048 PKCS#1
// v1.5 signature with the same key.
func BenchmarkRSA2048PKCS1v15(b *testing.B) {
	c := testCert(b)
	doc := benchDoc(b)
	b.ReportAllocs()
	for b.Loop() {
		h := sha1.Sum(doc)
		if _, err := rsa.SignPKCS1v15(nil, c.Key.(*rsa.PrivateKey), crypto.SHA1, h[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalize isolates the XML work (parse + C14N + SHA-1).
func BenchmarkCanonicalize(b *testing.B) {
	doc := benchDoc(b)
	b.ReportAllocs()
	for b.Loop() {
		canon, err := Canonicalize(doc, "T33F1")
		if err != nil {
			b.Fatal(err)
		}
		sha1.Sum(canon)
	}
}

// BenchmarkVerify checks one signed DTE.
func BenchmarkVerify(b *testing.B) {
	c := testCert(b)
	signed, err := c.SignEnveloped(benchDoc(b), "T33F1")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(signed); err != nil {
			b.Fatal(err)
		}
	}
}
