// Package ssrf keeps outgoing webhook requests away from the server's own
// network: loopback, private, link-local, CGNAT, cloud metadata and every
// other address that is not public unicast.
//
// It guards twice. [CheckURL] judges a URL when a webhook is registered:
// HTTPS only, no credentials, no IP literal in a blocked range, no name
// that is local by definition (localhost, *.local, *.internal, single
// labels) or that some resolvers read as a numeric address ("2130706433",
// "0x7f.1"). [NewClient] builds the http.Client deliveries use: it
// resolves every host itself, refuses the connection when any resolved
// address is blocked (so DNS rebinding gains nothing), checks the address
// again in the dialer's control hook just before connect, ignores proxy
// settings from the environment, never follows redirects, and bounds the
// connect, TLS and total time.
//
// Loopback is refused too unless the operator allows it explicitly
// ([Options.AllowLoopback], for tests and local trials); then plain http
// URLs to a loopback address are accepted as well.
package ssrf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BlockedError reports a destination the guard refused. Every refusal at
// dial time is (or wraps) a *BlockedError.
type BlockedError struct {
	// Host is the name being resolved, empty when an address was checked
	// directly.
	Host string
	// Addr is the refused address.
	Addr netip.Addr
	// Range names the range it falls in, e.g. "private", "loopback".
	Range string
}

// Error says which address was refused, and why.
func (e *BlockedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("ssrf: %s resolves to %s (%s), which webhooks may not reach", e.Host, e.Addr, e.Range)
	}
	return fmt.Sprintf("ssrf: address %s (%s) is not one webhooks may reach", e.Addr, e.Range)
}

// Blocked reports true. Packages that cannot import this one (package
// webhook is standard-library only) recognize a refusal by this method.
func (e *BlockedError) Blocked() bool { return true }

// MaxURLBytes bounds the length of a webhook URL.
const MaxURLBytes = 2048

// CheckURL parses and judges a webhook URL at registration. It requires an
// absolute https URL without user info or fragment, of at most MaxURLBytes,
// whose host is a public DNS name or a public IP literal. With
// allowLoopback, http and https URLs whose host is a loopback literal
// (127.0.0.0/8, [::1]) or "localhost" are accepted as well. Errors say
// what is wrong without repeating credentials.
func CheckURL(raw string, allowLoopback bool) (*url.URL, error) {
	if len(raw) > MaxURLBytes {
		return nil, fmt.Errorf("url is %d bytes, at most %d allowed", len(raw), MaxURLBytes)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("url is not a valid URL")
	}
	if !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return nil, errors.New("url must be an absolute URL with a host, https://host/path")
	}
	if u.User != nil {
		return nil, errors.New("url must not carry user info (user:password@)")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, errors.New("url must not have a fragment (#…)")
	}
	host := u.Hostname()
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("url port %q is not 1 to 65535", p)
		}
	}
	loopback := isLoopbackHost(host)
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
	case scheme == "http" && allowLoopback && loopback:
	case scheme == "http" && loopback:
		return nil, errors.New("url must use https (http to loopback needs the server's explicit allow-loopback setting)")
	default:
		return nil, fmt.Errorf("url scheme %q is not allowed, use https", u.Scheme)
	}
	if loopback && allowLoopback {
		return u, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := Check(a, allowLoopback); err != nil {
			return nil, fmt.Errorf("url host %s: %w", host, err)
		}
		return u, nil
	}
	if err := checkName(host); err != nil {
		return nil, err
	}
	return u, nil
}

// isLoopbackHost reports whether host is "localhost" or a loopback literal.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// localSuffixes are name suffixes that never denote a public host.
var localSuffixes = []string{".localhost", ".local", ".localdomain", ".internal", ".intranet", ".lan", ".home.arpa", ".corp", ".private"}

// checkName refuses DNS names that are local by definition or numeric.
func checkName(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" || len(h) > 253 {
		return fmt.Errorf("url host %q is not a valid DNS name", host)
	}
	if h == "localhost" {
		return fmt.Errorf("url host %q is local", host)
	}
	for _, s := range localSuffixes {
		if strings.HasSuffix(h, s) {
			return fmt.Errorf("url host %q is a local name (%s)", host, s[1:])
		}
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return fmt.Errorf("url host %q is a single-label name; use a fully qualified public name", host)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("url host %q is not a valid DNS name", host)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("url host %q has a character %q a DNS name cannot have", host, c)
			}
		}
	}
	// A numeric last label is no TLD: such hosts ("127.1", "2130706433",
	// "0x7f.0.0.1") are addresses to some resolvers.
	last := labels[len(labels)-1]
	if strings.HasPrefix(last, "0x") || strings.Trim(last, "0123456789") == "" {
		return fmt.Errorf("url host %q looks like a numeric address", host)
	}
	return nil
}

// Resolver looks a host name up; *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Default bounds of [NewClient].
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTLSTimeout     = 5 * time.Second
	DefaultTimeout        = 15 * time.Second
	// MaxResponseHeaderBytes bounds the response headers the client reads.
	MaxResponseHeaderBytes = 64 << 10
)

// Options configures [NewClient]. The zero value is the production setting.
type Options struct {
	// AllowLoopback lets deliveries reach 127.0.0.0/8 and ::1. For tests
	// and local trials only; never the default.
	AllowLoopback bool
	// AllowPrivate lets connections reach the private ranges (10.0.0.0/8,
	// 172.16.0.0/12, 192.168.0.0/16 and IPv6 unique-local) but never
	// link-local, cloud metadata or the other special ranges: for an
	// operator whose tenants' servers live on its own network. Never the
	// default.
	AllowPrivate bool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// ConnectTimeout, TLSTimeout and Timeout bound the TCP connect, the TLS
	// handshake and the whole request including reading the response
	// body; zero means the Default values.
	ConnectTimeout, TLSTimeout, Timeout time.Duration
	// RootCAs, when set, replaces the system roots (tests with a local TLS
	// server).
	RootCAs *x509.CertPool
	// UserAgent is sent on every request unless the request sets one.
	UserAgent string

	// control, when set (tests), is called with each address the dialer
	// is about to connect to, after the guard allowed it; an error stops
	// the connect.
	control func(address string) error
}

// guard resolves and checks destinations.
type guard struct {
	opts   Options
	dialer *net.Dialer
}

// NewClient returns an http.Client for webhook deliveries guarded as the
// package documentation says: every resolved address checked before dialing
// and again just before connect, no proxy, no redirects (a 3xx response is
// returned as it is), bounded timeouts, HTTP/1.1 and HTTP/2 over TLS 1.2+.
// Response bodies are not decompressed, so a reader's byte limit bounds
// what arrives.
func NewClient(opts Options) *http.Client {
	if opts.TLSTimeout <= 0 {
		opts.TLSTimeout = DefaultTLSTimeout
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	g := newGuard(opts)
	opts = g.opts
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            g.dialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: opts.RootCAs},
		TLSHandshakeTimeout:    opts.TLSTimeout,
		ResponseHeaderTimeout:  opts.Timeout,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		DisableCompression:     true,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        60 * time.Second,
	}
	var rt http.RoundTripper = tr
	if opts.UserAgent != "" {
		rt = userAgent{rt, opts.UserAgent}
	}
	return &http.Client{
		Transport:     rt,
		Timeout:       opts.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// userAgent sets a default User-Agent.
type userAgent struct {
	rt http.RoundTripper
	ua string
}

// RoundTrip adds the User-Agent when the request has none.
func (u userAgent) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", u.ua)
	}
	return u.rt.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the transport it
// wraps: http.Client.CloseIdleConnections reaches a transport only
// through this method, so without it a client's owner could not let go
// of its kept-alive connections (and their goroutines).
func (u userAgent) CloseIdleConnections() {
	if c, ok := u.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// dialContext resolves host, refuses it when any of its addresses is
// blocked, and dials the checked addresses in turn.
func (g *guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("ssrf: dial %q: %w", address, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") && !g.opts.AllowLoopback {
			return nil, &BlockedError{Host: host, Addr: netip.IPv6Loopback(), Range: "loopback"}
		}
		addrs, err = g.opts.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	for _, a := range addrs {
		if err := g.check(a); err != nil {
			be := err.(*BlockedError)
			be.Host = host
			return nil, be
		}
	}
	var firstErr error
	for _, a := range addrs {
		conn, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// control checks the address the socket is about to connect to: the last
// word, whatever resolution came before.
func (g *guard) control(_ context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("ssrf: connect to %q: not an address: %w", address, err)
	}
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("ssrf: connect over %s refused, tcp only", network)
	}
	if err := g.check(ap.Addr()); err != nil {
		return err
	}
	if g.opts.control != nil {
		return g.opts.control(address)
	}
	return nil
}

// check judges one address by the options: Check, then the private
// ranges when AllowPrivate.
func (g *guard) check(a netip.Addr) error {
	err := Check(a, g.opts.AllowLoopback)
	if err != nil && g.opts.AllowPrivate && isPrivate(a) {
		return nil
	}
	return err
}

// privateRanges are what Options.AllowPrivate opens.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fc00::/7"),
}

// awsMetadataV6 is the IPv6 address of a cloud's instance metadata,
// inside the unique-local range: never opened.
var awsMetadataV6 = netip.MustParseAddr("fd00:ec2::254")

// isPrivate reports whether a is in one of privateRanges (and not a
// metadata address).
func isPrivate(a netip.Addr) bool {
	if a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if a == awsMetadataV6 {
		return false
	}
	for _, p := range privateRanges {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// DialFunc opens a TCP connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// NewDialer returns a dial function for protocols other than HTTP (mail)
// under the same guard as NewClient: the host resolved by the guard,
// refused when any of its addresses is blocked, each address checked
// again just before connect, and the connect bounded by
// Options.ConnectTimeout. Every refused address is a *BlockedError (a
// network other than TCP, or an address that does not parse, is a plain
// error).
func NewDialer(opts Options) DialFunc {
	return newGuard(opts).dialContext
}

// newGuard builds the guard of opts, with the default connect timeout
// and resolver when they are not set.
func newGuard(opts Options) *guard {
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	g := &guard{opts: opts}
	g.dialer = &net.Dialer{Timeout: opts.ConnectTimeout, ControlContext: g.control}
	return g
}

// Allowed reports why a is not an address connections under o may reach
// (a *BlockedError), or nil when it may: Check, with the private ranges
// open when o.AllowPrivate.
func (o Options) Allowed(a netip.Addr) error {
	return (&guard{opts: o}).check(a)
}
