package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dtekit/dtekit/caf/caftest"
	"github.com/dtekit/dtekit/dte/dtetest"
)

// serveSIIFake runs "dtekit sii fake ARGS" in process on a free loopback
// port until the test ends, and returns its base URL.
func serveSIIFake(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	env := &cmdEnv{stdout: pw, stderr: &errb, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, env, append([]string{"sii", "fake", "--addr", "127.0.0.1:0"}, args...))
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("sii fake %v: exit %d after its context ended\n%s", args, code, errb.String())
		}
	})
	return fakeURL(t, pr)
}

// TestSIIFakeTrust: "dtekit sii fake --trust KEY.pem" makes its registry
// of credit transfers check the ceded DTE's stamp with the SII's keys and
// KEY.pem, as the tests' siitest.Options.CAFKeys does. A's factura, whose
// test CAF only A's authority signs, goes through the fake's envelope
// review (EPR) and is then ceded to F with "cesion enviar" and followed
// with "cesion estado --track": without --trust the fake takes its own
// acceptance for the stamp (EOK); with --trust of A's authority it checks
// the stamp and records the cesión (EOK); with --trust of another
// authority the stamp does not verify and the review rejects the AEC at
// the document (RDC, exit 1 AEC_REJECTED; the same envelope and AEC as
// the other two, so the key is what differs). A --trust file
// that cannot be read or is not a key stops the fake before it listens
// (exit 1, one line with the code).
func TestSIIFakeTrust(t *testing.T) {
	t.Parallel()
	dir, aec := cededAEC(t)
	tmp := t.TempDir()
	other, err := caftest.NewAuthority(nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	otherPEM, err := other.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	otherKey, notKey := filepath.Join(tmp, "other.pem"), filepath.Join(tmp, "not-a-key.pem")
	for p, b := range map[string][]byte{otherKey: otherPEM, notKey: []byte("-----BEGIN NOTHING-----\n")} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	authority := filepath.Join(dir, "authority.pem")
	password := map[string]string{certPasswordEnv: cesA.Password}
	register := dtetest.SignerRUT + "=" + dtetest.EmisorRUT

	for _, c := range []struct {
		name  string
		trust []string
		code  int
		want  string // in "cesion estado"'s output
	}{
		{"without --trust", nil, 0, ": EOK "},
		{"--trust the CAF's authority", []string{"--trust", authority}, 0, ": EOK "},
		{"--trust another authority", []string{"--trust", otherKey}, 1, "the registry rejected the AEC: RDC "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := serveSIIFake(t, append([]string{"--register", register}, c.trust...)...)
			conn := []string{"--url", url, "--cert", filepath.Join(dir, "a.p12")}
			sii := func(args ...string) (int, string, string) {
				return runCLI(t, "", password, append(args, conn...)...)
			}
			code, stdout, stderr := sii("sii", "upload", filepath.Join(dir, "envio.xml"))
			track := regexp.MustCompile(`"trackid": "([0-9]+)"`).FindStringSubmatch(stdout)
			if code != 0 || track == nil {
				t.Fatalf("sii upload: exit %d\n%s%s", code, stdout, stderr)
			}
			for i := 0; i < 6 && !strings.Contains(stdout, `"estado": "EPR"`); i++ {
				code, stdout, stderr = sii("sii", "status", "--company", dtetest.EmisorRUT, track[1])
			}
			if code != 0 || !strings.Contains(stdout, `"estado": "EPR"`) {
				t.Fatalf("sii status: exit %d, the envelope did not reach EPR\n%s%s", code, stdout, stderr)
			}
			code, stdout, stderr = sii("cesion", "enviar", aec, "--trust", authority)
			if code != 0 {
				t.Fatalf("cesion enviar: exit %d\n%s%s", code, stdout, stderr)
			}
			aecTrack := strings.TrimSpace(stdout)
			code, stdout, stderr = sii("cesion", "estado", "--track", aecTrack, "--esperar", "1m", "--intervalo", "1ms")
			if code != c.code || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("cesion estado: exit %d, want %d with %q\n%s%s", code, c.code, c.want, stdout, stderr)
			}
			if c.code == 1 && (!strings.HasSuffix(stderr, "(AEC_REJECTED)\n") || strings.Count(stderr, "\n") != 1) {
				t.Errorf("cesion estado: want one line ending AEC_REJECTED:\n%s", stderr)
			}
		})
	}

	for _, c := range []struct{ file, want string }{
		{filepath.Join(tmp, "missing.pem"), "(FILE_UNREADABLE)\n"},
		{notKey, "(INVALID_TRUSTED_KEY)\n"},
	} {
		code, stdout, stderr := runCLI(t, "", nil, "sii", "fake", "--addr", "127.0.0.1:0", "--trust", c.file)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "dtekit sii fake: --trust: ") || !strings.HasSuffix(stderr, c.want) ||
			strings.Count(stderr, "\n") != 1 {
			t.Errorf("sii fake --trust %s: exit %d, want 1 ending %q\n%s%s", c.file, code, c.want, stdout, stderr)
		}
	}
}
