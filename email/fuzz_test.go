package email_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dtekit/dtekit/email"
)

// fuzzLimits are small, so that the fuzzer reaches every bound.
var fuzzLimits = email.Limits{
	MaxMessageBytes:    64 << 10,
	MaxParts:           20,
	MaxDepth:           4,
	MaxAttachmentBytes: 4 << 10,
	MaxAttachments:     5,
	MaxZipEntries:      5,
	MaxZipBytes:        8 << 10,
}

func fuzzSeeds(f *testing.F) {
	d := testDraft("Envío DTE ñ")
	d.MessageID = "semilla@emisor.cl"
	d.Attachments[1].Data = d.Attachments[1].Data[:64]
	raw, _, err := email.Compose(d)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range []string{"a.xml", "../b.pdf", "dir/c.xml"} {
		w, _ := zw.Create(name)
		w.Write([]byte("<x>" + strings.Repeat("0", 100) + "</x>"))
	}
	zw.Close()
	crlf := func(s string) []byte { return []byte(strings.ReplaceAll(s, "\n", "\r\n")) }
	f.Add(crlf("From: a@b.cl\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/zip; name=z.zip\nContent-Transfer-Encoding: base64\n\n" +
		base64.StdEncoding.EncodeToString(zbuf.Bytes()) + "\n--B--\n"))
	for _, s := range []string{
		"",
		"From: a@b.cl\n\nno blank line after this",
		"From: a@b.cl\nContent-Type: multipart/mixed\n\nno boundary\n",
		"From: a@b.cl\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/plain\n\ntruncated",
		"From: a@b.cl\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: multipart/mixed; boundary=C\n\n--C\nContent-Type: multipart/mixed; boundary=D\n\n--D\nContent-Type: text/xml\n\n<x/>\n--D--\n--C--\n--B--\n",
		"From: a@b.cl\nContent-Type: message/rfc822\n\nFrom: c@d.cl\nContent-Type: application/pdf; name=\"=?utf-8?q?a=C3=B1.pdf?=\"\nContent-Transfer-Encoding: quoted-printable\n\n%PDF=\n=41\n",
		"From: a@b.cl\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Disposition: attachment; filename*=iso-8859-1''%F1.xml\nContent-Transfer-Encoding: base64\n\n!!!!\n--B--\n",
		"Subject: =?unknown?q?x?= =?utf-8?b?////?=\nTo: ,,,<>\nDate: 99 Foo 2026\n\n",
	} {
		f.Add(crlf(s))
	}
}

// FuzzParse: whatever the bytes, Parse returns within its bounds, with one
// of its four errors or a message whose every field is safe to store.
func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		msg, err := email.Parse(ctx, bytes.NewReader(raw), fuzzLimits)
		if err != nil {
			if !errors.Is(err, email.ErrTooLarge) && !errors.Is(err, email.ErrMalformed) &&
				!errors.Is(err, email.ErrTooManyParts) && !errors.Is(err, email.ErrTooDeep) {
				t.Fatalf("Parse returned an error outside its four: %v", err)
			}
			return
		}
		sum := sha256.Sum256(raw)
		if msg.Digest != hex.EncodeToString(sum[:]) {
			t.Fatalf("Digest %s is not the SHA-256 of the input", msg.Digest)
		}
		if len(msg.Attachments) > fuzzLimits.MaxAttachments {
			t.Fatalf("%d attachments kept, bound %d", len(msg.Attachments), fuzzLimits.MaxAttachments)
		}
		var fromZips int64
		for _, a := range msg.Attachments {
			if int64(len(a.Data)) > fuzzLimits.MaxAttachmentBytes {
				t.Fatalf("attachment %q has %d bytes, bound %d", a.Filename, len(a.Data), fuzzLimits.MaxAttachmentBytes)
			}
			if a.Filename == "" || strings.HasPrefix(a.Filename, "/") || strings.Contains("/"+a.Filename+"/", "/../") {
				t.Fatalf("unsafe file name %q", a.Filename)
			}
			if strings.Contains(a.Filename, "/") { // only zip entries carry a slash
				fromZips += int64(len(a.Data))
			}
			safeText(t, "file name", a.Filename)
		}
		if fromZips > fuzzLimits.MaxZipBytes {
			t.Fatalf("%d bytes taken from zips, bound %d", fromZips, fuzzLimits.MaxZipBytes)
		}
		for name, v := range map[string]string{"MessageID": msg.MessageID, "From": msg.From, "ReplyTo": msg.ReplyTo, "Subject": msg.Subject, "InReplyTo": msg.InReplyTo} {
			safeText(t, name, v)
			if len(v) > 998 {
				t.Fatalf("%s has %d bytes", name, len(v))
			}
		}
		if len(msg.To) > 100 {
			t.Fatalf("%d recipients kept", len(msg.To))
		}
		if max := fuzzLimits.MaxParts*(fuzzLimits.MaxZipEntries+1) + 10; len(msg.Warnings) > max {
			t.Fatalf("%d warnings, more than %d", len(msg.Warnings), max)
		}
	})
}

func safeText(t *testing.T, field, v string) {
	t.Helper()
	if !utf8.ValidString(v) {
		t.Fatalf("%s %q is not valid UTF-8", field, v)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			t.Fatalf("%s %q holds a control character", field, v)
		}
	}
}
