package dte

import "github.com/dtekit/dtekit/signer"

// SignerPolicy checks a valid signature s, made for emisor (the RUT the
// signed file speaks for) with the cover's RutEnvia and signing time tmst
// (YYYY-MM-DDTHH:MM:SS, Chile), against the signer policy of opts, as
// VerifyWith does for a document or an envelope: for the SII's other
// signed files (libros, the RCOF), which this package does not read. Nil
// when the policy holds or states nothing.
func SignerPolicy(opts VerifyOptions, s signer.VerifiedSignature, emisor, rutEnvia, tmst string) error {
	v := &verification{opts: opts, caratula: &Caratula{RutEnvia: rutEnvia}}
	return v.policy(s, emisor, tmst)
}

// SignerOf describes the certificate of a verified signature, as the
// reports of VerifyWith do (nil without a certificate).
func SignerOf(s signer.VerifiedSignature) *Signer { return signerOf(s.Certificate, s.RUT) }
