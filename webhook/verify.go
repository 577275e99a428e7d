package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, in either direction, before it is refused (inclusive).
const DefaultTolerance = 5 * time.Minute

// maxTimestampDigits bounds webhook-timestamp: int64 seconds have at most 19
// decimal digits.
const maxTimestampDigits = 19

// macLen is the length of an HMAC-SHA256 tag; b64MacLen its padded base64.
const (
	macLen    = sha256.Size
	b64MacLen = 44
)

// Verifier checks deliveries against one or more secrets. It is safe for
// concurrent use; create it once with [NewVerifier] and share it.
type Verifier struct {
	keys      []*verifierKey
	tolerance uint64 // seconds, inclusive
	now       func() time.Time
}

// verifierKey is one secret with a pool of keyed HMAC states, so a
// verification costs no allocation once the pool is warm.
type verifierKey struct {
	key  []byte
	pool sync.Pool // of *macState
}

// macState is a reusable HMAC with scratch space for the signed prefix and
// the resulting tag.
type macState struct {
	h      hash.Hash
	prefix [MaxIDBytes + 1 + maxTimestampDigits + 1]byte
	sum    [macLen]byte
}

// Option configures a [Verifier].
type Option func(*Verifier) error

// WithTolerance sets how far the timestamp may be from the clock, in either
// direction, inclusive, compared in whole seconds. The default is
// [DefaultTolerance] (300 s); a negative value is an error.
func WithTolerance(d time.Duration) Option {
	return func(v *Verifier) error {
		if d < 0 {
			return fmt.Errorf("webhook: tolerance %s is negative", d)
		}
		v.tolerance = uint64(d / time.Second)
		return nil
	}
}

// WithClock replaces time.Now as the verifier's clock (for tests, or to use
// a clock the application already controls). now must not be nil.
func WithClock(now func() time.Time) Option {
	return func(v *Verifier) error {
		if now == nil {
			return errors.New("webhook: clock is nil")
		}
		v.now = now
		return nil
	}
}

// NewVerifier returns a Verifier accepting a delivery signed with any of
// secrets (give the old and the new one while rotating). It fails when no
// secret is given, when one is the zero Secret, or when an option fails.
func NewVerifier(secrets []Secret, opts ...Option) (*Verifier, error) {
	if len(secrets) == 0 {
		return nil, errors.New("webhook: verifier needs at least one secret")
	}
	if len(secrets) > MaxSignatures {
		return nil, fmt.Errorf("webhook: verifier given %d secrets, at most %d allowed", len(secrets), MaxSignatures)
	}
	v := &Verifier{tolerance: uint64(DefaultTolerance / time.Second), now: time.Now}
	for i, s := range secrets {
		if !s.valid() {
			return nil, fmt.Errorf("webhook: verifier secret %d is not initialized (use ParseSecret, NewSecret or GenerateSecret)", i)
		}
		k := &verifierKey{key: append([]byte(nil), s.key()...)}
		k.pool.New = func() any { return &macState{h: hmac.New(sha256.New, k.key)} }
		v.keys = append(v.keys, k)
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Verify checks a delivery given its request headers and its raw body (the
// exact bytes received, before any JSON parsing). Header names are matched
// case-insensitively, also in maps built by hand with lowercase keys. It
// returns nil when a v1 entry matches, or an error wrapping one of
// [ErrMissingHeader], [ErrInvalidHeader], [ErrTooOld], [ErrTooNew] or
// [ErrNoMatchingSignature].
func (v *Verifier) Verify(header http.Header, body []byte) error {
	id, ts, sig, err := lookupHeaders(header)
	if err != nil {
		return err
	}
	return v.VerifyValues(id, ts, sig, body)
}

// VerifyValues is [Verifier.Verify] for header values already extracted
// (for a transport other than net/http, or a stored delivery). An empty
// value counts as a missing header.
//
// Checks, in order: all three values present; id at most 256 bytes without
// '.'; signature at most 4 KiB and 32 entries; timestamp plain decimal
// digits (no sign, no leading zero) within the tolerance. Only then is any
// HMAC computed, and only for well-formed "v1," entries; other versions and
// malformed entries are ignored. Tags are compared in constant time.
func (v *Verifier) VerifyValues(id, timestamp, signature string, body []byte) error {
	var c checkedHeaders
	if err := v.checkHeaders(id, timestamp, signature, &c); err != nil {
		return err
	}
	return v.checkMAC(&c, body)
}

// checkedHeaders holds the header values of a delivery that passed
// checkHeaders, with the decoded candidate tags, ready for checkMAC.
type checkedHeaders struct {
	id, timestamp string
	cands         [MaxSignatures][macLen]byte
	n             int
}

// checkHeaders does every check of VerifyValues that does not need the
// body, so a receiver can refuse a delivery before reading it, and fills c.
func (v *Verifier) checkHeaders(id, timestamp, signature string, c *checkedHeaders) error {
	switch {
	case id == "":
		return fmt.Errorf("%w %s", ErrMissingHeader, HeaderID)
	case timestamp == "":
		return fmt.Errorf("%w %s", ErrMissingHeader, HeaderTimestamp)
	case signature == "":
		return fmt.Errorf("%w %s", ErrMissingHeader, HeaderSignature)
	}
	if len(id) > MaxIDBytes {
		return fmt.Errorf("%w: %s is %d bytes, at most %d allowed", ErrInvalidHeader, HeaderID, len(id), MaxIDBytes)
	}
	if strings.IndexByte(id, '.') >= 0 {
		return fmt.Errorf("%w: %s %s contains '.'", ErrInvalidHeader, HeaderID, clip(id))
	}
	if len(signature) > MaxSignatureHeaderBytes {
		return fmt.Errorf("%w: %s is %d bytes, at most %d allowed", ErrInvalidHeader, HeaderSignature, len(signature), MaxSignatureHeaderBytes)
	}
	if n := countEntries(signature); n > MaxSignatures {
		return fmt.Errorf("%w: %s has %d entries, at most %d allowed", ErrInvalidHeader, HeaderSignature, n, MaxSignatures)
	}
	ts, ok := parseTimestamp(timestamp)
	if !ok {
		return fmt.Errorf("%w: %s %s is not a plain decimal Unix time", ErrInvalidHeader, HeaderTimestamp, clip(timestamp))
	}
	if err := v.checkTime(ts); err != nil {
		return err
	}

	// Decode the candidate tags before computing anything.
	c.id, c.timestamp, c.n = id, timestamp, 0
	strict := base64.StdEncoding.Strict()
	for rest := signature; rest != ""; {
		var tok string
		tok, rest, _ = strings.Cut(rest, " ")
		if len(tok) != 3+b64MacLen || tok[:3] != "v1," {
			continue
		}
		var src [b64MacLen]byte
		var dst [b64MacLen]byte
		copy(src[:], tok[3:])
		m, err := strict.Decode(dst[:], src[:])
		if err != nil || m != macLen {
			continue
		}
		copy(c.cands[c.n][:], dst[:macLen])
		c.n++
	}
	if c.n == 0 {
		return fmt.Errorf("%w: %s has no well-formed v1 entry", ErrNoMatchingSignature, HeaderSignature)
	}
	return nil
}

// checkMAC compares the tags of headers checked by checkHeaders with the
// HMAC of the body under every secret.
func (v *Verifier) checkMAC(c *checkedHeaders, body []byte) error {
	for _, k := range v.keys {
		st := k.pool.Get().(*macState)
		st.h.Reset()
		p := copy(st.prefix[:], c.id)
		st.prefix[p] = '.'
		p++
		p += copy(st.prefix[p:], c.timestamp)
		st.prefix[p] = '.'
		p++
		st.h.Write(st.prefix[:p])
		st.h.Write(body)
		sum := st.h.Sum(st.sum[:0])
		match := false
		for i := 0; i < c.n; i++ {
			if hmac.Equal(sum, c.cands[i][:]) {
				match = true
			}
		}
		k.pool.Put(st)
		if match {
			return nil
		}
	}
	return fmt.Errorf("%w: none of %d v1 entries matches the %d secret(s)", ErrNoMatchingSignature, c.n, len(v.keys))
}

// checkTime compares the timestamp with the clock.
func (v *Verifier) checkTime(ts int64) error {
	now := v.now().Unix()
	// Differences are taken in uint64 so no int64 pair can overflow.
	if ts < now {
		if age := uint64(now) - uint64(ts); age > v.tolerance {
			return fmt.Errorf("%w: %s %d is %d s before the clock, tolerance %d s", ErrTooOld, HeaderTimestamp, ts, age, v.tolerance)
		}
	} else if ahead := uint64(ts) - uint64(now); ahead > v.tolerance {
		return fmt.Errorf("%w: %s %d is %d s after the clock, tolerance %d s", ErrTooNew, HeaderTimestamp, ts, ahead, v.tolerance)
	}
	return nil
}

// lookupHeaders finds the three headers case-insensitively. A header given
// more than once (as several values, or under differently cased keys) is
// refused: which copy was signed would be ambiguous.
func lookupHeaders(h http.Header) (id, ts, sig string, err error) {
	var nID, nTS, nSig int
	for k, vals := range h {
		switch len(k) {
		case len(HeaderID):
			if strings.EqualFold(k, HeaderID) {
				nID += len(vals)
				if len(vals) > 0 {
					id = vals[0]
				}
			}
		case len(HeaderTimestamp): // == len(HeaderSignature)
			if strings.EqualFold(k, HeaderTimestamp) {
				nTS += len(vals)
				if len(vals) > 0 {
					ts = vals[0]
				}
			} else if strings.EqualFold(k, HeaderSignature) {
				nSig += len(vals)
				if len(vals) > 0 {
					sig = vals[0]
				}
			}
		}
	}
	switch {
	case id == "":
		return "", "", "", fmt.Errorf("%w %s", ErrMissingHeader, HeaderID)
	case ts == "":
		return "", "", "", fmt.Errorf("%w %s", ErrMissingHeader, HeaderTimestamp)
	case sig == "":
		return "", "", "", fmt.Errorf("%w %s", ErrMissingHeader, HeaderSignature)
	case nID > 1:
		return "", "", "", fmt.Errorf("%w: %s given %d times", ErrInvalidHeader, HeaderID, nID)
	case nTS > 1:
		return "", "", "", fmt.Errorf("%w: %s given %d times", ErrInvalidHeader, HeaderTimestamp, nTS)
	case nSig > 1:
		return "", "", "", fmt.Errorf("%w: %s given %d times", ErrInvalidHeader, HeaderSignature, nSig)
	}
	return id, ts, sig, nil
}

// parseTimestamp accepts 1 to 19 ASCII digits without a leading zero (the
// form every sender writes) that fit in an int64.
func parseTimestamp(s string) (int64, bool) {
	if len(s) == 0 || len(s) > maxTimestampDigits || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0') // 19 digits cannot overflow uint64
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// countEntries counts the non-empty space-separated entries of a signature
// header.
func countEntries(s string) int {
	n := 0
	inTok := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			inTok = false
		} else if !inTok {
			inTok = true
			n++
		}
	}
	return n
}

// clip quotes an untrusted header value for an error message, cut to 64
// bytes.
func clip(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return fmt.Sprintf("%q", s)
}
