package server

import (
	"slices"
	"strings"
	"testing"
)

// TestRequestIDValidated: a client's X-Request-Id is echoed (header and
// the error envelope's context.request_id) only when it is 1 to 64
// characters of [A-Za-z0-9._-]; anything else (markup, quotes, spaces,
// non-ASCII, a 65-character id, an empty one) is replaced by an id of
// the server's own, 32 hex digits, and never appears in the answer.
func TestRequestIDValidated(t *testing.T) {
	t.Parallel()
	s := newInfraServer(t, rsaKey(t, 2048), RateLimit{})
	tt := &tester{t: t, h: s}
	ok := []string{"abc-123", "A.b_C", strings.Repeat("7", 64)}
	bad := []string{"<script>alert(1)</script>", `x"y`, "a b", "ñandú", strings.Repeat("7", 65), "id;drop", "%0d%0aSet-Cookie:x", ""}
	for _, id := range append(ok, bad...) {
		req := newReq("GET", "/nope", nil)
		req.Header.Set("X-Request-Id", id)
		r := tt.do(req)
		got := r.Header.Get("X-Request-Id")
		valid := slices.Contains(ok, id)
		switch {
		case valid && got != id:
			t.Errorf("X-Request-Id %q: echoed %q, want it kept", id, got)
		case !valid && (got == id || len(got) != 32 || strings.Trim(got, "0123456789abcdef") != ""):
			t.Errorf("X-Request-Id %q: answered %q, want a server id of 32 hex digits", id, got)
		case !valid && id != "" && strings.Contains(string(r.Body), id):
			t.Errorf("X-Request-Id %q appears in the body %s", id, r.Body)
		}
	}
}
