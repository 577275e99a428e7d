// Package emailtest runs real mail servers inside a test: an SMTP
// submission server and an IMAP server on 127.0.0.1, built from the server
// halves of the libraries package email's clients use (go-smtp, and go-imap
// v2's imapserver over its in-memory store imapmemserver). No protocol is
// written by hand here, so the clients are tested against full protocol
// implementations, and nothing has to be installed or started outside the
// test process.
//
// What a test sees:
//
//   - SMTP submission with STARTTLS (Server.SMTPAddr) and with implicit TLS
//     (Server.SMTPSAddr). AUTH PLAIN is offered only once the connection is
//     encrypted and is required before MAIL; each accepted message is
//     appended, byte for byte, to the INBOX of every user whose Address is
//     a recipient. An unknown recipient is answered 550, an eleventh
//     recipient 452 (the server's limit of 10, a real temporary refusal).
//   - IMAP4rev1/IMAP4rev2 with implicit TLS (Server.IMAPSAddr) and with
//     STARTTLS (Server.IMAPAddr), where each user has an INBOX.
//   - A self-signed certificate for 127.0.0.1, ::1 and localhost, made at
//     start and trusted by Server.RootCAs.
//
// Everything stops when the test ends (testing.TB.Cleanup).
package emailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// User is one mailbox owner: the address SMTP delivers to, and the
// credentials of both servers.
type User struct {
	Address, Username, Password string
}

// MaxRecipients is the SMTP server's limit of recipients per message; one
// more is answered 452.
const MaxRecipients = 10

// MaxMessageBytes is the largest message the SMTP server accepts.
const MaxMessageBytes = 32 << 20

// Server is a running pair of servers. Its fields are read-only.
type Server struct {
	// RootCAs trusts the servers' certificate.
	RootCAs *x509.CertPool
	// SMTPAddr is the submission port (STARTTLS), SMTPSAddr the implicit
	// TLS one; IMAPAddr is the STARTTLS IMAP port, IMAPSAddr the implicit
	// TLS one. Each is "127.0.0.1:port".
	SMTPAddr, SMTPSAddr, IMAPAddr, IMAPSAddr string

	tb      testing.TB
	mem     *imapmemserver.Server
	users   map[string]*imapmemserver.User // by lower-case address
	byName  map[string]User                // by username
	imapOut atomic.Int64                   // bytes the IMAP server wrote
	stopped atomic.Bool
}

// Start starts both servers with users and stops them when t ends. It
// fails t if a server cannot start.
func Start(t testing.TB, users ...User) *Server {
	t.Helper()
	cert, pool, err := selfSigned()
	if err != nil {
		t.Fatalf("emailtest: certificate: %v", err)
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s := &Server{
		RootCAs: pool,
		tb:      t,
		mem:     imapmemserver.New(),
		users:   map[string]*imapmemserver.User{},
		byName:  map[string]User{},
	}
	for _, u := range users {
		mu := imapmemserver.NewUser(u.Username, u.Password)
		if err := mu.Create("INBOX", nil); err != nil {
			t.Fatalf("emailtest: INBOX of %s: %v", u.Username, err)
		}
		s.mem.AddUser(mu)
		s.users[strings.ToLower(u.Address)] = mu
		s.byName[u.Username] = u
	}

	logger := &testLogger{s: s}
	smtpServer := smtp.NewServer(&backend{s: s})
	smtpServer.Domain = "localhost"
	smtpServer.TLSConfig = tlsConfig
	smtpServer.MaxRecipients = MaxRecipients
	smtpServer.MaxMessageBytes = MaxMessageBytes
	smtpServer.ReadTimeout = 30 * time.Second
	smtpServer.WriteTimeout = 30 * time.Second
	smtpServer.ErrorLog = logger

	imapServer := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return s.mem.NewSession(), nil, nil
		},
		Caps:      imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		TLSConfig: tlsConfig,
		Logger:    logger,
	})

	listen := func() net.Listener {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("emailtest: listen: %v", err)
		}
		return l
	}
	smtpL, smtpsL := listen(), tls.NewListener(listen(), tlsConfig)
	imapL := &countingListener{Listener: listen(), n: &s.imapOut}
	imapsL := tls.NewListener(&countingListener{Listener: listen(), n: &s.imapOut}, tlsConfig)
	s.SMTPAddr, s.SMTPSAddr = smtpL.Addr().String(), smtpsL.Addr().String()
	s.IMAPAddr, s.IMAPSAddr = imapL.Addr().String(), imapsL.Addr().String()

	var wg sync.WaitGroup
	serve := func(f func(net.Listener) error, l net.Listener) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = f(l) // returns when the server closes
		}()
	}
	serve(smtpServer.Serve, smtpL)
	serve(smtpServer.Serve, smtpsL)
	serve(imapServer.Serve, imapL)
	serve(imapServer.Serve, imapsL)
	t.Cleanup(func() {
		s.stopped.Store(true)
		_ = smtpServer.Close()
		_ = imapServer.Close()
		wg.Wait()
	})
	return s
}

// SMTPConfig is the configuration that submits as u over STARTTLS.
func (s *Server) SMTPConfig(u User) email.SMTPConfig {
	host, port := splitAddr(s.tb, s.SMTPAddr)
	return email.SMTPConfig{
		Host: host, Port: port, Security: "starttls",
		Username: u.Username, Password: u.Password,
		HelloName: "client.test", Timeout: 10 * time.Second,
		TLSConfig: &tls.Config{RootCAs: s.RootCAs},
	}
}

// IMAPConfig is the configuration that reads u's INBOX over implicit TLS.
func (s *Server) IMAPConfig(u User) email.IMAPConfig {
	host, port := splitAddr(s.tb, s.IMAPSAddr)
	return email.IMAPConfig{
		Host: host, Port: port, Security: "tls",
		Username: u.Username, Password: u.Password,
		Timeout:   10 * time.Second,
		TLSConfig: &tls.Config{RootCAs: s.RootCAs},
	}
}

// Append drops raw straight into u's INBOX, as if it had been delivered,
// without any check on its size or form: the way in for hostile messages.
func (s *Server) Append(u User, raw []byte) {
	s.tb.Helper()
	mu := s.user(u)
	if _, err := mu.Append("INBOX", literal{bytes.NewReader(raw)}, &imap.AppendOptions{}); err != nil {
		s.tb.Fatalf("emailtest: append to %s: %v", u.Username, err)
	}
}

// Count is the number of messages in u's INBOX.
func (s *Server) Count(u User) int {
	return s.CountIn(u, "INBOX")
}

// CountIn is the number of messages in u's mailbox; 0 when it does not exist.
func (s *Server) CountIn(u User, mailbox string) int {
	s.tb.Helper()
	st, err := s.user(u).Status(mailbox, &imap.StatusOptions{NumMessages: true})
	if err != nil {
		return 0
	}
	return int(*st.NumMessages)
}

// Messages returns the messages of u's INBOX, oldest first, read over IMAP
// (with BODY.PEEK, so their flags do not change).
func (s *Server) Messages(u User) [][]byte {
	return s.MessagesIn(u, "INBOX")
}

// MessagesIn returns the messages of u's mailbox, oldest first, with their
// flags untouched; it fails the test when the mailbox does not exist.
func (s *Server) MessagesIn(u User, mailbox string) [][]byte {
	s.tb.Helper()
	msgs, err := s.fetchAll(u, mailbox, false)
	if err != nil {
		s.tb.Fatalf("emailtest: reading %s of %s: %v", mailbox, u.Username, err)
	}
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = m.raw
	}
	return out
}

// Flags returns the flags and keywords of each message in u's mailbox,
// oldest first, lower-case.
func (s *Server) Flags(u User, mailbox string) [][]string {
	s.tb.Helper()
	msgs, err := s.fetchAll(u, mailbox, true)
	if err != nil {
		s.tb.Fatalf("emailtest: reading the flags of %s of %s: %v", mailbox, u.Username, err)
	}
	out := make([][]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.flags
	}
	return out
}

// IMAPBytesSent is the number of bytes the IMAP server has written to its
// clients so far (TLS records included): a test compares it before and
// after a call to prove what was not downloaded.
func (s *Server) IMAPBytesSent() int64 {
	return s.imapOut.Load()
}

type fetched struct {
	raw   []byte
	flags []string
}

// fetchAll reads a mailbox over the IMAP server itself with the library's
// client, so that nothing here reaches into imapmemserver's internals.
func (s *Server) fetchAll(u User, mailbox string, flagsOnly bool) ([]fetched, error) {
	c, err := imapclient.DialTLS(s.IMAPSAddr, &imapclient.Options{TLSConfig: &tls.Config{RootCAs: s.RootCAs, ServerName: "127.0.0.1"}})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Login(u.Username, u.Password).Wait(); err != nil {
		return nil, err
	}
	sel, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return nil, err
	}
	if sel.NumMessages == 0 {
		return nil, nil
	}
	opts := &imap.FetchOptions{UID: true, Flags: true}
	if !flagsOnly {
		opts.BodySection = []*imap.FetchItemBodySection{{Peek: true}}
	}
	msgs, err := c.Fetch(imap.SeqSetNum(seqRange(sel.NumMessages)...), opts).Collect()
	if err != nil {
		return nil, err
	}
	out := make([]fetched, len(msgs))
	for i, m := range msgs {
		for _, f := range m.Flags {
			out[i].flags = append(out[i].flags, strings.ToLower(string(f)))
		}
		if !flagsOnly {
			for _, b := range m.BodySection {
				out[i].raw = b.Bytes
			}
		}
	}
	return out, c.Logout().Wait()
}

func seqRange(n uint32) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i) + 1
	}
	return out
}

func (s *Server) user(u User) *imapmemserver.User {
	s.tb.Helper()
	mu := s.users[strings.ToLower(u.Address)]
	if mu == nil {
		s.tb.Fatalf("emailtest: no user with address %q", u.Address)
	}
	return mu
}

// backend is the SMTP side: one session per connection.
type backend struct{ s *Server }

func (b *backend) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &session{s: b.s}, nil
}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

// session authenticates with AUTH PLAIN against the users and delivers to
// the INBOX of each recipient.
type session struct {
	s      *Server
	authed bool
	rcpts  []*imapmemserver.User
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		u, ok := ss.s.byName[username]
		if !ok || u.Password != password || (identity != "" && identity != username) {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if !ss.authed {
		return errAuthRequired
	}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if !ss.authed {
		return errAuthRequired
	}
	mu := ss.s.users[strings.ToLower(to)]
	if mu == nil {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: fmt.Sprintf("No such user <%s>", to)}
	}
	ss.rcpts = append(ss.rcpts, mu)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	if !ss.authed {
		return errAuthRequired
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	for _, mu := range ss.rcpts {
		if _, err := mu.Append("INBOX", literal{bytes.NewReader(raw)}, &imap.AppendOptions{}); err != nil {
			return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Delivery failed: " + err.Error()}
		}
	}
	return nil
}

func (ss *session) Reset()        { ss.rcpts = nil }
func (ss *session) Logout() error { return nil }

// literal is the imap.LiteralReader imapmemserver appends from.
type literal struct{ *bytes.Reader }

func (l literal) Size() int64 { return l.Reader.Size() }

// countingListener counts the bytes written to the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// testLogger sends the servers' error lines to the test's log while it runs.
type testLogger struct{ s *Server }

func (l *testLogger) Printf(format string, args ...any) {
	if !l.s.stopped.Load() {
		l.s.tb.Logf("emailtest: "+format, args...)
	}
}

func (l *testLogger) Println(args ...any) {
	if !l.s.stopped.Load() {
		l.s.tb.Log(append([]any{"emailtest:"}, args...)...)
	}
}

// selfSigned makes a P-256 certificate for the loopback names, valid from
// an hour ago for a day, and a pool that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "emailtest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

func splitAddr(tb testing.TB, addr string) (string, int) {
	tb.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatalf("emailtest: address %q: %v", addr, err)
	}
	var p int
	if _, err := fmt.Sscanf(port, "%d", &p); err != nil {
		tb.Fatalf("emailtest: port %q: %v", port, err)
	}
	return host, p
}
