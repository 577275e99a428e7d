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
	"sync"
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
	err error // the cause, if any
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
	return configErrorf("%s refuses to send credentials in clear text to %q: use Security \"tls\" or \"starttls\" (plain text is allowed only to a loopback host)", kind, host)
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

// boundConn caps every deadline the protocol libraries set on it at the
// deadline of the operation in progress, since both libraries set their own
// (minutes long) before each command and clear them after. The cap is
// lifted between operations, so that an idle IMAP connection is not torn
// down by a deadline that has passed.
type boundConn struct {
	net.Conn
	mu    sync.Mutex
	limit time.Time // zero: no operation in progress
}

func (c *boundConn) clamp(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit.IsZero() {
		return t
	}
	if t.IsZero() || t.After(c.limit) {
		return c.limit
	}
	return t
}

// SetDeadline sets the deadline, no later than the operation's.
func (c *boundConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.clamp(t)) }

// SetReadDeadline sets the read deadline, no later than the operation's.
func (c *boundConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.clamp(t)) }

// SetWriteDeadline sets the write deadline, no later than the operation's.
func (c *boundConn) SetWriteDeadline(t time.Time) error {
	return c.Conn.SetWriteDeadline(c.clamp(t))
}

// begin caps the connection's deadlines at limit until the returned
// function is called, and closes the connection if ctx ends first: an
// operation cut in the middle leaves the protocol in an unknown state.
func (c *boundConn) begin(ctx context.Context, limit time.Time) (end func()) {
	c.mu.Lock()
	c.limit = limit
	c.mu.Unlock()
	_ = c.Conn.SetDeadline(limit)
	stop := context.AfterFunc(ctx, func() { _ = c.Conn.Close() })
	return func() {
		stop()
		c.mu.Lock()
		c.limit = time.Time{}
		c.mu.Unlock()
		_ = c.Conn.SetDeadline(time.Time{})
	}
}

// dial opens a TCP connection within ctx.
func dial(ctx context.Context, host string, port int) (*boundConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	return &boundConn{Conn: conn}, nil
}

// opDeadline is the deadline of an operation: ctx's, or timeout from now
// if sooner.
func opDeadline(ctx context.Context, timeout time.Duration) time.Time {
	limit := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(limit) {
		return d
	}
	return limit
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
