package server

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing"
	"github.com/dtekit/dtekit/billing/fault"
	"github.com/golang-jwt/jwt/v5"
)

func setPrincipal(ctx context.Context, p *api.Principal) {
	if pp, _ := ctx.Value(keyPrincipal).(**api.Principal); pp != nil {
		*pp = p
	}
}

// JWTConfig configures the acceptance of `Authorization: Bearer` tokens.
// Only RS256 is accepted; exp is required; iss and aud must match.
type JWTConfig struct {
	// Keyfunc supplies the verification key (see PEMKeyfunc and JWKSKeyfunc).
	Keyfunc jwt.Keyfunc
	// Issuer is the required iss claim.
	Issuer string
	// Audience is the required member of the aud claim.
	Audience string
	// Leeway tolerates clock skew on exp, nbf and iat (default 30 s).
	Leeway time.Duration
}

// Claims are the claims the server reads from a bearer token: the
// registered ones plus the company (empresa_id) and the role ("admin" may
// upload certificates).
type Claims struct {
	jwt.RegisteredClaims
	EmpresaID string `json:"empresa_id"`
	Role      string `json:"role,omitempty"`
}

// RoleAdmin is the role that may upload the company's certificate and
// set its mail settings (which carry the mail servers' passwords).
const RoleAdmin = "admin"

// RoleOperador is the role of the server's operator: an admin of the
// token's company who may also switch the console to any other company
// (api.Principal.Operator). A company's own admin (RoleAdmin) never can:
// the admin role is one company's.
const RoleOperador = "operador"

// PEMKeyfunc returns a jwt.Keyfunc over the RSA public keys in pemData
// (PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE blocks). With several keys a
// token verifies when any of them verifies it.
func PEMKeyfunc(pemData []byte) (jwt.Keyfunc, error) {
	var keys []jwt.VerificationKey
	rest := pemData
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var pub any
		var err error
		switch block.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var c *x509.Certificate
			c, err = x509.ParseCertificate(block.Bytes)
			if err == nil {
				pub = c.PublicKey
			}
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("server: JWT key PEM block %q: %w", block.Type, err)
		}
		rk, ok := pub.(*rsa.PublicKey)
		if !ok {
			return nil, fmt.Errorf("server: JWT key PEM block %q holds a %T, want an RSA key", block.Type, pub)
		}
		if rk.N.BitLen() < 2048 {
			return nil, fmt.Errorf("server: JWT RSA key of %d bits, want at least 2048", rk.N.BitLen())
		}
		keys = append(keys, rk)
	}
	if len(keys) == 0 {
		return nil, errors.New("server: no RSA public key in the JWT key PEM")
	}
	set := jwt.VerificationKeySet{Keys: keys}
	return func(*jwt.Token) (any, error) {
		if len(set.Keys) == 1 {
			return set.Keys[0], nil
		}
		return set, nil
	}, nil
}

// JWKSKeyfunc returns a jwt.Keyfunc over the JSON Web Key Set at url,
// refreshed in the background until ctx ends (keys are chosen by kid).
func JWKSKeyfunc(ctx context.Context, url string) (jwt.Keyfunc, error) {
	k, err := keyfunc.NewDefaultCtx(ctx, []string{url})
	if err != nil {
		return nil, fmt.Errorf("server: JWKS %s: %w", url, err)
	}
	return k.Keyfunc, nil
}

// maxCredentialLen bounds what the server accepts as a key or token before
// looking at it.
const maxCredentialLen = 8192

var errUnauthorized = newError(http.StatusUnauthorized, fault.Unauthorized, "missing or invalid credential")

// authenticate resolves the request's credential.
func (s *Server) authenticate(r *http.Request) (*api.Principal, error) {
	authz := r.Header.Get("Authorization")
	key := r.Header.Get("X-Api-Key")
	switch {
	case authz != "" && key != "":
		return nil, newError(http.StatusUnauthorized, fault.Unauthorized, "send either X-Api-Key or Authorization, not both")
	case key != "":
		if len(key) > maxCredentialLen {
			return nil, errUnauthorized
		}
		p, err := s.apiKeys(r.Context(), key)
		if err != nil {
			return nil, err
		}
		return p, nil
	case authz != "":
		scheme, tok, ok := strings.Cut(authz, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" || len(tok) > maxCredentialLen {
			return nil, errUnauthorized
		}
		return s.verifyJWT(r.Context(), strings.TrimSpace(tok))
	default:
		return nil, newError(http.StatusUnauthorized, fault.Unauthorized, "missing credential: send X-Api-Key or Authorization: Bearer")
	}
}

// verifyJWT checks a bearer token and returns its principal. A token
// whose empresa_id names no company is refused like any other invalid
// credential (401), not answered with the 404 of the first read.
func (s *Server) verifyJWT(ctx context.Context, tok string) (*api.Principal, error) {
	cfg := s.jwt
	if cfg == nil || cfg.Keyfunc == nil {
		return nil, newError(http.StatusUnauthorized, fault.Unauthorized, "bearer tokens are not configured on this server")
	}
	leeway := cfg.Leeway
	if leeway == 0 {
		leeway = 30 * time.Second
	}
	var c Claims
	t, err := jwt.ParseWithClaims(tok, &c, cfg.Keyfunc,
		jwt.WithValidMethods([]string{"RS256"}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithLeeway(leeway),
	)
	if err != nil || !understood(t) || !numericTimes(tok) {
		return nil, newError(http.StatusUnauthorized, fault.Unauthorized, "invalid bearer token")
	}
	if !isUUID(c.EmpresaID) {
		return nil, newError(http.StatusUnauthorized, fault.Unauthorized, "bearer token without a valid empresa_id claim")
	}
	if err := s.tenantExists(ctx, c.EmpresaID); err != nil {
		if fault.KindOf(err) == fault.KindNotFound {
			return nil, newError(http.StatusUnauthorized, fault.Unauthorized, "bearer token for an unknown company")
		}
		return nil, err
	}
	sub := c.Subject
	if sub == "" {
		sub = "-"
	}
	return &api.Principal{
		EmpresaID:  c.EmpresaID,
		Credential: "jwt:" + c.EmpresaID + ":" + sub,
		Write:      true,
		Admin:      c.Role == RoleAdmin || c.Role == RoleOperador,
		Operator:   c.Role == RoleOperador,
	}, nil
}

// isUUID reports whether s is a UUID in its canonical 36-character text
// form (any version), the only form ids take in this API.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// understood reports whether the token asks for no critical extension:
// the server implements none, so a token whose header lists any ("crit",
// RFC 7515 §4.1.11) must be refused.
func understood(t *jwt.Token) bool {
	_, crit := t.Header["crit"]
	return !crit
}

// numericTimes reports whether the token's exp, nbf and iat claims, where
// present, are JSON numbers (RFC 7519 NumericDate), not strings that
// merely read as numbers.
func numericTimes(tok string) bool {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return false
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims map[string]json.RawMessage
	if json.Unmarshal(payload, &claims) != nil {
		return false
	}
	for _, name := range []string{"exp", "nbf", "iat"} {
		v, ok := claims[name]
		if !ok {
			continue
		}
		if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return false
		}
	}
	return true
}

// Authenticate resolves a credential as the API resolves a request's: an
// API key (by its prefix) or else a bearer token. The console signs in
// with it. A credential refused fails with fault.KindUnauthorized; a
// store that cannot answer keeps its error (internal or unavailable).
func (s *Server) Authenticate(ctx context.Context, credential string) (*api.Principal, error) {
	var p *api.Principal
	var err error
	switch {
	case credential == "" || len(credential) > maxCredentialLen:
		err = errUnauthorized
	case strings.HasPrefix(credential, billing.APIKeyPrefix):
		p, err = s.apiKeys(ctx, credential)
	default:
		p, err = s.verifyJWT(ctx, credential)
	}
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && (fe.Kind == fault.KindInternal || fe.Kind == fault.KindUnavailable) {
			return nil, err
		}
		return nil, &fault.Error{Kind: fault.KindUnauthorized, Code: fault.Unauthorized, Message: "missing or invalid credential"}
	}
	return p, nil
}
