package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dtekit/dtekit/billing"
)

// The variables of "dtekit serve"'s mail (each company's servers are its
// own settings: PUT /api/v1/billing/empresa/correo).
const (
	// mailCAEnv names a PEM file of the certificate authorities trusted
	// for the companies' mail servers, besides the system's (a private
	// CA; the tests' servers).
	mailCAEnv = "DTEKIT_MAIL_CA"
	// mailPollEnv is how often each mailbox is read (a duration; default
	// 1m, at least 5s).
	mailPollEnv = "DTEKIT_MAIL_POLL"
	// mailRetryEnv is the pause before a mail that failed is tried again
	// (a duration; default: 30s, 2m, 10m, 30m, then hourly).
	mailRetryEnv = "DTEKIT_MAIL_RETRY"
	// mailLoopbackEnv, mailPrivateEnv and mailPortsEnv are the defaults
	// of serve's --mail-allow-loopback, --mail-allow-private and
	// --mail-ports.
	mailLoopbackEnv = "DTEKIT_MAIL_ALLOW_LOOPBACK"
	mailPrivateEnv  = "DTEKIT_MAIL_ALLOW_PRIVATE"
	mailPortsEnv    = "DTEKIT_MAIL_PORTS"
)

// mailNetwork is where the companies' mail servers may be: serve's
// --mail-allow-loopback, --mail-allow-private and --mail-ports.
type mailNetwork struct {
	loopback, private bool
	ports             string
}

// apply sets n on c: the ports a list such as "587,993" or "any".
func (n mailNetwork) apply(c *billing.MailConfig) error {
	c.AllowLoopback, c.AllowPrivate = n.loopback, n.private
	switch v := strings.TrimSpace(n.ports); v {
	case "":
	case "any":
		c.AnyPort = true
	default:
		for item := range strings.SplitSeq(v, ",") {
			p, err := strconv.Atoi(strings.TrimSpace(item))
			if err != nil || p < 1 || p > 65535 {
				return fmt.Errorf("--mail-ports %q: want ports from 1 to 65535 separated by commas, or any", n.ports)
			}
			c.Ports = append(c.Ports, p)
		}
	}
	return nil
}

// mailConfig reads the mail settings of the process from the
// environment, with where its servers may be from net.
func mailConfig(env *cmdEnv, net mailNetwork) (billing.MailConfig, error) {
	var c billing.MailConfig
	if err := net.apply(&c); err != nil {
		return c, err
	}
	if path := env.getenv(mailCAEnv); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("%s: %w", mailCAEnv, err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(data) {
			return c, fmt.Errorf("%s: %s holds no PEM certificate", mailCAEnv, path)
		}
		c.TLS = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if v := env.getenv(mailPollEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 5*time.Second {
			return c, fmt.Errorf("%s %q: want a duration of 5s or more, such as 1m", mailPollEnv, v)
		}
		c.Every = d
	}
	if v := env.getenv(mailRetryEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s %q: want a positive duration such as 30s", mailRetryEnv, v)
		}
		c.Backoff = []time.Duration{d}
	}
	return c, nil
}
