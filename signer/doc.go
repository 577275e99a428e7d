// Package signer holds the signing credentials and the XML signature of
// dtekit: it loads .pfx/.p12 certificates (modern AES/PBES2 and legacy
// RC2/3DES files), reports their holder, RUT and validity, and signs and
// verifies XML in the restricted XML-DSig profile of the Chilean SII
// (xmldsignature_v10.xsd): inclusive C14N 1.0, RSA-SHA1, one Reference, and
// KeyInfo with KeyValue followed by X509Data.
//
// A Certificate signs through a crypto.Signer. Load gives the RSA key of
// the PKCS#12 file, in memory, the default; New takes any other
// crypto.Signer whose public key is the certificate's, so a key held in an
// HSM, a cloud KMS or an OpenSSL engine signs without leaving it.
//
// Built with the tag openssl (cgo and OpenSSL 3's libcrypto), every key
// held in memory as an *rsa.PrivateKey signs through libcrypto instead of
// Go's crypto/rsa, about four times faster for RSA-2048, with the same
// bytes; that build also has OpenSSL(key), a crypto.Signer for New that
// can be closed. Backend names what signs in the running build. The
// default build uses no cgo.
//
// Signing works on bytes. SignEnveloped inserts the Signature after the
// signed element and leaves every other byte of the input untouched, so a
// signed DTE can be pasted verbatim into an EnvioDTE whose SetDTE is then
// signed the same way; SignSeed builds the signed getToken request. The
// canonicalizer reads UTF-8 and ISO-8859-1 directly and digests UTF-8
// canonical XML, as the SII does. When the element to sign is already
// written in canonical form (as dtekit's DTE writer produces it), its
// digest is taken from its bytes without building its tree; any other
// input goes through the full parse, with the same result.
//
// Verify reports, for each signature, the signer's certificate and the byte
// offsets of the element its reference covers, so that a caller acts on
// exactly those bytes; it refuses documents where an ID appears twice and
// stops when the references would canonicalize more than a few times the
// input. It does not judge whether the signer may sign: that is the
// caller's policy (dte.VerifyWith states it for DTEs and envelopes).
//
// XML is read by dtekit's one XML reader, which dte shares, and the
// signature itself is computed by internal/xmldsig, which dte calls too for
// what speaks in the reader's types; signer imports no other public dtekit
// package.
package signer
