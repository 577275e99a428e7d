package email_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/dtekit/dtekit/email"
)

func ExampleCompose() {
	raw, id, err := email.Compose(email.Draft{
		From:    "Emisor SpA <dte@emisor.cl>",
		To:      "intercambio@receptor.cl",
		Subject: "Envío de DTE: factura 1",
		Text:    "Adjuntamos el envío de la factura 1.\n",
		Attachments: []email.Attachment{
			{Filename: "EnvioDTE 1.xml", Data: []byte("<EnvioDTE/>")},
			{Filename: "factura-1.pdf", Data: []byte("%PDF-1.4")},
		},
		MessageID: "envio-1@emisor.cl",
		Date:      time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC),
	})
	if err != nil {
		log.Fatal(err)
	}
	// raw is ready for email.Send(ctx, cfg, "dte@emisor.cl",
	// []string{"intercambio@receptor.cl"}, raw); record id to match the
	// answers that cite it.
	fmt.Println(id)
	fmt.Println(strings.Contains(string(raw), "\r\nSubject: =?utf-8?q?Env=C3=ADo_de_DTE:_factura_1?=\r\n"))
	// Output:
	// envio-1@emisor.cl
	// true
}

func ExampleParse() {
	raw := strings.ReplaceAll(`From: "Proveedor" <Facturas@Proveedor.cl>
To: intercambio@receptor.cl
Subject: =?utf-8?q?Env=C3=ADo_de_DTE?=
Message-ID: <abc@proveedor.cl>
Content-Type: multipart/mixed; boundary=X

--X
Content-Type: text/plain; charset=utf-8

Adjunto.
--X
Content-Type: application/xml; name="EnvioDTE.xml"
Content-Transfer-Encoding: base64

PEVudmlvRFRFLz4=
--X--
`, "\n", "\r\n")
	msg, err := email.Parse(context.Background(), strings.NewReader(raw), email.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(msg.From, msg.MessageID, msg.Subject)
	for _, a := range msg.Attachments {
		fmt.Printf("%s %s %s\n", a.Filename, a.ContentType, a.Data)
	}
	// Output:
	// facturas@proveedor.cl abc@proveedor.cl Envío de DTE
	// EnvioDTE.xml application/xml <EnvioDTE/>
}

// The poll loop of a company's mailbox, with the intake contract: commit,
// then mark.
func ExampleMailbox_Unprocessed() {
	ctx := context.Background()
	mb, err := email.DialIMAP(ctx, email.IMAPConfig{
		Host: "imap.example.com", Username: "intercambio@receptor.cl", Password: "…",
		ProcessedMailbox: "DTE/Procesados",
	})
	if err != nil {
		log.Printf("mailbox: %v (permanent: %v)", err, email.IsPermanent(err))
		return
	}
	defer mb.Close()
	lim := email.DefaultLimits()
	msgs, err := mb.Unprocessed(ctx, 20, lim.MaxMessageBytes)
	if err != nil {
		log.Print(err)
		return
	}
	for _, f := range msgs {
		var msg *email.Message
		if !f.TooLarge {
			msg, err = email.Parse(ctx, bytes.NewReader(f.Raw), lim)
		}
		// Record msg (or the refusal: f.TooLarge, err, msg.Warnings) in
		// one transaction keyed by msg.MessageID and msg.Digest, so that
		// a message read twice is taken once...
		_ = msg
		// ...and only once that has committed:
		if err := mb.MarkProcessed(ctx, f.UID); err != nil {
			log.Print(err)
			return
		}
	}
}
