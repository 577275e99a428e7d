// Package caf reads and checks CAF files (Código de Autorización de Folios):
// the SII's authorization to number documents of one type, for one issuer,
// within a range of folios.
//
// A CAF file is an AUTORIZACION element holding the CAF proper (DA, the
// authorization data, and FRMA, the SII's SHA1withRSA signature over the
// flattened DA), the private key that stamps the documents (RSASK, a 512-bit
// e=3 PKCS#1 key) and its public key (RSAPUBK). Parse accepts the file as
// raw XML or base64, in ISO-8859-1 (with or without an XML declaration) or
// UTF-8; the CAF element alone, as copied into a TED, is accepted too.
//
// Checks are separate methods, each failing with its own sentinel error
// (usable with errors.Is) wrapped with the detail: Verify (the SII's FRMA,
// against TrustedKeys), CheckKeyPair (RSASK matches RSAPK), CheckFolio (the
// range) and CheckUsable (authorization date and the six-month rule), or
// Validate for all but the folio.
//
// The SII signs with 512-bit keys, which crypto/rsa refuses since Go 1.24;
// signatures are checked with internal/smallrsa, so no GODEBUG setting is
// needed. For tests and demos, caftest.Authority plays the SII: it issues CAFs signed
// by its own key, which callers trust with TrustedKeys.With.
package caf

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
	"github.com/dtekit/dtekit/internal/smallrsa"
	"github.com/dtekit/dtekit/internal/xmlflat"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, with the detail of what failed.
var (
	// ErrMalformed: the input is not a readable CAF (bad XML, bad base64,
	// missing or invalid element, unsupported key type or encoding).
	ErrMalformed = errors.New("caf: malformed CAF")
	// ErrUntrustedIDK: no trusted key is known for the CAF's IDK.
	ErrUntrustedIDK = errors.New("caf: no trusted key for the CAF's IDK")
	// ErrSignature: the FRMA does not verify with the trusted key(s).
	ErrSignature = errors.New("caf: FRMA signature does not verify")
	// ErrNoPrivateKey: the CAF carries no RSASK (for example, a CAF copied
	// from a TED).
	ErrNoPrivateKey = errors.New("caf: CAF has no private key (RSASK)")
	// ErrKeyMismatch: RSASK or RSAPUBK is not the key pair of DA/RSAPK.
	ErrKeyMismatch = errors.New("caf: keys do not match")
	// ErrFolioOutOfRange: a folio lies outside the CAF's range.
	ErrFolioOutOfRange = errors.New("caf: folio outside the authorized range")
	// ErrNotYetValid: a document is dated before the CAF's authorization date.
	ErrNotYetValid = errors.New("caf: document dated before the CAF's authorization")
	// ErrExpired: the six-month validity of a CAF for types 33, 43, 46, 56
	// and 61 has passed.
	ErrExpired = errors.New("caf: CAF expired")
)

// Key identifiers (IDK) of the SII's CAF-signing keys.
const (
	IDKCertificacion = 100
	IDKProduccion    = 300
)

// Environment names returned by Ambiente.
const (
	AmbienteCertificacion = "certificacion"
	AmbienteProduccion    = "produccion"
)

// maxInput bounds the size of a CAF document (real ones are about 2 KB).
const maxInput = 1 << 20

// CAF is a parsed folio authorization. The exported fields describe it; the
// element copied into TEDs and the signed data are kept exactly as parsed,
// so changing the fields does not change what is signed or verified.
type CAF struct {
	// RutEmisor is the issuer's RUT as in DA/RE, e.g. "97975000-5" (check
	// digit upper-case).
	RutEmisor string
	// RazonSocial is the issuer's name (DA/RS) as UTF-8 text.
	RazonSocial string
	// Tipo is the document type (DA/TD), e.g. 33.
	Tipo int
	// Desde and Hasta are the first and last authorized folios (DA/RNG).
	Desde, Hasta int64
	// FA is the authorization date as written, "YYYY-MM-DD".
	FA string
	// FechaAutorizacion is FA at the start of that day in Chile
	// (America/Santiago).
	FechaAutorizacion time.Time
	// IDK identifies the SII key that signed the CAF: 100 in
	// certification, 300 in production.
	IDK int
	// PublicKey is DA/RSAPK, the key that verifies the TEDs stamped with
	// this CAF.
	PublicKey *rsa.PublicKey
	// PrivateKey is RSASK, the key that stamps TEDs; nil when the input
	// was a CAF element without it.
	PrivateKey *rsa.PrivateKey
	// RSAPUBK is the public key given beside RSASK, nil when absent.
	RSAPUBK *rsa.PublicKey
	// FRMA is the SII's signature over the flattened DA.
	FRMA []byte

	element string // the CAF element, flattened and canonical
	da      string // the DA element, flattened and canonical
	rawDA   string // the DA as written, minus whitespace between tags
}

// Parse reads a CAF file: raw XML or its base64 encoding, ISO-8859-1 or
// UTF-8, with AUTORIZACION as root (the SII's file) or CAF as root (the
// element alone, then without private key). It checks that every field is
// present and well formed, but not the signature or the dates: see Verify,
// CheckKeyPair, CheckUsable and Validate.
func Parse(data []byte) (*CAF, error) {
	if len(data) > maxInput {
		return nil, malformed("input is %d bytes, more than the %d accepted", len(data), maxInput)
	}
	xmlData, err := unwrapBase64(data)
	if err != nil {
		return nil, err
	}
	root, err := xmlflat.ParseDocument(xmlData)
	if err != nil {
		return nil, malformed("%v", err)
	}
	c := &CAF{}
	var cafNode *xmlflat.Node
	switch root.Name {
	case "AUTORIZACION":
		if cafNode, err = one(root, "CAF", "AUTORIZACION"); err != nil {
			return nil, err
		}
		if err := c.readKeys(root); err != nil {
			return nil, err
		}
	case "CAF":
		cafNode = root
	default:
		return nil, malformed("root element is <%s>, expected <AUTORIZACION> or <CAF>", root.QName)
	}
	if err := c.readCAF(cafNode); err != nil {
		return nil, err
	}
	return c, nil
}

// unwrapBase64 returns data itself when it is XML, or its base64 decoding
// when that is XML.
func unwrapBase64(data []byte) ([]byte, error) {
	if looksLikeXML(data) {
		return data, nil
	}
	compact := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, string(data))
	if compact == "" {
		return nil, malformed("input is empty")
	}
	dec, err := base64.StdEncoding.DecodeString(compact)
	if err != nil {
		var err2 error
		if dec, err2 = base64.RawStdEncoding.DecodeString(compact); err2 != nil {
			return nil, malformed("input is neither XML (it does not start with '<') nor base64 (%v)", err)
		}
	}
	if !looksLikeXML(dec) {
		return nil, malformed("input is base64 but what it encodes is not XML")
	}
	return dec, nil
}

func looksLikeXML(b []byte) bool {
	s := strings.TrimLeft(strings.TrimPrefix(string(b[:min(len(b), 64)]), "\ufeff"), " \t\r\n")
	return strings.HasPrefix(s, "<")
}

func (c *CAF) readKeys(root *xmlflat.Node) error {
	if ks := root.Children("RSASK"); len(ks) > 1 {
		return malformed("AUTORIZACION has %d RSASK elements", len(ks))
	} else if len(ks) == 1 {
		k, err := smallrsa.ParsePrivateKeyPEM([]byte(strings.TrimSpace(ks[0].Text)))
		if err != nil {
			return malformed("RSASK: %v", err)
		}
		c.PrivateKey = k
	}
	if ks := root.Children("RSAPUBK"); len(ks) > 1 {
		return malformed("AUTORIZACION has %d RSAPUBK elements", len(ks))
	} else if len(ks) == 1 {
		k, err := smallrsa.ParsePublicKeyPEM([]byte(strings.TrimSpace(ks[0].Text)))
		if err != nil {
			return malformed("RSAPUBK: %v", err)
		}
		c.RSAPUBK = k
	}
	return nil
}

func (c *CAF) readCAF(n *xmlflat.Node) error {
	if v, ok := n.Attr("version"); ok && v != "1.0" {
		return malformed("CAF version %q, expected 1.0", v)
	}
	da, err := one(n, "DA", "CAF")
	if err != nil {
		return err
	}
	frma, err := one(n, "FRMA", "CAF")
	if err != nil {
		return err
	}
	if len(n.Kids) != 2 || n.Kids[0] != da {
		return malformed("CAF must hold exactly DA then FRMA")
	}
	if alg, _ := frma.Attr("algoritmo"); alg != "SHA1withRSA" {
		return malformed("FRMA algoritmo %q, expected SHA1withRSA", alg)
	}
	if c.FRMA, err = xmlflat.DecodeBase64(frma.Text); err != nil {
		return malformed("FRMA: %v", err)
	}
	if len(c.FRMA) == 0 {
		return malformed("FRMA is empty")
	}

	text := func(parent *xmlflat.Node, path, name string) (string, error) {
		e, err := one(parent, name, path)
		if err != nil {
			return "", err
		}
		if len(e.Kids) > 0 {
			return "", malformed("%s/%s must hold text, not elements", path, name)
		}
		return e.Text, nil
	}
	re, err := text(da, "DA", "RE")
	if err != nil {
		return err
	}
	if c.RutEmisor, err = chile.CheckRUT(strings.TrimSpace(re)); err != nil {
		return malformed("DA/RE: %v", err)
	}
	if c.RazonSocial, err = text(da, "DA", "RS"); err != nil {
		return err
	}
	if strings.TrimSpace(c.RazonSocial) == "" {
		return malformed("DA/RS is empty")
	}
	td, err := text(da, "DA", "TD")
	if err != nil {
		return err
	}
	tipo, err := parseInt(td, 3)
	if err != nil {
		return malformed("DA/TD: %v", err)
	}
	c.Tipo = int(tipo)
	rng, err := one(da, "RNG", "DA")
	if err != nil {
		return err
	}
	d, err := text(rng, "DA/RNG", "D")
	if err != nil {
		return err
	}
	if c.Desde, err = parseInt(d, 10); err != nil {
		return malformed("DA/RNG/D: %v", err)
	}
	h, err := text(rng, "DA/RNG", "H")
	if err != nil {
		return err
	}
	if c.Hasta, err = parseInt(h, 10); err != nil {
		return malformed("DA/RNG/H: %v", err)
	}
	if c.Desde > c.Hasta {
		return malformed("DA/RNG: first folio %d is after last folio %d", c.Desde, c.Hasta)
	}
	fa, err := text(da, "DA", "FA")
	if err != nil {
		return err
	}
	c.FA = strings.TrimSpace(fa)
	if c.FechaAutorizacion, err = parseDate(c.FA); err != nil {
		return malformed("DA/FA: %v", err)
	}
	if len(da.Children("DSAPK")) > 0 {
		return malformed("DA/DSAPK: DSA CAFs are not supported, only RSA (RSAPK)")
	}
	rsapk, err := one(da, "RSAPK", "DA")
	if err != nil {
		return err
	}
	m, err := text(rsapk, "DA/RSAPK", "M")
	if err != nil {
		return err
	}
	e, err := text(rsapk, "DA/RSAPK", "E")
	if err != nil {
		return err
	}
	if c.PublicKey, err = publicKey(m, e); err != nil {
		return malformed("DA/RSAPK: %v", err)
	}
	idk, err := text(da, "DA", "IDK")
	if err != nil {
		return err
	}
	idkValue, err := parseInt(idk, 9)
	if err != nil {
		return malformed("DA/IDK: %v", err)
	}
	c.IDK = int(idkValue)

	c.element = n.Flat()
	c.da = da.Flat()
	c.rawDA = da.Raw
	if _, err := xmlflat.ToLatin1(c.element); err != nil {
		return malformed("CAF text must be ISO-8859-1: %v", err)
	}
	return nil
}

// one returns the single child element name of parent (path names parent
// in errors).
func one(parent *xmlflat.Node, name, path string) (*xmlflat.Node, error) {
	found := parent.Children(name)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, malformed("%s/%s is missing", path, name)
	default:
		return nil, malformed("%s has %d %s elements, expected one", path, len(found), name)
	}
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// parseInt reads a positive decimal integer of at most maxDigits digits.
func parseInt(s string, maxDigits int) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("empty")
	}
	if len(t) > maxDigits {
		return 0, fmt.Errorf("%q has more than %d digits", t, maxDigits)
	}
	for _, r := range t {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q is not a positive integer", t)
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive integer", t)
	}
	return v, nil
}

// publicKey builds an RSA key from the base64 modulus and exponent of an
// RSAPK element.
func publicKey(m, e string) (*rsa.PublicKey, error) {
	mb, err := xmlflat.DecodeBase64(m)
	if err != nil {
		return nil, fmt.Errorf("modulus (M): %v", err)
	}
	eb, err := xmlflat.DecodeBase64(e)
	if err != nil {
		return nil, fmt.Errorf("exponent (E): %v", err)
	}
	ev := new(big.Int).SetBytes(eb)
	if !ev.IsInt64() || ev.Int64() > 1<<31-1 {
		return nil, errors.New("exponent (E) too large")
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(mb), E: int(ev.Int64())}
	if err := smallrsa.CheckPublicKey(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// ElementXML returns the CAF element (<CAF version="1.0"><DA>…</DA><FRMA
// …>…</FRMA></CAF>) flattened exactly as it must be copied into a TED's DD:
// no whitespace between tags, no namespace declaration, text escaping only
// &, < and >. The result is UTF-8 Go text; the TED signer encodes it as
// ISO-8859-1 (Parse guarantees it fits).
func (c *CAF) ElementXML() string { return c.element }

// DAXML returns the flattened DA element, the text the SII's FRMA signs
// (as ISO-8859-1 bytes).
func (c *CAF) DAXML() string { return c.da }

// Ambiente returns "certificacion" for IDK 100, "produccion" for IDK 300 and
// "" for any other IDK.
func (c *CAF) Ambiente() string {
	switch c.IDK {
	case IDKCertificacion:
		return AmbienteCertificacion
	case IDKProduccion:
		return AmbienteProduccion
	}
	return ""
}

// String describes the CAF for logs, e.g. "CAF tipo 33 folios 1-200 for
// 97975000-5 (IDK 100, FA 2003-09-04)".
func (c *CAF) String() string {
	return fmt.Sprintf("CAF tipo %d folios %d-%d for %s (IDK %d, FA %s)", c.Tipo, c.Desde, c.Hasta, c.RutEmisor, c.IDK, c.FA)
}

// Verify checks the SII's FRMA over the flattened DA with the trusted keys
// registered for the CAF's IDK. It fails with ErrUntrustedIDK when there are
// none and with ErrSignature when none verifies.
//
// The signed text is the canonical flattening of DA (see DAXML). If that
// fails and the DA was written with different escaping (for example
// &apos;), the DA as written, minus whitespace between tags, is tried too.
func (c *CAF) Verify(keys TrustedKeys) error {
	candidates := keys[c.IDK]
	if len(candidates) == 0 {
		return fmt.Errorf("%w: IDK %d (%s)", ErrUntrustedIDK, c.IDK, keys.describe())
	}
	forms := []string{c.da}
	if c.rawDA != "" && c.rawDA != c.da {
		forms = append(forms, c.rawDA)
	}
	var lastErr error
	for _, form := range forms {
		signed, err := xmlflat.ToLatin1(form)
		if err != nil {
			lastErr = err
			continue
		}
		for _, k := range candidates {
			if err := smallrsa.VerifySHA1(k, signed, c.FRMA); err == nil {
				return nil
			} else {
				lastErr = err
			}
		}
	}
	return fmt.Errorf("%w: %s: no trusted key for IDK %d verifies the FRMA over DA (%v)", ErrSignature, c, c.IDK, lastErr)
}

// CheckKeyPair checks that RSASK is the private key of DA/RSAPK (and that
// RSAPUBK, when present, equals RSAPK). It fails with ErrNoPrivateKey when
// RSASK is absent and ErrKeyMismatch otherwise.
func (c *CAF) CheckKeyPair() error {
	if c.PrivateKey == nil {
		return fmt.Errorf("%w: %s", ErrNoPrivateKey, c)
	}
	if c.PublicKey == nil {
		return fmt.Errorf("%w: %s has no RSAPK", ErrKeyMismatch, c)
	}
	if !smallrsa.EqualPublicKeys(&c.PrivateKey.PublicKey, c.PublicKey) {
		return fmt.Errorf("%w: RSASK is not the private key of DA/RSAPK in %s", ErrKeyMismatch, c)
	}
	if c.RSAPUBK != nil && !smallrsa.EqualPublicKeys(c.RSAPUBK, c.PublicKey) {
		return fmt.Errorf("%w: RSAPUBK differs from DA/RSAPK in %s", ErrKeyMismatch, c)
	}
	probe := []byte("dtekit CAF key pair check")
	sig, err := smallrsa.SignSHA1(c.PrivateKey, probe)
	if err == nil {
		err = smallrsa.VerifySHA1(c.PublicKey, probe, sig)
	}
	if err != nil {
		return fmt.Errorf("%w: RSASK cannot sign for DA/RSAPK in %s: %v", ErrKeyMismatch, c, err)
	}
	return nil
}

// Contains reports whether folio lies within the authorized range.
func (c *CAF) Contains(folio int64) bool { return folio >= c.Desde && folio <= c.Hasta }

// CheckFolio fails with ErrFolioOutOfRange when folio lies outside the
// authorized range.
func (c *CAF) CheckFolio(folio int64) error {
	if !c.Contains(folio) {
		return fmt.Errorf("%w: folio %d is not in %d-%d of %s", ErrFolioOutOfRange, folio, c.Desde, c.Hasta, c)
	}
	return nil
}

// SixMonthRule reports whether CAFs of document type tipo expire six months
// after their authorization: facturas (33), liquidaciones-factura (43),
// facturas de compra (46), notas de débito (56) and notas de crédito (61).
func SixMonthRule(tipo int) bool { return chile.CAFExpires(tipo) }

// ExpiresAt returns the first day (at its start, Chile time) on which the
// CAF can no longer be used, and true, when the six-month rule applies to
// its type; otherwise the zero time and false. Six months are counted in
// calendar months from FA; a day that the target month lacks becomes its
// last day (FA 2024-08-31 expires on 2025-02-28).
func (c *CAF) ExpiresAt() (time.Time, bool) {
	if !SixMonthRule(c.Tipo) {
		return time.Time{}, false
	}
	return startOfDay(chile.CAFExpiry(civil(c.FA))), true
}

// CheckUsable checks that a document dated at (its emission date; only the
// Chilean calendar day counts) may use this CAF: not before the
// authorization date (ErrNotYetValid) and, for types 33, 43, 46, 56 and 61,
// before the six months from FA have passed (ErrExpired).
func (c *CAF) CheckUsable(at time.Time) error {
	day := at.In(chile.Location())
	dy, dm, dd := day.Date()
	date := time.Date(dy, dm, dd, 0, 0, 0, 0, time.UTC)
	fy, fm, fd := civil(c.FA)
	if date.Before(time.Date(fy, fm, fd, 0, 0, 0, 0, time.UTC)) {
		return fmt.Errorf("%w: document date %s is before FA %s of %s", ErrNotYetValid, date.Format(time.DateOnly), c.FA, c)
	}
	if exp, ok := c.ExpiresAt(); ok {
		ey, em, ed := exp.Date()
		if !date.Before(time.Date(ey, em, ed, 0, 0, 0, 0, time.UTC)) {
			return fmt.Errorf("%w: %s was usable until %s (six months from FA for type %d); document date %s",
				ErrExpired, c, time.Date(ey, em, ed-1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly), c.Tipo, date.Format(time.DateOnly))
		}
	}
	return nil
}

// Validate runs Verify, CheckKeyPair and CheckUsable(at), returning the
// first failure. Folios are checked separately with CheckFolio.
func (c *CAF) Validate(at time.Time, keys TrustedKeys) error {
	if err := c.Verify(keys); err != nil {
		return err
	}
	if err := c.CheckKeyPair(); err != nil {
		return err
	}
	return c.CheckUsable(at)
}

// civil splits a date already validated by parseDate.
func civil(s string) (int, time.Month, int) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return 1, 1, 1
	}
	return t.Date()
}
