//go:build openssl

package signer

import (
	"crypto"
	"crypto/rsa"
	"io"

	"github.com/dtekit/dtekit/internal/osslrsa"
)

// OpenSSLKey is an RSA private key loaded into OpenSSL's libcrypto: a
// crypto.Signer for New. It exists only in builds with the tag openssl.
type OpenSSLKey struct{ k *osslrsa.Key }

// OpenSSL loads key into OpenSSL's libcrypto and returns it as a
// crypto.Signer: signer.New(leaf, k) then signs every document through
// OpenSSL (PKCS#1 v1.5 with SHA-1, as the SII's profile has it; SHA-256
// is accepted too). The key is loaded once and kept until Close, or until
// the OpenSSLKey is garbage collected; it is safe for concurrent use.
//
// It exists only in builds with the tag openssl (cgo and libcrypto 3.0 or
// later; Debian's libssl-dev to build). Such a build also signs through
// OpenSSL with any *rsa.PrivateKey a Certificate holds (Load's, and a
// CAF's key in the TED), without this call: OpenSSL is for a caller who
// wants the crypto.Signer itself, e.g. to close it.
func OpenSSL(key *rsa.PrivateKey) (*OpenSSLKey, error) {
	k, err := osslrsa.New(key)
	if err != nil {
		return nil, err
	}
	return &OpenSSLKey{k: k}, nil
}

// Public returns the key's public half, an *rsa.PublicKey.
func (k *OpenSSLKey) Public() crypto.PublicKey { return k.k.Public() }

// Sign returns the RSA PKCS#1 v1.5 signature of digest, a SHA-1 or SHA-256
// hash as opts says; rand is not used.
func (k *OpenSSLKey) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return k.k.Sign(rand, digest, opts)
}

// Close frees OpenSSL's copy of the key; Sign fails afterwards.
func (k *OpenSSLKey) Close() error { return k.k.Close() }
