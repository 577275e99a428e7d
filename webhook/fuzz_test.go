package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary header values and bodies through header lookup
// and verification. It checks that nothing panics, that every failure is
// exactly one of the typed errors, that Verify and VerifyValues agree, and
// that a success is backed by a correct tag computed here with crypto/hmac.
func FuzzVerify(f *testing.F) {
	for _, c := range loadVectors(f).Verify {
		var id, ts, sig string
		for _, p := range c.Headers {
			switch strings.ToLower(p[0]) {
			case HeaderID:
				id = p[1]
			case HeaderTimestamp:
				ts = p[1]
			case HeaderSignature:
				sig = p[1]
			}
		}
		f.Add(id, ts, sig, []byte(c.Body), uint8(0))
	}
	f.Add(testID, "1614265330", testSig+" v1,", []byte(testBody), uint8(1))
	f.Add("msg", "1614265330", "v1,=== v1,"+strings.Repeat("A", 44), []byte{}, uint8(2))

	secret, err := ParseSecret(testSecret)
	if err != nil {
		f.Fatal(err)
	}
	v, err := NewVerifier([]Secret{GenerateSecret(), secret}, WithClock(func() time.Time { return time.Unix(testTS, 0) }))
	if err != nil {
		f.Fatal(err)
	}
	sentinels := []error{ErrMissingHeader, ErrInvalidHeader, ErrTooOld, ErrTooNew, ErrNoMatchingSignature}

	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte, mode uint8) {
		names := [3]string{HeaderID, HeaderTimestamp, HeaderSignature}
		for i := range names {
			switch (mode >> (2 * i)) & 3 {
			case 1:
				names[i] = http.CanonicalHeaderKey(names[i])
			case 2:
				names[i] = strings.ToUpper(names[i])
			}
		}
		h := http.Header{}
		for i, val := range [3]string{id, ts, sig} {
			if val != "" || mode&0x40 != 0 {
				h[names[i]] = append(h[names[i]], val)
			}
		}
		err := v.Verify(h, body)
		err2 := v.VerifyValues(id, ts, sig, body)
		matched := 0
		for _, s := range sentinels {
			if errors.Is(err, s) {
				matched++
			}
			if errors.Is(err, s) != errors.Is(err2, s) {
				t.Fatalf("Verify: %v; VerifyValues: %v", err, err2)
			}
		}
		if err != nil && matched != 1 {
			t.Fatalf("error %v matches %d sentinels", err, matched)
		}
		if (err == nil) != (err2 == nil) {
			t.Fatalf("Verify: %v; VerifyValues: %v", err, err2)
		}
		if err != nil {
			return
		}
		entries := 0 // entries are separated by spaces only, as the scheme says
		for _, e := range strings.Split(sig, " ") {
			if e != "" {
				entries++
			}
		}
		if len(id) > MaxIDBytes || strings.Contains(id, ".") || len(sig) > MaxSignatureHeaderBytes || entries > MaxSignatures {
			t.Fatalf("accepted over a limit: id %q sig %q", id, sig)
		}
		m := hmac.New(sha256.New, secret.key())
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
		found := false
		for _, e := range strings.Split(sig, " ") {
			found = found || e == want
		}
		if !found {
			t.Fatalf("accepted id %q ts %q sig %q without the correct entry %s", id, ts, sig, want)
		}
	})
}

// FuzzParseSecret checks that ParseSecret never panics, only accepts keys of
// 24 to 64 bytes, and that what it accepts prints back to the same secret.
func FuzzParseSecret(f *testing.F) {
	for _, c := range loadVectors(f).Secrets {
		f.Add(c.Input)
	}
	f.Add("whsec_whsec_AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		sec, err := ParseSecret(s)
		if err != nil {
			if k := strings.TrimPrefix(s, SecretPrefix); len(k) >= 16 && strings.Contains(err.Error(), k) {
				t.Fatalf("error repeats the secret: %v", err)
			}
			return
		}
		if len(sec.key()) < MinSecretBytes || len(sec.key()) > MaxSecretBytes {
			t.Fatalf("accepted a %d-byte key from %q", len(sec.key()), s)
		}
		if sec.Encode() != SecretPrefix+strings.TrimPrefix(s, SecretPrefix) {
			t.Fatalf("%q prints back as %q", s, sec.Encode())
		}
		back, err := ParseSecret(sec.Encode())
		if err != nil || !back.Equal(sec) {
			t.Fatalf("Encode() of %q does not parse back: %v", s, err)
		}
	})
}

// FuzzParseEvent checks that ParseEvent and the data accessors never panic
// and that an accepted envelope has a type and an object as data.
func FuzzParseEvent(f *testing.F) {
	for _, raw := range sampleEventsF(f) {
		f.Add([]byte(raw))
	}
	f.Add([]byte(`{"type":"x","timestamp":"2026-01-01T00:00:00Z","data":{}}`))
	f.Add([]byte(`{"type":"dte.created","timestamp":"2026-01-01T00:00:00Z","data":{"folio":"1"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := ParseEvent(body)
		if err != nil {
			return
		}
		if e.Type == "" || e.Timestamp.IsZero() || len(e.Data) == 0 {
			t.Fatalf("accepted %q as %+v", body, e)
		}
		e.DTE()
		e.CAFLowStock()
		e.CertificadoExpiring()
	})
}
