package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dtekit/dtekit/api"
)

// TokenSource gives the bearer token of each request: a JWT that expires
// is refreshed by the source, which the client asks before every attempt.
type TokenSource interface {
	Token(ctx context.Context) (string, error)
}

// TokenSourceFunc adapts a function to TokenSource.
type TokenSourceFunc func(ctx context.Context) (string, error)

// Token calls f.
func (f TokenSourceFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

// Option configures a Client.
type Option func(*Client) error

// WithAPIKey authenticates every request with this API key (X-Api-Key).
func WithAPIKey(key string) Option {
	return func(c *Client) error {
		if key == "" {
			return errors.New("client: WithAPIKey: the key is empty")
		}
		c.apiKey = key
		return nil
	}
}

// WithTokenSource authenticates every request with a bearer token from ts.
func WithTokenSource(ts TokenSource) Option {
	return func(c *Client) error {
		if ts == nil {
			return errors.New("client: WithTokenSource: the source is nil")
		}
		c.tokens = ts
		return nil
	}
}

// WithHTTPClient sends the requests through hc (its transport, proxy and
// timeouts); nil means http.DefaultClient.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc != nil {
			c.hc = hc
		}
		return nil
	}
}

// WithUserAgent puts product (e.g. "acme-erp/2.1") before the client's own
// User-Agent.
func WithUserAgent(product string) Option {
	return func(c *Client) error {
		c.userAgent = product + " " + c.userAgent
		return nil
	}
}

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(c *Client) error {
		c.retry = p.withDefaults()
		return nil
	}
}

// Client calls one dtekit server. It is safe for concurrent use.
type Client struct {
	base      *url.URL
	hc        *http.Client
	apiKey    string
	tokens    TokenSource
	userAgent string
	retry     RetryPolicy
	// The resource services, grouped as billing's face is.
	Documents *DocumentService
	Envelopes *EnvelopeService
	CAFs      *CAFService
	Company   *CompanyService
	Webhooks  *WebhookService
	Catalog   *CatalogService
	Received  *ReceivedService
	Mail      *MailService
	Cesiones  *CesionService
	// sleep waits between attempts; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a Client of the server at baseURL (its root, e.g.
// "https://dte.example.cl"; the API's paths are appended to it). One of
// WithAPIKey or WithTokenSource is required.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want an absolute http or https URL", baseURL)
	}
	c := &Client{base: u, hc: http.DefaultClient, userAgent: "dtekit-go/" + version(),
		retry: DefaultRetryPolicy, sleep: sleepCtx}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.apiKey == "" && c.tokens == nil {
		return nil, errors.New("client: a credential is required: WithAPIKey or WithTokenSource")
	}
	if c.apiKey != "" && c.tokens != nil {
		return nil, errors.New("client: give WithAPIKey or WithTokenSource, not both")
	}
	c.resources()
	return c, nil
}

// version is the module's version as the binary records it.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/dtekit/dtekit" {
				return d.Version
			}
		}
		if bi.Main.Path == "github.com/dtekit/dtekit" && bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "devel"
}

// basePath is where the REST API's resources live under the server's
// root.
const basePath = "/api/v1/billing"

// request is one call: what to send and where its answer goes.
type request struct {
	method string
	path   string // under basePath, escaped
	query  url.Values
	// body is JSON-encoded when not nil, unless raw is set.
	body any
	// raw is a body sent as it is, with contentType.
	raw         []byte
	contentType string
	// idempotencyKey is the caller's key; a mutating call without one
	// gets a new one, the same on every retry.
	idempotencyKey string
	// out receives the JSON answer (nil: discarded).
	out any
	// stream, when set, returns the answer's body to the caller instead
	// of decoding it.
	stream bool
	// once keeps a network error from being retried: the route does not
	// read the Idempotency-Key and is not idempotent (a creation, a
	// decision), so a request that may have reached the server is not
	// sent again.
	once bool
}

// Response is what a call learnt besides its answer's body.
type Response struct {
	// StatusCode is the final attempt's status.
	StatusCode int
	// RequestID is the answer's X-Request-Id.
	RequestID string
	// Replayed reports an idempotent replay (X-Idempotency-Replay:
	// true): the answer is that of an earlier call with the same key.
	Replayed bool
	// IdempotencyKey is the key the call carried ("" for a read).
	IdempotencyKey string
	// Attempts is how many times the call was sent.
	Attempts int
	// ContentType is the answer's Content-Type.
	ContentType string
}

// do sends r, retrying under the policy, and decodes the answer into
// r.out. With r.stream the answer's body is returned open.
func (c *Client) do(ctx context.Context, r request) (*Response, io.ReadCloser, error) {
	if ctx == nil {
		return nil, nil, errors.New("client: nil context")
	}
	var payload []byte
	switch {
	case r.raw != nil:
		payload = r.raw
	case r.body != nil:
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, nil, fmt.Errorf("client: encoding the request: %w", err)
		}
		payload = b
	}
	key := r.idempotencyKey
	if key == "" && r.method != http.MethodGet && r.method != http.MethodHead {
		key = newKey()
	}
	u := *c.base
	u.Path += basePath + r.path
	u.RawQuery = r.query.Encode()
	start := time.Now()
	resp := &Response{IdempotencyKey: key}
	for attempt := 1; ; attempt++ {
		resp.Attempts = attempt
		httpResp, err := c.send(ctx, r, u.String(), payload, key)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return resp, nil, ctx.Err()
			}
			// A network error: the server may or may not have acted;
			// the idempotency key makes a retry safe either way, but
			// for a call whose route neither reads it nor is idempotent.
			if r.once {
				return resp, nil, err
			}
		default:
			resp.StatusCode = httpResp.StatusCode
			resp.RequestID = httpResp.Header.Get("X-Request-Id")
			resp.Replayed = httpResp.Header.Get("X-Idempotency-Replay") == "true"
			resp.ContentType = httpResp.Header.Get("Content-Type")
			if httpResp.StatusCode < 400 {
				if r.stream {
					return resp, httpResp.Body, nil
				}
				return resp, nil, decode(httpResp, r.out)
			}
			apiErr := readError(httpResp)
			err = apiErr
			if !retryable(httpResp.StatusCode, string(apiErr.Code)) {
				return resp, nil, apiErr
			}
			if d, ok := retryAfter(httpResp.Header, time.Now()); ok {
				wait = d
			}
		}
		if attempt >= c.retry.MaxAttempts {
			return resp, nil, err
		}
		if wait == 0 {
			wait = c.retry.backoff(attempt)
		}
		if time.Since(start)+wait > c.retry.MaxElapsed {
			return resp, nil, err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return resp, nil, err
		}
	}
}

// send makes one attempt.
func (c *Client) send(ctx context.Context, r request, u string, payload []byte, key string) (*http.Response, error) {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return nil, err
	}
	if payload != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if r.stream {
		// A download answers its document, or the JSON error envelope.
		req.Header.Set("Accept", "*/*")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", c.userAgent)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if c.apiKey != "" {
		req.Header.Set("X-Api-Key", c.apiKey)
	} else {
		tok, err := c.tokens.Token(ctx)
		if err != nil {
			return nil, fmt.Errorf("client: token source: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return c.hc.Do(req)
}

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 1 << 20

// readError reads an error answer's envelope and closes its body.
func readError(resp *http.Response) *Error {
	defer resp.Body.Close()
	var env api.ErrorResponse
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var envp *api.ErrorResponse
	if json.Unmarshal(b, &env) == nil {
		envp = &env
	}
	return errorFrom(resp.StatusCode, envp, resp.Header.Get("X-Request-Id"), resp.Header.Get("Retry-After"))
}

// decode reads a successful answer into out and closes its body.
func decode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	if out == nil || resp.StatusCode == http.StatusNoContent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: decoding the answer of %s: %w", resp.Request.URL.Path, err)
	}
	return nil
}

// newKey returns a random (version 4) UUID, the contract's form of an
// Idempotency-Key. Not github.com/google/uuid, which the store uses: it
// links database/sql/driver, which a client must not (TestSmall).
func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
