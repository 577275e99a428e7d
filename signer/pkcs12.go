package signer

import (
	"bytes"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"unicode/utf8"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/dtekit/dtekit/internal/xmldsig"
)

// Errors returned by Load; test them with errors.Is.
var (
	// ErrWrongPassword means the PKCS#12 integrity check failed with the
	// given password (the file itself looks well formed).
	ErrWrongPassword = errors.New("signer: wrong password for the PKCS#12 file")
	// ErrCorrupt means the input is not a PKCS#12 file this package can
	// read: truncated, damaged, another format (PEM, DER certificate), or
	// using a feature outside what certificates for the SII need.
	ErrCorrupt = errors.New("signer: corrupt or unsupported PKCS#12 file")
	// ErrNotRSA means the file holds a non-RSA key; the SII profile signs
	// with RSA only.
	ErrNotRSA = errors.New("signer: the certificate key is not RSA")
)

// maxKDFIterations bounds the key-derivation iteration counts Load accepts,
// so that a crafted file can't keep the CPU busy for minutes. Real files use
// 1 to tens of thousands (OpenSSL 2048, Windows 2000, Java 10000); the bound
// is the one .NET applies to PKCS#12 imports (KB5025823).
const maxKDFIterations = 600000

// Load reads a .pfx/.p12 file protected by password: modern files (PBES2
// with AES, as OpenSSL 3 and current Windows write them) and legacy ones
// (RC2 and 3DES). The key must be RSA. When the file holds several
// certificates, the one matching the private key becomes Leaf and the
// others Chain.
func Load(p12 []byte, password string) (*Certificate, error) {
	switch {
	case len(p12) == 0:
		return nil, fmt.Errorf("%w: the input is empty", ErrCorrupt)
	case bytes.Contains(p12[:min(len(p12), 1024)], []byte("-----BEGIN")):
		return nil, fmt.Errorf("%w: the input is PEM text, not a binary PKCS#12 (.pfx/.p12) file", ErrCorrupt)
	}
	for _, r := range password {
		if r == utf8.RuneError || r > 0xFFFF {
			// PKCS#12 passwords are BMP strings; this one can't be right.
			return nil, fmt.Errorf("%w: the password has characters a PKCS#12 password can't hold", ErrWrongPassword)
		}
	}
	if err := checkKDFCost(p12); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	key, first, others, err := pkcs12.DecodeChain(p12, password)
	if err != nil {
		if errors.Is(err, pkcs12.ErrIncorrectPassword) {
			return nil, ErrWrongPassword
		}
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%w: found a %s key (subject %q)", ErrNotRSA, keyKind(key), first.Subject.String())
	}
	all := append([]*x509.Certificate{first}, others...)
	c := &Certificate{Key: rsaKey}
	for _, cert := range all {
		if pub, ok := cert.PublicKey.(*rsa.PublicKey); ok && c.Leaf == nil && pub.Equal(&rsaKey.PublicKey) {
			c.Leaf = cert
			continue
		}
		c.Chain = append(c.Chain, cert)
	}
	if c.Leaf == nil {
		return nil, fmt.Errorf("%w: none of its %d certificates matches the private key", ErrCorrupt, len(all))
	}
	c.keyInfo = xmldsig.BuildKeyInfo(c.Leaf)
	return c, nil
}

func keyKind(key any) string {
	switch key.(type) {
	case *ecdsa.PrivateKey, *ecdh.PrivateKey:
		return "elliptic-curve"
	case ed25519.PrivateKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", key)
}

// Object identifiers of password-based schemes whose parameters carry an
// iteration count.
var (
	oidPKCS12PBE = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1} // pbeWithSHAAnd... (arc)
	oidPKCS5PBE  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5}     // PBES1 schemes and PBKDF2
	oidPBKDF2    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidPBMAC1    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 14}
)

// Bounds of the inspection of a PKCS#12 file's clear parts. A genuine file
// has a few hundred DER values, nested about ten deep; a file that needs
// more is refused rather than half inspected, since what the scan did not
// reach could hold an iteration count beyond maxKDFIterations.
const (
	maxScanValues = 20000
	maxScanDepth  = 24
)

// errScanBudget is returned when a file is too large or too deeply nested
// for its key-derivation parameters to be inspected in full.
var errScanBudget = fmt.Errorf("its key-derivation parameters could not be fully inspected (more than %d DER values or %d levels)", maxScanValues, maxScanDepth)

// checkKDFCost rejects files whose MAC or encryption parameters ask for more
// than maxKDFIterations iterations. It inspects everything readable without
// the password: the MacData and every AlgorithmIdentifier in the clear
// parts of the file. Parse errors are left to the PKCS#12 decoder.
func checkKDFCost(der []byte) error {
	var pfx struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac struct {
				Algorithm struct {
					Algorithm  asn1.ObjectIdentifier
					Parameters asn1.RawValue `asn1:"optional"`
				}
				Digest []byte
			}
			Salt       []byte
			Iterations *big.Int `asn1:"optional"`
		} `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(der, &pfx); err == nil {
		if pfx.MacData.Iterations != nil {
			if err := checkIterations(pfx.MacData.Iterations); err != nil {
				return err
			}
		}
		if alg := pfx.MacData.Mac.Algorithm; alg.Algorithm.Equal(oidPBMAC1) {
			if err := checkPBMAC1(alg.Parameters.FullBytes); err != nil {
				return err
			}
		}
	}
	budget := maxScanValues
	return scanDER(der, 0, &budget)
}

// checkPBMAC1 reads the parameters of a PBMAC1 MAC (RFC 9579), whose
// iteration count is the PBKDF2 one inside them (the MacData's own count
// is then meaningless), and checks that count.
func checkPBMAC1(params []byte) error {
	var p struct {
		KDF struct {
			Algorithm  asn1.ObjectIdentifier
			Parameters struct {
				Salt       asn1.RawValue
				Iterations *big.Int
			}
		}
		MAC asn1.RawValue
	}
	if _, err := asn1.Unmarshal(params, &p); err != nil {
		return fmt.Errorf("PBMAC1 parameters: %v", err)
	}
	if !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return fmt.Errorf("PBMAC1 with key derivation %v, not PBKDF2", p.KDF.Algorithm)
	}
	if p.KDF.Parameters.Iterations == nil {
		return errors.New("PBMAC1 parameters without an iteration count")
	}
	return checkIterations(p.KDF.Parameters.Iterations)
}

func checkIterations(n *big.Int) error {
	if n.Sign() < 0 || n.Cmp(big.NewInt(maxKDFIterations)) > 0 {
		return fmt.Errorf("key-derivation iteration count %s is outside 0..%d", n, maxKDFIterations)
	}
	return nil
}

// scanDER walks a DER value tree (descending into OCTET STRINGs that hold
// DER) and checks the iteration count of every PBE AlgorithmIdentifier.
func scanDER(data []byte, depth int, budget *int) error {
	if depth > maxScanDepth {
		return errScanBudget
	}
	for len(data) > 0 {
		if *budget--; *budget < 0 {
			return errScanBudget
		}
		var v asn1.RawValue
		rest, err := asn1.Unmarshal(data, &v)
		if err != nil {
			return nil
		}
		data = rest
		switch {
		case v.IsCompound:
			if v.Class == asn1.ClassUniversal && v.Tag == asn1.TagSequence {
				if err := checkAlgorithm(v.Bytes); err != nil {
					return err
				}
			}
			if err := scanDER(v.Bytes, depth+1, budget); err != nil {
				return err
			}
		case v.Class == asn1.ClassUniversal && v.Tag == asn1.TagOctetString:
			if err := scanDER(v.Bytes, depth+1, budget); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkAlgorithm inspects the content of a SEQUENCE that may be an
// AlgorithmIdentifier of a password-based scheme.
func checkAlgorithm(seq []byte) error {
	var oid asn1.ObjectIdentifier
	rest, err := asn1.Unmarshal(seq, &oid)
	if err != nil {
		return nil
	}
	isPBE := (len(oid) == len(oidPKCS12PBE)+1 && oid[:len(oidPKCS12PBE)].Equal(oidPKCS12PBE)) ||
		(len(oid) == len(oidPKCS5PBE)+1 && oid[:len(oidPKCS5PBE)].Equal(oidPKCS5PBE) && !oid.Equal(oidPBKDF2) && oid[len(oid)-1] != 13 && oid[len(oid)-1] != 14)
	if !isPBE && !oid.Equal(oidPBKDF2) {
		return nil
	}
	// PBEParameter ::= SEQUENCE { salt OCTET STRING, iterationCount INTEGER }
	// PBKDF2-params ::= SEQUENCE { salt CHOICE {...}, iterationCount INTEGER, ... }
	var params asn1.RawValue
	if _, err := asn1.Unmarshal(rest, &params); err != nil || !params.IsCompound {
		return nil
	}
	var salt asn1.RawValue
	after, err := asn1.Unmarshal(params.Bytes, &salt)
	if err != nil {
		return nil
	}
	var count *big.Int
	if _, err := asn1.Unmarshal(after, &count); err != nil {
		return nil
	}
	return checkIterations(count)
}
