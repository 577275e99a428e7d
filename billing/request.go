package billing

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// MaxIdempotencyKey bounds the length of an Idempotency-Key.
const MaxIdempotencyKey = 255

// requestHash is the idempotency fingerprint of a request: SHA-256 of its
// canonical JSON (re-encoded from the decoded value, so spacing, field
// order and map key order in the body do not matter).
func requestHash(req *dte.EmitirDTERequest) ([]byte, string, error) {
	canon, err := json.Marshal(req)
	if err != nil {
		return nil, "", fmt.Errorf("billing: encoding the request: %w", err)
	}
	sum := sha256.Sum256(canon)
	return canon, hex.EncodeToString(sum[:]), nil
}

// ParseIdempotencyKey reads an Idempotency-Key as Emit does: required,
// a UUID (contract §4.1) in any spelling uuid.Parse reads (upper case,
// braces, urn:uuid:, no dashes), and returns its canonical form (lower
// case, dashed), under which Emit records it: one UUID is one key,
// however it is written. An HTTP layer calls it to refuse a bad key
// before it reads the body.
func ParseIdempotencyKey(key string) (string, error) {
	if key == "" {
		return "", fault.Invalid("Idempotency-Key", dte.CodeRequired, "the Idempotency-Key header is required")
	}
	if len(key) > MaxIdempotencyKey {
		return "", fault.Invalid("Idempotency-Key", dte.CodeTooLong, "the Idempotency-Key is too long")
	}
	u, err := uuid.Parse(key)
	if err != nil {
		return "", fault.Invalid("Idempotency-Key", dte.CodeInvalidFormat, "the Idempotency-Key must be a UUID")
	}
	return u.String(), nil
}

// newID returns a new resource id: a UUIDv7, so ids grow with time.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
