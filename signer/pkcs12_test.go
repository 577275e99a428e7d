package signer

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"github.com/dtekit/dtekit/internal/testpki"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/internal/oracle"
)

const testPassword = "clave-de-prueba"

// pemBlocks parses every PEM block in out.
func pemBlocks(out []byte) []*pem.Block {
	var blocks []*pem.Block
	for {
		var b *pem.Block
		b, out = pem.Decode(out)
		if b == nil {
			return blocks
		}
		blocks = append(blocks, b)
	}
}

// Files we write must be readable by OpenSSL, with the algorithms each
// Encryption promises (as OpenSSL itself reports them).
func TestEncodePKCS12ReadByOpenSSL(t *testing.T) {
	c := testCert(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		enc        testpki.Encryption
		extra      []string // OpenSSL 3 needs the legacy provider for RC2
		certAlg    string
		keyAlg     string
		macAlgName string
	}{
		{testpki.Modern, nil, "PBES2, PBKDF2, AES-256-CBC", "PBES2, PBKDF2, AES-256-CBC", "MAC: sha256"},
		{testpki.Legacy, []string{"-legacy"}, "pbeWithSHA1And40BitRC2-CBC", "pbeWithSHA1And3-KeyTripleDES-CBC", "MAC: sha1"},
		{testpki.LegacyDES, nil, "pbeWithSHA1And3-KeyTripleDES-CBC", "pbeWithSHA1And3-KeyTripleDES-CBC", "MAC: sha1"},
	} {
		t.Run(tc.enc.String(), func(t *testing.T) {
			p12, err := encodePKCS12(c, testPassword, tc.enc)
			if err != nil {
				t.Fatal(err)
			}
			f := writeFile(t, dir, tc.enc.String()+".p12", p12)
			pass := "pass:" + testPassword
			info := string(oracle.Run(t, "openssl", append([]string{"pkcs12", "-info", "-noout", "-in", f, "-passin", pass}, tc.extra...)...))
			if !strings.Contains(info, "PKCS7 Encrypted data: "+tc.certAlg) || !strings.Contains(info, "Shrouded Keybag: "+tc.keyAlg) || !strings.Contains(info, tc.macAlgName) {
				t.Fatalf("openssl pkcs12 -info:\n%s", info)
			}
			certs := pemBlocks(oracle.Run(t, "openssl", append([]string{"pkcs12", "-in", f, "-passin", pass, "-nokeys"}, tc.extra...)...))
			if len(certs) != 1 || !bytes.Equal(certs[0].Bytes, c.Leaf.Raw) {
				t.Fatalf("openssl extracted %d certificates, not ours", len(certs))
			}
			keys := pemBlocks(oracle.Run(t, "openssl", append([]string{"pkcs12", "-in", f, "-passin", pass, "-nocerts", "-nodes"}, tc.extra...)...))
			if len(keys) != 1 {
				t.Fatalf("openssl extracted %d keys", len(keys))
			}
			k, err := x509.ParsePKCS8PrivateKey(keys[0].Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if rk, ok := k.(*rsa.PrivateKey); !ok || !rk.Equal(c.Key) {
				t.Fatal("openssl extracted a different key")
			}
			// And we read it back, refusing a wrong password.
			got, err := Load(p12, testPassword)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Key.(*rsa.PrivateKey).Equal(c.Key) || !got.Leaf.Equal(c.Leaf) {
				t.Fatal("Load returned different credentials")
			}
			if _, err := Load(p12, "otra"); !errors.Is(err, ErrWrongPassword) {
				t.Fatalf("wrong password: err = %v, want ErrWrongPassword", err)
			}
		})
	}
}

// opensslCreds makes a key and certificate with openssl in dir and returns
// the key and certificate paths.
func opensslCreds(t *testing.T, dir, name, keyAlg, subj string, exts ...string) (string, string) {
	t.Helper()
	key := filepath.Join(dir, name+".key")
	crt := filepath.Join(dir, name+".crt")
	args := []string{"req", "-x509", "-newkey", keyAlg, "-nodes", "-keyout", key, "-out", crt, "-days", "30", "-subj", subj}
	for _, e := range exts {
		args = append(args, "-addext", e)
	}
	oracle.Run(t, "openssl", args...)
	return key, crt
}

// PKCS#12 files produced by OpenSSL itself, in every encryption it offers,
// are the real-world interoperability proof.
func TestLoadOpenSSLFiles(t *testing.T) {
	oracle.Tool(t, "openssl")
	dir := t.TempDir()
	key, crt := opensslCreds(t, dir, "leaf", "rsa:2048", "/CN=Firmante OpenSSL/serialNumber=7880442-4",
		"subjectAltName=otherName:1.3.6.1.4.1.8321.1;IA5STRING:07880442-4")
	crtPEM, _ := os.ReadFile(crt)
	leafDER := pemBlocks(crtPEM)[0].Bytes
	endOut := string(oracle.Run(t, "openssl", "x509", "-in", crt, "-noout", "-enddate", "-dateopt", "iso_8601"))
	notAfter, err := time.Parse("2006-01-02 15:04:05Z", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(endOut), "notAfter=")))
	if err != nil {
		t.Fatalf("openssl -enddate %q: %v", endOut, err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"default-aes", nil},
		{"legacy-rc2-3des", []string{"-legacy"}},
		{"3des", []string{"-certpbe", "PBE-SHA1-3DES", "-keypbe", "PBE-SHA1-3DES", "-macalg", "sha1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p12 := filepath.Join(dir, tc.name+".p12")
			oracle.Run(t, "openssl", append([]string{"pkcs12", "-export", "-in", crt, "-inkey", key, "-out", p12, "-passout", "pass:" + testPassword}, tc.args...)...)
			data, err := os.ReadFile(p12)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Load(data, testPassword)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.Leaf.Raw, leafDER) {
				t.Fatal("loaded a different certificate")
			}
			if rut, ok := c.RUT(); !ok || rut != "7880442-4" {
				t.Fatalf("RUT() = %q, %v", rut, ok)
			}
			if !strings.Contains(c.Subject(), "CN=Firmante OpenSSL") {
				t.Fatalf("Subject() = %q", c.Subject())
			}
			if !c.NotAfter().Equal(notAfter) {
				t.Fatalf("NotAfter() = %v, openssl says %v", c.NotAfter(), notAfter)
			}
			if d := c.DaysToExpiry(time.Now()); d < 29 || d > 30 {
				t.Fatalf("DaysToExpiry = %d for a 30-day certificate", d)
			}
			if _, err := Load(data, "incorrecta"); !errors.Is(err, ErrWrongPassword) {
				t.Fatalf("wrong password: err = %v", err)
			}
			// A certificate from openssl signs documents xmlsec1 accepts.
			signed, err := c.SignEnveloped(dteDoc(t, "T33F7", "7"), "T33F7")
			if err != nil {
				t.Fatal(err)
			}
			if ok, out := xmlsecVerify(t, writeFile(t, dir, "signed.xml", signed), "--enabled-key-data", "x509", "--trusted-pem", crt); !ok {
				t.Fatalf("xmlsec1 rejected:\n%s", out)
			}
		})
	}

	t.Run("chain-leaf-picked-by-key", func(t *testing.T) {
		caKey, caCrt := opensslCreds(t, dir, "ca", "rsa:2048", "/CN=CA Prueba", "basicConstraints=critical,CA:TRUE", "keyUsage=keyCertSign,cRLSign")
		lKey := filepath.Join(dir, "l2.key")
		csr := filepath.Join(dir, "l2.csr")
		lCrt := filepath.Join(dir, "l2.crt")
		oracle.Run(t, "openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", lKey, "-out", csr, "-subj", "/CN=Hoja/serialNumber=12.345.678-5")
		oracle.Run(t, "openssl", "x509", "-req", "-in", csr, "-CA", caCrt, "-CAkey", caKey, "-CAcreateserial", "-out", lCrt, "-days", "10")
		p12 := filepath.Join(dir, "chain.p12")
		oracle.Run(t, "openssl", "pkcs12", "-export", "-in", lCrt, "-inkey", lKey, "-certfile", caCrt, "-out", p12, "-passout", "pass:"+testPassword)
		data, _ := os.ReadFile(p12)
		c, err := Load(data, testPassword)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Subject(), "CN=Hoja") || len(c.Chain) != 1 || c.Chain[0].Subject.CommonName != "CA Prueba" {
			t.Fatalf("leaf %q, chain %d", c.Subject(), len(c.Chain))
		}
		// No SAN here: the RUT comes from the subject serialNumber.
		if rut, ok := c.RUT(); !ok || rut != "12345678-5" {
			t.Fatalf("RUT() = %q, %v", rut, ok)
		}
	})

	t.Run("ec-key-rejected", func(t *testing.T) {
		ecKey, ecCrt := opensslCreds(t, dir, "ec", "ec:"+writeFile(t, dir, "p256.pem", oracle.Run(t, "openssl", "ecparam", "-name", "prime256v1")), "/CN=EC")
		p12 := filepath.Join(dir, "ec.p12")
		oracle.Run(t, "openssl", "pkcs12", "-export", "-in", ecCrt, "-inkey", ecKey, "-out", p12, "-passout", "pass:"+testPassword)
		data, _ := os.ReadFile(p12)
		if _, err := Load(data, testPassword); !errors.Is(err, ErrNotRSA) || !strings.Contains(err.Error(), "elliptic-curve") {
			t.Fatalf("err = %v, want ErrNotRSA", err)
		}
	})
}

func TestLoadCorrupt(t *testing.T) {
	c := testCert(t)
	p12, err := encodePKCS12(c, testPassword, testpki.Modern)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte{}, p12...)
	flipped[len(flipped)/2] ^= 0xFF
	for name, data := range map[string][]byte{
		"empty":     nil,
		"truncated": p12[:len(p12)/2],
		"garbage":   []byte("this is not a PKCS#12 file at all"),
		"pem":       c.CertificatePEM(),
		"cert-der":  c.Leaf.Raw,
	} {
		if _, err := Load(data, testPassword); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	// A flipped byte inside the MAC-protected content fails the integrity
	// check, which PKCS#12 can't tell apart from a wrong password.
	if _, err := Load(flipped, testPassword); !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrWrongPassword) {
		t.Errorf("flipped byte: err = %v", err)
	}
	if _, err := Load(c.CertificatePEM(), testPassword); err == nil || !strings.Contains(err.Error(), "PEM") {
		t.Errorf("PEM input: err = %v, want it to say PEM", err)
	}
}

// A file asking for an absurd number of key-derivation iterations is refused
// before any derivation runs.
func TestLoadRefusesExcessiveIterations(t *testing.T) {
	p12, err := encodePKCS12(testCert(t), testPassword, testpki.Modern)
	if err != nil {
		t.Fatal(err)
	}
	var pfx struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac        asn1.RawValue
			Salt       []byte
			Iterations int
		}
	}
	if _, err := asn1.Unmarshal(p12, &pfx); err != nil {
		t.Fatal(err)
	}
	if pfx.MacData.Iterations != 2048 {
		t.Fatalf("Modern MAC iterations = %d, expected 2048", pfx.MacData.Iterations)
	}
	pfx.MacData.Iterations = 1 << 30
	crafted, err := asn1.Marshal(pfx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(crafted, testPassword)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "iteration count 1073741824 is outside 0..600000") {
		t.Fatalf("err = %v", err)
	}
	if err := checkIterations(big.NewInt(maxKDFIterations)); err != nil {
		t.Fatalf("the limit itself must be accepted: %v", err)
	}
}
