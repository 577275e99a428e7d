// Package email sends documents by SMTP, reads a company's mailbox by IMAP
// and parses what arrives there, treating every message as hostile.
//
// Three parts, each usable alone:
//
//   - [Compose] builds a multipart/mixed message (a UTF-8 text body and
//     attachments) and refuses any header field that would smuggle a line
//     break; [Send] submits raw bytes to an SMTP server with STARTTLS or
//     implicit TLS and AUTH, within one deadline, and [IsPermanent] tells a
//     retrying caller whether trying again can help.
//   - [DialIMAP] opens a mailbox; [Mailbox.Unprocessed] lists the messages
//     not yet marked with the keyword [ProcessedKeyword], oldest first,
//     reading each size before its body so that a huge message is never
//     downloaded; [Mailbox.MarkProcessed] flags one (and moves it when a
//     processed mailbox is configured). Nothing is ever deleted.
//   - [Parse] reads one raw message within [Limits] (size, parts, nesting,
//     attachments, zip archives) and a context deadline, and keeps the
//     attachments worth keeping: XML, PDF and zip contents or any part
//     with a file name.
//
// # The intake contract
//
// The caller reads with Unprocessed, parses, commits what it took from the
// message (keyed by [Message.MessageID] and [Message.Digest]) and only then
// calls MarkProcessed. A crash between the commit and the mark leaves the
// message unmarked, so it is read again on the next poll: intake is at
// least once, and the caller makes it exactly once by deduplicating on the
// Message-ID and the digest. A message is never marked before its intake
// has committed, so none is lost.
//
// The package imports no other dtekit package. Its tests run against real
// protocol servers in the same process ([github.com/dtekit/dtekit/email/emailtest]).
package email
