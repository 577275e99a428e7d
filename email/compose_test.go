package email_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
)

// TestComposeRefusesHeaderInjection: a line break (or another control
// character) in any field that becomes a header is refused, the error
// naming the field; nothing is composed.
func TestComposeRefusesHeaderInjection(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*email.Draft)
	}{
		{"From", func(d *email.Draft) { d.From = "a@b.cl\r\nBcc: victim@x.cl" }},
		{"To", func(d *email.Draft) { d.To = "c@d.cl\nBcc: victim@x.cl" }},
		{"Cc[1]", func(d *email.Draft) { d.Cc = []string{"ok@d.cl", "e@f.cl\rBcc: v@x.cl"} }},
		{"Subject", func(d *email.Draft) { d.Subject = "Factura\r\nContent-Type: text/html" }},
		{"Subject", func(d *email.Draft) { d.Subject = "nul\x00byte" }},
		{"MessageID", func(d *email.Draft) { d.MessageID = "<id@x.cl>\r\nX-Evil: 1" }},
		{"InReplyTo", func(d *email.Draft) { d.InReplyTo = "id@x.cl\nX-Evil: 1" }},
		{"Attachments[0].Filename", func(d *email.Draft) { d.Attachments[0].Filename = "a.xml\"\r\nX-Evil: 1" }},
		{"Attachments[1].ContentType", func(d *email.Draft) { d.Attachments[1].ContentType = "application/pdf\r\nX-Evil: 1" }},
	}
	for _, c := range cases {
		t.Run(c.field, func(t *testing.T) {
			d := testDraft("x")
			c.edit(&d)
			raw, _, err := email.Compose(d)
			if err == nil {
				t.Fatalf("Compose accepted a control character in %s:\n%s", c.field, raw)
			}
			want := "email: draft field " + c.field + ": control character"
			if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "header injection refused") {
				t.Fatalf("error %q, want it to start %q and say header injection", err, want)
			}
		})
	}
}

// TestComposeRefusesBadFields: addresses, ids and types that cannot be
// written are refused by name too.
func TestComposeRefusesBadFields(t *testing.T) {
	cases := []struct {
		want string
		edit func(*email.Draft)
	}{
		{"email: draft field From: empty", func(d *email.Draft) { d.From = "" }},
		{"email: draft field To: \"no at sign\" is not an address", func(d *email.Draft) { d.To = "no at sign" }},
		{"email: draft field MessageID: \"no-at\" is not a message id", func(d *email.Draft) { d.MessageID = "no-at" }},
		{"email: draft field Attachments[0].Filename: empty", func(d *email.Draft) { d.Attachments[0].Filename = " " }},
		{"email: draft field Attachments[0].ContentType: \"multipart/mixed\" is not a media type for a file", func(d *email.Draft) { d.Attachments[0].ContentType = "multipart/mixed" }},
	}
	for _, c := range cases {
		d := testDraft("x")
		c.edit(&d)
		if _, _, err := email.Compose(d); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Compose = %v, want %q", err, c.want)
		}
	}
}

// TestComposeForm checks the wire form against RFC 5322 and 2045: CRLF
// line ends only, no line over 998 octets, the fields in place.
func TestComposeForm(t *testing.T) {
	d := testDraft(strings.TrimSpace(strings.Repeat("Envío de documentos tributarios electrónicos ", 12)))
	d.MessageID = "<fijo@emisor.cl>"
	d.InReplyTo = "anterior@receptor.cl"
	d.Cc = []string{"Contabilidad Ñuñoa <conta@receptor.cl>"}
	raw, id, err := email.Compose(d)
	if err != nil {
		t.Fatal(err)
	}
	if id != "fijo@emisor.cl" {
		t.Errorf("messageID = %q, want the given one without brackets", id)
	}
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) || bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\r")) {
		t.Error("a bare CR or LF in the composed message")
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if len(line) > 998 {
			t.Errorf("line %d has %d octets", i, len(line))
		}
		for _, c := range line {
			if c >= 0x80 {
				t.Fatalf("line %d holds a non-ASCII octet: %q", i, line)
			}
		}
	}
	head := string(raw[:bytes.Index(raw, []byte("\r\n\r\n"))])
	for _, want := range []string{
		"\r\nMessage-ID: <fijo@emisor.cl>\r\n",
		"\r\nIn-Reply-To: <anterior@receptor.cl>\r\n",
		"\r\nReferences: <anterior@receptor.cl>\r\n",
		"Date: Mon, 02 Mar 2026 10:30:00 -0300\r\n",
		"\r\nMIME-Version: 1.0\r\n",
		"\r\nCc: =?utf-8?q?Contabilidad_=C3=91u=C3=B1oa?= <conta@receptor.cl>\r\n",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q:\n%s", want, head)
		}
	}
	msg, err := email.Parse(ctxFor(t, 5*time.Second), bytes.NewReader(raw), email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if msg.Subject != d.Subject || msg.InReplyTo != "anterior@receptor.cl" {
		t.Errorf("read back Subject %q InReplyTo %q", msg.Subject, msg.InReplyTo)
	}
}

// TestComposeGeneratesIDs: each message gets its own id at the sender's
// domain.
func TestComposeGeneratesIDs(t *testing.T) {
	_, a, err := email.Compose(testDraft("x"))
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := email.Compose(testDraft("x"))
	if err != nil {
		t.Fatal(err)
	}
	if a == b || !strings.HasSuffix(a, "@emisor.cl") || strings.ContainsAny(a, "<>") {
		t.Errorf("ids %q and %q", a, b)
	}
}
