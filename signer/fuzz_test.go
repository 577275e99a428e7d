package signer

import (
	"bytes"
	"errors"
	"github.com/dtekit/dtekit/internal/testpki"
	"testing"
)

// FuzzLoad feeds arbitrary bytes and passwords to the PKCS#12 loader: it
// must never panic, and must either return usable credentials or one of the
// documented errors.
func FuzzLoad(f *testing.F) {
	c, err := newTestCertificate(nil, testpki.CertOptions{Bits: 1024})
	if err != nil {
		f.Fatal(err)
	}
	for _, enc := range []testpki.Encryption{testpki.Modern, testpki.Legacy, testpki.LegacyDES} {
		p12, err := encodePKCS12(c, "pw", enc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p12, "pw")
		f.Add(p12, "wrong")
		f.Add(p12[:len(p12)-7], "pw")
	}
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x03}, "")
	f.Add([]byte("-----BEGIN CERTIFICATE-----"), "x")
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		got, err := Load(data, password)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrWrongPassword) && !errors.Is(err, ErrNotRSA) {
				t.Fatalf("undocumented error: %v", err)
			}
			return
		}
		if err := got.check(); err != nil {
			t.Fatalf("Load returned unusable credentials: %v", err)
		}
	})
}

// FuzzVerify feeds arbitrary documents to Verify (and so to the XML parser
// and canonicalizer): no panic, and success only with every signature valid.
func FuzzVerify(f *testing.F) {
	c := testCert(f)
	d1, err := c.SignEnveloped(dteDoc(f, "T33F1", "1"), "T33F1")
	if err != nil {
		f.Fatal(err)
	}
	env, err := c.SignEnveloped(envelope(f, envRootNSXSI, d1), "SetDoc")
	if err != nil {
		f.Fatal(err)
	}
	seed, err := c.SignSeed("012345678901")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(d1)
	f.Add(env)
	f.Add(seed)
	f.Add([]byte(`<a xmlns="urn:x"><b ID="x"/><Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo><Reference URI="#x"/></SignedInfo></Signature></a>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		res, err := Verify(doc)
		if err == nil {
			if len(res) == 0 {
				t.Fatal("Verify succeeded without signatures")
			}
			for _, r := range res {
				if r.Err != nil {
					t.Fatalf("Verify succeeded with a failed signature: %v", r.Err)
				}
			}
		}
	})
}

// FuzzCanonicalize checks the parser and canonicalizer on arbitrary input:
// no panic, and canonical XML is a fixed point (canonicalizing it again
// gives the same bytes).
func FuzzCanonicalize(f *testing.F) {
	for _, doc := range c14nCorpus(f) {
		f.Add(doc)
	}
	f.Add(dteDoc(f, "T33F1", "1"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		canon, err := Canonicalize(doc, "")
		if err != nil {
			return
		}
		again, err := Canonicalize(canon, "")
		if err != nil {
			t.Fatalf("canonical output does not parse: %v\n%q", err, canon)
		}
		if !bytes.Equal(again, canon) {
			t.Fatalf("canonical form is not a fixed point:\n%q\n%q", canon, again)
		}
	})
}
