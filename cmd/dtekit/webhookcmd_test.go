package main

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/webhook"
)

// Public Standard Webhooks vector (see testdata/webhook/vectors.json).
const (
	vecSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vecID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vecTS     = "1614265330"
	vecBody   = `{"test": 2432232314}`
	vecSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// runCLI runs dtekit with args and stdin, and an environment holding vars.
func runCLI(t *testing.T, stdin string, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cmdEnv{
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string { return vars[k] },
	}
	code := run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

func TestWebhookSignVector(t *testing.T) {
	code, out, errs := runCLI(t, vecBody, nil, "webhook", "sign", "--secret", vecSecret, "--id", vecID, "--timestamp", vecTS)
	want := "webhook-id: " + vecID + "\nwebhook-timestamp: " + vecTS + "\nwebhook-signature: " + vecSig + "\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, stderr %q; want stdout %q", code, out, errs, want)
	}
	// Bare base64 secret from the environment gives the same signature.
	code, out, _ = runCLI(t, vecBody, map[string]string{webhookSecretEnv: strings.TrimPrefix(vecSecret, "whsec_")},
		"webhook", "sign", "--id", vecID, "--timestamp", vecTS)
	if code != 0 || out != want {
		t.Fatalf("secret from environment: exit %d, %q", code, out)
	}
	// A trailing newline is part of the body and changes the signature.
	_, out, _ = runCLI(t, vecBody+"\n", nil, "webhook", "sign", "--secret", vecSecret, "--id", vecID, "--timestamp", vecTS)
	if strings.Contains(out, vecSig) {
		t.Fatal("body with a trailing newline signed like the one without")
	}
}

func TestWebhookSignDefaults(t *testing.T) {
	other := webhook.GenerateSecret().Encode()
	before := time.Now().Unix()
	code, out, errs := runCLI(t, "{}", nil, "webhook", "sign", "--secret", vecSecret, "--secret", other)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		h[k] = v
	}
	if !strings.HasPrefix(h["webhook-id"], "msg_") {
		t.Errorf("generated id %q", h["webhook-id"])
	}
	if entries := strings.Fields(h["webhook-signature"]); len(entries) != 2 {
		t.Errorf("two secrets gave %q", h["webhook-signature"])
	}
	// What sign printed verifies with either secret through verify.
	for _, s := range []string{vecSecret, other} {
		code, _, errs := runCLI(t, "{}", nil, "webhook", "verify", "--secret", s,
			"--id", h["webhook-id"], "--timestamp", h["webhook-timestamp"], "--signature", h["webhook-signature"])
		if code != 0 {
			t.Errorf("verify with one of the two secrets: exit %d: %s", code, errs)
		}
	}
	ts, err := strconv.ParseInt(h["webhook-timestamp"], 10, 64)
	if err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("timestamp %q is not the time of the run (started at %d)", h["webhook-timestamp"], before)
	}
}

func TestWebhookVerify(t *testing.T) {
	base := []string{"webhook", "verify", "--secret", vecSecret, "--id", vecID, "--timestamp", vecTS}
	cases := []struct {
		name   string
		body   string
		extra  []string
		code   int
		reason string
	}{
		{"vector at its time", vecBody, []string{"--signature", vecSig, "--now", vecTS}, 0, ""},
		{"tolerance edge", vecBody, []string{"--signature", vecSig, "--now", "1614265630"}, 0, ""},
		{"too old", vecBody, []string{"--signature", vecSig, "--now", "1614265631"}, 1, "too old"},
		{"too new", vecBody, []string{"--signature", vecSig, "--now", "1614265029"}, 1, "too new"},
		{"wider tolerance", vecBody, []string{"--signature", vecSig, "--now", "1614265631", "--tolerance", "10m"}, 0, ""},
		{"real clock", vecBody, []string{"--signature", vecSig}, 1, "too old"},
		{"wrong body", vecBody + " ", []string{"--signature", vecSig, "--now", vecTS}, 1, "no matching signature"},
		{"wrong signature", vecBody, []string{"--signature", "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=", "--now", vecTS}, 1, "no matching signature"},
		{"missing signature", vecBody, []string{"--now", vecTS}, 1, "missing header webhook-signature"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, c.body, nil, append(append([]string{}, base...), c.extra...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stdout %q, stderr %q)", c.name, code, c.code, out, errs)
			continue
		}
		if c.code == 0 && !strings.HasPrefix(out, "verified") {
			t.Errorf("%s: stdout %q", c.name, out)
		}
		if c.code == 1 && !strings.Contains(errs, c.reason) {
			t.Errorf("%s: stderr %q does not give the reason %q", c.name, errs, c.reason)
		}
	}
}

func TestWebhookUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"webhook"},
		{"webhook", "frobnicate"},
		{"webhook", "sign", "--id", vecID},                                 // no secret
		{"webhook", "sign", "--secret", "whsec_AAAA"},                      // weak secret
		{"webhook", "sign", "--secret", vecSecret, "--timestamp", "-5"},    // not digits
		{"webhook", "sign", "--secret", vecSecret, "--id", "a.b"},          // invalid id
		{"webhook", "sign", "--secret", vecSecret, "body.json"},            // stray argument
		{"webhook", "verify", "--secret", vecSecret, "--now", "soon"},      // bad clock
		{"webhook", "verify", "--secret", vecSecret, "--tolerance", "-1s"}, // negative tolerance
		{"webhook", "verify", "--secret", vecSecret, "--bogus"},            // unknown flag
		{"webhook", "secret", "extra"},                                     // stray argument
	} {
		code, _, errs := runCLI(t, vecBody, nil, args...)
		if code != 2 || errs == "" {
			t.Errorf("%q: exit %d, stderr %q; want 2 with a message", args, code, errs)
		}
		if strings.Contains(errs, "AAAA") {
			t.Errorf("%q: stderr repeats the secret: %q", args, errs)
		}
	}
}

func TestWebhookSecret(t *testing.T) {
	code, out, _ := runCLI(t, "", nil, "webhook", "secret")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	s, err := webhook.ParseSecret(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("printed secret %q does not parse: %v", out, err)
	}
	_, out2, _ := runCLI(t, "", nil, "webhook", "secret")
	if s2, _ := webhook.ParseSecret(strings.TrimSpace(out2)); s2.Equal(s) {
		t.Fatal("two runs printed the same secret")
	}
}
