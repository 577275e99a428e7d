package email

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-smtp"
)

// The categories of Category: what a failure of Send or of the IMAP calls
// was, in words that reveal nothing of the network (no address, no
// server's reply), for a caller that shows failures to people who chose
// the server but may not look behind it.
const (
	// CategoryDNS: the host name did not resolve.
	CategoryDNS = "dns"
	// CategoryRefused: no connection: refused, reset, unreachable, or an
	// address the caller's Dial does not reach.
	CategoryRefused = "refused"
	// CategoryTimeout: the server did not answer in time.
	CategoryTimeout = "timeout"
	// CategoryTLS: the TLS handshake or the certificate failed, or the
	// server offers no STARTTLS, or credentials would cross in clear.
	CategoryTLS = "tls"
	// CategoryAuth: the server refused the credentials, or offers no
	// mechanism to send them.
	CategoryAuth = "auth"
	// CategoryRejected: anything else: the server answered with a refusal
	// (an unknown recipient, a message too large, a mailbox that does not
	// exist), spoke another protocol, or the settings cannot work.
	CategoryRejected = "rejected"
)

// Category names what kind of failure err (from Send, DialIMAP or a
// Mailbox's calls) is: one of the Category constants, "" for nil. The
// detail (addresses, the server's words) stays in err, for the log.
func Category(err error) string {
	if err == nil {
		return ""
	}
	var blocked interface{ Blocked() bool }
	if errors.As(err, &blocked) && blocked.Blocked() {
		return CategoryRefused
	}
	var ce *configError
	if errors.As(err, &ce) {
		if ce.cat != "" {
			return ce.cat
		}
		return CategoryRejected
	}
	var step *stepError
	isAuth := errors.As(err, &step) && (strings.HasPrefix(step.step, "AUTH") || strings.HasPrefix(step.step, "LOGIN"))
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		if isAuth || se.Code == 530 || se.Code == 534 || se.Code == 535 || se.Code == 538 {
			return CategoryAuth
		}
		return CategoryRejected
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		if isAuth || ie.Code == imap.ResponseCodeAuthenticationFailed || ie.Code == imap.ResponseCodeAuthorizationFailed {
			return CategoryAuth
		}
		return CategoryRejected
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && !dns.IsTimeout {
		return CategoryDNS
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return CategoryTimeout
	}
	var (
		rec     tls.RecordHeaderError
		alert   tls.AlertError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	if errors.As(err, &rec) || errors.As(err, &alert) || errors.As(err, &verify) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) ||
		(step != nil && (step.step == "TLS handshake" || step.step == "STARTTLS")) {
		return CategoryTLS
	}
	var op *net.OpError
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || (errors.As(err, &op) && op.Op == "dial") || (step != nil && step.step == "connect") {
		return CategoryRefused
	}
	return CategoryRejected
}
