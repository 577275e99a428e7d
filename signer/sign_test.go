package signer

import (
	"bytes"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/internal/oracle"
)

// checkSchema validates a Signature element on its own against the SII's
// xmldsignature_v10.xsd (its global element is Signature).
func checkSchema(t *testing.T, dir string, sig []byte) {
	t.Helper()
	xsd := oracle.SharedFile(t, "sii", "schemas", "xmldsignature_v10.xsd")
	f := writeFile(t, dir, "signature-only.xml", sig)
	oracle.Run(t, "xmllint", "--noout", "--schema", xsd, f)
}

// removeSignature returns doc without the bytes SignEnveloped inserted.
func removeSignature(t *testing.T, signed []byte) []byte {
	t.Helper()
	s := bytes.Index(signed, []byte(`<Signature xmlns=`))
	e := bytes.Index(signed[s:], []byte("</Signature>"))
	if s < 0 || e < 0 {
		t.Fatal("no Signature in output")
	}
	return append(append([]byte{}, signed[:s]...), signed[s+e+len("</Signature>"):]...)
}

func TestSignDTEVerifiedByXmlsec(t *testing.T) {
	c := testCert(t)
	dir := t.TempDir()
	doc := dteDoc(t, "T33F1", "1")
	signed, err := c.SignEnveloped(doc, "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	if got := removeSignature(t, signed); !bytes.Equal(got, doc) {
		t.Fatalf("bytes outside the Signature changed:\n%s", got)
	}
	if !bytes.Contains(signed, []byte("</Documento><Signature xmlns=\"http://www.w3.org/2000/09/xmldsig#\">")) {
		t.Fatal("Signature is not the sibling right after Documento")
	}
	file := writeFile(t, dir, "dte.xml", signed)
	certPEM := writeFile(t, dir, "cert.pem", c.CertificatePEM())

	if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 (KeyValue) rejected the signature:\n%s", out)
	}
	if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "x509", "--trusted-pem", certPEM); !ok {
		t.Fatalf("xmlsec1 (X509Certificate) rejected the signature:\n%s", out)
	}
	// Negative control: trusting another certificate must not be enough.
	otherPEM := writeFile(t, dir, "other.pem", otherCert(t).CertificatePEM())
	if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "x509", "--trusted-pem", otherPEM); ok {
		t.Fatalf("xmlsec1 accepted the certificate without trusting it:\n%s", out)
	}
	checkSchema(t, dir, signatureElement(t, signed, 0))

	res, err := Verify(signed)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].ID != "T33F1" || res[0].RUT != "7880442-4" || res[0].Standalone {
		t.Fatalf("unexpected result %+v", res)
	}
}

// The Documento text must be digested as UTF-8 canonical XML; a file saved
// as UTF-8 with the same characters must therefore produce the very same
// DigestValue as the ISO-8859-1 one.
func TestDigestIndependentOfEncoding(t *testing.T) {
	c := testCert(t)
	isoDoc := dteDoc(t, "T33F1", "1")
	utfDoc := []byte(strings.Replace(string(mustDecodeLatin1(t, isoDoc)), "ISO-8859-1", "UTF-8", 1))
	a, err := c.SignEnveloped(isoDoc, "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.SignEnveloped(utfDoc, "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(signatureElement(t, a, 0), signatureElement(t, b, 0)) {
		t.Fatal("ISO-8859-1 and UTF-8 versions of the same document got different signatures")
	}
	if ok, out := xmlsecVerify(t, writeFile(t, t.TempDir(), "utf8.xml", b), "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 rejected the UTF-8 document:\n%s", out)
	}
}

func mustDecodeLatin1(t *testing.T, b []byte) []byte {
	t.Helper()
	var out []byte
	for _, c := range b {
		out = append(out, string(rune(c))...)
	}
	return out
}

func TestSignEnvelope(t *testing.T) {
	c := testCert(t)
	dir := t.TempDir()
	d1, err := c.SignEnveloped(dteDoc(t, "T33F1", "1"), "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	d2, err := c.SignEnveloped(dteDoc(t, "T33F2", "2"), "T33F2")
	if err != nil {
		t.Fatal(err)
	}
	// Each DTE verifies on its own, as signed.
	for i, d := range [][]byte{d1, d2} {
		if ok, out := xmlsecVerify(t, writeFile(t, dir, "dte.xml", d), "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
			t.Fatalf("xmlsec1 rejected standalone DTE %d:\n%s", i+1, out)
		}
	}
	for _, tc := range []struct {
		name, rootAttrs string
		inContext       bool // nested DTE signatures verify in the envelope's context
	}{
		{"sii-namespace-only", envRootNS, true},
		{"with-xsi", envRootNSXSI, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := envelope(t, tc.rootAttrs, d1, d2)
			signed, err := c.SignEnveloped(env, "SetDoc")
			if err != nil {
				t.Fatal(err)
			}
			if got := removeSignature(t, signed[bytes.Index(signed, []byte("</SetDTE>")):]); !bytes.Equal(got, env[bytes.Index(env, []byte("</SetDTE>")):]) {
				t.Fatal("bytes after SetDTE changed")
			}
			if !bytes.Equal(signed[:bytes.Index(signed, []byte("</SetDTE>"))], env[:bytes.Index(env, []byte("</SetDTE>"))]) {
				t.Fatal("pasted DTE bytes changed")
			}
			file := writeFile(t, dir, "env.xml", signed)
			certPEM := writeFile(t, dir, "cert.pem", c.CertificatePEM())
			setSig := []string{"--node-xpath", "/*/*[local-name()='Signature']"}
			if ok, out := xmlsecVerify(t, file, append(setSig, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa")...); !ok {
				t.Fatalf("xmlsec1 (KeyValue) rejected the SetDTE signature:\n%s", out)
			}
			if ok, out := xmlsecVerify(t, file, append(setSig, "--enabled-key-data", "x509", "--trusted-pem", certPEM)...); !ok {
				t.Fatalf("xmlsec1 (X509) rejected the SetDTE signature:\n%s", out)
			}
			checkSchema(t, dir, signatureElement(t, signed, 2))
			// xmlsec1 checks the first DTE signature in the envelope's
			// context: it holds only when the envelope adds no namespace.
			ok, out := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa")
			if ok != tc.inContext {
				t.Fatalf("xmlsec1 on the nested DTE signature: ok=%v, want %v\n%s", ok, tc.inContext, out)
			}

			res, err := Verify(signed)
			if err != nil {
				t.Fatal(err)
			}
			want := []struct {
				id         string
				standalone bool
			}{{"T33F1", !tc.inContext}, {"T33F2", !tc.inContext}, {"SetDoc", false}}
			if len(res) != len(want) {
				t.Fatalf("got %d signatures, want %d", len(res), len(want))
			}
			for i, w := range want {
				if res[i].ID != w.id || res[i].Standalone != w.standalone || res[i].Err != nil {
					t.Errorf("signature %d = %+v, want ID %s standalone %v", i, res[i], w.id, w.standalone)
				}
			}
		})
	}
}

func TestSignSeed(t *testing.T) {
	c := testCert(t)
	dir := t.TempDir()
	signed, err := c.SignSeed("012345678901")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(signed, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n<getToken><item><Semilla>012345678901</Semilla></item><Signature xmlns=")) ||
		!bytes.HasSuffix(signed, []byte("</Signature></getToken>")) {
		t.Fatalf("unexpected getToken layout:\n%s", signed)
	}
	if !bytes.Contains(signed, []byte(`<Reference URI=""><Transforms><Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></Transform></Transforms>`)) {
		t.Fatalf("seed Reference is not URI=\"\" with one enveloped transform:\n%s", signed)
	}
	file := writeFile(t, dir, "seed.xml", signed)
	if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 (KeyValue) rejected the seed signature:\n%s", out)
	}
	if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "x509", "--trusted-pem", writeFile(t, dir, "cert.pem", c.CertificatePEM())); !ok {
		t.Fatalf("xmlsec1 (X509) rejected the seed signature:\n%s", out)
	}
	checkSchema(t, dir, signatureElement(t, signed, 0))
	res, err := Verify(signed)
	if err != nil || len(res) != 1 || res[0].URI != "" {
		t.Fatalf("Verify = %+v, %v", res, err)
	}
	// Tampering with the seed breaks it, for xmlsec1 and for Verify.
	bad := bytes.Replace(signed, []byte("012345678901"), []byte("012345678902"), 1)
	if ok, _ := xmlsecVerify(t, writeFile(t, dir, "bad.xml", bad), "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); ok {
		t.Fatal("xmlsec1 accepted a tampered seed")
	}
	if _, err := Verify(bad); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("Verify(tampered seed) = %v, want ErrDigestMismatch", err)
	}
}

// Namespace declarations and xml:* attributes of ancestors belong to the
// canonical form of both the signed element and SignedInfo; xmlsec1 agrees
// only if both are rendered right.
func TestSignInheritedContext(t *testing.T) {
	c := testCert(t)
	doc := []byte(`<?xml version="1.0"?>
<?app keep="me"?>
<!-- a comment outside -->
<r:Root xmlns:r="urn:root" xmlns:z="urn:z" xmlns:a="urn:a" xml:lang="es-CL" a:x="1">
  <Holder xmlns="urn:default" xml:space="preserve">
    <Doc ID="X1" z:b="2" b="1" a:c="3"><!-- inner comment --><Inner xmlns="">text<![CDATA[ <cdata> & ]]>&#13;end</Inner><?pi data?><Empty/></Doc>
  </Holder>
</r:Root>`)
	signed, err := c.SignEnveloped(doc, "X1")
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, t.TempDir(), "ctx.xml", signed)
	if ok, out := xmlsecVerify(t, file, "--id-attr:ID", "urn:default:Doc", "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); !ok {
		t.Fatalf("xmlsec1 rejected the signature:\n%s", out)
	}
	if _, err := Verify(signed); err != nil {
		t.Fatal(err)
	}
}

func TestTamperDetected(t *testing.T) {
	c := testCert(t)
	dir := t.TempDir()
	signed, err := c.SignEnveloped(dteDoc(t, "T33F1", "1"), "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	other := otherCert(t)
	cases := []struct {
		name     string
		mutate   func([]byte) []byte
		want     error
		xmlsecOK bool // xmlsec1 with KeyValue still accepts it
	}{
		{"content", func(b []byte) []byte { return bytes.Replace(b, []byte("119000"), []byte("119001"), 1) }, ErrDigestMismatch, false},
		{"signature-value", func(b []byte) []byte {
			i := bytes.Index(b, []byte("<SignatureValue>")) + len("<SignatureValue>")
			b = append([]byte{}, b...)
			if b[i] == 'A' {
				b[i] = 'B'
			} else {
				b[i] = 'A'
			}
			return b
		}, ErrBadSignature, false},
		{"certificate-swapped", func(b []byte) []byte {
			s := bytes.Index(b, []byte("<X509Certificate>")) + len("<X509Certificate>")
			e := bytes.Index(b, []byte("</X509Certificate>"))
			return append(append(append([]byte{}, b[:s]...), base64.StdEncoding.EncodeToString(other.Leaf.Raw)...), b[e:]...)
		}, ErrKeyMismatch, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.mutate(signed)
			res, err := Verify(bad)
			if !errors.Is(err, tc.want) || len(res) != 1 || !errors.Is(res[0].Err, tc.want) {
				t.Fatalf("Verify = %+v, %v; want %v", res, err, tc.want)
			}
			file := writeFile(t, dir, tc.name+".xml", bad)
			if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "key-value", "--enabled-key-data", "rsa"); ok != tc.xmlsecOK {
				t.Fatalf("xmlsec1 (KeyValue) ok=%v, want %v\n%s", ok, tc.xmlsecOK, out)
			}
			// Trusting both certificates, xmlsec1 must still refuse all.
			if ok, out := xmlsecVerify(t, file, "--enabled-key-data", "x509",
				"--trusted-pem", writeFile(t, dir, "signer.pem", c.CertificatePEM()),
				"--trusted-pem", writeFile(t, dir, "other.pem", other.CertificatePEM())); ok {
				t.Fatalf("xmlsec1 (X509) accepted a tampered document:\n%s", out)
			}
		})
	}
}

func TestSignEnvelopedErrors(t *testing.T) {
	c := testCert(t)
	doc := dteDoc(t, "T33F1", "1")
	signed, err := c.SignEnveloped(doc, "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		doc  []byte
		id   string
		want string
	}{
		{"missing-id", doc, "T33F9", `no element with ID "T33F9"`},
		{"bad-id", doc, `a"b`, "not a valid XML ID"},
		{"already-signed", signed, "T33F1", "already followed by a Signature"},
		{"root", []byte(`<Documento ID="R"/>`), "R", "is the document root"},
		{"duplicate-id", []byte(`<a><b ID="x"/><c ID="x"/></a>`), "x", "more than one element"},
		{"malformed", []byte(`<a><b ID="x"></a>`), "x", "does not match"},
		{"doctype", []byte(`<!DOCTYPE a [<!ENTITY e "x">]><a><b ID="x">&e;</b></a>`), "x", "DOCTYPE"},
		{"undefined-entity", []byte(`<a><b ID="x">&nbsp;</b></a>`), "x", "undefined entity"},
		{"bad-utf8", []byte("<a><b ID=\"x\">\xf1</b></a>"), "x", "invalid UTF-8"},
		{"unsupported-encoding", []byte(`<?xml version="1.0" encoding="Shift_JIS"?><a><b ID="x"/></a>`), "x", "unsupported encoding"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.SignEnveloped(tc.doc, tc.id)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := (&Certificate{}).SignEnveloped(doc, "T33F1"); err == nil {
		t.Fatal("signing with an empty Certificate succeeded")
	}
	if _, err := (&Certificate{Leaf: c.Leaf, Key: otherCert(t).Key}).SignEnveloped(doc, "T33F1"); err == nil {
		t.Fatal("signing with a key that doesn't match the certificate succeeded")
	}
}

func TestVerifyNoSignature(t *testing.T) {
	if _, err := Verify(dteDoc(t, "T33F1", "1")); !errors.Is(err, ErrNoSignature) {
		t.Fatalf("err = %v, want ErrNoSignature", err)
	}
	if _, err := Verify([]byte("<a>")); !errors.Is(err, ErrInvalidXML) {
		t.Fatalf("err = %v, want ErrInvalidXML", err)
	}
}

// TestVerifyRejectsHugeModulus checks that a KeyValue modulus above
// maxVerifyModulusBits is refused before any RSA work: a 262144-bit modulus
// with exponent 2^31-1 takes several seconds in crypto/rsa (measured on Go
// 1.26), so an unbounded key would let a small document stall Verify.
func TestVerifyRejectsHugeModulus(t *testing.T) {
	signed, err := testCert(t).SignEnveloped(dteDoc(t, "T33F1", "1"), "T33F1")
	if err != nil {
		t.Fatal(err)
	}
	huge := make([]byte, 32768)
	huge[0], huge[len(huge)-1] = 0x80, 1
	re := regexp.MustCompile(`(?s)<Modulus>.*?</Modulus>`)
	bad := re.ReplaceAll(signed, []byte("<Modulus>"+base64.StdEncoding.EncodeToString(huge)+"</Modulus>"))
	if bytes.Equal(bad, signed) {
		t.Fatal("test document has no Modulus to replace")
	}
	res, err := Verify(bad)
	if err == nil || len(res) != 1 || res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "262144 bits, at most 8192") {
		t.Fatalf("Verify = %+v, %v; want the 262144-bit modulus refused", res, err)
	}
}
