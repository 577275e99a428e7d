package main

import (
	"strings"
	"testing"
)

// TestServeInboxFlags: serve refuses a negative quota, a retention over
// ten years or a webhook timeout outside 1 s to 60 s (from a flag or the
// environment) before opening
// anything, in one line naming the flag; its help names the flags and
// the variables.
func TestServeInboxFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--inbox-max-recepciones", "-1"}, "--inbox-max-recepciones -1"},
		{map[string]string{"DTEKIT_INBOX_MAX_BYTES": "-5"}, nil, "--inbox-max-bytes -5"},
		{nil, []string{"--inbox-retencion-dias", "4000"}, "--inbox-retencion-dias 4000"},
		// A value that is not a number is refused, not read as the default.
		{map[string]string{"DTEKIT_INBOX_MAX_BYTES": "500MB"}, nil, `DTEKIT_INBOX_MAX_BYTES="500MB": want a whole number`},
		{map[string]string{"DTEKIT_INBOX_RETENCION_DIAS": "1.9"}, nil, `DTEKIT_INBOX_RETENCION_DIAS="1.9": want a whole number`},
		{map[string]string{"DTEKIT_RATE_LIMIT": "rapido"}, nil, `DTEKIT_RATE_LIMIT="rapido": want a number`},
		// A webhook attempt's bound: 1 s to a minute.
		{nil, []string{"--webhook-timeout", "500ms"}, "--webhook-timeout 500ms: want 1s to 60s"},
		{nil, []string{"--webhook-timeout", "2m"}, "--webhook-timeout 2m0s: want 1s to 60s"},
	} {
		code, _, errs := runCLI(t, "", tc.env, append([]string{"serve", "--data", dir}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("serve %v %v: exit %d\n%s", tc.env, tc.args, code, errs)
		}
	}
	code, out, _ := runCLI(t, "", nil, "serve", "--help")
	for _, w := range []string{"-inbox-max-recepciones", "-inbox-max-bytes", "-inbox-max-mensajes", "-inbox-retencion-dias",
		"-upload-rate-limit", "DTEKIT_INBOX_RETENCION_DIAS", "DTEKIT_UPLOAD_RATE_LIMIT"} {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("serve --help lacks %q (exit %d)", w, code)
		}
	}
}
