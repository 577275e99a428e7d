// Package caftest stands in for the SII in tests and demos: an Authority
// holds an RSA key and an IDK and issues CAF files in the SII's format,
// signed with that key. Its CAFs verify only against the TrustedKeys its
// Keys method returns, never against caf.SIIKeys alone, so they cannot pass
// for real authorizations.
package caftest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/caf"
	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// Authority stands in for the SII: it holds an RSA key
// and an IDK and issues CAF files signed with that key, in the SII's format.
// Its CAFs verify only against keys that trust it (see Keys), never against
// caf.SIIKeys alone, so they cannot pass for real authorizations.
type Authority struct {
	idk    int
	key    *rsa.PrivateKey
	random io.Reader
}

// authorityBits and authorityExponent match the SII's own IDK keys.
const (
	authorityBits     = 512
	authorityExponent = 65537
	cafKeyBits        = 512
	cafKeyExponent    = 3
)

// NewAuthority creates a test authority with a new 512-bit key (e=65537,
// like the SII's IDK keys) for the given IDK, usually 100 (certificación).
// random supplies the key material, of this key and of the CAF keys Issue
// generates; nil means crypto/rand.Reader. A deterministic reader gives
// reproducible fixtures.
func NewAuthority(random io.Reader, idk int) (*Authority, error) {
	if idk <= 0 {
		return nil, fmt.Errorf("caftest: authority IDK must be positive, got %d", idk)
	}
	if random == nil {
		random = rand.Reader
	}
	key, err := smallrsa.GenerateKey(random, authorityBits, authorityExponent)
	if err != nil {
		return nil, fmt.Errorf("caftest: generating the authority key: %w", err)
	}
	return &Authority{idk: idk, key: key, random: random}, nil
}

// LoadAuthority rebuilds an authority from a private key saved with
// PrivateKeyPEM (PKCS#1 or PKCS#8 PEM). random is used for the CAF keys
// Issue generates; nil means crypto/rand.Reader.
func LoadAuthority(random io.Reader, keyPEM []byte, idk int) (*Authority, error) {
	if idk <= 0 {
		return nil, fmt.Errorf("caftest: authority IDK must be positive, got %d", idk)
	}
	key, err := smallrsa.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("caftest: authority key: %w", err)
	}
	if err := smallrsa.CheckPublicKey(&key.PublicKey); err != nil {
		return nil, fmt.Errorf("caftest: authority key: %w", err)
	}
	if random == nil {
		random = rand.Reader
	}
	return &Authority{idk: idk, key: key, random: random}, nil
}

// IDK returns the key identifier the authority writes into its CAFs.
func (a *Authority) IDK() int { return a.idk }

// PublicKey returns the authority's public key, the one that verifies the
// FRMA of its CAFs.
func (a *Authority) PublicKey() *rsa.PublicKey { return &a.key.PublicKey }

// PublicKeyPEM returns the authority's public key as a PKIX "PUBLIC KEY" PEM
// block, the format in which the SII publishes its keys.
func (a *Authority) PublicKeyPEM() ([]byte, error) {
	return smallrsa.MarshalPublicKeyPEM(&a.key.PublicKey)
}

// PrivateKeyPEM returns the authority's private key as a PKCS#1 PEM block,
// for LoadAuthority.
func (a *Authority) PrivateKeyPEM() ([]byte, error) { return smallrsa.MarshalPrivateKeyPEM(a.key) }

// Keys returns the SII's keys plus this authority's key under its IDK: the
// TrustedKeys that accept both real CAFs and this authority's.
func (a *Authority) Keys() caf.TrustedKeys { return caf.SIIKeys().With(a.idk, a.PublicKey()) }

// IssueRequest describes the CAF an Authority issues.
type IssueRequest struct {
	// RutEmisor is the issuer's RUT, "12345678-5" (the check digit is
	// verified).
	RutEmisor string
	// RazonSocial is the issuer's name; it must be ISO-8859-1 text and is
	// cut to 40 characters, the schema's limit for DA/RS.
	RazonSocial string
	// Tipo is the document type, e.g. 33.
	Tipo int
	// Desde and Hasta are the first and last folios (1 ≤ Desde ≤ Hasta,
	// at most 10 digits).
	Desde, Hasta int64
	// FechaAutorizacion is the authorization date: its calendar date, read
	// in its own location, becomes FA.
	FechaAutorizacion time.Time
}

// Issue returns a complete CAF file, as the SII delivers it: ISO-8859-1
// bytes of an AUTORIZACION element with the CAF (DA signed by the authority
// in FRMA), a new 512-bit e=3 key pair in RSASK (PKCS#1 PEM) and RSAPUBK
// (PKIX PEM), one element per line.
func (a *Authority) Issue(req IssueRequest) ([]byte, error) {
	rut, err := chile.CheckRUT(strings.TrimSpace(req.RutEmisor))
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: RutEmisor: %v", err)
	}
	rs := req.RazonSocial
	if utf8.RuneCountInString(rs) > 40 {
		rs = string([]rune(rs)[:40])
	}
	if strings.TrimSpace(rs) == "" {
		return nil, errors.New("caftest: issue: RazonSocial is empty")
	}
	if _, err := xmlflat.ToLatin1(rs); err != nil {
		return nil, fmt.Errorf("caftest: issue: RazonSocial %q: %v", rs, err)
	}
	for _, r := range rs {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return nil, fmt.Errorf("caftest: issue: RazonSocial %q holds the control character U+%04X", rs, r)
		}
	}
	if req.Tipo < 1 || req.Tipo > 999 {
		return nil, fmt.Errorf("caftest: issue: Tipo %d is not a document type", req.Tipo)
	}
	if req.Desde < 1 || req.Hasta < req.Desde || req.Hasta > 9999999999 {
		return nil, fmt.Errorf("caftest: issue: folio range %d-%d is invalid (need 1 ≤ Desde ≤ Hasta ≤ 9999999999)", req.Desde, req.Hasta)
	}
	if req.FechaAutorizacion.IsZero() {
		return nil, errors.New("caftest: issue: FechaAutorizacion is required")
	}
	fa := req.FechaAutorizacion.Format(time.DateOnly)

	cafKey, err := smallrsa.GenerateKey(a.random, cafKeyBits, cafKeyExponent)
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: generating the CAF key: %w", err)
	}
	var esc strings.Builder
	xmlflat.EscapeText(&esc, rs)
	// One DA child per line, as in the SII's files; the signature covers
	// the same elements without the line breaks.
	daLines := []string{
		"<DA>",
		"<RE>" + rut + "</RE>",
		"<RS>" + esc.String() + "</RS>",
		fmt.Sprintf("<TD>%d</TD>", req.Tipo),
		fmt.Sprintf("<RNG><D>%d</D><H>%d</H></RNG>", req.Desde, req.Hasta),
		"<FA>" + fa + "</FA>",
		"<RSAPK><M>" + base64.StdEncoding.EncodeToString(cafKey.N.Bytes()) + "</M><E>" +
			base64.StdEncoding.EncodeToString(big.NewInt(int64(cafKey.E)).Bytes()) + "</E></RSAPK>",
		fmt.Sprintf("<IDK>%d</IDK>", a.idk),
		"</DA>",
	}
	signed, err := xmlflat.ToLatin1(strings.Join(daLines, ""))
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: %v", err)
	}
	frma, err := smallrsa.SignSHA1(a.key, signed)
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: signing DA: %w", err)
	}
	privPEM, err := smallrsa.MarshalPrivateKeyPEM(cafKey)
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: %w", err)
	}
	pubPEM, err := smallrsa.MarshalPublicKeyPEM(&cafKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: %w", err)
	}
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<AUTORIZACION>\n<CAF version=\"1.0\">\n")
	b.WriteString(strings.Join(daLines, "\n"))
	b.WriteString("\n<FRMA algoritmo=\"SHA1withRSA\">" + base64.StdEncoding.EncodeToString(frma) + "</FRMA>\n</CAF>\n")
	b.WriteString("<RSASK>" + string(privPEM) + "</RSASK>\n")
	b.WriteString("<RSAPUBK>" + string(pubPEM) + "</RSAPUBK>\n</AUTORIZACION>\n")
	out, err := xmlflat.ToLatin1(b.String())
	if err != nil {
		return nil, fmt.Errorf("caftest: issue: %v", err)
	}
	return out, nil
}
