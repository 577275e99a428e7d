package dte_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/internal/oracle"
	"github.com/dtekit/dtekit/signer"
)

// countingSigner is a crypto.Signer that is not an *rsa.PrivateKey, as a
// key in an HSM or a cloud KMS is: it counts its calls and the options
// they came with, and signs with a key the process holds.
type countingSigner struct {
	key   *rsa.PrivateKey
	calls atomic.Int64
	sha1  atomic.Int64 // calls whose options asked for crypto.SHA1
	fail  error        // when set, every call fails with it
}

func (s *countingSigner) Public() crypto.PublicKey { return s.key.Public() }

func (s *countingSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	s.calls.Add(1)
	if opts.HashFunc() == crypto.SHA1 && len(digest) == crypto.SHA1.Size() {
		s.sha1.Add(1)
	}
	if s.fail != nil {
		return nil, s.fail
	}
	return rsa.SignPKCS1v15(rand, s.key, opts.HashFunc(), digest)
}

// TestEmitThroughACryptoSigner emits a factura and packs it in an
// envelope with a credential whose key is a crypto.Signer other than
// *rsa.PrivateKey: each signature is one call with a SHA-1 digest, xmlsec1
// verifies both signatures with the KeyValue key and with the certificate,
// and the files are byte for byte those the key in memory signs (PKCS#1
// v1.5 is deterministic), so swapping the signer changes nothing else.
func TestEmitThroughACryptoSigner(t *testing.T) {
	t.Parallel()
	oracle.Tool(t, "xmlsec1")
	c := creds(t)
	cs := &countingSigner{key: c.Cert.Key.(*rsa.PrivateKey)}
	cert, err := signer.New(c.Cert.Leaf, cs, c.Cert.Chain...)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().In(dte.SantiagoLocation()).Truncate(time.Second) // both emissions at one instant
	now := func() time.Time { return at }
	emit := func(cert *signer.Certificate) (*dte.Emitted, []byte) {
		t.Helper()
		em, err := c.Emitter(now)
		if err != nil {
			t.Fatal(err)
		}
		em.Cert = cert
		out, err := em.Emit(context.Background(), dte.OracleRequests()[dte.FacturaElectronica])
		if err != nil {
			t.Fatal(err)
		}
		env, err := dte.BuildEnvio(dte.EnvioOptions{Emisor: c.Emisor, At: at}, cert, out.XML)
		if err != nil {
			t.Fatal(err)
		}
		return out, env
	}
	out, env := emit(cert)
	if n, n1 := cs.calls.Load(), cs.sha1.Load(); n != 2 || n1 != 2 {
		t.Errorf("the signer was called %d times (%d with a SHA-1 digest); want 2 (the DTE, the envelope), both SHA-1", n, n1)
	}
	wantOut, wantEnv := emit(c.Cert)
	if !bytes.Equal(out.XML, wantOut.XML) || !bytes.Equal(env, wantEnv) {
		t.Error("the files signed through the crypto.Signer differ from those the key in memory signs")
	}

	dir := t.TempDir()
	certPEM := filepath.Join(dir, "signer.pem")
	dteFile, envFile := filepath.Join(dir, "dte.xml"), filepath.Join(dir, "envio.xml")
	for f, b := range map[string][]byte{certPEM: cert.CertificatePEM(), dteFile: out.XML, envFile: env} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, keys := range [][]string{keyValueArgs(), x509Args(certPEM)} {
		if msg, ok := xmlsecVerify(t, dteFile, "", keys...); !ok {
			t.Errorf("xmlsec1 DTE %v: %s", keys, msg)
		}
		if msg, ok := xmlsecVerify(t, envFile, `/*/*[local-name()='Signature']`, keys...); !ok {
			t.Errorf("xmlsec1 SetDTE %v: %s", keys, msg)
		}
	}
}

// TestCryptoSignerRefusals: a signer whose public key is not the
// certificate's is refused before it signs, and a signer's failure (an
// HSM gone, a KMS refusing) is the emission's error, wrapped.
func TestCryptoSignerRefusals(t *testing.T) {
	t.Parallel()
	c := creds(t)
	other, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signer.New(c.Cert.Leaf, &countingSigner{key: other}); err == nil {
		t.Error("signer.New accepted a key that is not the certificate's")
	}
	hsmDown := errors.New("hsm: slot 0 not present")
	cs := &countingSigner{key: c.Cert.Key.(*rsa.PrivateKey), fail: hsmDown}
	cert, err := signer.New(c.Cert.Leaf, cs)
	if err != nil {
		t.Fatal(err)
	}
	em, err := c.Emitter(nil)
	if err != nil {
		t.Fatal(err)
	}
	em.Cert = cert
	if _, err := em.Emit(context.Background(), dte.OracleRequests()[dte.FacturaElectronica]); !errors.Is(err, hsmDown) {
		t.Errorf("Emit with a failing signer: %v; want it to wrap %v", err, hsmDown)
	}
	if cs.calls.Load() != 1 {
		t.Errorf("the failing signer was called %d times; want 1", cs.calls.Load())
	}
}
