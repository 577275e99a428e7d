package signer

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"github.com/dtekit/dtekit/internal/testpki"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

// Check digits below were computed by hand with the modulo-11 rule
// (weights 2..7 from the right; 11 -> 0, 10 -> K).
func TestNormalizeRUT(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"7880442-4", "7880442-4", true},   // 2·2+4·3+4·4+0·5+8·6+8·7+7·2 = 150; 11-150%11 = 4
		{"07880442-4", "7880442-4", true},  // as the SII sample's certificate writes it
		{"7.880.442-4", "7880442-4", true}, // dotted
		{"78804424", "7880442-4", true},    // no hyphen
		{"12.345.678-5", "12345678-5", true},
		{"11111111-1", "11111111-1", true},
		{"6-k", "6-K", true},               // 6·2 = 12; 11-1 = 10 -> K
		{"10000004-0", "10000004-0", true}, // 4·2+1·3 = 11; 11-0 = 11 -> 0
		{"7880442-5", "", false},
		{"", "", false},
		{"-", "", false},
		{"0-0", "", false},
		{"abc-1", "", false},
		{"1234567890-1", "", false},
	} {
		got, ok := normalizeRUT(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("normalizeRUT(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDaysToExpiry(t *testing.T) {
	na := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	leaf := *testCert(t).Leaf
	leaf.NotAfter = na
	c := &Certificate{Leaf: &leaf}
	for _, tc := range []struct {
		now  time.Time
		want int
	}{
		{na.AddDate(0, 0, -30), 30},
		{na.Add(-30*24*time.Hour - time.Minute), 30},
		{na.Add(-23 * time.Hour), 0},
		{na, 0},
		{na.Add(time.Minute), -1},
		{na.Add(48 * time.Hour), -2},
	} {
		if got := c.DaysToExpiry(tc.now); got != tc.want {
			t.Errorf("DaysToExpiry(%v) = %d, want %d", tc.now, got, tc.want)
		}
	}
}

// NewTestCertificate must carry the RUT where a Chilean CA would: openssl
// shows the otherName and the subject serialNumber.
func TestNewTestCertificateSeenByOpenSSL(t *testing.T) {
	c := testCert(t)
	f := writeFile(t, t.TempDir(), "c.pem", c.CertificatePEM())
	out := string(oracle.Run(t, "openssl", "x509", "-in", f, "-noout", "-subject", "-ext", "subjectAltName,keyUsage", "-nameopt", "RFC2253"))
	for _, want := range []string{"serialNumber=7880442-4", "CN=Signer Prueba", "othername: 1.3.6.1.4.1.8321.1::7880442-4", "Digital Signature, Non Repudiation"} {
		if !strings.Contains(out, want) {
			t.Errorf("openssl output lacks %q:\n%s", want, out)
		}
	}
	if rut, ok := c.RUT(); !ok || rut != "7880442-4" {
		t.Fatalf("RUT() = %q, %v", rut, ok)
	}
	if c.Leaf.PublicKey.(interface{ Size() int }).Size() != 256 {
		t.Fatal("default key is not RSA-2048")
	}
	if !bytes.Contains(c.CertificatePEM(), []byte("BEGIN CERTIFICATE")) {
		t.Fatal("CertificatePEM is not PEM")
	}
}

func TestNewTestCertificateOptions(t *testing.T) {
	nb := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	na := time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC)
	c, err := newTestCertificate(rand.Reader, testpki.CertOptions{CommonName: "Corto", RUT: "6-k", NotBefore: nb, NotAfter: na, Bits: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if !c.NotBefore().Equal(nb) || !c.NotAfter().Equal(na) || c.Key.(*rsa.PrivateKey).N.BitLen() != 1024 || c.Leaf.Subject.CommonName != "Corto" {
		t.Fatalf("options not applied: %v %v %d %q", c.NotBefore(), c.NotAfter(), c.Key.(*rsa.PrivateKey).N.BitLen(), c.Subject())
	}
	if rut, _ := c.RUT(); rut != "6-K" {
		t.Fatalf("RUT = %q", rut)
	}
	for name, o := range map[string]testpki.CertOptions{
		"bad-rut":   {RUT: "7880442-5"},
		"small-key": {Bits: 512},
		"inverted":  {NotBefore: na, NotAfter: nb},
	} {
		if _, err := newTestCertificate(nil, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
