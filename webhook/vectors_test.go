package webhook

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// vectorFile is the language-neutral vector file other SDKs can reuse.
var vectorFile = filepath.Join("..", "testdata", "webhook", "vectors.json")

type vectors struct {
	Secrets []struct {
		Name     string `json:"name"`
		Input    string `json:"input"`
		Valid    bool   `json:"valid"`
		KeyBytes int    `json:"key_bytes"`
	} `json:"secrets"`
	Sign []struct {
		Name      string `json:"name"`
		Secret    string `json:"secret"`
		ID        string `json:"id"`
		Timestamp int64  `json:"timestamp"`
		Body      string `json:"body"`
		Expected  string `json:"expected_signature"`
	} `json:"sign"`
	Verify []verifyVector `json:"verify"`
}

type verifyVector struct {
	Name           string      `json:"name"`
	Source         string      `json:"source"`
	Secrets        []string    `json:"secrets"`
	Headers        [][2]string `json:"headers"`
	Body           string      `json:"body"`
	Now            int64       `json:"now"`
	Tolerance      int64       `json:"tolerance_seconds"`
	CheckTimestamp bool        `json:"check_timestamp"`
	Expected       string      `json:"expected"`
}

func loadVectors(t testing.TB) vectors {
	t.Helper()
	raw, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatalf("reading vectors: %v", err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", vectorFile, err)
	}
	if len(v.Secrets) == 0 || len(v.Sign) == 0 || len(v.Verify) == 0 {
		t.Fatalf("%s: empty vector lists", vectorFile)
	}
	return v
}

// expectedErr maps a vector's expected outcome to the sentinel error.
var expectedErr = map[string]error{
	"ok":             nil,
	"missing_header": ErrMissingHeader,
	"invalid_header": ErrInvalidHeader,
	"too_old":        ErrTooOld,
	"too_new":        ErrTooNew,
	"no_match":       ErrNoMatchingSignature,
}

func TestSecretVectors(t *testing.T) {
	for _, c := range loadVectors(t).Secrets {
		t.Run(c.Name, func(t *testing.T) {
			s, err := ParseSecret(c.Input)
			if !c.Valid {
				if err == nil {
					t.Fatalf("ParseSecret(%q) accepted a %d-byte key, want an error", c.Input, len(s.key()))
				}
				if key := strings.TrimPrefix(c.Input, SecretPrefix); len(key) >= 8 && strings.Contains(err.Error(), key) {
					t.Errorf("error message repeats the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSecret(%q): %v", c.Input, err)
			}
			want, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(c.Input, SecretPrefix))
			if err != nil {
				t.Fatal(err)
			}
			if string(s.key()) != string(want) || len(s.key()) != c.KeyBytes {
				t.Fatalf("key = %x (%d bytes), want %x (%d bytes)", s.key(), len(s.key()), want, c.KeyBytes)
			}
			if enc := s.Encode(); enc != SecretPrefix+strings.TrimPrefix(c.Input, SecretPrefix) {
				t.Errorf("Encode() = %q, want the whsec_ form of the input", enc)
			}
		})
	}
}

func TestSignVectors(t *testing.T) {
	for _, c := range loadVectors(t).Sign {
		t.Run(c.Name, func(t *testing.T) {
			s, err := ParseSecret(c.Secret)
			if err != nil {
				t.Fatal(err)
			}
			h, err := Sign([]Secret{s}, c.ID, time.Unix(c.Timestamp, 0), []byte(c.Body))
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Get(HeaderSignature); got != c.Expected {
				t.Errorf("signature = %q, want %q", got, c.Expected)
			}
			if got := h.Get(HeaderID); got != c.ID {
				t.Errorf("webhook-id = %q, want %q", got, c.ID)
			}
			if got := h.Get(HeaderTimestamp); got != strconv.FormatInt(c.Timestamp, 10) {
				t.Errorf("webhook-timestamp = %q, want %d", got, c.Timestamp)
			}
			if len(h) != 3 {
				t.Errorf("Sign returned %d headers, want 3: %v", len(h), h)
			}
		})
	}
}

// vectorHeader builds the header map exactly as the vector lists it, with
// the names' case preserved (as a hand-built map would be).
func vectorHeader(pairs [][2]string) http.Header {
	h := http.Header{}
	for _, p := range pairs {
		h[p[0]] = append(h[p[0]], p[1])
	}
	return h
}

// vectorVerifier builds the verifier a vector describes.
func vectorVerifier(t *testing.T, c verifyVector) *Verifier {
	t.Helper()
	var secrets []Secret
	for _, s := range c.Secrets {
		sec, err := ParseSecret(s)
		if err != nil {
			t.Fatalf("secret %q: %v", s, err)
		}
		secrets = append(secrets, sec)
	}
	now := c.Now
	if !c.CheckTimestamp {
		// This verifier cannot switch the check off; put the clock on the
		// header's timestamp so only the signature decides.
		for _, p := range c.Headers {
			if strings.EqualFold(p[0], HeaderTimestamp) {
				n, err := strconv.ParseInt(p[1], 10, 64)
				if err != nil {
					t.Fatalf("vector timestamp %q: %v", p[1], err)
				}
				now = n
			}
		}
	}
	v, err := NewVerifier(secrets, WithTolerance(time.Duration(c.Tolerance)*time.Second),
		WithClock(func() time.Time { return time.Unix(now, 0) }))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyVectors(t *testing.T) {
	vs := loadVectors(t)
	notes := 0
	for _, c := range vs.Verify {
		if c.Source == "notes" {
			notes++
		}
		t.Run(c.Name, func(t *testing.T) {
			want, ok := expectedErr[c.Expected]
			if !ok {
				t.Fatalf("unknown expected outcome %q", c.Expected)
			}
			v := vectorVerifier(t, c)
			err := v.Verify(vectorHeader(c.Headers), []byte(c.Body))
			checkOutcome(t, "Verify", err, want)

			// The same case through VerifyValues, when each header appears
			// at most once.
			vals := map[string]string{}
			dup := false
			for _, p := range c.Headers {
				k := strings.ToLower(p[0])
				if _, seen := vals[k]; seen {
					dup = true
				}
				vals[k] = p[1]
			}
			if !dup {
				err := v.VerifyValues(vals[HeaderID], vals[HeaderTimestamp], vals[HeaderSignature], []byte(c.Body))
				checkOutcome(t, "VerifyValues", err, want)
			}
		})
	}
	if notes < 19 { // rows 1-14 of the notes expand to 19 verify cases
		t.Errorf("only %d vectors from the notes; the file lost some", notes)
	}
}

// checkOutcome requires err to be nil when want is nil, and otherwise to
// match want and none of the other sentinels.
func checkOutcome(t *testing.T, what string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v, want success", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
	for _, other := range expectedErr {
		if other != nil && other != want && errors.Is(err, other) {
			t.Errorf("%s: %v also matches %v", what, err, other)
		}
	}
}
