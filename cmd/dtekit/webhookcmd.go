package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/webhook"
)

// webhookSecretEnv is read when no --secret flag is given, so the secret
// need not appear in the process list or shell history.
const webhookSecretEnv = "DTEKIT_WEBHOOK_SECRET"

// maxWebhookBody bounds the body read from standard input.
const maxWebhookBody = 64 << 20

const webhookUsage = `usage:
  dtekit webhook sign   [--secret S]... [--id ID] [--timestamp UNIX] < BODY
  dtekit webhook verify [--secret S]... --id ID --timestamp UNIX --signature SIG
                        [--now UNIX] [--tolerance 5m] < BODY
  dtekit webhook secret

sign prints the webhook-id, webhook-timestamp and webhook-signature headers
for the exact bytes of BODY (one v1 entry per --secret; --id defaults to a new
msg_ id, --timestamp to now). verify exits 0 when the signature matches and 1
with the reason when it does not. secret prints a new random whsec_ secret.
--secret may be omitted when $DTEKIT_WEBHOOK_SECRET is set. The body is
signed byte for byte (note that "echo" appends a newline).
`

// runWebhook implements "dtekit webhook".
func runWebhook(ctx context.Context, env *cmdEnv, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, webhookUsage)
		return 2
	}
	switch args[0] {
	case "sign":
		return runWebhookSign(env, args[1:])
	case "verify":
		return runWebhookVerify(env, args[1:])
	case "secret":
		if wantsHelp(args[1:]) {
			fmt.Fprint(env.stdout, webhookUsage)
			return 0
		}
		if len(args) > 1 {
			fmt.Fprintf(env.stderr, "dtekit webhook secret: unexpected arguments %q\n", args[1:])
			return 2
		}
		fmt.Fprintln(env.stdout, webhook.GenerateSecret().Encode())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(env.stdout, webhookUsage)
		return 0
	}
	fmt.Fprintf(env.stderr, "dtekit webhook: unknown subcommand %q\n%s", args[0], webhookUsage)
	return 2
}

// secretFlags collects repeated --secret flags.
type secretFlags []string

func (s *secretFlags) String() string     { return fmt.Sprintf("%d secret(s)", len(*s)) }
func (s *secretFlags) Set(v string) error { *s = append(*s, v); return nil }

// webhookSecrets parses the --secret flags, or the environment variable when
// there are none.
func webhookSecrets(env *cmdEnv, flags secretFlags) ([]webhook.Secret, error) {
	if len(flags) == 0 {
		var s string
		if env.getenv != nil {
			s = env.getenv(webhookSecretEnv)
		}
		if s == "" {
			return nil, errors.New("no secret: give --secret whsec_... or set " + webhookSecretEnv)
		}
		flags = secretFlags{s}
	}
	var out []webhook.Secret
	for i, f := range flags {
		s, err := webhook.ParseSecret(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("secret %d: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// readWebhookBody reads standard input whole, refusing more than
// maxWebhookBody bytes.
func readWebhookBody(env *cmdEnv) ([]byte, error) {
	if env.stdin == nil {
		return []byte{}, nil
	}
	b, err := io.ReadAll(io.LimitReader(env.stdin, maxWebhookBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading body from standard input: %w", err)
	}
	if len(b) > maxWebhookBody {
		return nil, fmt.Errorf("body on standard input exceeds %d bytes", maxWebhookBody)
	}
	return b, nil
}

// parseUnix parses Unix seconds written as plain decimal digits.
func parseUnix(flagName, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("--%s %q is not Unix seconds (plain decimal digits)", flagName, s)
	}
	return n, nil
}

func runWebhookSign(env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "webhook sign")
	var secrets secretFlags
	fs.Var(&secrets, "secret", "webhook secret, whsec_... (repeat to sign with several)")
	id := fs.String("id", "", "webhook-id (default: a new msg_ id)")
	ts := fs.String("timestamp", "", "webhook-timestamp, Unix seconds (default: now)")
	pos, code, ok := parseFlags(env, fs, webhookUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "webhook sign", "unexpected arguments %q (the body is read from standard input)", pos)
	}
	keys, err := webhookSecrets(env, secrets)
	if err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook sign:", errLine(err))
		return 2
	}
	when := time.Now()
	if *ts != "" {
		n, err := parseUnix("timestamp", *ts)
		if err != nil {
			fmt.Fprintln(env.stderr, "dtekit webhook sign:", errLine(err))
			return 2
		}
		when = time.Unix(n, 0)
	}
	if *id == "" {
		*id = webhook.NewMessageID()
	}
	body, err := readWebhookBody(env)
	if err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook sign:", errLine(err))
		return 2
	}
	h, err := webhook.Sign(keys, *id, when, body)
	if err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook sign:", errLine(err))
		return 2
	}
	for _, name := range []string{webhook.HeaderID, webhook.HeaderTimestamp, webhook.HeaderSignature} {
		fmt.Fprintf(env.stdout, "%s: %s\n", name, h.Get(name))
	}
	return 0
}

func runWebhookVerify(env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "webhook verify")
	var secrets secretFlags
	fs.Var(&secrets, "secret", "webhook secret, whsec_... (repeat to accept several)")
	id := fs.String("id", "", "webhook-id header value")
	ts := fs.String("timestamp", "", "webhook-timestamp header value")
	sig := fs.String("signature", "", "webhook-signature header value")
	now := fs.String("now", "", "check the timestamp against this Unix time instead of the clock (for a stored delivery)")
	tolerance := fs.Duration("tolerance", webhook.DefaultTolerance, "allowed distance between timestamp and clock, either direction")
	pos, code, ok := parseFlags(env, fs, webhookUsage, args)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "webhook verify", "unexpected arguments %q (the body is read from standard input)", pos)
	}
	keys, err := webhookSecrets(env, secrets)
	if err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook verify:", errLine(err))
		return 2
	}
	opts := []webhook.Option{webhook.WithTolerance(*tolerance)}
	if *now != "" {
		n, err := parseUnix("now", *now)
		if err != nil {
			fmt.Fprintln(env.stderr, "dtekit webhook verify:", errLine(err))
			return 2
		}
		opts = append(opts, webhook.WithClock(func() time.Time { return time.Unix(n, 0) }))
	}
	v, err := webhook.NewVerifier(keys, opts...)
	if err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook verify:", errLine(err))
		return 2
	}
	body, err := readWebhookBody(env)
	if err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook verify:", errLine(err))
		return 2
	}
	if err := v.VerifyValues(*id, *ts, *sig, body); err != nil {
		fmt.Fprintln(env.stderr, "dtekit webhook verify: rejected:", errLine(err))
		return 1
	}
	fmt.Fprintf(env.stdout, "verified: %s at %s (%d body bytes)\n", *id, *ts, len(body))
	return 0
}
