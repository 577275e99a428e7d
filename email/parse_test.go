package email_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
)

func parse(t *testing.T, raw string, lim email.Limits) (*email.Message, error) {
	t.Helper()
	return email.Parse(ctxFor(t, 10*time.Second), strings.NewReader(strings.ReplaceAll(raw, "\n", "\r\n")), lim)
}

// TestParseHeader reads the fields the intake keys on, written the ways
// mailers write them; the expected values are read off the raw text.
func TestParseHeader(t *testing.T) {
	raw := `From: =?ISO-8859-1?Q?Proveedor_Compa=F1=EDa?= <Facturas@Proveedor.CL>
Reply-To: "Respuestas" <RESPUESTAS@proveedor.cl>
To: intercambio@receptor.cl, "Otro" <Otro@Receptor.cl>
Subject: =?windows-1252?Q?Env=EDo_de_DTE_=96_folio_12?= (continues)
Date: Tue, 3 Mar 2026 09:15:00 -0300
Message-ID:   <ABC.123@mail.proveedor.cl>
In-Reply-To: <first@x.cl> <second@x.cl>
Content-Type: text/plain; charset=utf-8

Hola
`
	msg, err := parse(t, raw, email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := email.Message{
		MessageID: "ABC.123@mail.proveedor.cl",
		From:      "facturas@proveedor.cl",
		ReplyTo:   "respuestas@proveedor.cl",
		To:        []string{"intercambio@receptor.cl", "otro@receptor.cl"},
		Subject:   "Envío de DTE – folio 12 (continues)", // =96 is the en dash in windows-1252
		InReplyTo: "first@x.cl",
	}
	if msg.MessageID != want.MessageID || msg.From != want.From || msg.ReplyTo != want.ReplyTo ||
		!slices.Equal(msg.To, want.To) || msg.Subject != want.Subject || msg.InReplyTo != want.InReplyTo {
		t.Errorf("got  %+v\nwant %+v", *msg, want)
	}
	if d := time.Date(2026, 3, 3, 12, 15, 0, 0, time.UTC); !msg.Date.Equal(d) {
		t.Errorf("Date = %v, want %v", msg.Date, d)
	}
	if len(msg.Attachments) != 0 || len(msg.Warnings) != 0 {
		t.Errorf("a text message has attachments %q / warnings %q", names(msg), msg.Warnings)
	}
}

// TestParseUnreadableHeaderFields keeps going with a warning per field.
func TestParseUnreadableHeaderFields(t *testing.T) {
	msg, err := parse(t, "From: not an address\nDate: yesterday\nSubject: x\n\nbody\n", email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if msg.From != "" || !msg.Date.IsZero() || len(msg.Warnings) != 2 ||
		!strings.HasPrefix(msg.Warnings[0], `message header: From "not an address" is not an address`) ||
		!strings.HasPrefix(msg.Warnings[1], `message header: Date "yesterday" cannot be read`) {
		t.Errorf("From %q, Date %v, warnings %q", msg.From, msg.Date, msg.Warnings)
	}
	msg, err = parse(t, "Subject: x\n\nbody\n", email.Limits{})
	if err != nil || len(msg.Warnings) != 1 || msg.Warnings[0] != "message header: no From field" {
		t.Errorf("no From: %v, warnings %q", err, msg.Warnings)
	}
}

// TestParseKeepsWhatIsWorthKeeping: parts with a name or a document type
// are kept, text bodies and nameless images are not, names are decoded and
// made safe.
func TestParseKeepsWhatIsWorthKeeping(t *testing.T) {
	raw := `From: a@b.cl
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary=alt

--alt
Content-Type: text/plain; charset=utf-8

texto
--alt
Content-Type: text/html; charset=utf-8

<p>texto</p>
--alt--
--outer
Content-Type: application/octet-stream
Content-Disposition: attachment; filename*=iso-8859-1''Env%EDo.xml; filename="fallback.xml"

<a/>
--outer
Content-Type: application/octet-stream; name="=?utf-8?B?R3XDrWEueG1s?="
Content-Transfer-Encoding: base64

PGIv
 Pg==
--outer
Content-Type: application/pdf; name="..\..\windows\system32\evil.pdf"
Content-Transfer-Encoding: quoted-printable

%PDF=2D1.4=
 x
--outer
Content-Type: text/xml

<sin-nombre/>
--outer
Content-Type: image/png

PNG
--outer
Content-Type: text/plain
Content-Disposition: attachment; filename="../../etc/passwd"

root
--outer--
`
	msg, err := parse(t, raw, email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []email.Attachment{
		// filename* (RFC 2231) wins over filename, in any charset.
		{Filename: "Envío.xml", ContentType: "application/octet-stream", Data: []byte("<a/>")},
		{Filename: "Guía.xml", ContentType: "application/octet-stream", Data: []byte("<b/>")},
		{Filename: "evil.pdf", ContentType: "application/pdf", Data: []byte("%PDF-1.4 x")},
		{Filename: "part-5.xml", ContentType: "text/xml", Data: []byte("<sin-nombre/>")},
		{Filename: "passwd", ContentType: "text/plain", Data: []byte("root")},
	}
	if len(msg.Attachments) != len(want) {
		t.Fatalf("kept %q, want %d attachments; warnings %q", names(msg), len(want), msg.Warnings)
	}
	for i, w := range want {
		g := msg.Attachments[i]
		if g.Filename != w.Filename || g.ContentType != w.ContentType || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("attachment %d = %q %q %q, want %q %q %q", i, g.Filename, g.ContentType, g.Data, w.Filename, w.ContentType, w.Data)
		}
	}
	if len(msg.Warnings) != 0 {
		t.Errorf("warnings %q", msg.Warnings)
	}
}

// TestParseSkipsBadAttachmentsAndReadsOn: an attachment over its bound,
// one past the count, one in an unknown or broken encoding are each
// skipped with a warning naming the part; the others are kept.
func TestParseSkipsBadAttachmentsAndReadsOn(t *testing.T) {
	raw := `From: a@b.cl
Content-Type: multipart/mixed; boundary=B

--B
Content-Disposition: attachment; filename=big.xml

0123456789A
--B
Content-Disposition: attachment; filename=uu.xml
Content-Transfer-Encoding: x-uuencode

begin
--B
Content-Disposition: attachment; filename=bad64.xml
Content-Transfer-Encoding: base64

!!!notbase64!!!
--B
Content-Disposition: attachment; filename=ok1.xml

<1/>
--B
Content-Disposition: attachment; filename=ok2.xml

<2/>
--B
Content-Disposition: attachment; filename=third.xml

<3/>
--B--
`
	msg, err := parse(t, raw, email.Limits{MaxAttachmentBytes: 10, MaxAttachments: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(msg); !slices.Equal(got, []string{"ok1.xml", "ok2.xml"}) {
		t.Errorf("kept %q, want ok1.xml and ok2.xml", got)
	}
	want := []string{
		`part 1: attachment "big.xml" skipped: larger than 10 bytes decoded`,
		`part 2: attachment "uu.xml" skipped: unknown Content-Transfer-Encoding "x-uuencode"`,
		`part 3: attachment "bad64.xml" skipped: cannot decode its content: illegal base64 data`,
		`part 6: attachment "third.xml" skipped: more than 2 attachments`,
	}
	if len(msg.Warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", msg.Warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(msg.Warnings[i], w) {
			t.Errorf("warning %d = %q, want %q…", i, msg.Warnings[i], w)
		}
	}
}

// TestParseForwardedMessage: the attachments of a message/rfc822 part are
// the message's own.
func TestParseForwardedMessage(t *testing.T) {
	raw := `From: reenvio@b.cl
Subject: Fwd: DTE
Content-Type: multipart/mixed; boundary=B

--B
Content-Type: text/plain

ver adjunto
--B
Content-Type: message/rfc822

From: original@c.cl
Subject: DTE
Content-Type: multipart/mixed; boundary=C

--C
Content-Type: application/xml; name=dte.xml

<EnvioDTE/>
--C--
--B--
`
	msg, err := parse(t, raw, email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if msg.From != "reenvio@b.cl" || len(msg.Attachments) != 1 || msg.Attachments[0].Filename != "dte.xml" || string(msg.Attachments[0].Data) != "<EnvioDTE/>" {
		t.Errorf("From %q, attachments %q", msg.From, names(msg))
	}
}

// TestParseMalformed: a broken structure fails with ErrMalformed naming the
// part.
func TestParseMalformed(t *testing.T) {
	cases := []struct{ name, raw, want string }{
		{"no header end", "From a@b.cl without a colon\n", "email: malformed message: message header: "},
		{"multipart without boundary", "From: a@b.cl\nContent-Type: multipart/mixed\n\nx\n", "email: malformed message: message body: multipart/mixed without a boundary"},
		{"nested without boundary", "From: a@b.cl\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: multipart/related\n\nx\n--B--\n", "email: malformed message: part 1: multipart/related without a boundary"},
		{"truncated", "From: a@b.cl\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/plain\n\ncut here", "email: malformed message: part 2: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.raw, email.Limits{})
			if !errors.Is(err, email.ErrMalformed) || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("Parse = %v, want ErrMalformed starting %q", err, c.want)
			}
		})
	}
}

// TestParseDigest is the SHA-256 of the bytes given, whatever they hold.
func TestParseDigest(t *testing.T) {
	msg, err := email.Parse(ctxFor(t, 5*time.Second), strings.NewReader("Subject: abc\r\n\r\n"), email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// The SHA-256 of these 16 bytes, computed apart with coreutils:
	// printf 'Subject: abc\r\n\r\n' | sha256sum
	const want = "f54a13e0f54d29092aa0cbf22fa0a6774d563161cff33209291d3ca7046de8e4"
	if msg.Digest != want {
		t.Errorf("Digest = %s, want %s", msg.Digest, want)
	}
}
