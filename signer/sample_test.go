package signer

import (
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"math/big"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// The SII's signed example (EnvioDTE with one factura 33) is the golden
// reference: our canonicalizer must reproduce the DigestValues it prints.

func readSample(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(oracle.SharedFile(t, "sii", "samples", "F60T33-ejemplo-oficial-SII.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleDigest returns the DigestValue printed in the sample for a reference.
func sampleDigest(t *testing.T, sample []byte, uri string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<Reference URI="` + regexp.QuoteMeta(uri) + `">.*?<DigestValue>([^<]+)</DigestValue>`)
	m := re.FindSubmatch(sample)
	if m == nil {
		t.Fatalf("no DigestValue for %s in the sample", uri)
	}
	return string(m[1])
}

func sha1b64(b []byte) string {
	s := sha1.Sum(b)
	return base64.StdEncoding.EncodeToString(s[:])
}

// The sample's DTE was signed on its own, before being pasted into the
// envelope, and at that time its root <DTE version="1.0"> declared no
// namespace at all (the xmlns="http://www.sii.cl/SiiDte" it sits under comes
// from EnvioDTE). Canonicalizing the Documento of that standalone DTE gives
// exactly the printed digest; in the envelope's context it does not.
func TestSampleDocumentoDigest(t *testing.T) {
	sample := readSample(t)
	want := sampleDigest(t, sample, "#F60T33")
	if want != "hlmQtu/AyjUjTDhM3852wvRCr8w=" {
		t.Fatalf("sample DigestValue read as %q", want)
	}
	start := bytes.Index(sample, []byte("<DTE "))
	end := bytes.Index(sample, []byte("</DTE>")) + len("</DTE>")
	decl := sample[:bytes.Index(sample, []byte("?>"))+2]
	standalone := append(append(append([]byte{}, decl...), "\r\n"...), sample[start:end]...)
	canon, err := Canonicalize(standalone, "F60T33")
	if err != nil {
		t.Fatal(err)
	}
	if got := sha1b64(canon); got != want {
		t.Fatalf("Documento digest = %s, want %s (canonical form starts %q)", got, want, canon[:80])
	}
	inContext, err := Canonicalize(sample, "F60T33")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(inContext, []byte(`<Documento xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ID="F60T33">`)) {
		t.Fatalf("in-context canonical form starts %q", inContext[:120])
	}
	if sha1b64(inContext) == want {
		t.Fatal("the in-context digest unexpectedly equals the standalone one")
	}
}

// The SetDTE was signed in place, with EnvioDTE's namespaces in scope.
func TestSampleSetDTEDigest(t *testing.T) {
	sample := readSample(t)
	want := sampleDigest(t, sample, "#SetDoc")
	if want != "4OTWXyRl5fw3htjTyZXQtYEsC3E=" {
		t.Fatalf("sample DigestValue read as %q", want)
	}
	canon, err := Canonicalize(sample, "SetDoc")
	if err != nil {
		t.Fatal(err)
	}
	if got := sha1b64(canon); got != want {
		t.Fatalf("SetDTE digest = %s, want %s", got, want)
	}
}

// Both signatures of the sample are cryptographically valid under their
// KeyValue (xmlsec1 agrees), but the embedded X509Certificate holds a
// different key, so Verify must report exactly ErrKeyMismatch for each.
func TestSampleVerify(t *testing.T) {
	sample := readSample(t)
	dir := t.TempDir()
	file := writeFile(t, dir, "sample.xml", sample)

	// Oracle 1: xmlsec1 accepts the SetDTE signature in place (KeyValue).
	if ok, out := xmlsecVerify(t, file, "--node-xpath", "/*/*[local-name()='Signature']", "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 rejected the sample's SetDTE signature:\n%s", out)
	}
	// Oracle 2: xmlsec1 accepts the DTE signature on the DTE as signed
	// (standalone) and rejects it in the envelope's context.
	dte := sample[bytes.Index(sample, []byte("<DTE ")) : bytes.Index(sample, []byte("</DTE>"))+len("</DTE>")]
	if ok, out := xmlsecVerify(t, writeFile(t, dir, "dte.xml", dte), "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 rejected the sample's DTE signature standalone:\n%s", out)
	}
	if ok, _ := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); ok {
		t.Fatal("xmlsec1 accepted the sample's DTE signature in the envelope context")
	}
	// Oracle 3: openssl prints the certificate's modulus; it differs from
	// the KeyValue modulus.
	m := regexp.MustCompile(`(?s)<X509Certificate>(.*?)</X509Certificate>`).FindSubmatch(sample)
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(m[1])), ""))
	if err != nil {
		t.Fatal(err)
	}
	out := string(oracle.Run(t, "openssl", "x509", "-inform", "DER", "-in", writeFile(t, dir, "cert.der", der), "-noout", "-modulus"))
	certMod, ok := new(big.Int).SetString(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "Modulus=")), 16)
	if !ok {
		t.Fatalf("openssl modulus output %q", out)
	}
	km := regexp.MustCompile(`(?s)<Modulus>(.*?)</Modulus>`).FindSubmatch(sample)
	kvBytes, _ := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(km[1])), ""))
	if certMod.Cmp(new(big.Int).SetBytes(kvBytes)) == 0 {
		t.Fatal("the sample's KeyValue equals its certificate key; this test's premise is wrong")
	}

	res, err := Verify(sample)
	if err == nil {
		t.Fatal("Verify accepted a KeyValue that differs from the certificate")
	}
	rutEnvia := regexp.MustCompile(`<RutEnvia>([^<]+)</RutEnvia>`).FindSubmatch(sample)[1]
	want := []struct {
		id         string
		standalone bool
	}{{"F60T33", true}, {"SetDoc", false}}
	if len(res) != len(want) {
		t.Fatalf("got %d results, want %d", len(res), len(want))
	}
	for i, w := range want {
		r := res[i]
		if r.ID != w.id || r.Standalone != w.standalone || !errors.Is(r.Err, ErrKeyMismatch) {
			t.Errorf("signature %d = {ID %s, Standalone %v, Err %v}; want ID %s, Standalone %v, ErrKeyMismatch", i, r.ID, r.Standalone, r.Err, w.id, w.standalone)
		}
		// The certificate's RUT (SAN otherName "07880442-4") is the sender
		// the sample's Carátula names.
		if r.RUT != string(rutEnvia) {
			t.Errorf("signature %d RUT = %q, want RutEnvia %q", i, r.RUT, rutEnvia)
		}
		if !strings.Contains(r.Subject, "CN=Wilibaldo Gonzalez Cabrera") {
			t.Errorf("signature %d subject = %q", i, r.Subject)
		}
	}
}
