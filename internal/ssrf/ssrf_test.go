package ssrf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The expected verdicts come from the IANA special-purpose registries
// (RFC 6890, 6598, 6052, 8215, 3056, 4380, 3849, 9637, 4193, 4291), not from
// the table in ranges.go.
func TestCheck(t *testing.T) {
	blocked := []string{
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254",
		"100.100.100.200", // Alibaba metadata, CGNAT space
		"127.0.0.1", "127.255.0.9", "169.254.169.254", "169.254.0.1", "172.16.0.1", "172.31.255.255",
		"192.0.0.192", // Oracle metadata
		"192.0.2.7", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255", "198.51.100.2",
		"203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1",
		"::127.0.0.1", "::8.8.8.8", // IPv4-compatible, deprecated
		"fe80::1", "fd00:ec2::254", "fc00::1", "fdff::1", "ff02::1", "ff05::1:3",
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::a9fe:a9fe",
		"2002:7f00:1::1", "2002:a00:1::", "2002:c0a8:101::1",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
		"2001:db8::1", "2001:10::1", "3fff::1", "4000::1", "100::1",
	}
	allowed := []string{
		"8.8.8.8", "1.1.1.1", "200.10.0.1", "100.63.255.255", "100.128.0.0", "172.15.255.255",
		"172.32.0.0", "192.169.0.1", "198.17.255.255", "223.255.255.255", "169.253.0.1",
		"::ffff:8.8.8.8", "2606:4700:4700::1111", "2800:150::1", "2a00:1450:4001::200e",
		"64:ff9b::808:808", "2002:808:808::1",
	}
	for _, s := range blocked {
		a := netip.MustParseAddr(s)
		err := Check(a, false)
		var be *BlockedError
		if !errors.As(err, &be) || !be.Blocked() {
			t.Errorf("Check(%s) = %v, want a BlockedError", s, err)
		}
	}
	for _, s := range allowed {
		if err := Check(netip.MustParseAddr(s), false); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", s, err)
		}
	}
	// Loopback allowed: loopback in every form passes, nothing else changes.
	for _, s := range []string{"127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1"} {
		if err := Check(netip.MustParseAddr(s), true); err != nil {
			t.Errorf("Check(%s, allowLoopback) = %v, want allowed", s, err)
		}
	}
	for _, s := range blocked {
		a := netip.MustParseAddr(s)
		if a.Unmap().IsLoopback() || strings.Contains(s, "7f00:1") {
			continue
		}
		if err := Check(a, true); err == nil {
			t.Errorf("Check(%s, allowLoopback) allowed a non-loopback address", s)
		}
	}
	if err := Check(netip.MustParseAddr("fe80::1%eth0"), true); err == nil {
		t.Error("scoped address allowed")
	}
	if err := Check(netip.Addr{}, true); err == nil {
		t.Error("zero address allowed")
	}
}

func TestCheckURL(t *testing.T) {
	good := []string{
		"https://hooks.example.com/dtekit",
		"https://hooks.example.com:8443/a?b=c",
		"https://8.8.8.8/hook",
		"https://[2606:4700:4700::1111]/hook",
		"HTTPS://Hooks.Example.COM./x",
	}
	for _, u := range good {
		if _, err := CheckURL(u, false); err != nil {
			t.Errorf("CheckURL(%q) = %v, want accepted", u, err)
		}
	}
	bad := map[string]string{
		"http://hooks.example.com/":             "https",
		"ftp://hooks.example.com/":              "scheme",
		"hooks.example.com/x":                   "absolute",
		"/relative":                             "absolute",
		"https://user:pw@hooks.example.com/":    "user info",
		"https://hooks.example.com/#frag":       "fragment",
		"https://127.0.0.1/":                    "loopback",
		"https://10.0.0.1/":                     "private",
		"https://169.254.169.254/latest":        "link-local",
		"https://100.64.0.1/":                   "CGNAT",
		"https://[::1]/":                        "loopback",
		"https://[::ffff:127.0.0.1]/":           "loopback",
		"https://[fd00:ec2::254]/":              "unique-local",
		"https://localhost/":                    "local",
		"https://api.localhost/":                "local",
		"https://printer.local/":                "local",
		"https://metadata.google.internal/":     "local",
		"https://router.home.arpa/":             "local",
		"https://intranet/":                     "single-label",
		"https://2130706433/":                   "single-label",
		"https://127.1/":                        "numeric",
		"https://0x7f.0.0.1/":                   "numeric",
		"https://0177.0.0.1/":                   "numeric",
		"https://hooks.example.com:0/":          "port",
		"https://hooks.example.com:99999/":      "port",
		"https://hook s.example.com/":           "valid URL",
		"https://hooks.exam%70le.com/":          "valid URL",
		"https://hooks.exa!mple.com/":           "character",
		"https://" + strings.Repeat("a", 3000):  "bytes",
		"http://127.0.0.1:8080/hook":            "allow-loopback",
		"javascript:alert(1)":                   "absolute",
		"https:///path":                         "absolute",
		"https://hooks..example.com/":           "valid DNS name",
		"https://hooks.example.com:443@evil.io": "user info",
	}
	for u, want := range bad {
		_, err := CheckURL(u, false)
		if err == nil {
			t.Errorf("CheckURL(%.60q) accepted", u)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL(%.60q) = %v, want a message about %q", u, err, want)
		}
		if strings.Contains(err.Error(), "pw") {
			t.Errorf("CheckURL(%q) repeats the credentials: %v", u, err)
		}
	}
	// With loopback allowed: http and https to loopback literals and
	// localhost, nothing else newly accepted.
	for _, u := range []string{"http://127.0.0.1:8081/hook", "https://127.0.0.1:8443/", "http://[::1]:9/", "http://localhost:8081/"} {
		if _, err := CheckURL(u, true); err != nil {
			t.Errorf("CheckURL(%q, allowLoopback) = %v", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1/", "https://10.0.0.1/", "http://hooks.example.com/", "https://169.254.169.254/"} {
		if _, err := CheckURL(u, true); err == nil {
			t.Errorf("CheckURL(%q, allowLoopback) accepted", u)
		}
	}
}

// stubResolver answers every name from a fixed table and records lookups.
type stubResolver struct {
	mu      sync.Mutex
	table   map[string][]netip.Addr
	lookups []string
}

func (r *stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	if a, ok := r.table[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// loopbackOnly is the test control hook: it records every connect and
// refuses anything but loopback, so no packet leaves the machine even if
// the guard failed.
type loopbackOnly struct {
	mu    sync.Mutex
	dials []string
}

func (l *loopbackOnly) control(address string) error {
	l.mu.Lock()
	l.dials = append(l.dials, address)
	l.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("test: refusing to connect to %s", address)
	}
	return nil
}

func (l *loopbackOnly) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.dials)
}

// counter is a loopback server counting the requests it receives.
func counter(t *testing.T, tls bool) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})
	var srv *httptest.Server
	if tls {
		srv = httptest.NewTLSServer(h)
	} else {
		srv = httptest.NewServer(h)
	}
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestDialTimeRefusal(t *testing.T) {
	srv, hits := counter(t, true)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, target := range []string{"127.0.0.1", "10.0.0.1", "169.254.169.254", "::ffff:127.0.0.1", "100.64.0.1", "::1", "fd00:ec2::254", "64:ff9b::a9fe:a9fe"} {
		res := &stubResolver{table: map[string][]netip.Addr{"hook.example.com": {netip.MustParseAddr(target)}}}
		lo := &loopbackOnly{}
		c := NewClient(Options{Resolver: res, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, control: lo.control})
		resp, err := c.Post(fmt.Sprintf("https://hook.example.com:%d/x", port), "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s: delivered, status %d", target, resp.StatusCode)
			continue
		}
		var be *BlockedError
		if !errors.As(err, &be) || be.Host != "hook.example.com" {
			t.Errorf("%s: error %v, want a BlockedError naming the host", target, err)
		}
		if n := lo.count(); n != 0 {
			t.Errorf("%s: %d connects attempted", target, n)
		}
		if len(res.lookups) == 0 {
			t.Errorf("%s: the resolver was not asked", target)
		}
	}
	// A name with one public and one private address is refused whole.
	res := &stubResolver{table: map[string][]netip.Addr{"mixed.example.com": {netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("127.0.0.1")}}}
	lo := &loopbackOnly{}
	c := NewClient(Options{Resolver: res, control: lo.control})
	if _, err := c.Get(fmt.Sprintf("https://mixed.example.com:%d/", port)); err == nil || lo.count() != 0 {
		t.Errorf("mixed resolution: err %v, %d connects", err, lo.count())
	}
	// IP literals and localhost are judged without the resolver.
	for _, u := range []string{
		fmt.Sprintf("https://127.0.0.1:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		fmt.Sprintf("https://localhost:%d/", port),
	} {
		lo := &loopbackOnly{}
		c := NewClient(Options{Resolver: &stubResolver{}, control: lo.control})
		var be *BlockedError
		if _, err := c.Get(u); !errors.As(err, &be) || lo.count() != 0 {
			t.Errorf("%s: err %v, %d connects", u, err, lo.count())
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server received %d requests", n)
	}

	// Control: with loopback allowed, the same name reaches the server.
	res = &stubResolver{table: map[string][]netip.Addr{"hook.example.com": {netip.MustParseAddr("127.0.0.1")}}}
	lo = &loopbackOnly{}
	c = NewClient(Options{AllowLoopback: true, Resolver: res, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, control: lo.control})
	resp, err := c.Post(fmt.Sprintf("https://hook.example.com:%d/x", port), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("loopback allowed: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || hits.Load() != 1 || lo.count() != 1 {
		t.Errorf("loopback allowed: status %d, %d hits, %d connects", resp.StatusCode, hits.Load(), lo.count())
	}
	// Even with loopback allowed, private addresses stay refused.
	res.table["hook.example.com"] = []netip.Addr{netip.MustParseAddr("10.0.0.1")}
	lo2 := &loopbackOnly{}
	c = NewClient(Options{AllowLoopback: true, Resolver: res, control: lo2.control})
	var be *BlockedError
	if _, err := c.Get(fmt.Sprintf("https://hook.example.com:%d/", port)); !errors.As(err, &be) || lo2.count() != 0 {
		t.Errorf("private with loopback allowed: err %v, %d connects", err, lo2.count())
	}
}

func TestNoRedirects(t *testing.T) {
	target, hits := counter(t, false)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/internal", http.StatusFound)
	}))
	defer redirector.Close()
	lo := &loopbackOnly{}
	c := NewClient(Options{AllowLoopback: true, control: lo.control})
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		req, _ := http.NewRequest(method, redirector.URL, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Errorf("%s: status %d, want the 302 itself", method, resp.StatusCode)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("redirect followed: the target got %d requests", n)
	}
}

func TestClientSettings(t *testing.T) {
	c := NewClient(Options{UserAgent: "dtekit-webhooks/test"})
	tr := c.Transport.(userAgent).rt.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport takes a proxy (from the environment)")
	}
	if c.CheckRedirect == nil || c.Timeout != DefaultTimeout || tr.TLSHandshakeTimeout != DefaultTLSTimeout || !tr.DisableCompression {
		t.Errorf("client settings: redirect %v timeout %s tls %s compression off %v", c.CheckRedirect != nil, c.Timeout, tr.TLSHandshakeTimeout, tr.DisableCompression)
	}
	// User-Agent reaches the server.
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ua.Store(r.UserAgent()) }))
	defer srv.Close()
	c = NewClient(Options{AllowLoopback: true, UserAgent: "dtekit-webhooks/test"})
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ua.Load() != "dtekit-webhooks/test" {
		t.Errorf("User-Agent %v", ua.Load())
	}
}

func TestTimeouts(t *testing.T) {
	// A listener that accepts and never answers: the TLS handshake times out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	c := NewClient(Options{AllowLoopback: true, TLSTimeout: 200 * time.Millisecond, Timeout: 5 * time.Second})
	start := time.Now()
	_, err = c.Get("https://" + ln.Addr().String() + "/")
	if el := time.Since(start); err == nil || el > 3*time.Second {
		t.Errorf("TLS against a silent peer: err %v after %s", err, el)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("TLS against a silent peer: %v is not a timeout", err)
	}
	// Plain http, the peer reads the request and never answers: the total
	// timeout ends it.
	c = NewClient(Options{AllowLoopback: true, Timeout: 300 * time.Millisecond})
	start = time.Now()
	_, err = c.Get("http://" + ln.Addr().String() + "/")
	if el := time.Since(start); err == nil || el > 3*time.Second {
		t.Errorf("silent server: err %v after %s", err, el)
	}
	// A slow body is cut by the total timeout too.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		for range 50 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
		}
	}))
	defer slow.Close()
	resp, err := c.Get(slow.URL)
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Error("a 2.5 s body was read within a 300 ms total timeout")
	}
}

// TestDialer: the dialer mail uses refuses, before any connect, a name
// that resolves to a blocked address or a blocked literal, opens the
// private ranges (and never metadata) only with AllowPrivate, and
// connects to loopback only with AllowLoopback.
func TestDialer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	res := &stubResolver{table: map[string][]netip.Addr{
		"mail.empresa.cl":  {netip.MustParseAddr("10.1.2.3")},
		"meta.empresa.cl":  {netip.MustParseAddr("169.254.169.254")},
		"meta6.empresa.cl": {netip.MustParseAddr("fd00:ec2::254")},
		"lo.empresa.cl":    {netip.MustParseAddr("127.0.0.1")},
	}}
	for _, c := range []struct {
		opts    Options
		address string
		blocked string // the Range refused, "" when the guard lets it through
	}{
		{Options{}, "mail.empresa.cl:993", "private"},
		{Options{}, "10.1.2.3:993", "private"},
		{Options{}, "meta.empresa.cl:993", "link-local (cloud metadata)"},
		{Options{}, "localhost:" + port, "loopback"},
		{Options{}, "lo.empresa.cl:" + port, "loopback"},
		{Options{AllowPrivate: true}, "mail.empresa.cl:993", ""},
		{Options{AllowPrivate: true}, "192.168.1.1:25", ""},
		{Options{AllowPrivate: true}, "meta.empresa.cl:993", "link-local (cloud metadata)"},
		{Options{AllowPrivate: true}, "meta6.empresa.cl:993", "unique-local (includes cloud metadata fd00:ec2::254)"},
		{Options{AllowPrivate: true}, "lo.empresa.cl:" + port, "loopback"},
		{Options{AllowLoopback: true}, "mail.empresa.cl:993", "private"},
		{Options{AllowLoopback: true}, "lo.empresa.cl:" + port, ""},
	} {
		l := &loopbackOnly{}
		c.opts.Resolver, c.opts.control = res, l.control
		conn, err := NewDialer(c.opts)(context.Background(), "tcp", c.address)
		var be *BlockedError
		switch {
		case c.blocked != "" && (!errors.As(err, &be) || be.Range != c.blocked || l.count() != 0):
			t.Errorf("%+v %s: %v after %d connects, want refused as %s before any", c.opts, c.address, err, l.count(), c.blocked)
		case c.blocked == "" && l.count() == 0:
			t.Errorf("%+v %s: %v, want the guard to let it reach connect", c.opts, c.address, err)
		}
		if conn != nil {
			conn.Close()
		}
	}
}

// TestCloseIdleConnections: the client's owner can let go of its
// kept-alive connections through the User-Agent wrapper: the server sees
// the one connection its request used closed.
func TestCloseIdleConnections(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	lo := &loopbackOnly{}
	c := NewClient(Options{AllowLoopback: true, UserAgent: "dtekit-webhooks/test", control: lo.control})
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case <-closed:
		t.Fatal("the connection closed before the client let go of it: it was not kept alive")
	case <-time.After(50 * time.Millisecond):
	}
	c.CloseIdleConnections()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the kept-alive connection is still open after CloseIdleConnections")
	}
}
