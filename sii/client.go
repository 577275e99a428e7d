package sii

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dtekit/dtekit/signer"
)

// Defaults of Config.
const (
	// DefaultUserAgent is the browser-like User-Agent printed in the SII's
	// upload manual; the SII refuses some non-browser agents.
	DefaultUserAgent = "Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)"
	// DefaultTimeout bounds each HTTP exchange.
	DefaultTimeout = 30 * time.Second
	// DefaultTokenTTL is how long a token is reused before a new one is
	// requested. The SII documents no lifetime; a few minutes is what the
	// open implementations that cache tokens settle on.
	DefaultTokenTTL = 3 * time.Minute
	// DefaultMaxResponseBytes bounds every response body read.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultRetries is how many times an idempotent call (seed, token,
	// status queries) is repeated after a transport error.
	DefaultRetries = 2
	// DefaultRetryPause is the pause before the first repeat; the n-th
	// repeat waits n times as long.
	DefaultRetryPause = 500 * time.Millisecond
)

// Config configures a Client. Certificate is required; zero fields take the
// documented defaults.
type Config struct {
	// Environment picks the default Endpoints and is part of the token
	// cache key (default Certificacion).
	Environment Environment
	// Endpoints overrides any base URL; empty fields take the
	// Environment's addresses.
	Endpoints Endpoints
	// Certificate signs the seeds; its holder is the sender of uploads and
	// the consultant of status queries.
	Certificate *signer.Certificate
	// HTTPClient sends the requests (nil: a client of its own). Its
	// Timeout, if any, adds to Timeout; custom root CAs go in its
	// Transport.
	HTTPClient *http.Client
	// Timeout bounds each HTTP exchange, on top of the caller's context
	// (default DefaultTimeout).
	Timeout time.Duration
	// UserAgent is sent on every request (default DefaultUserAgent).
	UserAgent string
	// Referer, when set, is sent with uploads, as the SII's manual shows.
	Referer string
	// TokenTTL is how long a token is reused (default DefaultTokenTTL).
	TokenTTL time.Duration
	// Tokens is the token cache; share one between the clients of a
	// process so each (environment, endpoint, certificate) authenticates
	// once. Nil means a cache of this client's own.
	Tokens *TokenCache
	// Clock returns the current time for token ages (default time.Now).
	Clock func() time.Time
	// MaxResponseBytes bounds every response read (default
	// DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// Retries is how many times seed, token and status calls are repeated
	// after a transport error (default DefaultRetries; negative: none).
	// Uploads are never repeated on transport errors.
	Retries int
	// RetryPause is the pause before the first repeat (default
	// DefaultRetryPause).
	RetryPause time.Duration
}

// Client calls the SII on behalf of one certificate holder. It is safe for
// concurrent use.
type Client struct {
	cfg       Config
	ep        Endpoints
	http      *http.Client
	tokens    *TokenCache
	certKey   string
	senderRUT string
}

// New checks cfg and returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.Certificate == nil || cfg.Certificate.Leaf == nil || cfg.Certificate.Key == nil {
		return nil, errors.New("sii: Config.Certificate is required (a certificate with its private key)")
	}
	rut, ok := cfg.Certificate.RUT()
	if !ok {
		return nil, fmt.Errorf("sii: the certificate %q carries no RUT; the SII identifies the sender by it", cfg.Certificate.Subject())
	}
	if cfg.Environment == "" {
		cfg.Environment = Certificacion
	}
	def, err := EndpointsFor(cfg.Environment)
	if err != nil {
		return nil, err
	}
	ep, err := cfg.Endpoints.withDefaults(def)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultRetries
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.RetryPause <= 0 {
		cfg.RetryPause = DefaultRetryPause
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	tc := cfg.Tokens
	if tc == nil {
		tc = NewTokenCache()
	}
	sum := sha256.Sum256(cfg.Certificate.Leaf.Raw)
	return &Client{cfg: cfg, ep: ep, http: hc, tokens: tc, certKey: hex.EncodeToString(sum[:]), senderRUT: rut}, nil
}

// Endpoints returns the base URLs the client calls.
func (c *Client) Endpoints() Endpoints { return c.ep }

// SenderRUT returns the certificate holder's RUT, the sender of uploads.
func (c *Client) SenderRUT() string { return c.senderRUT }

// Certificate returns the certificate the client authenticates with, whose
// holder sends the uploads: a file signed again before it is sent names
// that holder as its sender (RutEnvia).
func (c *Client) Certificate() *signer.Certificate { return c.cfg.Certificate }

// response is a fully read HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request under the client's timeout and reads the whole
// response, bounded. Every failure is a *TransportError.
func (c *Client) do(ctx context.Context, op string, req *http.Request) (*response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req = req.WithContext(ctx)
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	url := req.URL.String()
	res, err := c.http.Do(req)
	if err != nil {
		return nil, c.netError(ctx, op, url, 0, err)
	}
	defer res.Body.Close()
	var r io.Reader = res.Body
	switch strings.ToLower(res.Header.Get("Content-Encoding")) {
	case "gzip":
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			return nil, &TransportError{Op: op, URL: url, Kind: KindMalformed, StatusCode: res.StatusCode, Detail: "bad gzip body", Err: err}
		}
		r = zr
	case "deflate":
		r = flate.NewReader(res.Body)
	}
	body, err := io.ReadAll(io.LimitReader(r, c.cfg.MaxResponseBytes+1))
	if err != nil {
		return nil, c.netError(ctx, op, url, res.StatusCode, err)
	}
	if int64(len(body)) > c.cfg.MaxResponseBytes {
		return nil, &TransportError{Op: op, URL: url, Kind: KindTooLarge, StatusCode: res.StatusCode,
			Detail: fmt.Sprintf("response longer than %d bytes", c.cfg.MaxResponseBytes)}
	}
	return &response{status: res.StatusCode, header: res.Header, body: body}, nil
}

// netError classifies a failure to get or read a response.
func (c *Client) netError(ctx context.Context, op, url string, status int, err error) error {
	kind := KindNetwork
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || (errors.As(err, &ne) && ne.Timeout()) {
		kind = KindTimeout
	}
	return &TransportError{Op: op, URL: url, Kind: kind, StatusCode: status, Err: err}
}

// classify turns a response that cannot be the protocol's answer into a
// *TransportError: no body, "Error 500", an HTML page. It returns nil for a
// body worth parsing.
func classify(op, url string, r *response) error {
	trimmed := bytes.TrimSpace(r.body)
	switch {
	case len(trimmed) == 0:
		return &TransportError{Op: op, URL: url, Kind: KindEmpty, StatusCode: r.status}
	case bytes.HasPrefix(trimmed, []byte("Error 500")):
		return &TransportError{Op: op, URL: url, Kind: KindError500, StatusCode: r.status, Detail: snippet(trimmed)}
	case looksHTML(trimmed, r.header):
		return &TransportError{Op: op, URL: url, Kind: KindHTML, StatusCode: r.status, Detail: snippet(trimmed)}
	}
	return nil
}

// looksHTML reports whether a body is an HTML page. A body that starts
// with an XML declaration is XML whatever its Content-Type says (DTEUpload
// labels its RECEPCIONDTE answer text/html).
func looksHTML(b []byte, h http.Header) bool {
	if bytes.HasPrefix(b, []byte("<?xml")) {
		return false
	}
	if strings.HasPrefix(strings.ToLower(h.Get("Content-Type")), "text/html") {
		return true
	}
	head := b
	if len(head) > 512 {
		head = head[:512]
	}
	lower := bytes.ToLower(head)
	return bytes.HasPrefix(lower, []byte("<!doctype html")) || bytes.Contains(lower, []byte("<html")) ||
		bytes.Contains(lower, []byte("<head")) || bytes.Contains(lower, []byte("<body"))
}

// snippet returns the start of a body for an error message, as printable
// text.
func snippet(b []byte) string {
	const max = 120
	if len(b) > max {
		b = b[:max]
	}
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, string(bytes.ToValidUTF8(b, []byte("?"))))
	return strings.Join(strings.Fields(s), " ")
}

// retry runs f, repeating it after transport errors up to cfg.Retries
// times with a growing pause; it stops when ctx ends. A fault saying the
// token is invalid is returned at once: a new token is the cure, not a
// repeat.
func retry[T any](ctx context.Context, c *Client, f func() (T, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		v, err := f()
		var te *TransportError
		if err == nil || !errors.As(err, &te) || isTokenFault(te) || attempt >= c.cfg.Retries || ctx.Err() != nil {
			return v, err
		}
		t := time.NewTimer(time.Duration(attempt+1) * c.cfg.RetryPause)
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, err
		case <-t.C:
		}
	}
}
