package email

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// The security modes of SMTPConfig and IMAPConfig.
const (
	securityTLS      = "tls"      // implicit TLS from the first byte
	securityStartTLS = "starttls" // plain text upgraded before anything else
	securityNone     = "none"     // plain text throughout
)

// configError is a setting that cannot work: trying again does not help.
type configError struct {
	msg string
	err error  // the cause, if any
	cat string // its Category when not CategoryRejected
}

func (e *configError) Error() string {
	if e.err != nil {
		return "email: " + e.msg + ": " + e.err.Error()
	}
	return "email: " + e.msg
}

func (e *configError) Unwrap() error { return e.err }

func configErrorf(format string, args ...any) error {
	return &configError{msg: fmt.Sprintf(format, args...)}
}

// endpoint is what SMTPConfig and IMAPConfig share: where to connect, how
// securely, as whom, for how long.
type endpoint struct {
	kind     string // "SMTP" or "IMAP", for messages
	security string
	host     string
	port     int
	username string
	timeout  time.Duration
	connect  time.Duration
}

// DefaultConnectTimeout bounds, by default, the first steps of a
// connection (dial, TLS handshake, STARTTLS and the server's greeting): a
// server that takes the connection and says nothing is given up on long
// before the whole call's Timeout.
const DefaultConnectTimeout = 10 * time.Second

// normalize checks e and fills its defaults: security def, the port for
// the security mode from ports, a 60 s timeout and a connect timeout of
// DefaultConnectTimeout (never longer than the timeout). It refuses
// credentials in clear to a host that is not loopback.
func (e *endpoint) normalize(def string, ports map[string]int) error {
	sec, err := checkSecurity(e.kind, e.security, def)
	if err != nil {
		return err
	}
	e.security = sec
	if e.port == 0 {
		e.port = ports[sec]
	}
	if err := checkHost(e.kind, e.host, e.port); err != nil {
		return err
	}
	if e.timeout <= 0 {
		e.timeout = 60 * time.Second
	}
	if e.connect <= 0 {
		e.connect = DefaultConnectTimeout
	}
	e.connect = min(e.connect, e.timeout)
	return checkPlainAuth(e.kind, sec, e.host, e.username)
}

// failure wraps the error of one step against the server at addr: ctx's
// error first, and an unverified certificate as a setting to fix.
func failure(ctx context.Context, proto, addr, step string, err error) error {
	err = ctxErr(ctx, err)
	if isCertificateError(err) {
		return &configError{msg: fmt.Sprintf("%s %s: %s: the server's certificate does not verify", proto, addr, step), err: err, cat: CategoryTLS}
	}
	return &stepError{proto: proto, addr: addr, step: step, err: err}
}

// stepError is the failure of one step against a server.
type stepError struct {
	proto, addr, step string
	err               error
}

func (e *stepError) Error() string {
	return fmt.Sprintf("email: %s %s: %s: %v", e.proto, e.addr, e.step, e.err)
}

func (e *stepError) Unwrap() error { return e.err }

// checkSecurity normalizes a Security setting, defaulting to def.
func checkSecurity(kind, security, def string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(security))
	switch s {
	case "":
		return def, nil
	case securityTLS, securityStartTLS, securityNone:
		return s, nil
	}
	return "", configErrorf("%s Security %q: want \"tls\", \"starttls\" or \"none\"", kind, security)
}

// checkHost refuses a host that cannot be dialled or that smuggles a line.
func checkHost(kind, host string, port int) error {
	if strings.TrimSpace(host) == "" {
		return configErrorf("%s Host is empty", kind)
	}
	if strings.ContainsFunc(host, func(r rune) bool { return isControl(r) || r == ' ' || r == '/' }) {
		return configErrorf("%s Host %q is not a host name", kind, host)
	}
	if port <= 0 || port > 65535 {
		return configErrorf("%s Port %d is out of range", kind, port)
	}
	return nil
}

// isLoopback reports whether host names this machine: "localhost" or an
// address in 127.0.0.0/8 or ::1. Only there may a password cross in clear.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// checkPlainAuth is the rule for both protocols: credentials go over an
// unencrypted connection only with Security "none" to a loopback host.
func checkPlainAuth(kind, security, host, username string) error {
	if username == "" || security != securityNone || isLoopback(host) {
		return nil
	}
	return &configError{msg: fmt.Sprintf("%s refuses to send credentials in clear text to %q: use Security \"tls\" or \"starttls\" (plain text is allowed only to a loopback host)", kind, host), cat: CategoryTLS}
}

// tlsConfig clones the configured TLS settings, naming the host as the
// server to verify when the caller did not.
func tlsConfig(cfg *tls.Config, host string) *tls.Config {
	var c *tls.Config
	if cfg != nil {
		c = cfg.Clone()
	} else {
		c = &tls.Config{}
	}
	if c.ServerName == "" {
		c.ServerName = strings.Trim(host, "[]")
	}
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

// guard closes conn if ctx ends before the returned stop is called: both
// libraries set deadlines of their own (minutes long) around each command,
// so the caller's deadline is enforced by closing the connection, which
// unblocks any read or write at once. An operation cut in the middle
// leaves the protocol in an unknown state anyway.
func guard(ctx context.Context, conn net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = conn.Close() })
}

// DialFunc opens a connection, as net.Dialer.DialContext does. A caller
// that must keep mail away from some addresses (a service whose tenants
// choose the hosts) passes one that resolves and checks them.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// dial opens a TCP connection within ctx, through d when set.
func dial(ctx context.Context, d DialFunc, host string, port int) (net.Conn, error) {
	if d == nil {
		var nd net.Dialer
		d = nd.DialContext
	}
	return d(ctx, "tcp", net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port)))
}

// ctxErr prefers ctx's error to the I/O error a closed connection gave, so
// that a caller sees a deadline as a deadline.
func ctxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%v)", cerr, err)
	}
	// The connection's deadline is ctx's: it may fire a moment before
	// ctx's timer does, and the libraries do not always wrap it.
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}

// isCertificateError reports a server certificate that does not verify for
// the host: a setting to fix, not a failure that passes.
func isCertificateError(err error) bool {
	var verr *tls.CertificateVerificationError
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	var cerr x509.CertificateInvalidError
	return errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) || errors.As(err, &cerr)
}
