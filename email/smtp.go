package email

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// SMTPConfig says how to reach a submission server.
type SMTPConfig struct {
	// Host is the server's name or address; it is also the name its TLS
	// certificate must carry unless TLSConfig.ServerName says otherwise.
	Host string
	// Port defaults to 587 for "starttls", 465 for "tls" and 25 for "none".
	Port int
	// Security is "starttls" (the default: plain text upgraded before
	// anything else, and refused if the server does not offer it), "tls"
	// (implicit TLS) or "none".
	Security string
	// Username and Password authenticate with AUTH PLAIN (or LOGIN when
	// the server offers only that); no AUTH when Username is empty. They
	// never cross an unencrypted connection, unless Security is "none"
	// and Host is a loopback address.
	Username, Password string
	// HelloName is the name given in EHLO once the connection is secure
	// ("localhost" when empty, and always before STARTTLS).
	HelloName string
	// Timeout bounds the whole send, from dialling to the server's last
	// answer. Default 60 s.
	Timeout time.Duration
	// ConnectTimeout bounds the dial, the TLS handshake or STARTTLS, the
	// server's greeting and EHLO. Default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Dial opens the TCP connection; nil dials directly.
	Dial DialFunc
	// TLSConfig is cloned for the connection; nil trusts the system's
	// roots. An empty ServerName is set to Host.
	TLSConfig *tls.Config
}

// normalize checks cfg and fills its defaults.
func (cfg SMTPConfig) normalize() (SMTPConfig, error) {
	e := endpoint{kind: "SMTP", security: cfg.Security, host: cfg.Host, port: cfg.Port, username: cfg.Username, timeout: cfg.Timeout, connect: cfg.ConnectTimeout}
	if err := e.normalize(securityStartTLS, map[string]int{securityStartTLS: 587, securityTLS: 465, securityNone: 25}); err != nil {
		return cfg, err
	}
	cfg.Security, cfg.Port, cfg.Timeout, cfg.ConnectTimeout = e.security, e.port, e.timeout, e.connect
	if strings.ContainsFunc(cfg.HelloName, func(r rune) bool { return isControl(r) || r == ' ' }) {
		return cfg, configErrorf("SMTP HelloName %q is not a host name", cfg.HelloName)
	}
	return cfg, nil
}

// Send submits raw (a message as Compose builds it) from the envelope
// sender from to each address of to, within cfg.Timeout and ctx.
//
// Every recipient must be accepted or nothing is sent. The error names the
// step that failed (connect, STARTTLS, AUTH, MAIL, RCPT with its address,
// DATA) and wraps the server's answer; use IsPermanent to decide whether to
// try again. A server that declares a SIZE below len(raw) is refused before
// the data is sent. Credentials never appear in errors.
func Send(ctx context.Context, cfg SMTPConfig, from string, to []string, raw []byte) error {
	cfg, err := cfg.normalize()
	if err != nil {
		return err
	}
	if err := checkEnvelope(from, to); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	addr := net.JoinHostPort(strings.Trim(cfg.Host, "[]"), strconv.Itoa(cfg.Port))
	fail := func(step string, err error) error { return failure(ctx, "smtp", addr, step, err) }

	// The first steps have a deadline of their own: a server that takes
	// the connection and never speaks is left within ConnectTimeout.
	cctx, ccancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer ccancel()
	cfail := func(step string, err error) error { return failure(cctx, "smtp", addr, step, err) }
	conn, err := dial(cctx, cfg.Dial, cfg.Host, cfg.Port)
	if err != nil {
		return cfail("connect", err)
	}
	defer guard(ctx, conn)()
	defer conn.Close()
	stopConnect := guard(cctx, conn)

	tcfg := tlsConfig(cfg.TLSConfig, cfg.Host)
	var c *smtp.Client
	switch cfg.Security {
	case securityTLS:
		tc := tls.Client(conn, tcfg)
		if err := tc.HandshakeContext(cctx); err != nil {
			return cfail("TLS handshake", err)
		}
		c = smtp.NewClient(tc)
	case securityStartTLS:
		c, err = smtp.NewClientStartTLS(conn, tcfg)
		if err != nil {
			if err.Error() == "smtp: server doesn't support STARTTLS" {
				return &configError{msg: fmt.Sprintf("smtp %s: the server does not offer STARTTLS; nothing was sent in clear", addr), cat: CategoryTLS}
			}
			return cfail("STARTTLS", err)
		}
	default:
		c = smtp.NewClient(conn)
	}
	defer c.Close()
	// Hello reads the greeting (when STARTTLS did not) and says EHLO.
	if err := c.Hello(cmp.Or(cfg.HelloName, "localhost")); err != nil {
		return cfail("EHLO", err)
	}
	if !stopConnect() {
		return cfail("EHLO", context.DeadlineExceeded)
	}
	if cfg.Username != "" {
		var mech sasl.Client
		switch {
		case c.SupportsAuth(sasl.Plain):
			mech = sasl.NewPlainClient("", cfg.Username, cfg.Password)
		case c.SupportsAuth(sasl.Login):
			mech = sasl.NewLoginClient(cfg.Username, cfg.Password)
		default:
			return &configError{msg: fmt.Sprintf("smtp %s: the server offers neither AUTH PLAIN nor AUTH LOGIN", addr), cat: CategoryAuth}
		}
		if err := c.Auth(mech); err != nil {
			return fail("AUTH", err)
		}
	}
	if size, ok := c.MaxMessageSize(); ok && size > 0 && len(raw) > size {
		return &configError{msg: fmt.Sprintf("smtp %s: the message has %d bytes, more than the %d the server accepts", addr, len(raw), size)}
	}
	var opts *smtp.MailOptions
	if !isASCII(from) || !allASCII(to) {
		opts = &smtp.MailOptions{UTF8: true}
	}
	if err := c.Mail(from, opts); err != nil {
		return fail(fmt.Sprintf("MAIL FROM <%s>", from), err)
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt, nil); err != nil {
			return fail(fmt.Sprintf("RCPT TO <%s>", rcpt), err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fail("DATA", err)
	}
	if _, err := w.Write(raw); err != nil {
		return fail("DATA", err)
	}
	if err := w.Close(); err != nil {
		return fail("end of DATA", err)
	}
	_ = c.Quit() // the message is accepted; a lost QUIT changes nothing
	return nil
}

// checkEnvelope refuses envelope addresses that are empty or would break
// the SMTP command line.
func checkEnvelope(from string, to []string) error {
	if len(to) == 0 {
		return configErrorf("SMTP send without recipients")
	}
	check := func(field, a string) error {
		if strings.ContainsFunc(a, func(r rune) bool { return isControl(r) || r == ' ' || r == '<' || r == '>' }) {
			return configErrorf("SMTP envelope %s %q: not a bare address", field, a)
		}
		if at := strings.LastIndexByte(a, '@'); at <= 0 || at == len(a)-1 {
			return configErrorf("SMTP envelope %s %q: not an address", field, a)
		}
		return nil
	}
	if err := check("from", from); err != nil {
		return err
	}
	for i, a := range to {
		if err := check(fmt.Sprintf("to[%d]", i), a); err != nil {
			return err
		}
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func allASCII(list []string) bool {
	for _, s := range list {
		if !isASCII(s) {
			return false
		}
	}
	return true
}

// IsPermanent reports whether err, from Send or the IMAP calls, will come
// back unchanged however often the call is tried: an SMTP 5xx answer (an
// unknown recipient, a refused password, a message too large), a setting
// that cannot work (a bad host or port, no STARTTLS offered, credentials
// that would travel in clear, a server certificate that does not verify)
// or an IMAP login the server refuses. A 4xx answer, a network failure
// and a timeout are not permanent: try again later.
func IsPermanent(err error) bool {
	if err == nil {
		return false
	}
	var ce *configError
	if errors.As(err, &ce) {
		return true
	}
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code >= 500 && se.Code < 600
	}
	var ie *imap.Error
	if errors.As(err, &ie) {
		return ie.Code == imap.ResponseCodeAuthenticationFailed || ie.Code == imap.ResponseCodeAuthorizationFailed
	}
	return false
}
