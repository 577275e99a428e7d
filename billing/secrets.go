package billing

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// KEKSize is the length in bytes of a key-encryption key (AES-256).
const KEKSize = 32

// sealVersion prefixes every sealed blob, so the format can evolve.
const sealVersion byte = 1

// Keyring seals secrets at rest (certificate private keys, webhook
// secrets) with AES-256-GCM under a key-encryption key. Each blob is
// version ‖ 12-byte random nonce ‖ ciphertext+tag, and is bound to
// associated data naming its owner and purpose, so a blob copied to another
// company's row, or to another field, fails to open.
//
// A Keyring is safe for concurrent use.
type Keyring struct {
	aead cipher.AEAD
}

// NewKeyring returns a Keyring under kek, which must be KEKSize bytes.
func NewKeyring(kek []byte) (*Keyring, error) {
	if len(kek) != KEKSize {
		return nil, fmt.Errorf("billing: key-encryption key is %d bytes, want %d", len(kek), KEKSize)
	}
	block, err := aes.NewCipher(kek)
	if err != nil {
		return nil, fmt.Errorf("billing: key-encryption key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("billing: key-encryption key: %w", err)
	}
	return &Keyring{aead: aead}, nil
}

// ParseKEK decodes a key-encryption key written as 64 hexadecimal digits or
// as standard or URL-safe base64 of 32 bytes (as an environment variable
// would carry it). The error never repeats the input.
func ParseKEK(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KEKSize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KEKSize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("billing: the key-encryption key is not 64 hex digits or base64 of %d bytes (%d characters given)", KEKSize, len(s))
}

// LoadKeyFile reads the key-encryption key kept in the file at path (64 hex
// digits), creating the file with a new random key and mode 0600 when it
// does not exist: the embedded mode's key. It refuses a file readable by
// group or others.
func LoadKeyFile(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		kek := make([]byte, KEKSize)
		if _, err := rand.Read(kek); err != nil {
			return nil, fmt.Errorf("billing: generating a key-encryption key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			if errors.Is(err, fs.ErrExist) { // created meanwhile by another process
				return LoadKeyFile(path)
			}
			return nil, fmt.Errorf("billing: creating key file: %w", err)
		}
		_, werr := f.WriteString(hex.EncodeToString(kek) + "\n")
		if werr == nil {
			werr = f.Sync()
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("billing: writing key file %s: %w", path, werr)
		}
		return NewKeyring(kek)
	}
	if err != nil {
		return nil, fmt.Errorf("billing: reading key file: %w", err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("billing: key file %s has mode %v; it must not be readable by group or others (chmod 600)", path, st.Mode().Perm())
	}
	kek, err := ParseKEK(string(data))
	if err != nil {
		return nil, fmt.Errorf("billing: key file %s: %w", path, err)
	}
	return NewKeyring(kek)
}

// Seal encrypts plaintext bound to aad (which is authenticated, not
// stored: Open needs the same aad).
func (k *Keyring) Seal(plaintext, aad []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(plaintext)+k.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1 : 1+ns]); err != nil {
		return nil, fmt.Errorf("billing: seal: nonce: %w", err)
	}
	return k.aead.Seal(out, out[1:1+ns], plaintext, aad), nil
}

// ErrSealed means a sealed blob could not be opened: it is damaged, was
// sealed under another key, or belongs to another owner or field.
var ErrSealed = errors.New("billing: sealed secret cannot be opened (wrong key, damaged, or bound to another owner)")

// Open decrypts a blob made by Seal with the same aad.
func (k *Keyring) Open(sealed, aad []byte) ([]byte, error) {
	ns := k.aead.NonceSize()
	if len(sealed) < 1+ns+k.aead.Overhead() || sealed[0] != sealVersion {
		return nil, ErrSealed
	}
	pt, err := k.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], aad)
	if err != nil {
		return nil, ErrSealed
	}
	return pt, nil
}

// secretAAD names the owner and purpose of a sealed secret.
func secretAAD(purpose, empresaID, id string) []byte {
	return []byte("dtekit/" + purpose + "/" + empresaID + "/" + id)
}
