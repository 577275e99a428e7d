package webhook

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts the printed form of a secret.
const SecretPrefix = "whsec_"

// Limits on the decoded length of a secret, in bytes.
const (
	MinSecretBytes = 24
	MaxSecretBytes = 64
)

// generatedSecretBytes is the key length of [GenerateSecret].
const generatedSecretBytes = 32

// Secret is an HMAC-SHA256 webhook key of 24 to 64 bytes. The zero value is
// not a usable key: [Sign] and [NewVerifier] reject it.
//
// Printing a Secret with any fmt verb shows only a masked form such as
// "whsec_…aSw" so it does not leak into logs; [Secret.Encode] returns the
// complete whsec_ form, for the one place it must be shown.
type Secret struct {
	// k is a pointer so that even reflection-based printing of a struct
	// holding a Secret in an unexported field shows an address, never the
	// key bytes.
	k *secretKey
}

// secretKey holds the key bytes; it is never modified after creation.
type secretKey struct{ b []byte }

// key returns the key bytes (nil for the zero Secret). Callers must not
// modify them.
func (s Secret) key() []byte {
	if s.k == nil {
		return nil
	}
	return s.k.b
}

// ParseSecret parses a secret in its printed form, "whsec_" followed by
// standard base64 (with padding), or in the bare base64 form. The decoded key
// must be 24 to 64 bytes; anything else (empty input, other alphabets,
// whitespace, shorter or longer keys) is an error, never a weak key. Error
// messages never repeat the secret.
func ParseSecret(s string) (Secret, error) {
	enc := strings.TrimPrefix(s, SecretPrefix)
	if enc == "" {
		return Secret{}, errors.New("webhook: parse secret: empty key (want whsec_ followed by base64 of 24 to 64 bytes)")
	}
	for i := 0; i < len(enc); i++ {
		if !isBase64Char(enc[i]) {
			return Secret{}, fmt.Errorf("webhook: parse secret: byte %d is not standard base64", i+len(s)-len(enc))
		}
	}
	key, err := base64.StdEncoding.Strict().DecodeString(enc)
	if err != nil {
		return Secret{}, fmt.Errorf("webhook: parse secret: invalid base64 (%d characters): %v", len(enc), err)
	}
	return NewSecret(key)
}

// NewSecret makes a Secret from raw key bytes (24 to 64 of them). The bytes
// are copied.
func NewSecret(key []byte) (Secret, error) {
	if len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return Secret{}, fmt.Errorf("webhook: secret key is %d bytes, want %d to %d", len(key), MinSecretBytes, MaxSecretBytes)
	}
	return Secret{k: &secretKey{b: append([]byte(nil), key...)}}, nil
}

// GenerateSecret returns a new random 32-byte secret from crypto/rand.
func GenerateSecret() Secret {
	key := make([]byte, generatedSecretBytes)
	rand.Read(key) // never fails on supported platforms (Go 1.24+).
	return Secret{k: &secretKey{b: key}}
}

// Encode returns the complete secret in its printed form, "whsec_" followed
// by standard base64. Treat the result as a password.
func (s Secret) Encode() string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(s.key())
}

// String returns a masked form, "whsec_…" and the last three base64
// characters, enough to tell secrets apart without revealing them. The zero
// Secret prints as "whsec_(none)".
func (s Secret) String() string {
	if !s.valid() {
		return SecretPrefix + "(none)"
	}
	enc := base64.StdEncoding.EncodeToString(s.key())
	enc = strings.TrimRight(enc, "=")
	return SecretPrefix + "…" + enc[len(enc)-3:]
}

// GoString returns the masked form too, so %#v does not leak the key.
func (s Secret) GoString() string { return "webhook.Secret(" + s.String() + ")" }

// Format prints the masked form for every verb, so no fmt verb leaks the key.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		f.Write([]byte(s.GoString()))
		return
	}
	f.Write([]byte(s.String()))
}

// Equal reports whether two secrets hold the same key, in constant time
// for keys of equal length.
func (s Secret) Equal(o Secret) bool {
	return subtle.ConstantTimeCompare(s.key(), o.key()) == 1
}

// valid reports whether s holds a key of an accepted length.
func (s Secret) valid() bool {
	return len(s.key()) >= MinSecretBytes && len(s.key()) <= MaxSecretBytes
}

// isBase64Char reports whether c belongs to the standard base64 alphabet or
// is the padding character.
func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}
