package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/dtekit/dtekit/api"
	"github.com/dtekit/dtekit/billing/fault"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyPrincipal
)

// requestID returns the id of the request carried by ctx ("" outside one).
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// newRequestID returns 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validRequestID reports whether a client-sent X-Request-Id may be reused:
// 1 to 64 characters of [A-Za-z0-9._-], so it can never inject anything
// into logs or headers.
func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status  int
	written int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.written += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP serves the API: it assigns the request id, recovers panics,
// answers unknown routes and methods with the envelope, records metrics and
// writes one log line per request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !validRequestID(id) {
		id = newRequestID()
	}
	ctx := context.WithValue(r.Context(), keyRequestID, id)
	r = r.WithContext(ctx)
	w.Header().Set("X-Request-Id", id)
	sw := &statusWriter{ResponseWriter: w}

	// Capture the request's authenticated principal for the log line.
	var pr *api.Principal
	ctx = context.WithValue(ctx, keyPrincipal, &pr)
	r = r.WithContext(ctx)

	route := s.dispatch(sw, r)

	status := sw.status
	if status == 0 {
		status = http.StatusOK
	}
	elapsed := time.Since(start)
	s.metrics.observeRequest(r.Method, route, status, elapsed)
	attrs := []slog.Attr{
		slog.String("request_id", id),
		slog.String("method", r.Method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Int64("bytes", sw.written),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("remote", r.RemoteAddr),
	}
	if pr != nil {
		attrs = append(attrs, slog.String("empresa_id", pr.EmpresaID), slog.String("credential", pr.Credential))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	s.logger.LogAttrs(ctx, level, "request", attrs...)
}

// dispatch routes r and returns the route label for metrics and logs: the
// matched pattern, or "unmatched".
func (s *Server) dispatch(w *statusWriter, r *http.Request) (route string) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
				slog.String("request_id", requestID(r.Context())),
				slog.String("route", route),
				slog.String("panic", fmt.Sprint(v)),
				slog.String("stack", string(debug.Stack())))
			if w.status != 0 {
				// Headers are gone; the client sees a truncated response.
				panic(http.ErrAbortHandler)
			}
			s.writeError(w, r, newError(http.StatusInternalServerError, fault.Internal,
				"internal error; quote the request id when reporting it"))
		}
	}()
	if r.URL.Path != cleanPath(r.URL.Path) {
		// The mux would redirect to the cleaned path; an API client that
		// sends "." or ".." segments or doubled slashes gets a plain 404.
		s.writeError(w, r, newError(http.StatusNotFound, fault.NotFound, "no such path: "+strconv.Quote(r.URL.Path)))
		return "unmatched"
	}
	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		// No route: the mux's own answer is a plain-text 404 or 405 (or a
		// redirect to a cleaned path). Learn which, answer the envelope.
		rec := &headerRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			he := newError(http.StatusMethodNotAllowed, fault.MethodNotAllowed,
				"method "+r.Method+" is not allowed on this path")
			if allow := rec.header.Get("Allow"); allow != "" {
				he.header = http.Header{"Allow": {allow}}
			}
			s.writeError(w, r, he)
			return "unmatched"
		}
		s.writeError(w, r, newError(http.StatusNotFound, fault.NotFound, "no such path: "+strconv.Quote(r.URL.Path)))
		return "unmatched"
	}
	route = pattern
	s.mux.ServeHTTP(w, r)
	return route
}

// headerRecorder is a ResponseWriter that keeps only the status and headers
// of the mux's fallback answers.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}
func (h *headerRecorder) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return len(b), nil
}

// cleanPath is the canonical form of an URL path, as http.ServeMux computes
// it: path.Clean, rooted, keeping a trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
