package webhook

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	testID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	testTS     = 1614265330
	testBody   = `{"test": 2432232314}`
	testSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func mustSecret(t testing.TB, s string) Secret {
	t.Helper()
	sec, err := ParseSecret(s)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func fixedClock(unix int64) Option {
	return WithClock(func() time.Time { return time.Unix(unix, 0) })
}

func TestSecretNeverPrinted(t *testing.T) {
	s := mustSecret(t, testSecret)
	key := strings.TrimPrefix(testSecret, SecretPrefix)
	type wrapper struct{ S Secret }
	type hidden struct{ s Secret } // unexported: fmt prints it by reflection
	for _, format := range []string{"%v", "%s", "%q", "%x", "%X", "%d", "%#v", "%+v", "%p"} {
		for _, arg := range []any{s, &s, wrapper{s}, hidden{s}, &hidden{s}, []Secret{s}, map[string]Secret{"k": s}} {
			out := fmt.Sprintf(format, arg)
			if strings.Contains(out, key[:12]) || strings.Contains(out, fmt.Sprintf("%x", s.key()[:8])) || strings.Contains(out, fmt.Sprint(s.key()[:4])) {
				t.Errorf("fmt %s of %T leaks the key: %s", format, arg, out)
			}
		}
	}
	if out, _ := json.Marshal(wrapper{s}); strings.Contains(string(out), key[:12]) {
		t.Errorf("json.Marshal leaks the key: %s", out)
	}
	if got := s.String(); got != "whsec_…aSw" {
		t.Errorf("String() = %q, want the masked form whsec_…aSw", got)
	}
	if got := (Secret{}).String(); got != "whsec_(none)" {
		t.Errorf("zero String() = %q", got)
	}
	if s.Encode() != testSecret {
		t.Errorf("Encode() = %q", s.Encode())
	}
}

func TestGenerateSecret(t *testing.T) {
	a, b := GenerateSecret(), GenerateSecret()
	if a.Equal(b) {
		t.Fatal("two generated secrets are equal")
	}
	if len(a.key()) != 32 {
		t.Fatalf("generated key is %d bytes, want 32", len(a.key()))
	}
	back, err := ParseSecret(a.Encode())
	if err != nil || !back.Equal(a) {
		t.Fatalf("generated secret does not parse back: %v", err)
	}
	// The printed form is whsec_ and 44 base64 characters (32 bytes, padded).
	enc := a.Encode()
	if !strings.HasPrefix(enc, "whsec_") || len(enc) != 6+44 {
		t.Errorf("Encode() = %q", enc)
	}
}

func TestNewSecretCopies(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 24)
	s, err := NewSecret(key)
	if err != nil {
		t.Fatal(err)
	}
	key[0] = 8
	if s.key()[0] != 7 {
		t.Fatal("NewSecret keeps the caller's slice")
	}
	for _, n := range []int{0, 1, 23, 65, 1000} {
		if _, err := NewSecret(make([]byte, n)); err == nil {
			t.Errorf("NewSecret accepted a %d-byte key", n)
		}
	}
}

func TestSignErrors(t *testing.T) {
	s := mustSecret(t, testSecret)
	ts := time.Unix(testTS, 0)
	body := []byte(testBody)
	many := make([]Secret, MaxSignatures+1)
	for i := range many {
		many[i] = s
	}
	cases := []struct {
		name    string
		secrets []Secret
		id      string
		ts      time.Time
	}{
		{"no secrets", nil, testID, ts},
		{"zero secret", []Secret{s, {}}, testID, ts},
		{"too many secrets", many, testID, ts},
		{"empty id", []Secret{s}, "", ts},
		{"id with dot", []Secret{s}, "msg.1", ts},
		{"id with space", []Secret{s}, "msg 1", ts},
		{"id with newline", []Secret{s}, "msg\n1", ts},
		{"id non-ASCII", []Secret{s}, "msg_ñ", ts},
		{"id too long", []Secret{s}, strings.Repeat("m", MaxIDBytes+1), ts},
		{"before 1970", []Secret{s}, testID, time.Unix(-1, 0)},
	}
	for _, c := range cases {
		if h, err := Sign(c.secrets, c.id, c.ts, body); err == nil {
			t.Errorf("%s: Sign succeeded: %v", c.name, h)
		}
	}
	if _, err := Sign([]Secret{s}, strings.Repeat("m", MaxIDBytes), ts, body); err != nil {
		t.Errorf("256-byte id: %v", err)
	}
}

func TestSignRotation(t *testing.T) {
	old := mustSecret(t, testSecret)
	next := mustSecret(t, "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD")
	h, err := Sign([]Secret{next, old}, testID, time.Unix(testTS, 0), []byte(testBody))
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.Split(h.Get(HeaderSignature), " ")
	if len(entries) != 2 || entries[1] != testSig || !strings.HasPrefix(entries[0], "v1,") || entries[0] == testSig {
		t.Fatalf("signature = %q, want a v1 entry for the new key then %s", h.Get(HeaderSignature), testSig)
	}
	// Each receiver, holding only one of the two keys, accepts it.
	for _, s := range []Secret{old, next} {
		v, err := NewVerifier([]Secret{s}, fixedClock(testTS))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(h, []byte(testBody)); err != nil {
			t.Errorf("receiver with %v: %v", s, err)
		}
	}
}

func TestMessageID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewMessageID()
		if seen[id] {
			t.Fatalf("NewMessageID repeated %q", id)
		}
		seen[id] = true
		if !strings.HasPrefix(id, "msg_") || len(id) != 30 || checkSignID(id) != nil {
			t.Fatalf("NewMessageID() = %q", id)
		}
	}
}

func TestNewVerifierErrors(t *testing.T) {
	s := mustSecret(t, testSecret)
	if _, err := NewVerifier(nil); err == nil {
		t.Error("no secrets accepted")
	}
	if _, err := NewVerifier([]Secret{{}}); err == nil {
		t.Error("zero secret accepted")
	}
	if _, err := NewVerifier(make([]Secret, MaxSignatures+1)); err == nil {
		t.Error("33 secrets accepted")
	}
	if _, err := NewVerifier([]Secret{s}, WithTolerance(-time.Second)); err == nil {
		t.Error("negative tolerance accepted")
	}
	if _, err := NewVerifier([]Secret{s}, WithClock(nil)); err == nil {
		t.Error("nil clock accepted")
	}
}

func TestVerifyTimeExtremes(t *testing.T) {
	s := mustSecret(t, testSecret)
	h := http.Header{}
	h.Set(HeaderID, testID)
	h.Set(HeaderSignature, testSig)
	cases := []struct {
		ts   string
		now  int64
		tol  time.Duration
		want error
	}{
		{"9223372036854775807", -1 << 63, DefaultTolerance, ErrTooNew},
		{"0", 1<<63 - 1, DefaultTolerance, ErrTooOld},
		{"9223372036", 0, 1<<63 - 1, ErrNoMatchingSignature}, // max tolerance is 9223372036 s
		{"9223372037", 0, 1<<63 - 1, ErrTooNew},
		{"0", 0, 0, ErrNoMatchingSignature},
		{"1", 0, 0, ErrTooNew},
		{"0", 1, 0, ErrTooOld},
	}
	for _, c := range cases {
		v, err := NewVerifier([]Secret{s}, fixedClock(c.now), WithTolerance(c.tol))
		if err != nil {
			t.Fatal(err)
		}
		h.Set(HeaderTimestamp, c.ts)
		if err := v.Verify(h, []byte(testBody)); !errors.Is(err, c.want) {
			t.Errorf("ts %s, clock %d, tolerance %v: %v, want %v", c.ts, c.now, c.tol, err, c.want)
		}
	}
	// Sub-second clock readings are compared in whole seconds.
	v, _ := NewVerifier([]Secret{s}, WithClock(func() time.Time { return time.Unix(testTS+300, 999999999) }))
	h.Set(HeaderTimestamp, fmt.Sprint(testTS))
	if err := v.Verify(h, []byte(testBody)); err != nil {
		t.Errorf("clock at ts+300.999: %v", err)
	}
}

func TestVerifyHeaderForms(t *testing.T) {
	v, err := NewVerifier([]Secret{mustSecret(t, testSecret)}, fixedClock(testTS))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(testBody)
	canonical := http.Header{}
	canonical.Set(HeaderID, testID)
	canonical.Set(HeaderTimestamp, fmt.Sprint(testTS))
	canonical.Set(HeaderSignature, testSig)
	lower := http.Header{HeaderID: {testID}, HeaderTimestamp: {fmt.Sprint(testTS)}, HeaderSignature: {testSig}}
	for name, h := range map[string]http.Header{"canonical": canonical, "lowercase": lower} {
		if err := v.Verify(h, body); err != nil {
			t.Errorf("%s keys: %v", name, err)
		}
	}
	if err := v.Verify(nil, body); !errors.Is(err, ErrMissingHeader) {
		t.Errorf("nil header: %v", err)
	}
	// Two values under one key.
	dup := canonical.Clone()
	dup.Add(HeaderTimestamp, fmt.Sprint(testTS))
	if err := v.Verify(dup, body); !errors.Is(err, ErrInvalidHeader) {
		t.Errorf("timestamp twice: %v", err)
	}
	// An empty value list counts as missing.
	empty := canonical.Clone()
	empty["Webhook-Id"] = []string{}
	if err := v.Verify(empty, body); !errors.Is(err, ErrMissingHeader) {
		t.Errorf("empty value list: %v", err)
	}
}

// TestLimitsBeforeHMAC shows the limits reject a request before any key is
// used: a verifier whose key pool would panic if touched still returns the
// limit errors.
func TestLimitsBeforeHMAC(t *testing.T) {
	v, err := NewVerifier([]Secret{mustSecret(t, testSecret)}, fixedClock(testTS))
	if err != nil {
		t.Fatal(err)
	}
	v.keys[0].pool.New = func() any { panic("HMAC computed before the limits were checked") }
	ts := fmt.Sprint(testTS)
	for _, c := range []struct{ id, ts, sig string }{
		{strings.Repeat("a", 257), ts, testSig},
		{"a.b", ts, testSig},
		{testID, ts, strings.Repeat(testSig+" ", 33)},
		{testID, ts, testSig + strings.Repeat(" ", 4096)},
		{testID, "+" + ts, testSig},
		{testID, fmt.Sprint(testTS + 301), testSig},
		{testID, ts, "v1,not-base64-at-all-but-44-characters-long!"},
		{testID, ts, "v2," + base64.StdEncoding.EncodeToString(make([]byte, 32))},
	} {
		if err := v.VerifyValues(c.id, c.ts, c.sig, []byte(testBody)); err == nil {
			t.Errorf("VerifyValues(%.20q, %q, %.20q) accepted", c.id, c.ts, c.sig)
		}
	}
}

func TestVerifyErrorMessagesNameTheHeader(t *testing.T) {
	v, _ := NewVerifier([]Secret{mustSecret(t, testSecret)}, fixedClock(testTS))
	ts := fmt.Sprint(testTS)
	for _, c := range []struct{ id, ts, sig, want string }{
		{"", ts, testSig, HeaderID},
		{testID, "", testSig, HeaderTimestamp},
		{testID, ts, "", HeaderSignature},
		{testID, "soon", testSig, `webhook-timestamp "soon"`},
		{"a.b", ts, testSig, `webhook-id "a.b"`},
	} {
		err := v.VerifyValues(c.id, c.ts, c.sig, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v does not mention %s", err, c.want)
		}
	}
	// Long attacker-controlled values are cut in messages.
	err := v.VerifyValues(testID, strings.Repeat("x", 5000), testSig, nil)
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("message for a 5000-byte timestamp is %d bytes", len(err.Error()))
	}
}

func TestVerifyConcurrent(t *testing.T) {
	s := mustSecret(t, testSecret)
	v, _ := NewVerifier([]Secret{GenerateSecret(), s}, fixedClock(testTS))
	good := http.Header{HeaderID: {testID}, HeaderTimestamp: {fmt.Sprint(testTS)}, HeaderSignature: {testSig}}
	bad := http.Header{HeaderID: {"msg_other"}, HeaderTimestamp: {fmt.Sprint(testTS)}, HeaderSignature: {testSig}}
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				if err := v.Verify(good, []byte(testBody)); err != nil {
					errc <- err
					return
				}
				if err := v.Verify(bad, []byte(testBody)); !errors.Is(err, ErrNoMatchingSignature) {
					errc <- fmt.Errorf("bad delivery: %v", err)
					return
				}
			}
			errc <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
