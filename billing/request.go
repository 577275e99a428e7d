package billing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dtekit/dtekit/dte"
	"github.com/google/uuid"
)

// MaxRequestBody bounds an emission request's JSON.
const MaxRequestBody = 1 << 20

// MaxIdempotencyKey bounds the length of an Idempotency-Key.
const MaxIdempotencyKey = 255

// decodeEmitRequest reads an emission request strictly: one JSON object,
// no unknown fields, nothing after it.
func decodeEmitRequest(body []byte) (*dte.EmitirDTERequest, *Error) {
	if len(body) > MaxRequestBody {
		return nil, errValidation("body", dte.CodeTooLong, fmt.Sprintf("the request body is %d bytes; the limit is %d", len(body), MaxRequestBody))
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errValidation("body", dte.CodeRequired, "the request body is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req dte.EmitirDTERequest
	if err := dec.Decode(&req); err != nil {
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errValidation("body", dte.CodeInvalidFormat, "the request body holds more than one JSON value")
	}
	return &req, nil
}

// jsonError names the field a JSON decoding error is about.
func jsonError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return errValidation(te.Field, dte.CodeInvalidFormat, fmt.Sprintf("%s: expected %s, got JSON %s", te.Field, te.Type, te.Value))
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		f := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return errValidation(f, dte.CodeNotAllowed, fmt.Sprintf("unknown field %q", f))
	}
	return errValidation("body", dte.CodeInvalidFormat, "the request body is not valid JSON: "+err.Error())
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
