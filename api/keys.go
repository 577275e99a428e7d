package api

import "time"

// APIKey is a created API key. Key, the plaintext, is returned once, by
// its creation, and never stored (only its hash is).
type APIKey struct {
	ID        string     `json:"id"`
	EmpresaID string     `json:"empresa_id"`
	Key       string     `json:"key,omitempty"`
	Prefix    string     `json:"prefix"`
	Write     bool       `json:"write"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// APIKeyInput issues an API key.
type APIKeyInput struct {
	// Write lets the key change data; without it the key only reads.
	Write bool
}
