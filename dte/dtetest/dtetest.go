// Package dtetest generates a complete, self-consistent set of test
// credentials for dtekit's tests and its demo command: a stand-in SII
// authority that signs CAFs (IDK 100, certificación), a CAF for each of the
// twelve document types, a signing certificate with both PKCS#12 encodings,
// and the demo issuing company.
//
// Nothing here is a real credential: the authority's CAFs verify only
// against Keys (the SII's keys plus the authority's), never against the
// SII's keys alone. Generating a set costs one 2048-bit RSA key (about a
// second), so tests should share one per package.
package dtetest

import (
	"crypto/rand"
	"fmt"
	"io"
	"time"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte"
	"github.com/dtekit/dtekit/signer"
	"github.com/dtekit/dtekit/signer/signertest"
)

// Demo identities. The emisor's RUT has a valid módulo-11 check digit and
// its razón social carries an ñ, an accent and an ampersand, so every
// document exercises the ISO-8859-1 and escaping paths.
const (
	// EmisorRUT is the demo issuing company.
	EmisorRUT = "76192083-9"
	// EmisorRazonSocial is its name (35 characters, fits the CAF's RS).
	EmisorRazonSocial = "Comercializadora Ñuñoa & Cía. Ltda."
	// SignerRUT is the RUT of the person in the signing certificate.
	SignerRUT = "13567890-2"
	// SignerName is the certificate's common name.
	SignerName = "María José Peña Test"
	// Password protects both PKCS#12 files.
	Password = "dtekit-demo"
	// IDK is the authority's key identifier: 100, as the SII's
	// certification environment.
	IDK = caf.IDKCertificacion
)

// Options tunes New. Zero fields take the documented defaults.
type Options struct {
	// Random supplies the RSA key material of the authority and the CAFs;
	// nil means crypto/rand. (The certificate's key always comes from
	// crypto/rand.)
	Random io.Reader
	// FechaAutorizacion is the CAFs' authorization date; zero means seven
	// days before Now, so documents dated today may use them and the
	// six-month rule leaves room.
	FechaAutorizacion time.Time
	// Desde and Hasta bound the folios of every CAF (default 1–1000).
	Desde, Hasta int64
	// Now is the reference instant (default time.Now()).
	Now time.Time
}

// Creds is one generated set.
type Creds struct {
	// Authority signs the CAFs.
	Authority *caftest.Authority
	// AuthorityPEM is the authority's public key, PEM-encoded, for a
	// verifier's trust option (e.g. dtekit verify --trust).
	AuthorityPEM []byte
	// Keys trusts the SII's keys plus the authority's (under IDK 100).
	Keys caf.TrustedKeys
	// Emisor is the demo issuing company (ambiente certificación,
	// numero_resolucion 0).
	Emisor dte.Emisor
	// CAFFiles holds each type's CAF file as issued (ISO-8859-1 XML).
	CAFFiles map[dte.TipoDTE][]byte
	// CAFs holds the same CAFs parsed.
	CAFs map[dte.TipoDTE]*caf.CAF
	// Cert is the signing certificate (2048-bit RSA, RUT SignerRUT).
	Cert *signer.Certificate
	// P12 and P12Legacy are Cert encoded as PKCS#12 with modern (AES)
	// and legacy (RC2/3DES) encryption, both protected by Password.
	P12, P12Legacy []byte
	// Password protects P12 and P12Legacy.
	Password string
}

// New generates a set with default options and random as the key source
// (nil means crypto/rand).
func New(random io.Reader) (*Creds, error) { return NewWith(Options{Random: random}) }

// NewWith generates a set.
func NewWith(o Options) (*Creds, error) {
	if o.Random == nil {
		o.Random = rand.Reader
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.FechaAutorizacion.IsZero() {
		o.FechaAutorizacion = dte.ChileTime(o.Now).AddDate(0, 0, -7)
	}
	if o.Desde == 0 {
		o.Desde = 1
	}
	if o.Hasta == 0 {
		o.Hasta = o.Desde + 999
	}
	auth, err := caftest.NewAuthority(o.Random, IDK)
	if err != nil {
		return nil, fmt.Errorf("dtetest: %w", err)
	}
	pub, err := auth.PublicKeyPEM()
	if err != nil {
		return nil, fmt.Errorf("dtetest: %w", err)
	}
	c := &Creds{
		Authority:    auth,
		AuthorityPEM: pub,
		Keys:         auth.Keys(),
		Emisor:       DemoEmisor(),
		CAFFiles:     make(map[dte.TipoDTE][]byte, len(dte.Tipos())),
		CAFs:         make(map[dte.TipoDTE]*caf.CAF, len(dte.Tipos())),
		Password:     Password,
	}
	for _, t := range dte.Tipos() {
		file, err := auth.Issue(caftest.IssueRequest{
			RutEmisor: EmisorRUT, RazonSocial: EmisorRazonSocial, Tipo: int(t),
			Desde: o.Desde, Hasta: o.Hasta, FechaAutorizacion: o.FechaAutorizacion,
		})
		if err != nil {
			return nil, fmt.Errorf("dtetest: CAF for tipo %d: %w", t, err)
		}
		parsed, err := caf.Parse(file)
		if err != nil {
			return nil, fmt.Errorf("dtetest: parsing the CAF for tipo %d: %w", t, err)
		}
		c.CAFFiles[t], c.CAFs[t] = file, parsed
	}
	c.Cert, err = signertest.NewCertificate(o.Random, signertest.CertOptions{
		CommonName: SignerName, RUT: SignerRUT,
		NotBefore: o.Now.Add(-24 * time.Hour), NotAfter: o.Now.AddDate(2, 0, 0),
	})
	if err != nil {
		return nil, fmt.Errorf("dtetest: %w", err)
	}
	if c.P12, err = signertest.EncodePKCS12(c.Cert, Password, signertest.Modern); err != nil {
		return nil, fmt.Errorf("dtetest: %w", err)
	}
	if c.P12Legacy, err = signertest.EncodePKCS12(c.Cert, Password, signertest.Legacy); err != nil {
		return nil, fmt.Errorf("dtetest: %w", err)
	}
	return c, nil
}

// DemoEmisor returns the demo issuing company: RUT EmisorRUT, a name and
// address with ñ, accents and '&', ambiente certificación, resolución 0.
func DemoEmisor() dte.Emisor {
	return dte.Emisor{
		Rut:              EmisorRUT,
		RazonSocial:      EmisorRazonSocial,
		Giro:             "Venta al por mayor de artículos de oficina & computación",
		Direccion:        "Av. Irarrázaval 2401, oficina 1203",
		Comuna:           "Ñuñoa",
		Ciudad:           "Santiago",
		Ambiente:         dte.AmbienteCertificacion,
		FechaResolucion:  "2024-05-10",
		NumeroResolucion: 0,
		Acteco:           []int{465100, 620200},
		OficinaSII:       "ÑUÑOA",
	}
}

// Folios returns an in-memory folio source over the set's CAFs, starting at
// each CAF's first folio.
func (c *Creds) Folios() (*dte.MemoryFolios, error) {
	cafs := make([]*caf.CAF, 0, len(c.CAFs))
	for _, t := range dte.Tipos() {
		cafs = append(cafs, c.CAFs[t])
	}
	return dte.NewMemoryFolios(cafs...)
}

// Emitter returns an emitter for the demo company with this set's
// certificate, a fresh in-memory folio source and CAF verification against
// Keys. now may be nil for the real clock.
func (c *Creds) Emitter(now func() time.Time) (*dte.Emitter, error) {
	f, err := c.Folios()
	if err != nil {
		return nil, err
	}
	return &dte.Emitter{Emisor: c.Emisor, Cert: c.Cert, Folios: f, Now: now, TrustedKeys: c.Keys}, nil
}
