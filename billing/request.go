package billing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// MaxIdempotencyKey bounds the length of an Idempotency-Key.
const MaxIdempotencyKey = 255

// decodeEmitRequest reads an emission request strictly (dte.DecodeRequest:
// one JSON object, no unknown fields, every decoding problem named).
func decodeEmitRequest(body []byte) (*dte.EmitirDTERequest, *Error) {
	req, err := dte.DecodeRequest(bytes.NewReader(body))
	if err != nil {
		var ve *dte.ValidationError
		if errors.As(err, &ve) {
			return nil, fromValidation(ve)
		}
		return nil, errValidation("body", dte.CodeInvalidJSON, "the request body cannot be read: "+err.Error())
	}
	return req, nil
}

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

// checkIdempotencyKey checks the Idempotency-Key header's value: required,
// a UUID (contract §4.1).
func checkIdempotencyKey(key string) *Error {
	if key == "" {
		return errValidation("Idempotency-Key", dte.CodeRequired, "the Idempotency-Key header is required")
	}
	if len(key) > MaxIdempotencyKey {
		return errValidation("Idempotency-Key", dte.CodeTooLong, "the Idempotency-Key is too long")
	}
	if _, err := uuid.Parse(key); err != nil {
		return errValidation("Idempotency-Key", dte.CodeInvalidFormat, "the Idempotency-Key must be a UUID")
	}
	return nil
}

// newID returns a new resource id: a UUIDv7, so ids grow with time.
func newID() string { return uuid.Must(uuid.NewV7()).String() }
