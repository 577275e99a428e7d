package email

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/ianaindex"
)

// Attachment is one file carried by a message: a MIME part or, for a zip
// archive, one of its entries.
type Attachment struct {
	// Filename is the part's file name (RFC 2231 and RFC 2047 decoded),
	// reduced to its last path element; a zip entry is named
	// "archive.zip/entry", the entry's path cleaned of ".." and leading
	// slashes. A kept part without a name is called "part-<path>" with an
	// extension for its content type.
	Filename string
	// ContentType is the media type without parameters, lower-case
	// ("application/xml"); a zip entry's is guessed from its extension.
	ContentType string
	// Data is the decoded content.
	Data []byte
}

// Message is what Parse keeps of one message.
type Message struct {
	// MessageID is the Message-ID without its angle brackets; "" when the
	// message has none.
	MessageID string
	// From is the first address of the From field, address only and
	// lower-case; "" (with a warning) when it cannot be read.
	From string
	// ReplyTo is the first address of Reply-To, like From; "" when absent.
	ReplyTo string
	// To lists the addresses of the To field, lower-case.
	To []string
	// Subject is the Subject field, RFC 2047 decoded.
	Subject string
	// Date is the Date field; zero (with a warning) when it cannot be read.
	Date time.Time
	// InReplyTo is the first message id of In-Reply-To, without brackets.
	InReplyTo string
	// Attachments are the parts worth keeping, in the order they appear:
	// any part with a file name, and any XML, PDF or zip part; text
	// bodies are not attachments. A zip archive is replaced by its
	// entries.
	Attachments []Attachment
	// Digest is the hex SHA-256 of the raw message, the key to deduplicate
	// a message that has no Message-ID or arrives twice.
	Digest string
	// Warnings say, one line each, which parts were skipped or cut and
	// why (too large, too many, undecodable, a zip bomb), so that a caller
	// can log them and keep them in its report.
	Warnings []string
}

// The most a header string (subject, id, address) keeps, in bytes: the
// line length RFC 5322 allows.
const maxHeaderText = 998

// The most addresses Message.To keeps.
const maxRecipients = 100

// Parse reads one raw RFC 5322 message from r and returns its header
// fields and its attachments, within lim and ctx.
//
// At most lim.MaxMessageBytes+1 bytes are read: a longer message fails
// with ErrTooLarge, whatever its source (a reader that never ends
// included). When ctx is done first, Parse returns ctx's error at once;
// a Read that blocks then keeps its goroutine until it returns, so the
// caller should close the source. The MIME tree is bounded by MaxParts
// (ErrTooManyParts) and MaxDepth (ErrTooDeep), and a broken header or
// structure fails with ErrMalformed naming the part. One attachment over
// its bounds (size, count, an undecodable encoding, a zip bomb) is
// skipped with a warning and the rest of the message is still read.
func Parse(ctx context.Context, r io.Reader, lim Limits) (*Message, error) {
	lim = lim.withDefaults()
	raw, err := readBounded(ctx, r, lim.MaxMessageBytes)
	if err != nil {
		return nil, err
	}
	return parseRaw(ctx, raw, lim)
}

// readBounded reads r to its end, failing with ErrTooLarge past max bytes
// and with ctx's error once ctx is done. The reading runs in a goroutine so
// that a Read that blocks cannot hold the caller past its deadline.
func readBounded(ctx context.Context, r io.Reader, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("email: reading the message: %w", err)
	}
	type result struct {
		raw []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Chunks growing to 1 MiB, joined once at the end: about twice
		// the message is allocated, where a doubling buffer would take
		// three times.
		var chunks [][]byte
		var total int64
		size := int64(16 << 10)
		for {
			chunk := make([]byte, min(size, max+1-total))
			size = min(2*size, 1<<20)
			n, err := io.ReadFull(&ctxReader{ctx: ctx, r: r}, chunk)
			chunks = append(chunks, chunk[:n])
			total += int64(n)
			if total > max {
				done <- result{err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
				return
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				done <- result{raw: bytes.Join(chunks, nil)}
				return
			}
			if err != nil {
				done <- result{err: fmt.Errorf("email: reading the message after %d bytes: %w", total, err)}
				return
			}
		}
	}()
	select {
	case res := <-done:
		return res.raw, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("email: reading the message: %w", ctx.Err())
	}
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// parser walks one message's MIME tree.
type parser struct {
	ctx      context.Context
	lim      Limits
	msg      *Message
	dec      *mime.WordDecoder
	parts    int   // parts seen, containers included
	zipBytes int64 // uncompressed bytes taken from zips so far
}

func parseRaw(ctx context.Context, raw []byte, lim Limits) (*Message, error) {
	sum := sha256.Sum256(raw)
	p := &parser{
		ctx: ctx,
		lim: lim,
		msg: &Message{Digest: hex.EncodeToString(sum[:])},
		dec: &mime.WordDecoder{CharsetReader: charsetReader},
	}
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: message header: %v", ErrMalformed, err)
	}
	p.header(m.Header)
	p.parts = 1
	if err := p.entity("", 0, textproto.MIMEHeader(m.Header), m.Body); err != nil {
		return nil, err
	}
	return p.msg, nil
}

// header fills the message's fields from its top-level header. A field that
// cannot be read is left empty with a warning: the attachments may still be
// worth having.
func (p *parser) header(h mail.Header) {
	m := p.msg
	m.MessageID = firstMsgID(h.Get("Message-Id"))
	m.InReplyTo = firstMsgID(h.Get("In-Reply-To"))
	m.Subject = p.decodeText(h.Get("Subject"))
	if v := h.Get("From"); v != "" {
		addrs, err := p.addresses(v)
		if err != nil || len(addrs) == 0 {
			p.warnf("message header: From %q is not an address: %v", cleanText(v), err)
		} else {
			m.From = addrs[0]
		}
	} else {
		p.warnf("message header: no From field")
	}
	if v := h.Get("Reply-To"); v != "" {
		addrs, err := p.addresses(v)
		if err != nil || len(addrs) == 0 {
			p.warnf("message header: Reply-To %q is not an address: %v", cleanText(v), err)
		} else {
			m.ReplyTo = addrs[0]
		}
	}
	if v := h.Get("To"); v != "" {
		addrs, err := p.addresses(v)
		if err != nil {
			p.warnf("message header: To %q is not an address list: %v", cleanText(v), err)
		}
		if len(addrs) > maxRecipients {
			p.warnf("message header: To has %d addresses, %d kept", len(addrs), maxRecipients)
			addrs = addrs[:maxRecipients]
		}
		m.To = addrs
	}
	if v := h.Get("Date"); v != "" {
		t, err := mail.ParseDate(v)
		if err != nil {
			p.warnf("message header: Date %q cannot be read: %v", cleanText(v), err)
		} else {
			m.Date = t
		}
	}
}

// addresses parses an address list into bare, lower-case addresses.
func (p *parser) addresses(v string) ([]string, error) {
	ap := mail.AddressParser{WordDecoder: p.dec}
	list, err := ap.ParseList(v)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, cleanText(strings.ToLower(a.Address)))
	}
	return out, nil
}

// decodeText decodes RFC 2047 words; a charset it does not know leaves the
// text as it came.
func (p *parser) decodeText(v string) string {
	d, err := p.dec.DecodeHeader(v)
	if err != nil {
		return cleanText(v)
	}
	return cleanText(d)
}

func (p *parser) warnf(format string, args ...any) {
	p.msg.Warnings = append(p.msg.Warnings, fmt.Sprintf(format, args...))
}

// partName is how errors and warnings name the part at path.
func partName(path string) string {
	if path == "" {
		return "message body"
	}
	return "part " + path
}

// childPath is the IMAP section number of the i-th child (from 1) of path.
func childPath(path string, i int) string {
	if path == "" {
		return strconv.Itoa(i)
	}
	return path + "." + strconv.Itoa(i)
}

// entity reads one MIME entity: a container is walked, a leaf kept when it
// is worth keeping. depth counts the containers above it.
func (p *parser) entity(path string, depth int, h textproto.MIMEHeader, body io.Reader) error {
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("email: %s: %w", partName(path), err)
	}
	ctype, params := mediaType(h.Get("Content-Type"))
	switch {
	case strings.HasPrefix(ctype, "multipart/"):
		if depth >= p.lim.MaxDepth {
			return fmt.Errorf("%w: %s is a container nested deeper than %d levels", ErrTooDeep, partName(path), p.lim.MaxDepth)
		}
		boundary := params["boundary"]
		if boundary == "" {
			return fmt.Errorf("%w: %s: %s without a boundary", ErrMalformed, partName(path), ctype)
		}
		mr := multipart.NewReader(body, boundary)
		for i := 1; ; i++ {
			child := childPath(path, i)
			part, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrMalformed, partName(child), err)
			}
			p.parts++
			if p.parts > p.lim.MaxParts {
				return fmt.Errorf("%w: %s is past the limit of %d parts", ErrTooManyParts, partName(child), p.lim.MaxParts)
			}
			if err := p.entity(child, depth+1, part.Header, part); err != nil {
				return err
			}
		}
	case ctype == "message/rfc822" || ctype == "message/global":
		// A forwarded message: its attachments count as this one's.
		if depth >= p.lim.MaxDepth {
			return fmt.Errorf("%w: %s is a container nested deeper than %d levels", ErrTooDeep, partName(path), p.lim.MaxDepth)
		}
		dec, err := transferDecoder(h.Get("Content-Transfer-Encoding"), body)
		if err != nil {
			p.warnf("%s: forwarded message skipped: %v", partName(path), err)
			return nil
		}
		inner, err := mail.ReadMessage(bufio.NewReader(dec))
		if err != nil {
			return fmt.Errorf("%w: %s: forwarded message header: %v", ErrMalformed, partName(path), err)
		}
		innerPath := path
		if innerPath == "" {
			innerPath = "1"
		}
		return p.entity(innerPath, depth+1, textproto.MIMEHeader(inner.Header), inner.Body)
	}
	return p.leaf(path, ctype, params, h, body)
}

// leaf keeps a single part when it carries a file name or a wanted type.
func (p *parser) leaf(path, ctype string, params map[string]string, h textproto.MIMEHeader, body io.Reader) error {
	if path == "" {
		path = "1" // IMAP calls the body of a single-part message part 1
	}
	name := p.filename(h, params)
	if name == "" && !wantedType(ctype) {
		return nil // a text body, an inline image without a name…
	}
	if name == "" {
		name = "part-" + path + extensionFor(ctype)
	}
	if len(p.msg.Attachments) >= p.lim.MaxAttachments {
		p.warnf("%s: attachment %q skipped: more than %d attachments", partName(path), name, p.lim.MaxAttachments)
		return nil
	}
	dec, err := transferDecoder(h.Get("Content-Transfer-Encoding"), body)
	if err != nil {
		p.warnf("%s: attachment %q skipped: %v", partName(path), name, err)
		return nil
	}
	data, err := readAtMost(dec, p.lim.MaxAttachmentBytes)
	if errors.Is(err, errOverLimit) {
		p.warnf("%s: attachment %q skipped: larger than %d bytes decoded", partName(path), name, p.lim.MaxAttachmentBytes)
		return nil
	}
	if err != nil {
		p.warnf("%s: attachment %q skipped: cannot decode its content: %v", partName(path), name, err)
		return nil
	}
	if isZip(ctype, name) {
		p.unzip(path, name, data)
		return nil
	}
	p.msg.Attachments = append(p.msg.Attachments, Attachment{Filename: name, ContentType: ctype, Data: data})
	return nil
}

// filename is the part's file name: Content-Disposition's filename
// (RFC 2231 decoded by package mime), else Content-Type's name, then RFC 2047
// decoded and made safe.
func (p *parser) filename(h textproto.MIMEHeader, ctParams map[string]string) string {
	name := ""
	if v := h.Get("Content-Disposition"); v != "" {
		if _, dp, err := mime.ParseMediaType(v); err == nil {
			name = dp["filename"]
		}
		// Package mime decodes RFC 2231 values only in UTF-8 and US-ASCII
		// and drops the others; Latin-1 names are common here.
		if n := rfc2231Filename(v); n != "" {
			name = n
		}
	}
	if name == "" {
		name = ctParams["name"]
	}
	if name == "" {
		return ""
	}
	if strings.Contains(name, "=?") {
		if d, err := p.dec.DecodeHeader(name); err == nil {
			name = d
		}
	}
	return safeName(name)
}

// rfc2231Filename decodes a single-section filename*=charset'lang'value
// in a charset other than UTF-8 and US-ASCII (package mime does those);
// "" when there is none or it cannot be decoded.
func rfc2231Filename(disposition string) string {
	lower := strings.ToLower(disposition)
	i := strings.Index(lower, "filename*=")
	if i < 0 {
		return ""
	}
	v := disposition[i+len("filename*="):]
	if j := strings.IndexAny(v, "; \t"); j >= 0 {
		v = v[:j]
	}
	charset, rest, ok := strings.Cut(v, "'")
	if !ok {
		return ""
	}
	_, encoded, ok := strings.Cut(rest, "'")
	if !ok {
		return ""
	}
	switch strings.ToLower(charset) {
	case "", "utf-8", "us-ascii":
		return ""
	}
	raw, err := url.PathUnescape(encoded)
	if err != nil {
		return ""
	}
	dec, err := charsetReader(charset, strings.NewReader(raw))
	if err != nil {
		return ""
	}
	out, err := io.ReadAll(io.LimitReader(dec, 4<<10))
	if err != nil {
		return ""
	}
	return string(out)
}

// safeName reduces a file name to its last path element, without control
// characters, at most 255 bytes; "" when nothing usable is left.
func safeName(name string) string {
	name = cleanText(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimSpace(path.Base(name))
	if name == "." || name == "/" || name == ".." {
		return ""
	}
	return truncateUTF8(name, 255)
}

// mediaType parses a Content-Type, defaulting to text/plain when absent and
// to application/octet-stream when unreadable (RFC 2045 section 5.2 says
// text/plain, but an unreadable type on an attachment is more often a file).
func mediaType(v string) (string, map[string]string) {
	if strings.TrimSpace(v) == "" {
		return "text/plain", map[string]string{}
	}
	t, params, err := mime.ParseMediaType(v)
	if err != nil && t == "" {
		return "application/octet-stream", map[string]string{}
	}
	if params == nil {
		params = map[string]string{}
	}
	return t, params
}

// wantedType reports whether a part without a file name is kept for its
// type: the documents this service exchanges travel as XML, PDF or zip.
func wantedType(ctype string) bool {
	switch ctype {
	case "application/xml", "text/xml", "application/pdf",
		"application/zip", "application/x-zip-compressed", "application/x-zip":
		return true
	}
	return strings.HasSuffix(ctype, "+xml")
}

// isZip reports whether an attachment is a zip archive, by type or name.
func isZip(ctype, name string) bool {
	switch ctype {
	case "application/zip", "application/x-zip-compressed", "application/x-zip":
		return true
	}
	return strings.HasSuffix(strings.ToLower(name), ".zip")
}

// extensionFor is the extension given to a nameless kept part.
func extensionFor(ctype string) string {
	switch {
	case ctype == "application/pdf":
		return ".pdf"
	case isZip(ctype, ""):
		return ".zip"
	case strings.HasSuffix(ctype, "xml"):
		return ".xml"
	}
	return ""
}

// typeForName guesses a zip entry's media type from its extension, from a
// fixed table so that the answer does not depend on the host's mime.types.
func typeForName(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".xml":
		return "application/xml"
	case ".pdf":
		return "application/pdf"
	case ".zip":
		return "application/zip"
	case ".txt":
		return "text/plain"
	}
	return "application/octet-stream"
}

// transferDecoder undoes a Content-Transfer-Encoding.
func transferDecoder(cte string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "", "7bit", "8bit", "binary":
		return r, nil
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &base64Filter{r: r}), nil
	case "quoted-printable":
		return quotedprintable.NewReader(r), nil
	}
	return nil, fmt.Errorf("unknown Content-Transfer-Encoding %q", cleanText(truncateUTF8(cte, 64)))
}

// base64Filter drops the white space mailers put in base64 bodies (the
// standard decoder skips only CR and LF).
type base64Filter struct{ r io.Reader }

func (f *base64Filter) Read(b []byte) (int, error) {
	for {
		n, err := f.r.Read(b)
		k := 0
		for _, c := range b[:n] {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				b[k] = c
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

var errOverLimit = errors.New("over the limit")

// readAtMost reads r to its end, failing with errOverLimit past max bytes
// (reading at most max+1).
func readAtMost(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errOverLimit
	}
	return data, nil
}

// firstMsgID takes the first "<id>" of a Message-ID or In-Reply-To field,
// without its brackets; a field without brackets is taken whole.
func firstMsgID(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, '<'); i >= 0 {
		if j := strings.IndexByte(v[i:], '>'); j > 0 {
			v = v[i+1 : i+j]
		}
	} else if f := strings.Fields(v); len(f) > 0 {
		v = f[0]
	}
	return cleanText(strings.TrimSpace(v))
}

// cleanText makes header text safe to store and log: valid UTF-8, no control
// characters (tabs become spaces), at most maxHeaderText bytes.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		}
		return r
	}, s)
	return truncateUTF8(strings.TrimSpace(s), maxHeaderText)
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// charsetReader lets RFC 2047 words in any IANA charset be decoded (Chilean
// mail is often ISO-8859-1 or windows-1252).
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	enc, err := ianaindex.MIME.Encoding(charset)
	if err != nil || enc == nil {
		return nil, fmt.Errorf("unknown charset %q", charset)
	}
	return enc.NewDecoder().Reader(input), nil
}
