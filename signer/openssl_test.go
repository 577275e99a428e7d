//go:build openssl

package signer

import (
	"bytes"
	"crypto/rsa"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/osslrsa"
	"github.com/dtekit/dtekit/internal/smallrsa"
)

// TestOpenSSLSigner: in the build with the tag, a Certificate's
// *rsa.PrivateKey signs through OpenSSL without being asked, and a
// credential built with New over signer.OpenSSL signs the same bytes,
// which xmlsec1 verifies; after Close it refuses to sign.
func TestOpenSSLSigner(t *testing.T) {
	t.Parallel()
	if b := Backend(); !strings.HasPrefix(b, "OpenSSL 3.") {
		t.Errorf("Backend() = %q in the openssl build", b)
	}
	c := testCert(t)
	if _, ok := smallrsa.Signer(c.Key).(*osslrsa.Key); !ok {
		t.Fatalf("a loaded certificate's key signs through %T, not OpenSSL", smallrsa.Signer(c.Key))
	}
	k, err := OpenSSL(c.Key.(*rsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	oc, err := New(c.Leaf, k)
	if err != nil {
		t.Fatal(err)
	}
	doc := dteDoc(t, "T33F7", "7")
	want, err := c.SignEnveloped(doc, "T33F7")
	if err != nil {
		t.Fatal(err)
	}
	got, err := oc.SignEnveloped(doc, "T33F7")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("signer.OpenSSL's signature differs from the certificate's own key's")
	}
	file := writeFile(t, t.TempDir(), "dte.xml", got)
	if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 rejected the OpenSSL signature:\n%s", out)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := oc.SignEnveloped(doc, "T33F7"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("signing with a closed key: %v", err)
	}
}
