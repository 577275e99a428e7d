package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// ProcessedKeyword is the IMAP keyword MarkProcessed sets on a message and
// Unprocessed looks for (UNKEYWORD) to leave it out.
const ProcessedKeyword = "$DtekitDone"

// IMAPConfig says how to reach a mailbox.
type IMAPConfig struct {
	// Host is the server's name or address; it is also the name its TLS
	// certificate must carry unless TLSConfig.ServerName says otherwise.
	Host string
	// Port defaults to 993 for "tls" and 143 otherwise.
	Port int
	// Security is "tls" (the default: implicit TLS), "starttls" (plain
	// text upgraded before the login, and refused if the server does not
	// offer it) or "none".
	Security string
	// Username and Password log in (LOGIN). They never cross an
	// unencrypted connection, unless Security is "none" and Host is a
	// loopback address.
	Username, Password string
	// Mailbox is the one read, "INBOX" when empty.
	Mailbox string
	// ProcessedMailbox, when set, is where MarkProcessed moves a processed
	// message (created if missing); when empty the message stays where it
	// is, flagged.
	ProcessedMailbox string
	// Timeout bounds DialIMAP and each call on the Mailbox. Default 60 s.
	Timeout time.Duration
	// ConnectTimeout bounds the dial, the TLS handshake or STARTTLS and
	// the server's greeting. Default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Dial opens the TCP connection; nil dials directly.
	Dial DialFunc
	// TLSConfig is cloned for the connection; nil trusts the system's
	// roots. An empty ServerName is set to Host.
	TLSConfig *tls.Config
}

// normalize checks cfg and fills its defaults.
func (cfg IMAPConfig) normalize() (IMAPConfig, error) {
	if cfg.Username == "" {
		return cfg, configErrorf("IMAP Username is empty")
	}
	e := endpoint{kind: "IMAP", security: cfg.Security, host: cfg.Host, port: cfg.Port, username: cfg.Username, timeout: cfg.Timeout, connect: cfg.ConnectTimeout}
	if err := e.normalize(securityTLS, map[string]int{securityTLS: 993, securityStartTLS: 143, securityNone: 143}); err != nil {
		return cfg, err
	}
	cfg.Security, cfg.Port, cfg.Timeout, cfg.ConnectTimeout = e.security, e.port, e.timeout, e.connect
	if cfg.Mailbox == "" {
		cfg.Mailbox = "INBOX"
	}
	for field, v := range map[string]string{"Mailbox": cfg.Mailbox, "ProcessedMailbox": cfg.ProcessedMailbox} {
		if strings.ContainsFunc(v, isControl) {
			return cfg, configErrorf("IMAP %s %q holds a control character", field, v)
		}
	}
	if cfg.ProcessedMailbox != "" && strings.EqualFold(cfg.ProcessedMailbox, cfg.Mailbox) {
		return cfg, configErrorf("IMAP ProcessedMailbox %q is the mailbox read", cfg.ProcessedMailbox)
	}
	return cfg, nil
}

// Fetched is one message listed by Unprocessed.
type Fetched struct {
	// UID identifies the message in its mailbox for MarkProcessed.
	UID uint32
	// Size is the message's size in bytes, as the server reports it
	// (RFC822.SIZE).
	Size int64
	// Raw is the whole message; nil when TooLarge.
	Raw []byte
	// TooLarge is set when the message is larger than the maxSize asked
	// for: its body was not downloaded (at most maxSize+1 bytes, if the
	// server under-reported its size).
	TooLarge bool
}

// Mailbox is an open IMAP connection with its mailbox selected. Its methods
// run one at a time; a call cut by its context or its timeout closes the
// connection, and the Mailbox must then be dialled again.
type Mailbox struct {
	mu       sync.Mutex
	cfg      IMAPConfig
	addr     string
	conn     net.Conn
	c        *imapclient.Client
	move     bool  // the server moves by MOVE, or by UID-scoped COPY+EXPUNGE
	keywords bool  // the mailbox keeps keywords
	created  bool  // the processed mailbox is known to exist
	lost     error // the error that broke the connection
}

// DialIMAP connects, logs in and selects cfg.Mailbox within cfg.Timeout and
// ctx. A mailbox that cannot keep the keyword ProcessedKeyword is refused
// unless ProcessedMailbox is set, since nothing would then tell a
// processed message from a new one.
func DialIMAP(ctx context.Context, cfg IMAPConfig) (*Mailbox, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	addr := net.JoinHostPort(strings.Trim(cfg.Host, "[]"), strconv.Itoa(cfg.Port))
	fail := func(step string, err error) error { return failure(ctx, "imap", addr, step, err) }

	// The first steps have a deadline of their own: a server that takes
	// the connection and never speaks is left within ConnectTimeout.
	cctx, ccancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer ccancel()
	cfail := func(step string, err error) error { return failure(cctx, "imap", addr, step, err) }
	conn, err := dial(cctx, cfg.Dial, cfg.Host, cfg.Port)
	if err != nil {
		return nil, cfail("connect", err)
	}
	defer guard(ctx, conn)()
	stopConnect := guard(cctx, conn)
	tcfg := tlsConfig(cfg.TLSConfig, cfg.Host)
	opts := &imapclient.Options{
		TLSConfig:   tcfg,
		WordDecoder: &mime.WordDecoder{CharsetReader: charsetReader},
	}
	var c *imapclient.Client
	switch cfg.Security {
	case securityTLS:
		if tcfg.NextProtos == nil {
			tcfg.NextProtos = []string{"imap"}
		}
		tc := tls.Client(conn, tcfg)
		if err := tc.HandshakeContext(cctx); err != nil {
			conn.Close()
			return nil, cfail("TLS handshake", err)
		}
		c = imapclient.New(tc, opts)
	case securityStartTLS:
		c, err = imapclient.NewStartTLS(conn, opts)
		if err != nil {
			conn.Close()
			var ie *imap.Error
			if errors.As(err, &ie) {
				return nil, &configError{msg: fmt.Sprintf("imap %s: the server refused STARTTLS; nothing was sent in clear", addr), err: err, cat: CategoryTLS}
			}
			return nil, cfail("STARTTLS", err)
		}
	default:
		c = imapclient.New(conn, opts)
	}
	m := &Mailbox{cfg: cfg, addr: addr, conn: conn, c: c}
	if err := c.WaitGreeting(); err != nil {
		c.Close()
		return nil, cfail("greeting", err)
	}
	if !stopConnect() {
		c.Close()
		return nil, cfail("greeting", context.DeadlineExceeded)
	}
	if err := c.Login(cfg.Username, cfg.Password).Wait(); err != nil {
		c.Close()
		return nil, fail("LOGIN as "+strconv.Quote(cfg.Username), err)
	}
	sel, err := c.Select(cfg.Mailbox, nil).Wait()
	if err != nil {
		c.Close()
		return nil, fail("SELECT "+strconv.Quote(cfg.Mailbox), err)
	}
	m.keywords = slices.Contains(sel.PermanentFlags, imap.FlagWildcard) ||
		slices.ContainsFunc(sel.PermanentFlags, func(f imap.Flag) bool { return strings.EqualFold(string(f), ProcessedKeyword) })
	caps := c.Caps()
	m.move = caps.Has(imap.CapMove) || caps.Has(imap.CapUIDPlus)
	// Without the keyword, only a move takes a processed message out of
	// the search: a copy would leave it listed for ever.
	if !m.keywords && (cfg.ProcessedMailbox == "" || !m.move) {
		c.Close()
		return nil, &configError{msg: fmt.Sprintf("imap %s: mailbox %q does not keep the keyword %s, and processed messages cannot be moved out of it (set a ProcessedMailbox on a server with MOVE or UIDPLUS)", addr, cfg.Mailbox, ProcessedKeyword)}
	}
	return m, nil
}

// op runs one call on the connection within the configured timeout and
// ctx, and records a connection-level failure so that later calls fail at
// once.
func (m *Mailbox) op(ctx context.Context, name string, f func(ctx context.Context) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost != nil {
		return fmt.Errorf("email: imap %s: %s: the connection was lost earlier (%v); dial again", m.addr, name, m.lost)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("email: imap %s: %s: %w", m.addr, name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	stop := guard(ctx, m.conn)
	err := f(ctx)
	if !stop() && err == nil {
		err = ctx.Err() // the connection was closed just as the call ended
	}
	if err == nil {
		return nil
	}
	err = ctxErr(ctx, err)
	var ie *imap.Error
	if !errors.As(err, &ie) {
		// Not a server's NO or BAD: the connection is in an unknown state.
		m.lost = err
		m.c.Close()
	}
	return fmt.Errorf("email: imap %s: %s: %w", m.addr, name, err)
}

// Unprocessed lists at most max messages of the mailbox that lack
// ProcessedKeyword, oldest (lowest UID) first. It asks for their sizes
// first and downloads only those of at most maxSize bytes (0 means
// DefaultLimits().MaxMessageBytes), the others coming back TooLarge
// without their bodies. Bodies are fetched with BODY.PEEK, so reading
// does not mark a message seen, and one at a time, each cut at maxSize+1
// bytes whatever size the server reported. At most max*maxSize bytes are
// held in memory. A TooLarge message stays unprocessed, taking one of the
// max places at every call, until the caller records its refusal and
// marks it.
func (m *Mailbox) Unprocessed(ctx context.Context, max int, maxSize int64) ([]Fetched, error) {
	if max <= 0 {
		return nil, fmt.Errorf("email: Unprocessed: max %d is not positive", max)
	}
	if maxSize <= 0 {
		maxSize = DefaultLimits().MaxMessageBytes
	}
	var out []Fetched
	err := m.op(ctx, "list unprocessed", func(ctx context.Context) error {
		found, err := m.c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{ProcessedKeyword}}, nil).Wait()
		if err != nil {
			return fmt.Errorf("UID SEARCH: %w", err)
		}
		uids := found.AllUIDs()
		slices.Sort(uids)
		if len(uids) > max {
			uids = uids[:max]
		}
		if len(uids) == 0 {
			return nil
		}
		sizes := make(map[imap.UID]int64, len(uids))
		msgs, err := m.c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true}).Collect()
		if err != nil {
			return fmt.Errorf("UID FETCH RFC822.SIZE: %w", err)
		}
		for _, msg := range msgs {
			sizes[msg.UID] = msg.RFC822Size
		}
		for _, uid := range uids {
			size, ok := sizes[uid]
			if !ok {
				continue // expunged since the search
			}
			f := Fetched{UID: uint32(uid), Size: size}
			if size > maxSize {
				f.TooLarge = true
			} else {
				raw, err := m.body(uid, maxSize)
				switch {
				case errors.Is(err, errOverLimit):
					f.TooLarge = true
				case err != nil:
					return fmt.Errorf("UID FETCH %d BODY.PEEK[]: %w", uid, err)
				case raw == nil:
					continue // expunged since the search
				default:
					f.Raw = raw
				}
			}
			out = append(out, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// body downloads one message, at most maxSize+1 bytes of it (a partial
// fetch), and fails with errOverLimit past maxSize.
func (m *Mailbox) body(uid imap.UID, maxSize int64) ([]byte, error) {
	section := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: maxSize + 1}}
	cmd := m.c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}})
	var raw []byte
	var readErr error
	for msg := cmd.Next(); msg != nil; msg = cmd.Next() {
		for item := msg.Next(); item != nil; item = msg.Next() {
			b, ok := item.(imapclient.FetchItemDataBodySection)
			if !ok || b.Literal == nil || raw != nil || readErr != nil {
				continue
			}
			raw, readErr = readAtMost(b.Literal, maxSize)
			if raw == nil && readErr == nil {
				raw = []byte{}
			}
		}
	}
	if err := cmd.Close(); err != nil {
		return nil, err
	}
	return raw, readErr
}

// MarkProcessed sets ProcessedKeyword and \Seen on the message uid and then,
// when ProcessedMailbox is set, moves it there (creating the mailbox if it
// is missing). A server without MOVE nor UIDPLUS gets a COPY only: the
// message then stays, flagged, in the mailbox read, since an EXPUNGE there
// could remove other messages. Nothing is ever deleted.
//
// Call it only once the message's intake has committed: a crash in between
// makes the next Unprocessed return the message again, which the caller
// recognizes by its Message-ID and digest.
func (m *Mailbox) MarkProcessed(ctx context.Context, uid uint32) error {
	return m.op(ctx, "mark processed UID "+strconv.FormatUint(uint64(uid), 10), func(ctx context.Context) error {
		set := imap.UIDSetNum(imap.UID(uid))
		flags := []imap.Flag{imap.FlagSeen}
		if m.keywords {
			flags = append(flags, ProcessedKeyword)
		}
		if err := m.c.Store(set, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: flags}, nil).Close(); err != nil {
			return fmt.Errorf("UID STORE: %w", err)
		}
		dest := m.cfg.ProcessedMailbox
		if dest == "" {
			return nil
		}
		if err := m.ensureMailbox(dest); err != nil {
			return err
		}
		if m.move {
			if _, err := m.c.Move(set, dest).Wait(); err != nil {
				return fmt.Errorf("UID MOVE to %q: %w", dest, err)
			}
			return nil
		}
		if _, err := m.c.Copy(set, dest).Wait(); err != nil {
			return fmt.Errorf("UID COPY to %q: %w", dest, err)
		}
		return nil
	})
}

// ensureMailbox creates name unless it exists, once per connection.
func (m *Mailbox) ensureMailbox(name string) error {
	if m.created {
		return nil
	}
	list, err := m.c.List("", name, nil).Collect()
	if err != nil {
		return fmt.Errorf("LIST %q: %w", name, err)
	}
	for _, l := range list {
		if l.Mailbox == name {
			m.created = true
			return nil
		}
	}
	if err := m.c.Create(name, nil).Wait(); err != nil {
		var ie *imap.Error
		if !errors.As(err, &ie) || ie.Code != imap.ResponseCodeAlreadyExists {
			return fmt.Errorf("CREATE %q: %w", name, err)
		}
	}
	m.created = true
	return nil
}

// Close logs out (within 5 s) and closes the connection. Closing a Mailbox
// whose connection was already lost or closed does nothing.
func (m *Mailbox) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.lost != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	stop := guard(ctx, m.conn)
	_ = m.c.Logout().Wait()
	stop()
	m.lost = errors.New("the Mailbox was closed")
	return m.c.Close()
}
