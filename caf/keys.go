package caf

import (
	"crypto/rsa"
	"encoding/base64"
	"fmt"
	"math/big"
	"sort"
	"strings"
)

// The SII's public keys that sign CAFs, as published by the SII (modulus in
// base64, exponent 65537). Both are 512-bit.
const (
	siiIDK100Modulus = "yPvwDcshpVAApYVSLF3lKKc+DOFswDqx5ep95LKigRHjUvrvjct9UeNJq9SxBdzU9nz54TEVBYyfAVQpG4xxUw=="
	siiIDK300Modulus = "ne6/xe69lt9MfPU/G/oV2F1z7wTGcY+MB7P3he/udee071o64HnDJlqQDkX2AokK9vtPr6K41pOPfwEcNYWzNQ=="
	siiExponent      = 65537
)

// TrustedKeys maps an IDK (key identifier) to the public keys accepted for
// CAFs that name it. Several keys may share an IDK: a test authority using
// IDK 100 can be trusted beside the SII's own IDK 100 key.
type TrustedKeys map[int][]*rsa.PublicKey

// SIIKeys returns a new TrustedKeys holding the SII's two CAF-signing keys:
// IDK 100 (certificación) and IDK 300 (producción).
func SIIKeys() TrustedKeys {
	return TrustedKeys{
		IDKCertificacion: {siiKey(siiIDK100Modulus)},
		IDKProduccion:    {siiKey(siiIDK300Modulus)},
	}
}

func siiKey(modulus string) *rsa.PublicKey {
	// The constants are valid base64; a decoding error would leave an empty
	// key that verifies nothing rather than a panic.
	b, _ := base64.StdEncoding.DecodeString(modulus)
	return &rsa.PublicKey{N: new(big.Int).SetBytes(b), E: siiExponent}
}

// With returns a copy of k that also trusts pub for CAFs naming idk; k itself
// is not modified (a nil k is fine).
func (k TrustedKeys) With(idk int, pub *rsa.PublicKey) TrustedKeys {
	out := make(TrustedKeys, len(k)+1)
	for id, keys := range k {
		out[id] = append([]*rsa.PublicKey(nil), keys...)
	}
	if pub != nil {
		out[idk] = append(out[idk], pub)
	}
	return out
}

// describe lists the IDKs with keys, for error messages.
func (k TrustedKeys) describe() string {
	var ids []int
	for id, keys := range k {
		if len(keys) > 0 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "no keys are trusted"
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return "trusted IDKs: " + strings.Join(parts, ", ")
}
