package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxResponseBytes is how much of a receiver's response body
// [Sender] keeps for the attempt log when [Sender.MaxResponseBytes] is not
// set: 16 KiB.
const DefaultMaxResponseBytes = 16 << 10

// maxDrainBytes is how much more of a response body Send reads and
// discards, so the connection can be reused, before closing it.
const maxDrainBytes = 64 << 10

// ErrorClass says how a delivery attempt failed, for the attempt log and
// the retry decision. The empty class means the receiver answered 2xx.
type ErrorClass string

// The classes of [Result.Class].
const (
	// ClassNone: the receiver answered 2xx.
	ClassNone ErrorClass = ""
	// ClassHTTP: the receiver answered, with a status other than 2xx
	// (3xx included: redirects are never followed).
	ClassHTTP ErrorClass = "http_status"
	// ClassTimeout: connect, TLS handshake, or the whole attempt ran out
	// of time.
	ClassTimeout ErrorClass = "timeout"
	// ClassDNS: the host name did not resolve.
	ClassDNS ErrorClass = "dns"
	// ClassConnect: the TCP connection was refused or reset.
	ClassConnect ErrorClass = "refused"
	// ClassTLS: the TLS handshake or the certificate check failed.
	ClassTLS ErrorClass = "tls"
	// ClassBlocked: the destination resolved to an address deliveries may
	// not reach. The client reports it with an error that has a method
	// Blocked() bool returning true (as internal/ssrf's guard does).
	ClassBlocked ErrorClass = "private_address"
	// ClassRequest: any other failure to send the request or read the
	// response headers.
	ClassRequest ErrorClass = "request"
)

// Message is one event as delivered to one endpoint.
type Message struct {
	// ID is the webhook-id: the event id, the same on every attempt and
	// manual resend (see [NewMessageID]).
	ID string
	// Body is the event body frozen when the event was recorded (see
	// [MarshalEvent]); every attempt sends these exact bytes.
	Body []byte
	// Secrets are the endpoint's active secrets; each signs every attempt
	// (one v1 entry each), so a receiver holding either key of a rotation
	// accepts it.
	Secrets []Secret
}

// Result describes one delivery attempt.
type Result struct {
	// Time is when the attempt started; its Unix seconds are the
	// webhook-timestamp that was signed.
	Time time.Time
	// Duration is how long the attempt took, response read included.
	Duration time.Duration
	// Status is the HTTP status answered, 0 when there was no response.
	Status int
	// Class is empty on 2xx, otherwise how the attempt failed.
	Class ErrorClass
	// Err is the transport error when there was no response (Status 0).
	Err error
	// RetryAfter is the wait the receiver asked for with Retry-After on a
	// 429 or 5xx response (delta seconds or HTTP date, relative to Time),
	// 0 when absent, malformed or in the past.
	RetryAfter time.Duration
	// Response holds the first bytes of the response body, at most the
	// sender's MaxResponseBytes; Truncated reports that more followed.
	Response  []byte
	Truncated bool
}

// OK reports whether the receiver accepted the delivery (2xx).
func (r Result) OK() bool { return r.Class == ClassNone && r.Status >= 200 && r.Status <= 299 }

// Gone reports whether the receiver answered 410 Gone: the endpoint is
// retired and should be disabled, with no further attempts.
func (r Result) Gone() bool { return r.Status == http.StatusGone }

// Sender delivers messages: one [Sender.Send] is one signed attempt. It is
// safe for concurrent use.
type Sender struct {
	// Client sends the requests. It should refuse redirects, proxies from
	// the environment and internal destinations, and bound its time (the
	// dtekit server uses internal/ssrf's client). Required.
	Client *http.Client
	// Now is the clock of the webhook-timestamp; nil means time.Now.
	Now func() time.Time
	// MaxResponseBytes bounds the response body kept in [Result.Response];
	// zero or negative means DefaultMaxResponseBytes.
	MaxResponseBytes int
	// UserAgent, when set, is sent as User-Agent.
	UserAgent string
	// Timeout, when positive, bounds each attempt whole, whatever the
	// Client's own settings: name resolution, connect, TLS handshake,
	// sending the request, and reading the response headers and body. A
	// receiver that takes the connection and never answers, or answers a
	// byte at a time, is cut at the bound (an attempt cut before the
	// status arrives fails with ClassTimeout; once a status has arrived, a
	// body cut short is kept as far as it came).
	Timeout time.Duration
}

// Send makes one attempt to deliver msg to url: it signs msg.Body under
// msg.ID with every secret at the current time, POSTs it as
// application/json, and classifies what happened. Errors of the request
// itself (no client, an unusable URL, an invalid id, no secret) are
// returned as an error; everything that happens on the wire is in the
// Result.
func (s *Sender) Send(ctx context.Context, url string, msg Message) (Result, error) {
	if s.Client == nil {
		return Result{}, errors.New("webhook: send: Sender.Client is nil")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	start := now()
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	h, err := Sign(msg.Secrets, msg.ID, start, msg.Body)
	if err != nil {
		return Result{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(msg.Body))
	if err != nil {
		return Result{}, fmt.Errorf("webhook: send %s: %w", msg.ID, err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	if s.UserAgent != "" {
		req.Header.Set("User-Agent", s.UserAgent)
	}
	res := Result{Time: start}
	wall := time.Now()
	resp, err := s.Client.Do(req)
	if err != nil {
		res.Duration = time.Since(wall)
		res.Class, res.Err = Classify(err), err
		return res, nil
	}
	defer resp.Body.Close()
	limit := s.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if len(body) > limit {
		body, res.Truncated = body[:limit], true
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrainBytes))
	}
	res.Duration = time.Since(wall)
	res.Status, res.Response = resp.StatusCode, body
	if !res.OK() {
		res.Class = ClassHTTP
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		res.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), start)
	}
	return res, nil
}

// Classify names the class of a transport error returned by an
// http.Client: blocked, timeout, dns, tls, connect, or request.
func Classify(err error) ErrorClass {
	var blocked interface{ Blocked() bool }
	if errors.As(err, &blocked) && blocked.Blocked() {
		return ClassBlocked
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && !dns.IsTimeout {
		return ClassDNS
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return ClassTimeout
	}
	var (
		rec     tls.RecordHeaderError
		alert   tls.AlertError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	if errors.As(err, &rec) || errors.As(err, &alert) || errors.As(err, &verify) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) ||
		strings.Contains(err.Error(), "tls: ") {
		return ClassTLS
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return ClassConnect
	}
	return ClassRequest
}

// maxRetryAfter caps what parseRetryAfter returns; a RetryPolicy clamps
// further.
const maxRetryAfter = 7 * 24 * time.Hour

// parseRetryAfter reads a Retry-After value, delta seconds or an HTTP date
// taken relative to now. It returns 0 when v is empty, malformed, or not in
// the future.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return min(time.Duration(n)*time.Second, maxRetryAfter)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}
