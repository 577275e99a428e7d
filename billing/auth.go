package billing

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/dtekit/dtekit/billing/internal/delivery"
	"github.com/dtekit/dtekit/store"
)

// MaxAPIKeys is how many valid (not revoked) API keys one company may
// hold.
const MaxAPIKeys = 20

// MaxWebhooks is how many webhooks (not deleted) one company may have.
const MaxWebhooks = delivery.MaxWebhooks

// APIKeyPrefix starts every API key dtekit issues, so leaked keys are
// easy to recognize (secret scanners, logs).
const APIKeyPrefix = "dtk_"

// apiKeyBytes is the random part of a key: 256 bits.
const apiKeyBytes = 32

// maxAPIKey bounds the length of a presented key.
const maxAPIKey = 200

// hashAPIKey is what the store keeps of a key: SHA-256 of its text. Keys
// are 256 random bits, so a fast hash is enough (no password stretching
// needed) and lets the store find a key by its hash.
func hashAPIKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

func errUnauthorized() *fault.Error {
	return &fault.Error{Kind: fault.KindUnauthorized, Code: fault.Unauthorized, Message: "the API key is missing, unknown or revoked"}
}

// Authenticate resolves an API key to its company and write flag;
// an unknown or revoked key fails with fault.KindUnauthorized.
func (r *KeyService) Authenticate(ctx context.Context, key string) (*api.Principal, error) {
	s := r.s
	if !strings.HasPrefix(key, APIKeyPrefix) || len(key) > maxAPIKey {
		return nil, errUnauthorized()
	}
	k, err := s.st.FindAPIKey(ctx, hashAPIKey(key))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUnauthorized()
	}
	if err != nil {
		return nil, &fault.Error{Kind: fault.KindUnavailable, Code: fault.Unavailable, Message: "the credential store is unavailable; retry", Err: err}
	}
	if !k.RevokedAt.IsZero() {
		return nil, errUnauthorized()
	}
	return &api.Principal{EmpresaID: k.EmpresaID, Credential: "apikey:" + k.ID, Write: k.Write}, nil
}

// Create issues an API key for the company; the plaintext is in the
// result's Key and is never shown again (only its hash is stored).
func (r *KeyService) Create(ctx context.Context, empresaID string, in api.APIKeyInput) (*api.APIKey, error) {
	s := r.s
	write := in.Write
	raw := make([]byte, apiKeyBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, fault.Failed("generating an API key", err)
	}
	key := APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw)
	rec := &store.APIKey{ID: newID(), EmpresaID: empresaID, Hash: hashAPIKey(key), Write: write, Label: key[:len(APIKeyPrefix)+6]}
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetEmpresa(ctx, empresaID); err != nil {
			return err
		}
		keys, err := tx.ListAPIKeys(ctx, empresaID)
		if err != nil {
			return err
		}
		valid := 0
		for _, k := range keys {
			if k.RevokedAt.IsZero() {
				valid++
			}
		}
		if valid >= MaxAPIKeys {
			return fault.Clash(fault.LimitExceeded, fmt.Sprintf("a company may hold at most %d valid API keys; revoke one first", MaxAPIKeys))
		}
		return tx.InsertAPIKey(ctx, rec)
	})
	if err != nil {
		return nil, storeErr(err, "creating the API key", "empresa", empresaID)
	}
	s.log.Info("billing: API key created", "empresa_id", empresaID, "key_id", rec.ID, "write", write)
	return &api.APIKey{ID: rec.ID, EmpresaID: empresaID, Key: key, Prefix: rec.Label, Write: write, CreatedAt: rec.CreatedAt.UTC()}, nil
}

// List lists the company's API keys (never their plaintext), whole: an
// operator's list, which no API route serves, so it is a slice and not a
// page.
func (r *KeyService) List(ctx context.Context, empresaID string) ([]api.APIKey, error) {
	s := r.s
	if _, err := s.st.GetEmpresa(ctx, empresaID); err != nil {
		return nil, storeErr(err, "reading the company", "empresa", empresaID)
	}
	recs, err := s.st.ListAPIKeys(ctx, empresaID)
	if err != nil {
		return nil, storeErr(err, "listing API keys", "empresa", empresaID)
	}
	out := make([]api.APIKey, len(recs))
	for i, k := range recs {
		out[i] = api.APIKey{ID: k.ID, EmpresaID: k.EmpresaID, Prefix: k.Label, Write: k.Write, CreatedAt: k.CreatedAt.UTC()}
		if !k.RevokedAt.IsZero() {
			t := k.RevokedAt.UTC()
			out[i].RevokedAt = &t
		}
	}
	return out, nil
}

// Revoke revokes one of the company's API keys; it stops
// authenticating at once.
func (r *KeyService) Revoke(ctx context.Context, empresaID, keyID string) error {
	s := r.s
	err := s.st.Write(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.RevokeAPIKey(ctx, empresaID, keyID, s.now().UTC().Truncate(time.Microsecond))
	})
	return storeErr(err, "revoking the API key", "api_key", keyID)
}
