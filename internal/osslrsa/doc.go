// Package osslrsa signs with RSA keys through OpenSSL's libcrypto (3.0 or
// later): PKCS#1 v1.5 signatures over SHA-1 or SHA-256 digests, for keys of
// any size OpenSSL accepts, the 512-bit keys of CAFs included.
//
// Its code is built only with the build tag openssl (and cgo, with the
// libcrypto headers installed: Debian's libssl-dev). In the default build
// this file is the whole package and nothing imports it, so dtekit stays
// pure Go and links statically. With the tag, internal/smallrsa routes the
// signatures of keys held in memory here (see smallrsa.Signer), and
// signer.OpenSSL exposes a Key to the SDK's users.
//
// A Key is loaded once from its DER form into an EVP_PKEY and kept; each
// signature takes an EVP_PKEY_CTX of its own, one at a time, from a few
// kept for reuse, so a Key is safe for concurrent use. Its memory is freed by Close or, failing that, when the
// Key is garbage collected.
package osslrsa
