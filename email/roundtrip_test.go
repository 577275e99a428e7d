package email_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dtekit/dtekit/email"
	"github.com/dtekit/dtekit/email/emailtest"
)

var (
	alice = emailtest.User{Address: "dte@emisor.cl", Username: "emisor", Password: "clave-emisor"}
	bob   = emailtest.User{Address: "intercambio@receptor.cl", Username: "receptor", Password: "clave-receptor"}
)

// The documents of the round trip: an XML whose name needs RFC 2231 and
// 2047, and a PDF (a few bytes of one: the content is opaque here).
var (
	xmlName = "Envío DTE ñ.xml"
	xmlData = []byte(`<?xml version="1.0" encoding="ISO-8859-1"?>` + "\n<EnvioDTE version=\"1.0\"><SetDTE ID=\"SetDoc\"/></EnvioDTE>\n")
	pdfName = "factura 33-1.pdf"
	pdfData = append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0x00, 0xff, 0x10, '\r', '\n'}, 300)...)
)

func testDraft(subject string) email.Draft {
	return email.Draft{
		From:    "Emisor SpA <" + alice.Address + ">",
		To:      bob.Address,
		Subject: subject,
		Text:    "Adjuntamos el envío.\nSaludos,\nEmisor\n",
		Attachments: []email.Attachment{
			{Filename: xmlName, ContentType: "application/xml", Data: xmlData},
			{Filename: pdfName, Data: pdfData},
		},
		Date: time.Date(2026, 3, 2, 10, 30, 0, 0, time.FixedZone("CLT", -3*3600)),
	}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestRoundTripThroughRealServers(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	ctx := ctxFor(t, 30*time.Second)

	raw, id, err := email.Compose(testDraft("Envío DTE ñ: factura 1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := email.Send(ctx, srv.SMTPConfig(alice), alice.Address, []string{bob.Address}, raw); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if n := srv.Count(bob); n != 1 {
		t.Fatalf("bob's INBOX has %d messages after one send, want 1", n)
	}

	mb, err := email.DialIMAP(ctx, srv.IMAPConfig(bob))
	if err != nil {
		t.Fatalf("DialIMAP: %v", err)
	}
	defer mb.Close()
	got, err := mb.Unprocessed(ctx, 10, 0)
	if err != nil {
		t.Fatalf("Unprocessed: %v", err)
	}
	if len(got) != 1 || got[0].TooLarge || got[0].Raw == nil {
		t.Fatalf("Unprocessed = %+v, want one message with its body", got)
	}
	if !bytes.Equal(got[0].Raw, raw) {
		t.Fatalf("the message read back differs from the one sent (%d bytes vs %d)", len(got[0].Raw), len(raw))
	}
	if got[0].Size != int64(len(raw)) {
		t.Errorf("Size = %d, want %d", got[0].Size, len(raw))
	}
	// Reading with BODY.PEEK leaves the message unseen.
	if flags := srv.Flags(bob, "INBOX")[0]; slices.Contains(flags, `\seen`) {
		t.Errorf("Unprocessed marked the message seen: flags %v", flags)
	}

	msg, err := email.Parse(ctx, bytes.NewReader(got[0].Raw), email.Limits{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	sum := sha256.Sum256(raw)
	checkParsed(t, msg, id, hex.EncodeToString(sum[:]), "Envío DTE ñ: factura 1")

	if err := mb.MarkProcessed(ctx, got[0].UID); err != nil {
		t.Fatalf("MarkProcessed: %v", err)
	}
	again, err := mb.Unprocessed(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 0 {
		t.Fatalf("Unprocessed after MarkProcessed = %d messages, want 0", len(again))
	}
	if n := srv.Count(bob); n != 1 {
		t.Fatalf("bob's INBOX has %d messages after MarkProcessed, want 1 (never deleted)", n)
	}
	flags := srv.Flags(bob, "INBOX")[0]
	if !slices.Contains(flags, `\seen`) || !slices.Contains(flags, strings.ToLower(email.ProcessedKeyword)) {
		t.Errorf("flags after MarkProcessed = %v, want \\seen and %s", flags, email.ProcessedKeyword)
	}
}

func checkParsed(t *testing.T, msg *email.Message, id, digest, subject string) {
	t.Helper()
	if msg.MessageID != id {
		t.Errorf("MessageID = %q, want %q", msg.MessageID, id)
	}
	if !strings.HasSuffix(id, "@emisor.cl") {
		t.Errorf("generated Message-ID %q is not at the sender's domain emisor.cl", id)
	}
	if msg.Digest != digest {
		t.Errorf("Digest = %s, want %s", msg.Digest, digest)
	}
	if msg.From != alice.Address || len(msg.To) != 1 || msg.To[0] != bob.Address {
		t.Errorf("From %q To %q, want %q to %q", msg.From, msg.To, alice.Address, bob.Address)
	}
	if msg.Subject != subject {
		t.Errorf("Subject = %q, want %q", msg.Subject, subject)
	}
	if want := time.Date(2026, 3, 2, 13, 30, 0, 0, time.UTC); !msg.Date.Equal(want) {
		t.Errorf("Date = %v, want %v", msg.Date, want)
	}
	if len(msg.Attachments) != 2 {
		t.Fatalf("%d attachments, want 2 (the text body is not one): %+v; warnings %q", len(msg.Attachments), names(msg), msg.Warnings)
	}
	x, p := msg.Attachments[0], msg.Attachments[1]
	if x.Filename != xmlName || x.ContentType != "application/xml" || !bytes.Equal(x.Data, xmlData) {
		t.Errorf("first attachment = %q %q (%d bytes), want %q application/xml (%d bytes)", x.Filename, x.ContentType, len(x.Data), xmlName, len(xmlData))
	}
	if p.Filename != pdfName || p.ContentType != "application/pdf" || !bytes.Equal(p.Data, pdfData) {
		t.Errorf("second attachment = %q %q (%d bytes), want %q application/pdf (%d bytes)", p.Filename, p.ContentType, len(p.Data), pdfName, len(pdfData))
	}
	if len(msg.Warnings) != 0 {
		t.Errorf("warnings on a clean message: %q", msg.Warnings)
	}
}

func names(m *email.Message) []string {
	var out []string
	for _, a := range m.Attachments {
		out = append(out, a.Filename)
	}
	return out
}

// TestRoundTripOtherModes sends over implicit TLS, reads over STARTTLS and
// moves the processed message to a mailbox that does not exist yet.
func TestRoundTripOtherModes(t *testing.T) {
	srv := emailtest.Start(t, alice, bob)
	ctx := ctxFor(t, 30*time.Second)

	// A message already there and already processed stays out of the way.
	first, _, err := email.Compose(testDraft("primero"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Append(bob, first)

	scfg := srv.SMTPConfig(alice)
	scfg.Security = "tls"
	scfg.Port = port(t, srv.SMTPSAddr)
	raw, id, err := email.Compose(testDraft("segundo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := email.Send(ctx, scfg, alice.Address, []string{bob.Address}, raw); err != nil {
		t.Fatalf("Send over implicit TLS: %v", err)
	}

	icfg := srv.IMAPConfig(bob)
	icfg.Security = "starttls"
	icfg.Port = port(t, srv.IMAPAddr)
	icfg.ProcessedMailbox = "DTE/Procesados"
	mb, err := email.DialIMAP(ctx, icfg)
	if err != nil {
		t.Fatalf("DialIMAP over STARTTLS: %v", err)
	}
	defer mb.Close()

	// Oldest first, at most max.
	one, err := mb.Unprocessed(ctx, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 1 || !bytes.Equal(one[0].Raw, first) {
		t.Fatalf("Unprocessed(max 1) did not return the oldest message alone: %d messages", len(one))
	}
	both, err := mb.Unprocessed(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(both) != 2 || !bytes.Equal(both[1].Raw, raw) || both[0].UID >= both[1].UID {
		t.Fatalf("Unprocessed(max 10) = %d messages, want the two in UID order", len(both))
	}
	msg, err := email.Parse(ctx, bytes.NewReader(both[1].Raw), email.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if msg.MessageID != id {
		t.Fatalf("MessageID %q, want %q", msg.MessageID, id)
	}

	for _, f := range both {
		if err := mb.MarkProcessed(ctx, f.UID); err != nil {
			t.Fatalf("MarkProcessed(%d): %v", f.UID, err)
		}
	}
	if n := srv.CountIn(bob, "INBOX"); n != 0 {
		t.Errorf("INBOX keeps %d messages after the move, want 0", n)
	}
	moved := srv.MessagesIn(bob, "DTE/Procesados")
	if len(moved) != 2 || !bytes.Equal(moved[0], first) || !bytes.Equal(moved[1], raw) {
		t.Fatalf("DTE/Procesados holds %d messages, want both, unchanged", len(moved))
	}
	for i, flags := range srv.Flags(bob, "DTE/Procesados") {
		if !slices.Contains(flags, `\seen`) || !slices.Contains(flags, strings.ToLower(email.ProcessedKeyword)) {
			t.Errorf("moved message %d has flags %v, want \\seen and the keyword", i, flags)
		}
	}
	left, err := mb.Unprocessed(ctx, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("Unprocessed after moving = %d, want 0", len(left))
	}
}

func port(t *testing.T, addr string) int {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	p := 0
	for _, c := range addr[i+1:] {
		p = p*10 + int(c-'0')
	}
	return p
}
