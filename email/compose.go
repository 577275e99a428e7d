package email

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"
)

// Draft is a message to compose: a text body and attachments.
type Draft struct {
	// From is the sender, "name <address>" or a bare address.
	From string
	// To is the one main recipient, in the same forms.
	To string
	// Cc are further recipients; they must also be given to Send.
	Cc []string
	// Subject is any UTF-8 text; it is RFC 2047 encoded when it needs to be.
	Subject string
	// Text is the body, UTF-8, sent as quoted-printable.
	Text string
	// Attachments are sent in base64 in this order; an empty ContentType
	// is taken from the file name's extension (.xml, .pdf, .zip) or is
	// application/octet-stream.
	Attachments []Attachment
	// MessageID, with or without angle brackets, is generated as
	// "<random@domain-of-From>" when empty.
	MessageID string
	// InReplyTo, with or without angle brackets, threads the message under
	// the one it answers (In-Reply-To and References).
	InReplyTo string
	// Date is now when zero.
	Date time.Time
}

// Compose builds the raw bytes of d: a multipart/mixed message with a
// text/plain UTF-8 part in quoted-printable and each attachment in base64,
// its file name in both RFC 2231 (filename*) and RFC 2047 (for mailers that
// read only that) form. It returns the Message-ID used, without angle
// brackets, so that the caller can record it and match the answers that
// cite it.
//
// A header field holding a line break or another control character would
// let its value write headers of its own; Compose refuses it with an error
// naming the field ("Subject", "Cc[1]", "Attachments[0].Filename"), as it
// refuses an address it cannot read.
func Compose(d Draft) (raw []byte, messageID string, err error) {
	if err := checkDraftFields(d); err != nil {
		return nil, "", err
	}
	from, err := parseDraftAddress("From", d.From)
	if err != nil {
		return nil, "", err
	}
	to, err := parseDraftAddress("To", d.To)
	if err != nil {
		return nil, "", err
	}
	var cc []string
	for i, c := range d.Cc {
		a, err := parseDraftAddress(fmt.Sprintf("Cc[%d]", i), c)
		if err != nil {
			return nil, "", err
		}
		cc = append(cc, a.String())
	}
	messageID = strings.Trim(strings.TrimSpace(d.MessageID), "<>")
	if messageID == "" {
		messageID, err = newMessageID(from.Address)
		if err != nil {
			return nil, "", err
		}
	} else if err := checkMsgID("MessageID", messageID); err != nil {
		return nil, "", err
	}
	inReplyTo := strings.Trim(strings.TrimSpace(d.InReplyTo), "<>")
	if inReplyTo != "" {
		if err := checkMsgID("InReplyTo", inReplyTo); err != nil {
			return nil, "", err
		}
	}
	date := d.Date
	if date.IsZero() {
		date = time.Now()
	}

	var b bytes.Buffer
	writeField(&b, "Date", date.Format(time.RFC1123Z))
	writeField(&b, "From", from.String())
	writeField(&b, "To", to.String())
	if len(cc) > 0 {
		writeField(&b, "Cc", strings.Join(cc, ", "))
	}
	writeField(&b, "Subject", mime.QEncoding.Encode("utf-8", d.Subject))
	writeField(&b, "Message-ID", "<"+messageID+">")
	if inReplyTo != "" {
		writeField(&b, "In-Reply-To", "<"+inReplyTo+">")
		writeField(&b, "References", "<"+inReplyTo+">")
	}
	writeField(&b, "MIME-Version", "1.0")
	mw := multipart.NewWriter(&b)
	writeField(&b, "Content-Type", mime.FormatMediaType("multipart/mixed", map[string]string{"boundary": mw.Boundary()}))
	b.WriteString("\r\n")

	text, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {"text/plain; charset=utf-8"},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return nil, "", err
	}
	qp := quotedprintable.NewWriter(text)
	if _, err := qp.Write([]byte(d.Text)); err != nil {
		return nil, "", err
	}
	if err := qp.Close(); err != nil {
		return nil, "", err
	}
	for i, a := range d.Attachments {
		if err := writeAttachment(mw, i, a); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	b.WriteString("\r\n")
	return b.Bytes(), messageID, nil
}

// checkDraftFields refuses control characters in every field that becomes
// a header, before anything else reads them.
func checkDraftFields(d Draft) error {
	fields := []struct{ name, value string }{
		{"From", d.From}, {"To", d.To}, {"Subject", d.Subject},
		{"MessageID", d.MessageID}, {"InReplyTo", d.InReplyTo},
	}
	for i, c := range d.Cc {
		fields = append(fields, struct{ name, value string }{fmt.Sprintf("Cc[%d]", i), c})
	}
	for i, a := range d.Attachments {
		fields = append(fields,
			struct{ name, value string }{fmt.Sprintf("Attachments[%d].Filename", i), a.Filename},
			struct{ name, value string }{fmt.Sprintf("Attachments[%d].ContentType", i), a.ContentType})
	}
	for _, f := range fields {
		if i := strings.IndexFunc(f.value, isControl); i >= 0 {
			return fmt.Errorf("email: draft field %s: control character %q at byte %d would break the header (header injection refused)", f.name, f.value[i], i)
		}
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("email: draft field %s: not valid UTF-8", f.name)
		}
	}
	return nil
}

// isControl reports the characters no header value may hold: C0 controls
// (CR and LF above all), DEL and the C1 controls.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)
}

func parseDraftAddress(field, v string) (*mail.Address, error) {
	if strings.TrimSpace(v) == "" {
		return nil, fmt.Errorf("email: draft field %s: empty", field)
	}
	a, err := mail.ParseAddress(v)
	if err != nil {
		return nil, fmt.Errorf("email: draft field %s: %q is not an address: %v", field, v, err)
	}
	return a, nil
}

// checkMsgID accepts an id-left "@" id-right without brackets or spaces.
func checkMsgID(field, id string) error {
	at := strings.LastIndexByte(id, '@')
	if at <= 0 || at == len(id)-1 || strings.ContainsAny(id, "<> \"") || len(id) > 250 {
		return fmt.Errorf("email: draft field %s: %q is not a message id (left@right, without spaces)", field, id)
	}
	return nil
}

// newMessageID is 16 random bytes in hex at the sender's domain.
func newMessageID(from string) (string, error) {
	domain := from[strings.LastIndexByte(from, '@')+1:]
	if domain == "" || domain == from {
		domain = "localhost"
	}
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("email: generating a Message-ID: %w", err)
	}
	return hex.EncodeToString(r[:]) + "@" + domain, nil
}

func writeAttachment(mw *multipart.Writer, i int, a Attachment) error {
	field := fmt.Sprintf("Attachments[%d]", i)
	name := strings.TrimSpace(a.Filename)
	if name == "" {
		return fmt.Errorf("email: draft field %s.Filename: empty", field)
	}
	if len(name) > 255 {
		return fmt.Errorf("email: draft field %s.Filename: %d bytes, more than 255", field, len(name))
	}
	ctype := a.ContentType
	if ctype == "" {
		ctype = typeForName(name)
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || strings.HasPrefix(mt, "multipart/") || strings.HasPrefix(mt, "message/") {
		return fmt.Errorf("email: draft field %s.ContentType: %q is not a media type for a file", field, ctype)
	}
	params["name"] = mime.QEncoding.Encode("utf-8", name)
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": name})
	if encoded := mime.QEncoding.Encode("utf-8", name); encoded != name {
		// filename* (RFC 2231) above; the RFC 2047 form for older mailers.
		disposition += ";\r\n filename=\"" + encoded + "\""
	}
	part, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {mime.FormatMediaType(mt, params)},
		"Content-Disposition":       {disposition},
		"Content-Transfer-Encoding": {"base64"},
	})
	if err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString(a.Data)
	var lines bytes.Buffer
	lines.Grow(len(enc) + len(enc)/76*2 + 2)
	for len(enc) > 76 {
		lines.WriteString(enc[:76])
		lines.WriteString("\r\n")
		enc = enc[76:]
	}
	lines.WriteString(enc)
	_, err = part.Write(lines.Bytes())
	return err
}

// writeField writes one header field, folded at spaces so that its lines
// stay within 78 characters where the value allows.
func writeField(b *bytes.Buffer, name, value string) {
	line := name + ":"
	for i, word := range strings.Split(value, " ") {
		if i > 0 && len(line)+1+len(word) > 78 && strings.TrimSpace(line) != name+":" {
			b.WriteString(line)
			b.WriteString("\r\n")
			line = ""
		}
		line += " " + word
	}
	b.WriteString(line)
	b.WriteString("\r\n")
}
