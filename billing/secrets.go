package billing

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtekit/dtekit/store"
)

// KEKSize is the length in bytes of a key-encryption key (AES-256).
const KEKSize = 32

// sealVersion prefixes every sealed blob, so the format can evolve.
const sealVersion byte = 1

// Keyring seals secrets at rest (certificate private keys, CAF private
// keys, webhook secrets) with AES-256-GCM under a key-encryption key. Each
// blob is version ‖ 12-byte random nonce ‖ ciphertext+tag, and is bound to
// associated data naming its owner and purpose, so a blob copied to another
// company's row, or to another field, fails to open.
//
// A Keyring is safe for concurrent use.
type Keyring struct {
	aead cipher.AEAD
	fp   string
}

// fingerprintLabel is the message whose HMAC-SHA256 under the key is the
// key's fingerprint.
const fingerprintLabel = "dtekit key-encryption key fingerprint v1"

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
	mac := hmac.New(sha256.New, kek)
	mac.Write([]byte(fingerprintLabel))
	return &Keyring{aead: aead, fp: hex.EncodeToString(mac.Sum(nil))}, nil
}

// Fingerprint names the key-encryption key without revealing it: the
// HMAC-SHA256 of a fixed label under the key, in hexadecimal. The database
// records it (see CheckKEK), so that a server never starts with a key the
// database's secrets were not sealed under.
func (k *Keyring) Fingerprint() string { return k.fp }

// ShortFingerprint is the first 16 hexadecimal digits of a fingerprint,
// as messages show it.
func ShortFingerprint(fp string) string {
	if len(fp) > 16 {
		return fp[:16]
	}
	return fp
}

// NewKEK returns a new random key-encryption key.
func NewKEK() ([]byte, error) {
	kek := make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		return nil, fmt.Errorf("billing: generating a key-encryption key: %w", err)
	}
	return kek, nil
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

// ReadKeyFile reads the key-encryption key kept in the file at path (64
// hex digits, or base64). It refuses a file readable by group or others; a
// missing file is an error matching fs.ErrNotExist (it is never created
// here: see LoadKeyFile).
func ReadKeyFile(path string) (*Keyring, error) {
	data, err := os.ReadFile(path)
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

// WriteKeyFile writes kek, as 64 hex digits, to a new file at path with
// mode 0600: to a temporary file beside it first, synced, then linked to
// path and its directory synced, so that path holds the whole key or does
// not exist, whenever the process stops. It never replaces an existing
// file: when path exists (made meanwhile by another process, too) it
// fails with an error matching fs.ErrExist.
func WriteKeyFile(path string, kek []byte) error {
	if len(kek) != KEKSize {
		return fmt.Errorf("billing: key-encryption key is %d bytes, want %d", len(kek), KEKSize)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*") // mode 0600
	if err != nil {
		return fmt.Errorf("billing: creating key file: %w", err)
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(hex.EncodeToString(kek) + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("billing: writing key file %s: %w", path, werr)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("billing: key file %s exists already; it is never replaced: %w", path, fs.ErrExist)
		}
		return fmt.Errorf("billing: writing key file %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

// ReplaceKeyFile moves the key file at from onto path, replacing the file
// there, in one rename made durable: how a finished key rotation puts its
// new key in place of the old one (which is then gone).
func ReplaceKeyFile(from, path string) error {
	if _, err := ReadKeyFile(from); err != nil {
		return err
	}
	if err := os.Rename(from, path); err != nil {
		return fmt.Errorf("billing: moving the key file %s to %s: %w", from, path, err)
	}
	return syncDir(filepath.Dir(path))
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("billing: syncing %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("billing: syncing %s: %w", dir, err)
	}
	return nil
}

// LoadKeyFile returns the Keyring of the key-encryption key kept in the
// file at path (see ReadKeyFile), checked against the database of st
// (CheckKEK): the embedded mode's key. When the file does not exist it is
// created with a new random key, but only for a database that holds no
// sealed secret and records no key: otherwise it fails with ErrKEKMissing,
// since a new key would leave those secrets unreadable.
func LoadKeyFile(ctx context.Context, st store.Store, path string) (*Keyring, error) {
	k, err := ReadKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		fp, required, rerr := KEKRequired(ctx, st)
		if rerr != nil {
			return nil, rerr
		}
		if required {
			detail := fmt.Sprintf("the key file %s does not exist", path)
			if fp == "" {
				detail += ", and the database holds secrets sealed under a key"
			}
			return nil, &KEKError{Err: ErrKEKMissing, Recorded: fp, Detail: detail}
		}
		kek, gerr := NewKEK()
		if gerr != nil {
			return nil, gerr
		}
		switch werr := WriteKeyFile(path, kek); {
		case errors.Is(werr, fs.ErrExist): // made meanwhile by another process
			k, err = ReadKeyFile(path)
		case werr != nil:
			return nil, werr
		default:
			k, err = NewKeyring(kek)
		}
		if err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	if err := CheckKEK(ctx, st, k); err != nil {
		return nil, err
	}
	return k, nil
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
