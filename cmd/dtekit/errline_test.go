package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/store/sqlite"
)

// TestErrorsOneLine: the commands that work on the server's database,
// serve and the webhook tools report a failure as the offline commands
// do (issue 29, point 9): one line, with no package prefix such as "dte: ",
// "store/sqlite: ", "store/postgres: ", "billing: " or "webhook: " (each
// case below printed one before).
func TestErrorsOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	damaged := filepath.Join(dir, "damaged")
	if err := os.MkdirAll(damaged, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(damaged, sqlite.FileName), bytes.Repeat([]byte("not a database "), 500), 0o600); err != nil {
		t.Fatal(err)
	}
	kek := strings.Repeat("ab", 32)
	prefix := regexp.MustCompile(`(^|: |; |\()(dte|caf|ted|signer|billing|store|store/sqlite|store/postgres|sqlstore|sii|intercambio|libro|email|webhook|pdf|server): `)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string // a part of the line, the reason kept
	}{
		{"a RUT with a wrong check digit", nil, []string{"admin", "empresa", "show", "--data", dir, "--empresa", "12.345.678-0"}, exitUsage, "check digit 0 does not match (expected 5)"},
		{"a damaged SQLite file", nil, []string{"admin", "empresa", "list", "--data", damaged}, exitFail, "file is not a database"},
		{"serve on a damaged SQLite file", nil, []string{"serve", "--data", damaged, "--addr", "127.0.0.1:0"}, exitFail, "file is not a database"},
		{"a PostgreSQL URL that does not parse", map[string]string{"DTEKIT_KEK": kek}, []string{"serve", "--database-url", "postgres://%zz", "--addr", "127.0.0.1:0"}, exitFail, "the database URL does not parse"},
		{"a webhook secret that is not base64", nil, []string{"webhook", "verify", "--secret", "whsec_abc", "--id", "msg_1", "--timestamp", "1", "--signature", "v1,abc"}, exitUsage, "invalid base64"},
	} {
		var out, errb bytes.Buffer
		env := &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return tc.env[k] }}
		code := run(context.Background(), env, tc.args)
		line, _, _ := strings.Cut(errb.String(), "\n")
		if code != tc.code || !strings.Contains(line, tc.want) || prefix.MatchString(strings.TrimPrefix(line, "dtekit ")) {
			t.Errorf("%s: exit %d (want %d), stderr %q: want one line stating %q without a package prefix", tc.name, code, tc.code, errb.String(), tc.want)
		}
		if rest := strings.TrimPrefix(errb.String(), line+"\n"); rest != "" && !strings.HasPrefix(rest, "Run 'dtekit ") {
			t.Errorf("%s: more than one line: %q", tc.name, errb.String())
		}
	}
}
