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

// Principal is the authenticated caller: the company it acts for and
// what it may do. The authentication of an API key (billing's Keys.Authenticate) makes one; an HTTP
// layer makes one from a bearer token the same way.
type Principal struct {
	// EmpresaID is the tenant every call made for the principal is
	// scoped to.
	EmpresaID string
	// Credential identifies the credential without revealing it
	// ("apikey:<id>" or "jwt:<subject>"), for rate limits and logs.
	Credential string
	// Write reports whether the credential may change data.
	Write bool
	// Admin reports the admin role (needed to upload the certificate).
	Admin bool
	// Operator reports the server operator's role: an admin of its
	// company who may also, in the console, act for any other company.
	// Only a bearer token whose role is "operador" carries it; an API
	// key never does.
	Operator bool
}
