package sii

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// TokenCache keeps the tokens the SII issued, per kind (SOAP, boleta REST,
// or the RCV registry's, which are different tokens), environment, base URL and
// certificate. One cache may serve many clients; it is safe for concurrent
// use, and concurrent callers needing the same token wait for one request
// instead of each authenticating.
type TokenCache struct {
	mu sync.Mutex
	m  map[string]*tokenEntry
}

type tokenEntry struct {
	mu    sync.Mutex // held while a token is being obtained
	token string
	at    time.Time
}

// NewTokenCache returns an empty cache.
func NewTokenCache() *TokenCache { return &TokenCache{m: map[string]*tokenEntry{}} }

func (tc *TokenCache) entry(key string) *tokenEntry {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e := tc.m[key]
	if e == nil {
		e = &tokenEntry{}
		tc.m[key] = e
	}
	return e
}

// tokenKind tells the classic SOAP token from the boleta REST one and
// from the RCV registry's. The RCV's is a SOAP token too, but obtained
// from Endpoints.RCVAuth and cached apart, as the protocol notes advise
// (sii-wave3-notes.md §2.7).
type tokenKind int

const (
	soapToken tokenKind = iota
	restToken
	rcvToken
)

// authBase is the base URL that issues tokens of kind.
func (c *Client) authBase(kind tokenKind) string {
	switch kind {
	case restToken:
		return c.ep.BoletaAPI
	case rcvToken:
		return c.ep.RCVAuth
	}
	return c.ep.Classic
}

func (c *Client) tokenKey(kind tokenKind) string {
	return fmt.Sprintf("%d|%s|%s|%s", kind, c.cfg.Environment, c.authBase(kind), c.certKey)
}

// Token returns a token for the classic services (upload, getEstUp,
// getEstDte), from the cache while it is younger than Config.TokenTTL, or
// obtained anew: getSeed, the seed signed with the certificate, getToken.
func (c *Client) Token(ctx context.Context) (string, error) { return c.token(ctx, soapToken) }

// BoletaToken is Token for the boleta REST API, whose tokens are separate.
func (c *Client) BoletaToken(ctx context.Context) (string, error) { return c.token(ctx, restToken) }

func (c *Client) token(ctx context.Context, kind tokenKind) (string, error) {
	e := c.tokens.entry(c.tokenKey(kind))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token != "" && c.cfg.Clock().Sub(e.at) < c.cfg.TokenTTL {
		return e.token, nil
	}
	tok, err := retry(ctx, c, func() (string, error) { return c.authenticate(ctx, kind) })
	if err != nil {
		return "", err
	}
	e.token, e.at = tok, c.cfg.Clock()
	return tok, nil
}

// invalidate forgets token if it is still the cached one (a concurrent
// caller may already have replaced it).
func (c *Client) invalidate(kind tokenKind, token string) {
	e := c.tokens.entry(c.tokenKey(kind))
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.token == token {
		e.token = ""
	}
}

// authenticate runs seed → signed seed → token once, and once more with a
// fresh seed when the SII says the seed timed out or does not exist.
func (c *Client) authenticate(ctx context.Context, kind tokenKind) (string, error) {
	tok, err := c.authenticateOnce(ctx, kind)
	if ae, ok := err.(*AuthError); ok && ae.Estado == "08" {
		tok, err = c.authenticateOnce(ctx, kind)
	}
	return tok, err
}

func (c *Client) authenticateOnce(ctx context.Context, kind tokenKind) (string, error) {
	seedOp, tokenOp := "getSeed", "getToken"
	if kind == restToken {
		seedOp, tokenOp = "boleta.semilla", "boleta.token"
	}
	var seedResp *respuesta
	var err error
	if kind != restToken {
		seedResp, err = c.callSOAP(ctx, c.authBase(kind), PathSeed, "getSeed")
	} else {
		seedResp, err = c.callREST(ctx, seedOp, http.MethodGet, c.ep.BoletaAPI+PathBoletaSeed, nil)
	}
	if err != nil {
		return "", err
	}
	if est := seedResp.Hdr["ESTADO"]; est != "00" {
		return "", &AuthError{Op: seedOp, Estado: est, Glosa: seedResp.Hdr["GLOSA"]}
	}
	seed := seedResp.bodyText("SEMILLA")
	if seed == "" {
		seed = seedResp.bodyText("SEED")
	}
	if seed == "" {
		return "", &TransportError{Op: seedOp, Kind: KindMalformed, Detail: "ESTADO 00 without SEMILLA"}
	}
	signed, err := c.cfg.Certificate.SignSeed(seed)
	if err != nil {
		return "", fmt.Errorf("sii: signing the seed %s: %w", seed, err)
	}
	var tokResp *respuesta
	if kind != restToken {
		tokResp, err = c.callSOAP(ctx, c.authBase(kind), PathToken, "getToken", soapParam{"pszXml", string(signed)})
	} else {
		tokResp, err = c.callREST(ctx, tokenOp, http.MethodPost, c.ep.BoletaAPI+PathBoletaToken, signed)
	}
	if err != nil {
		return "", err
	}
	if est := tokResp.Hdr["ESTADO"]; est != "00" {
		return "", &AuthError{Op: tokenOp, Estado: est, Glosa: tokResp.Hdr["GLOSA"]}
	}
	tok := tokResp.bodyText("TOKEN")
	if tok == "" {
		return "", &TransportError{Op: tokenOp, Kind: KindMalformed, Detail: "ESTADO 00 without TOKEN"}
	}
	return tok, nil
}

// callREST sends a boleta seed or token request, whose answer is a plain
// RESPUESTA document.
func (c *Client) callREST(ctx context.Context, op, method, url string, body []byte) (*respuesta, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sii: %s: %w", op, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/xml")
	}
	req.Header.Set("Accept", "application/xml")
	res, err := c.do(ctx, op, req)
	if err != nil {
		return nil, err
	}
	if err := classify(op, url, res); err != nil {
		return nil, err
	}
	if res.status != http.StatusOK {
		return nil, &TransportError{Op: op, URL: url, Kind: KindHTTP, StatusCode: res.status, Detail: snippet(res.body)}
	}
	r, err := parseRespuesta(res.body)
	if err != nil {
		return nil, &TransportError{Op: op, URL: url, Kind: KindMalformed, StatusCode: res.status, Detail: err.Error()}
	}
	return r, nil
}
