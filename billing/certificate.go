package billing

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
)

// MaxCertificateSize bounds an uploaded .pfx/.p12 file (contract §8: 50 KB).
const MaxCertificateSize = 50 << 10

// MinCertificateBits is the smallest RSA key an uploaded signing
// certificate may have; the certificates of Chilean certification
// authorities are 2048-bit or larger.
const MinCertificateBits = 2048

// checkCertificate opens an uploaded PKCS#12 file and checks it may sign
// for the company: size, password, an RSA key of at least
// MinCertificateBits, still valid at now, and its
// holder's RUT equal to rutFirmante.
func checkCertificate(p12 []byte, password, rutFirmante string, now time.Time) (*signer.Certificate, *fault.Error) {
	switch {
	case len(p12) == 0:
		return nil, fault.Invalid("file", dte.CodeRequired, "the certificate file (.pfx/.p12) is missing")
	case len(p12) > MaxCertificateSize:
		return nil, fault.Invalid("file", fault.DetailCertTooLarge, fmt.Sprintf("the certificate file is %d bytes; the limit is %d", len(p12), MaxCertificateSize))
	case password == "":
		return nil, fault.Invalid("password", dte.CodeRequired, "the certificate password is missing")
	case rutFirmante == "":
		return nil, fault.Invalid("rut_firmante", dte.CodeRequired, "rut_firmante is missing")
	}
	if p := dte.CheckRUT("rut_firmante", rutFirmante, true); p != nil {
		return nil, fault.FromValidation(&dte.ValidationError{Details: []dte.FieldError{*p}})
	}
	want, _ := dte.ParseRUT(rutFirmante)
	cert, err := signer.Load(p12, password)
	if err != nil {
		if errors.Is(err, signer.ErrWrongPassword) {
			return nil, fault.Invalid("password", fault.DetailCertPassword, "the password does not open the certificate file")
		}
		// The cause (the PKCS#12 decoder's words) stays in Err, for logs.
		e := fault.Invalid("file", fault.DetailCertInvalid,
			"the file is not a usable .pfx/.p12 certificate: it is damaged, not PKCS#12, or protected with an encryption this server does not read")
		e.Err = err
		return nil, e
	}
	// Load gives an RSA key in memory, whose public half is the leaf's.
	if bits := cert.Key.Public().(*rsa.PublicKey).N.BitLen(); bits < MinCertificateBits {
		return nil, fault.Invalid("file", fault.DetailCertWeakKey, fmt.Sprintf("the certificate's key has %d bits; at least %d are required", bits, MinCertificateBits))
	}
	if now.After(cert.NotAfter()) {
		return nil, fault.Invalid("file", fault.DetailCertExpired, fmt.Sprintf("the certificate expired on %s", cert.NotAfter().Format(time.DateOnly)))
	}
	if now.Before(cert.NotBefore()) {
		return nil, fault.Invalid("file", fault.DetailCertInvalid, fmt.Sprintf("the certificate is valid only from %s", cert.NotBefore().Format(time.DateOnly)))
	}
	got, ok := cert.RUT()
	if !ok {
		return nil, fault.Invalid("file", fault.DetailCertInvalid, "the certificate carries no RUT of its holder")
	}
	if got != want.String() {
		return nil, fault.Invalid("rut_firmante", fault.DetailRutMismatch, fmt.Sprintf("the certificate belongs to %s, not to %s", got, want))
	}
	return cert, nil
}

// PEM block types of a sealed signing credential.
const (
	pemKey  = "PRIVATE KEY"
	pemCert = "CERTIFICATE"
)

// encodeCredential writes the key (PKCS#8) and the certificates (leaf
// first) as PEM, the plaintext that the Keyring seals. The password of the
// uploaded file is not kept.
func encodeCredential(c *signer.Certificate) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		return nil, fmt.Errorf("billing: encoding the certificate key: %w", err)
	}
	out := pem.EncodeToMemory(&pem.Block{Type: pemKey, Bytes: der})
	out = append(out, pem.EncodeToMemory(&pem.Block{Type: pemCert, Bytes: c.Leaf.Raw})...)
	for _, ch := range c.Chain {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: pemCert, Bytes: ch.Raw})...)
	}
	return out, nil
}

// decodeCredential reverses encodeCredential.
func decodeCredential(data []byte) (*signer.Certificate, error) {
	c := &signer.Certificate{}
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch b.Type {
		case pemKey:
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("billing: stored certificate key: %w", err)
			}
			rk, ok := k.(*rsa.PrivateKey)
			if !ok {
				return nil, fmt.Errorf("billing: stored certificate key is %T, not RSA", k)
			}
			rk.Precompute()
			c.Key = rk
		case pemCert:
			x, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("billing: stored certificate: %w", err)
			}
			if c.Leaf == nil {
				c.Leaf = x
			} else {
				c.Chain = append(c.Chain, x)
			}
		}
	}
	if c.Key == nil || c.Leaf == nil {
		return nil, errors.New("billing: stored certificate is incomplete")
	}
	return c, nil
}

// certCache keeps each company's opened certificate, keyed by the stored
// certificate's id so a new upload (from any instance) replaces it.
type certCache struct {
	mu sync.Mutex
	m  map[string]cachedCert
}

type cachedCert struct {
	id   string
	cert *signer.Certificate
}

func (c *certCache) get(empresaID, certID string) *signer.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[empresaID]; ok && e.id == certID {
		return e.cert
	}
	return nil
}

func (c *certCache) put(empresaID, certID string, cert *signer.Certificate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedCert{}
	}
	c.m[empresaID] = cachedCert{id: certID, cert: cert}
}

// certStatus describes a certificate at now.
func certStatus(c *signer.Certificate, uploadedAt time.Time, now time.Time) *api.CertificadoStatus {
	rut, _ := c.RUT()
	venc := dte.ChileTime(c.NotAfter()).Format(time.DateOnly)
	days := c.DaysToExpiry(now)
	up := uploadedAt.UTC()
	return &api.CertificadoStatus{HasCertificado: true, RutFirmante: &rut, FechaVencimiento: &venc,
		DiasParaVencimiento: &days, IsActive: now.Before(c.NotAfter()) && !now.Before(c.NotBefore()), UploadedAt: &up}
}
