//go:build openssl && cgo

package osslrsa

/*
#cgo LDFLAGS: -lcrypto
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

// dk_error writes the oldest error of this thread's OpenSSL queue into buf
// and empties the queue. It runs in the same C call as the failure, since
// the queue belongs to the thread and a goroutine may change threads
// between two calls.
static void dk_error(char *buf, size_t len) {
	unsigned long e = ERR_get_error();
	if (e == 0) {
		buf[0] = 0;
	} else {
		ERR_error_string_n(e, buf, len);
	}
	ERR_clear_error();
}

// dk_load reads a PKCS#1 RSAPrivateKey from der.
static EVP_PKEY *dk_load(const unsigned char *der, long len, char *err, size_t errlen) {
	const unsigned char *p = der;
	ERR_clear_error();
	EVP_PKEY *k = d2i_PrivateKey(EVP_PKEY_RSA, NULL, &p, len);
	if (k == NULL || p != der + len) {
		dk_error(err, errlen);
		EVP_PKEY_free(k);
		return NULL;
	}
	return k;
}

// dk_ctx returns a context ready to sign with k, PKCS#1 v1.5 padding and
// the DigestInfo of md (1: SHA-1, 256: SHA-256), or NULL. A context serves
// one thread at a time, any number of signatures in turn.
static EVP_PKEY_CTX *dk_ctx(EVP_PKEY *k, int md, char *err, size_t errlen) {
	ERR_clear_error();
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k, NULL);
	if (ctx == NULL) {
		dk_error(err, errlen);
		return NULL;
	}
	if (EVP_PKEY_sign_init(ctx) <= 0
		|| EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0
		|| EVP_PKEY_CTX_set_signature_md(ctx, md == 1 ? EVP_sha1() : EVP_sha256()) <= 0) {
		dk_error(err, errlen);
		EVP_PKEY_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

// dk_sign signs a digest with a context from dk_ctx.
static int dk_sign(EVP_PKEY_CTX *ctx, const unsigned char *digest, size_t dlen,
		unsigned char *sig, size_t *siglen, char *err, size_t errlen) {
	ERR_clear_error();
	if (EVP_PKEY_sign(ctx, sig, siglen, digest, dlen) <= 0) {
		dk_error(err, errlen);
		return 0;
	}
	return 1;
}
*/
import "C"

import (
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"unsafe"
)

// errBufLen is the size of the buffer an OpenSSL error string is written
// into (ERR_error_string_n needs at least 256).
const errBufLen = 256

// ErrClosed is returned by Sign after Close.
var ErrClosed = errors.New("osslrsa: key is closed")

// Version returns the version of the libcrypto the process runs with,
// e.g. "OpenSSL 3.0.22 25 Aug 2026".
func Version() string { return C.GoString(C.OpenSSL_version(C.OPENSSL_VERSION)) }

// maxIdle bounds the contexts a handle keeps per digest for reuse: as
// many as signatures that may run at once on a few cores; a context beyond
// it is freed after its signature.
const maxIdle = 8

// handle owns one EVP_PKEY and the signing contexts made for it, kept
// for reuse: making one (EVP_PKEY_sign_init and its settings) costs about
// a fifth of a 512-bit signature. Signatures hold mu's read lock for the
// length of their C calls; freeing takes the write lock, so Close never
// frees a key under a signature in progress.
type handle struct {
	mu   sync.RWMutex
	pkey *C.EVP_PKEY

	idleMu sync.Mutex
	idle   [2][]*C.EVP_PKEY_CTX // by digest: 0 SHA-1, 1 SHA-256
}

// take returns a context for digest kind i, reused or new; mu is read-locked.
func (h *handle) take(i int, md C.int, msg *C.char) *C.EVP_PKEY_CTX {
	h.idleMu.Lock()
	if n := len(h.idle[i]); n > 0 {
		ctx := h.idle[i][n-1]
		h.idle[i] = h.idle[i][:n-1]
		h.idleMu.Unlock()
		return ctx
	}
	h.idleMu.Unlock()
	return C.dk_ctx(h.pkey, md, msg, errBufLen)
}

// give keeps ctx for the next signature, or frees it; mu is read-locked.
func (h *handle) give(i int, ctx *C.EVP_PKEY_CTX) {
	h.idleMu.Lock()
	if len(h.idle[i]) < maxIdle {
		h.idle[i] = append(h.idle[i], ctx)
		ctx = nil
	}
	h.idleMu.Unlock()
	if ctx != nil {
		C.EVP_PKEY_CTX_free(ctx)
	}
}

func (h *handle) free() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, list := range h.idle {
		for _, ctx := range list {
			C.EVP_PKEY_CTX_free(ctx)
		}
		h.idle[i] = nil
	}
	if h.pkey != nil {
		C.EVP_PKEY_free(h.pkey)
		h.pkey = nil
	}
}

// Key is an RSA private key loaded into OpenSSL: a crypto.Signer.
type Key struct {
	h   *handle
	pub rsa.PublicKey
}

// New loads priv into OpenSSL. priv must carry its two primes (as keys
// parsed from PKCS#1, PKCS#8 or PKCS#12 do); it is not kept, and a later
// change to it does not reach the Key.
func New(priv *rsa.PrivateKey) (*Key, error) {
	if priv == nil || priv.N == nil || priv.D == nil {
		return nil, errors.New("osslrsa: missing private key")
	}
	if len(priv.Primes) != 2 || priv.Primes[0] == nil || priv.Primes[1] == nil {
		return nil, fmt.Errorf("osslrsa: the key has %d primes; OpenSSL is given two-prime keys only", len(priv.Primes))
	}
	if priv.N.Sign() <= 0 || priv.E < 3 {
		return nil, errors.New("osslrsa: invalid RSA key")
	}
	c := *priv
	if c.Precomputed.Dp == nil {
		c.Precompute()
	}
	der := x509.MarshalPKCS1PrivateKey(&c)
	defer clear(der)
	var msg [errBufLen]C.char
	pkey := C.dk_load((*C.uchar)(unsafe.Pointer(&der[0])), C.long(len(der)), &msg[0], errBufLen)
	if pkey == nil {
		return nil, fmt.Errorf("osslrsa: OpenSSL refuses the %d-bit key: %s", priv.N.BitLen(), C.GoString(&msg[0]))
	}
	k := &Key{h: &handle{pkey: pkey}, pub: rsa.PublicKey{N: priv.N, E: priv.E}}
	runtime.AddCleanup(k, func(h *handle) { h.free() }, k.h)
	return k, nil
}

// Public returns the key's public half, an *rsa.PublicKey.
func (k *Key) Public() crypto.PublicKey {
	return &rsa.PublicKey{N: k.pub.N, E: k.pub.E}
}

// Size returns the length of the key's signatures in bytes.
func (k *Key) Size() int { return (k.pub.N.BitLen() + 7) / 8 }

// Sign returns the RSA PKCS#1 v1.5 signature of digest, the hash of the
// message under opts.HashFunc(): crypto.SHA1 or crypto.SHA256. rand is not
// used (PKCS#1 v1.5 is deterministic; OpenSSL blinds with its own random
// generator). PSS options are refused.
func (k *Key) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if _, ok := opts.(*rsa.PSSOptions); ok {
		return nil, errors.New("osslrsa: PSS signatures are not supported")
	}
	var md C.int
	var kind int
	switch opts.HashFunc() {
	case crypto.SHA1:
		md, kind = 1, 0
	case crypto.SHA256:
		md, kind = 256, 1
	default:
		return nil, fmt.Errorf("osslrsa: hash %v is not supported (SHA-1 and SHA-256 are)", opts.HashFunc())
	}
	if len(digest) != opts.HashFunc().Size() {
		return nil, fmt.Errorf("osslrsa: digest is %d bytes, %v needs %d", len(digest), opts.HashFunc(), opts.HashFunc().Size())
	}
	sig := make([]byte, k.Size())
	n := C.size_t(len(sig))
	var msg [errBufLen]C.char
	h := k.h
	h.mu.RLock()
	if h.pkey == nil {
		h.mu.RUnlock()
		return nil, ErrClosed
	}
	ok := C.int(0)
	if ctx := h.take(kind, md, &msg[0]); ctx != nil {
		ok = C.dk_sign(ctx, (*C.uchar)(unsafe.Pointer(&digest[0])), C.size_t(len(digest)),
			(*C.uchar)(unsafe.Pointer(&sig[0])), &n, &msg[0], errBufLen)
		if ok == 1 {
			h.give(kind, ctx)
		} else {
			C.EVP_PKEY_CTX_free(ctx) // not reused after a failure
		}
	}
	h.mu.RUnlock()
	runtime.KeepAlive(k)
	if ok != 1 {
		return nil, fmt.Errorf("osslrsa: OpenSSL could not sign: %s", C.GoString(&msg[0]))
	}
	if int(n) != len(sig) {
		return nil, fmt.Errorf("osslrsa: OpenSSL wrote a %d-byte signature for a %d-byte modulus", n, len(sig))
	}
	return sig, nil
}

// Close frees the key's OpenSSL memory; Sign fails afterwards. It is safe
// to call more than once and while other goroutines sign.
func (k *Key) Close() error {
	k.h.free()
	return nil
}
