package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// DefaultMaxBodyBytes is the body cap of [Verifier.Middleware] when
// [MiddlewareOptions.MaxBodyBytes] is not set: 1 MiB.
const DefaultMaxBodyBytes = 1 << 20

// MiddlewareOptions tunes [Verifier.Middleware]. The zero value is ready to
// use.
type MiddlewareOptions struct {
	// MaxBodyBytes caps the request body; a larger one is answered 413.
	// Zero or negative means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Deduper, when set, is consulted after verification: a webhook-id it
	// has already seen is answered 200 without calling the handler. If the
	// handler answers other than 2xx (or panics), the id is released so the
	// sender's retry is processed.
	Deduper Deduper
	// Observer, when set, is called once per request after the response
	// is complete, for logging or metrics.
	Observer func(r *http.Request, o Outcome)
}

// Outcome describes how [Verifier.Middleware] finished one request.
type Outcome struct {
	// Status is the HTTP status answered, by the middleware or the handler.
	Status int
	// Delivery is the verified delivery, nil when verification did not
	// succeed.
	Delivery *Delivery
	// Err is nil when the handler answered. Otherwise it says why the
	// middleware answered itself, and wraps ErrBodyTooLarge (413), one of
	// the verification errors (401), ErrDuplicate (200), or a body read or
	// Deduper failure (400 or 503).
	Err error
}

// Delivery is a verified webhook delivery, available to the wrapped handler
// through [DeliveryFromContext].
type Delivery struct {
	// ID is the webhook-id, stable across retries: the deduplication key.
	ID string
	// Timestamp is the webhook-timestamp of this attempt.
	Timestamp time.Time
	// Body is the verified raw body, the same bytes the handler reads
	// from r.Body. Do not modify it.
	Body []byte
}

// deliveryKey is the context key of a verified Delivery.
type deliveryKey struct{}

// DeliveryFromContext returns the verified delivery that
// [Verifier.Middleware] stored in the request context.
func DeliveryFromContext(ctx context.Context) (*Delivery, bool) {
	d, ok := ctx.Value(deliveryKey{}).(*Delivery)
	return d, ok
}

// Middleware wraps next so it only sees verified deliveries. For each
// request it first checks the headers (presence, form, limits) and the
// timestamp against the tolerance, answering 401 with a generic body
// before reading any of the body, so a prober learns nothing and a flood of
// unsigned or stale requests costs no body buffer. It then refuses a
// declared Content-Length above the cap (413), reads the body into a buffer
// that grows only as bytes arrive (413 above the cap, 400 if reading fails),
// checks the signature over it (401), optionally deduplicates by
// webhook-id, and calls next with r.Body replaced by the same verified
// bytes and the [Delivery] in the context.
func (v *Verifier) Middleware(next http.Handler, opts MiddlewareOptions) http.Handler {
	maxBody := opts.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := v.serve(w, r, next, maxBody, opts.Deduper)
		if opts.Observer != nil {
			opts.Observer(r, out)
		}
	})
}

// serve does the work of Middleware and reports the outcome.
func (v *Verifier) serve(w http.ResponseWriter, r *http.Request, next http.Handler, maxBody int64, dedup Deduper) Outcome {
	unauthorized := func(err error) Outcome {
		http.Error(w, "webhook verification failed", http.StatusUnauthorized)
		return Outcome{Status: http.StatusUnauthorized, Err: err}
	}
	var c checkedHeaders
	id, ts, sig, err := lookupHeaders(r.Header)
	if err == nil {
		err = v.checkHeaders(id, ts, sig, &c)
	}
	if err != nil {
		return unauthorized(err)
	}
	body, err := readBody(w, r, maxBody)
	if err != nil {
		if errors.Is(err, ErrBodyTooLarge) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return Outcome{Status: http.StatusRequestEntityTooLarge, Err: err}
		}
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return Outcome{Status: http.StatusBadRequest, Err: err}
	}
	if err := v.checkMAC(&c, body); err != nil {
		return unauthorized(err)
	}
	sec, _ := parseTimestamp(ts)
	d := &Delivery{ID: id, Timestamp: time.Unix(sec, 0), Body: body}

	if dedup != nil {
		first, err := dedup.Claim(r.Context(), id)
		if err != nil {
			http.Error(w, "deduplication store unavailable", http.StatusServiceUnavailable)
			return Outcome{Status: http.StatusServiceUnavailable, Delivery: d, Err: fmt.Errorf("webhook: dedup claim of %s: %w", clip(id), err)}
		}
		if !first {
			w.WriteHeader(http.StatusOK)
			return Outcome{Status: http.StatusOK, Delivery: d, Err: fmt.Errorf("%w: %s %s", ErrDuplicate, HeaderID, clip(id))}
		}
	}

	r2 := r.WithContext(context.WithValue(r.Context(), deliveryKey{}, d))
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	rec := &statusRecorder{ResponseWriter: w}
	done := false
	defer func() {
		// Runs also when next panics: give the id back so a retry is
		// processed, then let the panic continue.
		if dedup != nil && (!done || rec.status() < 200 || rec.status() > 299) {
			_ = dedup.Release(context.WithoutCancel(r.Context()), id)
		}
	}()
	next.ServeHTTP(rec, r2)
	done = true
	return Outcome{Status: rec.status(), Delivery: d}
}

// initialBodyBuffer is the most readBody allocates before any byte of the
// body has arrived, whatever Content-Length announces.
const initialBodyBuffer = 4 << 10

// readBody reads at most maxBody bytes of the request body. The buffer
// starts at no more than initialBodyBuffer bytes and doubles only when the
// bytes already received fill it, so memory follows what the client
// actually sent (at most twice that), never the Content-Length it
// announced.
func readBody(w http.ResponseWriter, r *http.Request, maxBody int64) ([]byte, error) {
	if r.ContentLength > maxBody {
		return nil, fmt.Errorf("%w: Content-Length %d exceeds %d bytes", ErrBodyTooLarge, r.ContentLength, maxBody)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	size := int64(initialBodyBuffer)
	if r.ContentLength >= 0 && r.ContentLength < size {
		size = r.ContentLength + 1 // +1 so EOF is seen without growing
	}
	buf := make([]byte, 0, size)
	lr := http.MaxBytesReader(w, r.Body, maxBody)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf)) // double, from bytes received
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, fmt.Errorf("%w: body exceeds %d bytes", ErrBodyTooLarge, maxBody)
			}
			return nil, fmt.Errorf("webhook: reading request body: %w", err)
		}
	}
}

// statusRecorder remembers the status the handler answered.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

// WriteHeader records the status and forwards it.
func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 && code >= 200 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write records the implicit 200 and forwards the bytes.
func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap exposes the underlying writer to http.ResponseController.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// status is the recorded status, 200 when the handler wrote nothing.
func (s *statusRecorder) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}
